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
import functools
import os
import re
from collections.abc import Iterable
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
    # hooks and pipelines run by tools on their own: pre-commit, CI services, ripgrep's
    # `--pre` preprocessor, cargo's runners and wrappers, pip's index (what installs next)
    ".pre-commit-config.yaml",
    ".gitlab-ci.yml",
    ".travis.yml",
    "Jenkinsfile",
    "azure-pipelines.yml",
    "bitbucket-pipelines.yml",
    ".drone.yml",
    ".woodpecker.yml",
    ".ripgreprc",
    ".cargo/config",
    ".cargo/config.toml",
    ".config/pip/pip.conf",
    ".pip/pip.conf",
    # coding agents' own configuration and standing instructions
    ".mcp.json",
    ".claude.json",
    ".cursorrules",
    ".windsurfrules",
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
    ".github/actions",
    ".circleci",
    ".gitlab",
    ".buildkite",
    ".woodpecker",
    ".devcontainer",
    ".vscode",
    ".idea",
    ".claude",
    ".cursor",
    ".gemini",
    ".codex",
    ".windsurf",
)
"""Directories whose contents a tool should not change unasked (or read: keys, tokens)."""

_GLOB: Final = re.compile(r"[*?\[]")


def merge_paths(defaults: tuple[str, ...], extra: Iterable[str]) -> tuple[str, ...]:
    """The defaults followed by the extra entries not already there (extra entries add).

    ``defaults`` itself when nothing is added: every tool that adds nothing shares one tuple.
    """
    out = list(defaults)
    seen = {entry.lower() for entry in out}
    for entry in extra:
        if entry.lower() not in seen:
            seen.add(entry.lower())
            out.append(entry)
    return defaults if len(out) == len(defaults) else tuple(out)


def is_dangerous_path(
    path: str | os.PathLike[str] | None,
    files: Iterable[str] = DEFAULT_DANGEROUS_FILES,
    directories: Iterable[str] = DEFAULT_DANGEROUS_DIRECTORIES,
    *,
    resolve: bool = True,
) -> bool:
    """Whether ``path`` is a dangerous file or lies inside a dangerous directory.

    ``~`` is expanded and the path made absolute. A path is dangerous when its last segments
    match a dangerous file (``id_rsa``, ``.aws/credentials``, ``.env.*``), or when some of its
    consecutive segments match a dangerous directory (``.git``, ``.github/workflows``);
    comparisons ignore case. With ``resolve``, when the path exists, its real path (symlinks
    resolved) is checked too (a caller that checks the real path itself turns it off).

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
    matcher = _matcher(tuple(files), tuple(directories))
    try:
        absolute = os.path.abspath(os.path.expanduser(text))
    except (OSError, ValueError):
        absolute = text
    if matcher.matches(absolute):
        return True
    if not resolve:
        return False
    try:
        resolved = os.path.realpath(absolute) if os.path.lexists(absolute) else None
    except (OSError, ValueError, RecursionError):  # a segment too long, a surrogate, a loop
        return False
    return resolved is not None and resolved != absolute and matcher.matches(resolved)


def _segments(entry: str) -> tuple[str, ...]:
    return tuple(part for part in entry.lower().replace("\\", "/").split("/") if part)


class _Matcher:
    """The entries of two lists, indexed for speed.

    Plain one-segment names go in sets; the rest are found by the segment they end (files) or
    start (directories) with, and the entries whose key segment is a glob are tried on every
    path.
    """

    __slots__ = (
        "_dir_names",
        "_dirs_by_first",
        "_dirs_globbed",
        "_file_names",
        "_files_by_last",
        "_files_globbed",
    )

    def __init__(self, files: tuple[str, ...], directories: tuple[str, ...]) -> None:
        file_entries = [e for e in map(_segments, files) if e]
        dir_entries = [e for e in map(_segments, directories) if e]
        self._file_names = frozenset(e[0] for e in file_entries if len(e) == 1 and _plain(e))
        self._dir_names = frozenset(e[0] for e in dir_entries if len(e) == 1 and _plain(e))
        self._files_by_last: dict[str, list[tuple[str, ...]]] = {}
        self._files_globbed: list[tuple[str, ...]] = []
        for entry in file_entries:
            if len(entry) == 1 and _plain(entry):
                continue
            if _plain(entry[-1:]):
                self._files_by_last.setdefault(entry[-1], []).append(entry)
            else:
                self._files_globbed.append(entry)
        self._dirs_by_first: dict[str, list[tuple[str, ...]]] = {}
        self._dirs_globbed: list[tuple[str, ...]] = []
        for entry in dir_entries:
            if len(entry) == 1 and _plain(entry):
                continue
            if _plain(entry[:1]):
                self._dirs_by_first.setdefault(entry[0], []).append(entry)
            else:
                self._dirs_globbed.append(entry)

    def matches(self, path: str) -> bool:
        from pathlib import PurePath  # on first use: `import ferrotool` loads no pathlib

        parts = [part.lower() for part in PurePath(path).parts]
        if not parts:
            return False
        last = parts[-1]
        if last in self._file_names or not self._dir_names.isdisjoint(parts):
            return True
        for entry in (*self._files_by_last.get(last, ()), *self._files_globbed):
            if len(entry) <= len(parts) and _at(parts, entry, len(parts) - len(entry)):
                return True
        for at, part in enumerate(parts):
            for entry in (*self._dirs_by_first.get(part, ()), *self._dirs_globbed):
                if at + len(entry) <= len(parts) and _at(parts, entry, at):
                    return True
        return False


def _plain(entry: tuple[str, ...]) -> bool:
    return not any(_GLOB.search(part) for part in entry)


def _at(parts: list[str], entry: tuple[str, ...], at: int) -> bool:
    return all(fnmatch.fnmatchcase(parts[at + i], entry[i]) for i in range(len(entry)))


@functools.lru_cache(maxsize=64)
def _matcher(files: tuple[str, ...], directories: tuple[str, ...]) -> _Matcher:
    return _Matcher(files, directories)


__all__ = [
    "DEFAULT_DANGEROUS_DIRECTORIES",
    "DEFAULT_DANGEROUS_FILES",
    "is_dangerous_path",
    "merge_paths",
]
