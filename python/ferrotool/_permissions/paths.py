"""Dangerous paths: files and directories a tool should not touch without asking."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import Final

DEFAULT_DANGEROUS_FILES: Final[tuple[str, ...]] = (
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".ssh/config",
    ".ssh/authorized_keys",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".env",
    ".envrc",
    ".env.local",
    ".env.development",
    ".env.development.local",
    ".env.test",
    ".env.test.local",
    ".env.staging",
    ".env.production",
    ".env.production.local",
)
"""Files that hold credentials or shell start-up code."""

DEFAULT_DANGEROUS_DIRECTORIES: Final[tuple[str, ...]] = (".git", ".vscode", ".idea", ".ssh")
"""Directories whose contents a tool should not change unasked."""


def merge_paths(defaults: tuple[str, ...], extra: Iterable[str]) -> tuple[str, ...]:
    """The defaults followed by the extra entries not already there (extra entries add)."""
    out = list(defaults)
    seen = {entry.lower() for entry in out}
    for entry in extra:
        if entry.lower() not in seen:
            seen.add(entry.lower())
            out.append(entry)
    return tuple(out)


def is_dangerous_path(
    path: str | os.PathLike[str] | None,
    files: Iterable[str] = DEFAULT_DANGEROUS_FILES,
    directories: Iterable[str] = DEFAULT_DANGEROUS_DIRECTORIES,
) -> bool:
    """Whether ``path`` is a dangerous file or lies inside a dangerous directory.

    ``~`` is expanded and the path made absolute. A path is dangerous when its file name, or
    its last two segments (for entries such as ``.ssh/config``), equal a dangerous file, or when
    any segment equals a dangerous directory; comparisons ignore case. When the path exists,
    the target of its symlinks is checked too.
    """
    if path is None:
        return False
    text = os.fspath(path)
    if not text.strip():
        return False
    lowered_files = {entry.lower() for entry in files}
    lowered_dirs = {entry.lower() for entry in directories}
    candidates = [Path(os.path.abspath(os.path.expanduser(text)))]
    if candidates[0].exists():
        candidates.append(candidates[0].resolve())
    return any(_dangerous(c, lowered_files, lowered_dirs) for c in candidates)


def _dangerous(path: PurePath, files: set[str], directories: set[str]) -> bool:
    parts = [part.lower() for part in path.parts]
    if not parts:
        return False
    if parts[-1] in files or "/".join(parts[-2:]) in files:
        return True
    return any(part in directories for part in parts)


__all__ = [
    "DEFAULT_DANGEROUS_DIRECTORIES",
    "DEFAULT_DANGEROUS_FILES",
    "is_dangerous_path",
    "merge_paths",
]
