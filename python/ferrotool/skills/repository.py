"""Where skills come from: folders on disk, a package's resources, the request's context.

Every repository answers `SkillRepository.skills` with a `SkillSet`. Repositories are merged
low to high priority (`merge_skills`): a later skill of the same name wins. A repository that
has not changed answers with the same `SkillSet` object, so the views built from it are found
again without hashing any skill.

A folder's bad ``SKILL.md`` (past a bound, not UTF-8, without a name...) is one error: the
repository's other skills load, the bad one is named in a warning on the ``ferrotool.skills``
logger and in the repository's ``errors``, and `FileSystemSkillRepository.load` of that folder
raises the `SkillError`. Eager repositories hold at most ``budget`` bytes of resource files in
memory, all their skills together (`DEFAULT_BUDGET`); the resources past it stay on disk and
are read when a model asks for one (a package in a zip file has no disk: they are left out).
"""

from __future__ import annotations

import importlib.resources
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Final, Protocol, final, runtime_checkable

from ferrotool._permissions.confine import Refused, read_regular
from ferrotool._values.context import RuntimeContext
from ferrotool.errors import SkillError
from ferrotool.skills.resources import MAX_RESOURCE_BYTES, disk_files, text_of
from ferrotool.skills.skill import EMPTY_SKILLS, SKILL_FILE, AgentSkill, SkillSet

_log = logging.getLogger("ferrotool.skills")

MAX_SKILL_FILE: Final = 1024 * 1024
"""The largest ``SKILL.md`` read (bytes)."""
MAX_RESOURCES: Final = 1000
"""Resources read into memory per skill at most (the rest stay on disk)."""
DEFAULT_BUDGET: Final = 64 * 1024 * 1024
"""Bytes of resource files an eager repository holds in memory, its skills together (64 MiB).

Skills are read in folder-name order, each skill's files in `disk_files` order; a file that
would pass the budget stays on disk (read on demand), and later smaller ones may still fit."""
_NO_ERRORS: Final[Mapping[str, SkillError]] = MappingProxyType({})


@runtime_checkable
class SkillRepository(Protocol):
    """A source of skills."""

    def skills(self, context: RuntimeContext | None = None) -> SkillSet:
        """The skills this source holds now (for this request, if it depends on one)."""
        ...


@final
@dataclass(frozen=True, slots=True)
class _Cached:
    """One folder as last read: its skill or its error, and its share of the budget."""

    stamp: tuple[int, int]
    skill: AgentSkill | None
    error: SkillError | None = None
    held: int = 0
    """Bytes of resources held in memory."""
    offered: int = 0
    """The budget left for it when it was read."""
    cut: bool = False
    """Some resource was left on disk (the budget, or a file too large)."""

    def fits(self, remaining: int) -> bool:
        """Whether this reading stands with ``remaining`` bytes of budget left now."""
        return self.held <= remaining and (not self.cut or self.offered == remaining)


def _named_once(
    found: Sequence[tuple[str, AgentSkill]], errors: dict[str, SkillError], where: object
) -> list[AgentSkill]:
    """The skills whose name no other folder of the repository declares.

    Two folders that declare one name load neither: which one a model gets must not depend on
    how folders sort (a folder added later could otherwise shadow a trusted skill). Each is
    named in ``errors``, with the other folders.
    """
    folders: dict[str, list[str]] = {}
    for folder, skill in found:
        folders.setdefault(skill.name, []).append(folder)
    kept: list[AgentSkill] = []
    for folder, skill in found:
        sharing = folders[skill.name]
        if len(sharing) == 1:
            kept.append(skill)
            continue
        others = ", ".join(repr(other) for other in sharing if other != folder)
        place = _where(folder, os.path.join(str(where), folder))
        error = SkillError(
            f"{place}: the skill name {skill.name!r} is declared by the folders {others} too: "
            "none of them is loaded"
        )
        _log.warning("%s", error)
        errors[folder] = error
    return kept


def _where(name: str, folder: object) -> str:
    return f"skill folder {name!r} ({folder})"


