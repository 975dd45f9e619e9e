"""Dangerous paths: files and directories a tool should not touch without asking.

Two kinds of path are dangerous: those whose contents run on their own later (shell start-up
files, git hooks and configuration, CI workflows, pre-commit hooks, editor tasks, agent hooks
and MCP server definitions), so that writing one is running code; and those that hold
credentials (SSH, GPG and cloud keys, registry and database passwords, ``.env`` files), so that
reading one leaks a secret. The lists are matched on the path's text, and on its real path when
it exists; an entry may hold several segments (``.aws/credentials``) and shell wildcards
(``.env.*``).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from pathlib import PurePath
from typing import Final

DEFAULT_DANGEROUS_FILES: Final[tuple[str, ...]] = (
    # git: configuration (aliases, hooks paths, filters run commands) and credentials
    ".gitconfig",
    ".gitmodules",
    ".git-credentials",
    ".config/git/config",
    ".config/git/credentials",
    # shell start-up files: bash, sh, zsh, ksh, csh/tcsh, readline, direnv
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".logout",
    ".inputrc",
    ".envrc",
    ".config/fish/config.fish",
    # hooks run by tools on their own
    ".pre-commit-config.yaml",
    ".gitlab-ci.yml",
    ".mcp.json",
    # credentials
    ".netrc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".pgpass",
    ".aws/credentials",
    ".aws/config",
    ".docker/config.json",
    ".kube/config",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ecdsa_sk",
    "id_ed25519",
    "id_ed25519_sk",
    "*.pem",
    "authorized_keys",
    "known_hosts",
    ".env",
    ".env.*",
)
"""Files that hold credentials or code run on their own (shell start-up, hooks)."""

DEFAULT_DANGEROUS_DIRECTORIES: Final[tuple[str, ...]] = (
    ".git",
    ".ssh",
    ".gnupg",
    ".aws",
    ".kube",
    ".docker",
    ".config/fish",
    ".config/gh",
    ".husky",
    ".github/workflows",
    ".vscode",
    ".idea",
    ".claude",
)
"""Directories whose contents a tool should not change unasked (or read: keys, tokens)."""


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

    ``~`` is expanded and the path made absolute. A path is dangerous when its last segments
    match a dangerous file (``id_rsa``, ``.aws/credentials``, ``.env.*``), or when some of its
    consecutive segments match a dangerous directory (``.git``, ``.github/workflows``);
    comparisons ignore case. When the path exists, its real path (symlinks resolved) is checked
    too.

    It never raises: a path the system cannot look at (a segment over 255 bytes, too deep, a
    lone surrogate, a NUL, a symlink changing meanwhile) is judged on its text alone.
    """
    if path is None:
        return False
    try:
        text = os.fspath(path)
    except TypeError:
        return False
    if not text.strip():
        return False
    file_entries = [_segments(entry) for entry in files]
    dir_entries = [_segments(entry) for entry in directories]
    try:
        absolute = os.path.abspath(os.path.expanduser(text))
    except (OSError, ValueError):
        absolute = text
    if _dangerous(absolute, file_entries, dir_entries):
        return True
    try:
        resolved = os.path.realpath(absolute) if os.path.lexists(absolute) else None
    except (OSError, ValueError, RecursionError):  # a segment too long, a surrogate, a loop
        return False
    return resolved is not None and _dangerous(resolved, file_entries, dir_entries)


def _segments(entry: str) -> tuple[str, ...]:
    return tuple(part for part in entry.lower().replace("\\", "/").split("/") if part)


def _matches(parts: list[str], entry: tuple[str, ...], at: int) -> bool:
    return all(fnmatch.fnmatchcase(parts[at + i], entry[i]) for i in range(len(entry)))


def _dangerous(path: str, files: list[tuple[str, ...]], directories: list[tuple[str, ...]]) -> bool:
    parts = [part.lower() for part in PurePath(path).parts]
    if not parts:
        return False
    for entry in files:
        if entry and len(entry) <= len(parts) and _matches(parts, entry, len(parts) - len(entry)):
            return True
    for entry in directories:
        if entry and any(_matches(parts, entry, at) for at in range(len(parts) - len(entry) + 1)):
            return True
    return False


__all__ = [
    "DEFAULT_DANGEROUS_DIRECTORIES",
    "DEFAULT_DANGEROUS_FILES",
    "is_dangerous_path",
    "merge_paths",
]
