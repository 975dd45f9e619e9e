"""Where skills come from: folders on disk, a package's resources, the request's context.

Every repository answers `SkillRepository.skills` with a `SkillSet`. Repositories are merged
low to high priority (`merge_skills`): a later skill of the same name wins. A repository that
has not changed answers with the same `SkillSet` object, so the views built from it are found
again without hashing any skill.
"""

from __future__ import annotations

import importlib.resources
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Final, Protocol, final, runtime_checkable

from ferrotool._values.context import RuntimeContext
from ferrotool.builtins._confine import Refused, read_regular
from ferrotool.errors import SkillError
from ferrotool.skills.resources import MAX_RESOURCE_BYTES, disk_files, text_of
from ferrotool.skills.skill import EMPTY_SKILLS, SKILL_FILE, AgentSkill, SkillSet

_log = logging.getLogger("ferrotool.skills")

MAX_SKILL_FILE: Final = 1024 * 1024
"""The largest ``SKILL.md`` read (bytes)."""
MAX_RESOURCES: Final = 1000
"""Resources read into memory per skill at most (the rest stay on disk)."""


@runtime_checkable
class SkillRepository(Protocol):
    """A source of skills."""

    def skills(self, context: RuntimeContext | None = None) -> SkillSet:
        """The skills this source holds now (for this request, if it depends on one)."""
        ...


@final
@dataclass(frozen=True, slots=True)
class _Cached:
    stamp: tuple[int, int]
    skill: AgentSkill


@final
class FileSystemSkillRepository:
    """Skills in the direct subfolders of a folder, each with a ``SKILL.md``.

    Hidden entries and symlinks are skipped. Resources are every other regular, non-hidden
    file under the skill folder: UTF-8 text as is, other files as ``base64:``; with
    ``lazy=True`` none is read ahead, each is read from disk when a model asks for it. A
    skill is read again only when its ``SKILL.md`` changes (modification time or size); a
    folder that fails to load is logged and skipped.

    Args:
        base_dir: The folder holding the skill folders.
        source: The skills' source (default ``filesystem-<parent>_<folder>``).
        lazy: Read resources on demand instead of ahead.

    Raises:
        NotADirectoryError: ``base_dir`` is not a folder.
    """

    __slots__ = ("_cache", "_last", "_lock", "base_dir", "lazy", "source")

    def __init__(
        self, base_dir: str | os.PathLike[str], *, source: str | None = None, lazy: bool = False
    ) -> None:
        path = Path(base_dir).absolute()
        if not path.is_dir():
            raise NotADirectoryError(f"skills folder {os.fspath(path)!r} is not a folder")
        self.base_dir = path
        self.source = source or f"filesystem-{path.parent.name}_{path.name}"
        self.lazy = lazy
        self._cache: dict[str, _Cached] = {}
        self._last: SkillSet = EMPTY_SKILLS
        self._lock = threading.Lock()

    def skills(self, context: RuntimeContext | None = None) -> SkillSet:
        """The skills on disk now (the same `SkillSet` object while nothing changed)."""
        found: list[AgentSkill] = []
        seen: set[str] = set()
        changed = False
        try:
            entries = sorted(os.scandir(self.base_dir), key=lambda entry: entry.name)
        except OSError as error:
            _log.warning("cannot list skills folder %s: %s", self.base_dir, error)
            entries = []
        for entry in entries:
            if entry.name.startswith(".") or entry.is_symlink() or not entry.is_dir():
                continue
            skill_file = os.path.join(entry.path, SKILL_FILE)
            try:
                info = os.lstat(skill_file)
            except OSError:
                continue
            seen.add(entry.path)
            stamp = (info.st_mtime_ns, info.st_size)
            cached = self._cache.get(entry.path)
            if cached is None or cached.stamp != stamp:
                changed = True
                skill = self._load(Path(entry.path))
                if skill is None:
                    self._cache.pop(entry.path, None)
                    continue
                cached = _Cached(stamp, skill)
                self._cache[entry.path] = cached
            found.append(cached.skill)
        with self._lock:
            for gone in set(self._cache) - seen:
                del self._cache[gone]
                changed = True
            if changed or len(found) != len(self._last):
                self._last = SkillSet(found)
            return self._last

    def _load(self, folder: Path) -> AgentSkill | None:
        try:
            text = read_regular(os.fspath(folder / SKILL_FILE), MAX_SKILL_FILE).decode("utf-8")
            resources: dict[str, str] = {}
            if not self.lazy:
                for index, relative in enumerate(disk_files(folder)):
                    if index >= MAX_RESOURCES:
                        break
                    try:
                        data = read_regular(os.fspath(folder / relative), MAX_RESOURCE_BYTES)
                    except (OSError, Refused):
                        continue
                    resources[relative] = text_of(data)
            return AgentSkill.from_markdown(
                text, resources=resources, source=self.source, origin=folder
            )
        except (OSError, Refused, UnicodeDecodeError, SkillError) as error:
            _log.warning("skipping skill folder %s: %s", folder, error)
            return None

    def __repr__(self) -> str:
        return f"<FileSystemSkillRepository {os.fspath(self.base_dir)!r}>"