def _decoded(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SkillError(
            f"{where}: SKILL.md is not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None


def _skill(
    where: str,
    text: str,
    resources: Mapping[str, str],
    source: str,
    origin: Path | None,
) -> AgentSkill:
    try:
        return AgentSkill.from_markdown(text, resources=resources, source=source, origin=origin)
    except SkillError as error:
        raise SkillError(f"{where}: {error}") from None
    except Exception as error:  # whatever else a file provokes is that skill's error too
        raise SkillError(f"{where}: {type(error).__name__}: {error}") from error


def _check_budget(budget: int) -> int:
    if budget < 0:
        raise ValueError(f"budget must be a number of bytes, 0 or more, not {budget}")
    return budget


@final
class FileSystemSkillRepository:
    """Skills in the direct subfolders of a folder, each with a ``SKILL.md``.

    Hidden entries and symlinks are skipped. Resources are every other regular, non-hidden
    file under the skill folder: UTF-8 text as is, other files as ``base64:``; with
    ``lazy=True`` none is read ahead, each is read from disk when a model asks for it, and
    without it at most ``budget`` bytes of them are held, all skills together (the rest are
    read on demand). A skill is read again only when its ``SKILL.md`` changes (modification
    time or size); so is a folder that fails to load, which is logged once, left out, and
    named in `errors`.

    Args:
        base_dir: The folder holding the skill folders.
        source: The skills' source (default ``filesystem-<parent>_<folder>``).
        lazy: Read resources on demand instead of ahead.
        budget: Bytes of resource files held in memory at most (`DEFAULT_BUDGET`).

    Raises:
        NotADirectoryError: ``base_dir`` is not a folder.
        ValueError: ``budget`` is negative.
    """

    __slots__ = ("_cache", "_errors", "_last", "_lock", "base_dir", "budget", "lazy", "source")

    def __init__(
        self,
        base_dir: str | os.PathLike[str],
        *,
        source: str | None = None,
        lazy: bool = False,
        budget: int = DEFAULT_BUDGET,
    ) -> None:
        path = Path(base_dir).absolute()
        if not path.is_dir():
            raise NotADirectoryError(f"skills folder {os.fspath(path)!r} is not a folder")
        self.base_dir: Final[Path] = path
        self.source: Final[str] = source or f"filesystem-{path.parent.name}_{path.name}"
        self.lazy: Final[bool] = lazy
        self.budget: Final[int] = _check_budget(budget)
        self._cache: dict[str, _Cached] = {}
        self._last: SkillSet = EMPTY_SKILLS
        self._errors: Mapping[str, SkillError] = _NO_ERRORS
        self._lock = threading.Lock()

    @property
    def errors(self) -> Mapping[str, SkillError]:
        """The folders whose skill failed to load at the last `skills`, by folder name."""
        return self._errors

    def skills(self, context: RuntimeContext | None = None) -> SkillSet:
        """The skills on disk now (the same `SkillSet` object while nothing changed).

        A folder whose skill fails to load is left out (see `errors`); it never hides the
        others.
        """
        found: list[tuple[str, AgentSkill]] = []
        errors: dict[str, SkillError] = {}
        seen: set[str] = set()
        changed = False
        remaining = self.budget
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
            if cached is None or cached.stamp != stamp or not cached.fits(remaining):
                changed = True
                cached = self._read(entry.name, Path(entry.path), stamp, remaining)
                self._cache[entry.path] = cached
            if cached.skill is None:
                if cached.error is not None:
                    errors[entry.name] = cached.error
                continue
            remaining -= cached.held
            found.append((entry.name, cached.skill))
        skills = _named_once(found, errors, self.base_dir)
        with self._lock:
            for gone in set(self._cache) - seen:
                del self._cache[gone]
                changed = True
            if changed or len(skills) != len(self._last):
                self._last = SkillSet(skills)
            if changed or len(errors) != len(self._errors):
                self._errors = MappingProxyType(errors) if errors else _NO_ERRORS
            return self._last

    def load(self, name: str) -> AgentSkill:
        """The skill in the folder ``name`` (a direct subfolder), read now.

        Raises:
            SkillError: Naming the folder: ``name`` is not a direct, non-hidden subfolder,
                or its skill fails to load (and why).
        """
        if not name or name.startswith(".") or "/" in name or os.sep in name or "\\" in name:
            raise SkillError(
                f"{name!r} is not a skill folder name (a direct subfolder of {self.base_dir})"
            )
        folder = self.base_dir / name
        if folder.is_symlink() or not folder.is_dir():
            raise SkillError(f"{_where(name, folder)}: not a folder")
        skill, _, _ = self._load(name, folder, self.budget)
        return skill

    def _read(self, name: str, folder: Path, stamp: tuple[int, int], remaining: int) -> _Cached:
        """One folder read for `skills`: its skill, or its error logged once."""
        try:
            skill, held, cut = self._load(name, folder, remaining)
        except SkillError as error:
            _log.warning("%s", error)
            return _Cached(stamp, None, error)
        return _Cached(stamp, skill, None, held, remaining, cut)

    def _load(self, name: str, folder: Path, remaining: int) -> tuple[AgentSkill, int, bool]:
        """The folder's skill, the bytes of resources it holds, and whether some were left.

        Raises:
            SkillError: Naming the folder, and why.
        """
        where = _where(name, folder)
        try:
            data = read_regular(os.fspath(folder / SKILL_FILE), MAX_SKILL_FILE)
        except Refused as error:
            raise SkillError(f"{where}: SKILL.md is {error}") from None
        except OSError as error:
            raise SkillError(f"{where}: SKILL.md cannot be read: {error}") from None
        text = _decoded(data, where)
        resources: dict[str, str] = {}
        held, cut = 0, False
        if not self.lazy:
            for index, relative in enumerate(disk_files(folder)):
                room = min(MAX_RESOURCE_BYTES, remaining - held)
                if index >= MAX_RESOURCES or room < 0:
                    cut = True
                    break
                try:
                    data = read_regular(os.fspath(folder / relative), room)
                except (OSError, Refused):
                    cut = True  # too large for the budget left, or unreadable: on disk
                    continue
                resources[relative] = text_of(data)
                held += len(data)
        return _skill(where, text, resources, self.source, folder), held, cut

    def __repr__(self) -> str:
        return f"<FileSystemSkillRepository {os.fspath(self.base_dir)!r}>"


@final
class PackageSkillRepository:
    """Skills shipped inside a Python package (read through `importlib.resources`).

    Each direct subfolder of ``package/folder`` with a ``SKILL.md`` is a skill; resources are
    read ahead (a package may live in a zip file), at most ``budget`` bytes of them, all skills
    together: past it, a package on disk serves them on demand, one in a zip file leaves them
    out. Read once: a package does not change. A skill that fails to load is logged, left
    out, and named in `errors`.

    Args:
        package: The package's import name.
        folder: The folder inside the package holding the skill folders.
        source: The skills' source (default ``package-<package>_<folder>``).
        budget: Bytes of resource files held in memory at most (`DEFAULT_BUDGET`).

    Raises:
        ValueError: ``budget`` is negative.
    """

    __slots__ = ("_errors", "_skills", "budget", "folder", "package", "source")

    def __init__(
        self,
        package: str,
        folder: str = "skills",
        *,
        source: str | None = None,
        budget: int = DEFAULT_BUDGET,
    ) -> None:
        self.package: Final[str] = package
        self.folder: Final[str] = folder
        self.source: Final[str] = source or f"package-{package}_{folder.replace('/', '-')}"
        self.budget: Final[int] = _check_budget(budget)
        self._skills: SkillSet | None = None
        self._errors: Mapping[str, SkillError] = _NO_ERRORS

    @property
    def errors(self) -> Mapping[str, SkillError]:
        """The folders whose skill failed to load, by folder name."""
        return self._errors

    def skills(self, context: RuntimeContext | None = None) -> SkillSet:
        """The package's skills."""
        if self._skills is None:
            root = importlib.resources.files(self.package)
            for part in self.folder.split("/"):
                root = root.joinpath(part)
            found: list[tuple[str, AgentSkill]] = []
            errors: dict[str, SkillError] = {}
            remaining = self.budget
            if root.is_dir():
                for entry in sorted(root.iterdir(), key=lambda item: item.name):
                    if entry.name.startswith(".") or not entry.is_dir():
                        continue
                    try:
                        loaded = self._load(entry, remaining)
                    except SkillError as error:
                        _log.warning("%s", error)
                        errors[entry.name] = error
                        continue
                    if loaded is not None:
                        found.append((entry.name, loaded[0]))
                        remaining -= loaded[1]
            skills = _named_once(found, errors, f"{self.package}/{self.folder}")
            self._errors = MappingProxyType(errors) if errors else _NO_ERRORS
            self._skills = SkillSet(skills)
        return self._skills

    def _load(self, folder: Traversable, remaining: int) -> tuple[AgentSkill, int] | None:
        """The folder's skill and the bytes of resources it holds (``None``: no skill).

        Raises:
            SkillError: Naming the folder, and why.
        """
        skill_file = folder.joinpath(SKILL_FILE)
        if not skill_file.is_file():
            return None
        where = _where(folder.name, folder)
        try:
            data = skill_file.read_bytes()
        except OSError as error:
            raise SkillError(f"{where}: SKILL.md cannot be read: {error}") from None
        if len(data) > MAX_SKILL_FILE:
            raise SkillError(f"{where}: SKILL.md is larger than {MAX_SKILL_FILE} bytes")
        text = _decoded(data, where)
        resources: dict[str, str] = {}
        held = 0
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
                    room = min(MAX_RESOURCE_BYTES, remaining - held)
                    try:
                        if isinstance(item, Path) and item.stat().st_size > room:
                            continue  # not read at all: served from disk on demand
                        data = item.read_bytes()
                    except OSError:
                        continue
                    if len(data) <= room:
                        resources[relative] = text_of(data)
                        held += len(data)
        origin = folder if isinstance(folder, Path) else None
        return _skill(where, text, resources, self.source, origin), held

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
    "DEFAULT_BUDGET",
    "ContextSkillRepository",
    "FileSystemSkillRepository",
    "PackageSkillRepository",
    "SkillRepository",
    "collect",
    "merge_skills",
]