@final
class PackageSkillRepository:
    """Skills shipped inside a Python package (read through `importlib.resources`).

    Each direct subfolder of ``package/folder`` with a ``SKILL.md`` is a skill; resources are
    read ahead (a package may live in a zip file). Read once: a package does not change.

    Args:
        package: The package's import name.
        folder: The folder inside the package holding the skill folders.
        source: The skills' source (default ``package-<package>_<folder>``).
    """

    __slots__ = ("_skills", "folder", "package", "source")

    def __init__(self, package: str, folder: str = "skills", *, source: str | None = None) -> None:
        self.package = package
        self.folder = folder
        self.source = source or f"package-{package}_{folder.replace('/', '-')}"
        self._skills: SkillSet | None = None

    def skills(self, context: RuntimeContext | None = None) -> SkillSet:
        """The package's skills."""
        if self._skills is None:
            root = importlib.resources.files(self.package)
            for part in self.folder.split("/"):
                root = root.joinpath(part)
            found = []
            if root.is_dir():
                for entry in sorted(root.iterdir(), key=lambda item: item.name):
                    if entry.name.startswith(".") or not entry.is_dir():
                        continue
                    skill = self._load(entry)
                    if skill is not None:
                        found.append(skill)
            self._skills = SkillSet(found)
        return self._skills

    def _load(self, folder: Traversable) -> AgentSkill | None:
        skill_file = folder.joinpath(SKILL_FILE)
        if not skill_file.is_file():
            return None
        resources: dict[str, str] = {}
        pending: list[tuple[str, Traversable]] = [("", folder)]
        while pending and len(resources) < MAX_RESOURCES:
            prefix, current = pending.pop()
            for item in sorted(current.iterdir(), key=lambda entry: entry.name):
                if item.name.startswith(".") or item.name == "__pycache__":
                    continue
                relative = f"{prefix}{item.name}"
                if item.is_dir():
                    pending.append((relative + "/", item))
                elif relative != SKILL_FILE and len(resources) < MAX_RESOURCES:
                    data = item.read_bytes()
                    if len(data) <= MAX_RESOURCE_BYTES:
                        resources[relative] = text_of(data)
        origin = folder if isinstance(folder, Path) else None
        try:
            return AgentSkill.from_markdown(
                skill_file.read_text("utf-8"),
                resources=resources,
                source=self.source,
                origin=origin,
            )
        except (SkillError, UnicodeDecodeError) as error:
            _log.warning("skipping packaged skill %s: %s", folder.name, error)
            return None

    def __repr__(self) -> str:
        return f"<PackageSkillRepository {self.package}/{self.folder}>"


@final
class ContextSkillRepository:
    """The skills of one request: the `SkillSet` its `RuntimeContext` holds (none: no skills).

    Put the session's skills in the context (``RuntimeContext.of(SkillSet(...))``); reuse the
    same `SkillSet` object across requests and the session's view is found again at no cost.
    """

    __slots__ = ()

    def skills(self, context: RuntimeContext | None = None) -> SkillSet:
        """The context's skills."""
        if context is None:
            return EMPTY_SKILLS
        return context.get(SkillSet) or EMPTY_SKILLS

    def __repr__(self) -> str:
        return "<ContextSkillRepository>"


def collect(
    repositories: Sequence[SkillRepository], context: RuntimeContext | None = None
) -> tuple[SkillSet, ...]:
    """Each repository's non-empty skills, low to high priority; a failing one is logged."""
    parts: list[SkillSet] = []
    for repository in repositories:
        try:
            part = repository.skills(context)
        except Exception:
            _log.exception("skill repository %r failed; its skills are left out", repository)
            continue
        if len(part):
            parts.append(part)
    return tuple(parts)


def merge_skills(
    repositories: Sequence[SkillRepository], context: RuntimeContext | None = None
) -> SkillSet:
    """The skills of several repositories, low to high priority: a later name wins.

    A repository that fails is logged and skipped.
    """
    parts = collect(repositories, context)
    if not parts:
        return EMPTY_SKILLS
    if len(parts) == 1:
        return parts[0]
    return SkillSet(skill for part in parts for skill in part)


__all__ = [
    "ContextSkillRepository",
    "FileSystemSkillRepository",
    "PackageSkillRepository",
    "SkillRepository",
    "collect",
    "merge_skills",
]
