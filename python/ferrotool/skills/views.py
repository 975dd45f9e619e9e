"""Dynamic skill views: the skills of each request, from repositories read per request.

`SkillViews` reads its repositories for a request (a per-session repository reads the
request's `RuntimeContext`), applies the filter, and finds the `SkillBox` for that exact set of
skills by its content signature: a registry with the matching skill loader, the prompt
fragment, and the skills' files on disk. A box is built once per signature: concurrent
requests that miss share one build. Boxes are evicted by count (least recently used first),
and a rebuilt box gets a new folder.

A box's folder is deleted as soon as nothing uses it: its users are the box itself while
anything can still reach it (the cache, a view or registry built over it, a `SkillBox` a
caller keeps: all of them hold the box's skill loader, whose collection releases this user)
and every running ``load_skill_through_path`` call (it holds the folder while it reads). So an
evicted box that no view holds is deleted at once, one evicted while a view or a call uses it
when the last of them lets go (renamed away at once, deleted by a background thread:
`ferrotool.skills._folders`), and the disk of a long-running server stays bounded by the
boxes in the cache and in use. What is left is deleted when the process exits. Only box
folders made here are ever deleted: a ``work_dir`` given by the caller, its other contents and
skills' own folders are left alone.
"""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, final

import anyio.to_thread

from ferrotool._execution.middleware import Middleware
from ferrotool._permissions.confine import is_inside, real
from ferrotool._requests.config import ToolRequestConfig
from ferrotool._session.state import SessionStore
from ferrotool._values.context import RuntimeContext
from ferrotool.skills._folders import LIVE, TRASH_PREFIX, BoxFolder, delete
from ferrotool.skills.filter import ALL_SKILLS, SkillFilter
from ferrotool.skills.loader import LoadSkillThroughPath
from ferrotool.skills.prompt import skill_prompt
from ferrotool.skills.registration import skills_of
from ferrotool.skills.repository import SkillRepository, collect
from ferrotool.skills.resources import clean_path, skill_markdown
from ferrotool.skills.skill import BASE64_PREFIX, SKILL_FILE, AgentSkill, SkillSet

if TYPE_CHECKING:
    from ferrotool._registry.registry import Registry
    from ferrotool._registry.view import ToolView

DEFAULT_MAX_BOXES: Final = 64
"""Skill boxes a `SkillViews` keeps (least recently used evicted first)."""
_MEMO_SIZE: Final = 256


@final
@dataclass(frozen=True, slots=True, eq=False)
class SkillBox:
    """What one set of skills needs, built once per content signature.

    Attributes:
        signature: The skills' content signature (SHA-256, hex).
        skills: The skills, each with its folder on disk (materialised when it had none).
        registry: The base registry with this set's skill loader (none when no skills).
        prompt: The skills prompt fragment (byte-stable).
        folder: The folder holding the materialised skills, if any were.
    """

    signature: str
    skills: SkillSet
    registry: Registry
    prompt: str
    folder: Path | None


@final
class SkillViews:
    """Per-request skill views over a registry (see the module).

    Args:
        registry: The tools, groups (skill-bound ones among them) and any skills added to the
            toolkit; those skills have the lowest priority.
        repositories: Skill sources, low to high priority (a later skill name wins).
        filter: Which skills requests see; a request's own `SkillFilter` lies over it.
        max_boxes: Boxes kept at most.
        work_dir: Where skills without a folder are written; by default a temporary folder
            removed at exit. A given folder is never removed (the box folders made in it are).
        files_root: Name each skill's folder in the prompt (for models that run scripts).
    """

    def __init__(
        self,
        registry: Registry,
        repositories: Sequence[SkillRepository] = (),
        *,
        filter: SkillFilter = ALL_SKILLS,
        max_boxes: int = DEFAULT_MAX_BOXES,
        work_dir: str | os.PathLike[str] | None = None,
        files_root: bool = False,
    ) -> None:
        if max_boxes < 1:
            raise ValueError(f"max_boxes must be at least 1, not {max_boxes}")
        self.registry = registry
        self.repositories: tuple[SkillRepository, ...] = (skills_of(registry), *repositories)
        self.filter = filter
        self.max_boxes = max_boxes
        self.files_root = files_root
        self._given_dir = None if work_dir is None else Path(work_dir)
        self._work_dir: Path | None = self._given_dir
        self._boxes: OrderedDict[str, SkillBox] = OrderedDict()
        self._building: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._memo: OrderedDict[tuple[object, ...], tuple[tuple[SkillSet, ...], SkillSet]] = (
            OrderedDict()
        )
        self.builds: int = 0
        """How many boxes were built (materialisations)."""
        self._made: list[Path] = []
        weakref.finalize(self, _close, self._boxes, self._made).atexit = False

    # - the request's skills -

    def skills(self, context: RuntimeContext | None = None) -> SkillSet:
        """The skills a request sees: merged, then filtered (the same object while unchanged)."""
        parts = collect(self.repositories, context)
        rule = self.filter.overlay(None if context is None else context.get(SkillFilter))
        key = (rule, *(id(part) for part in parts))
        with self._lock:
            hit = self._memo.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[0], parts, strict=True)):
                self._memo.move_to_end(key)
                return hit[1]
        merged = (skill for part in parts for skill in part)
        visible = SkillSet(skill for skill in SkillSet(merged) if rule.allows(skill.name))
        with self._lock:
            self._memo[key] = (parts, visible)
            while len(self._memo) > _MEMO_SIZE:
                self._memo.popitem(last=False)
        return visible

    async def box(self, context: RuntimeContext | None = None) -> SkillBox:
        """The box of the request's skills (built on a worker thread on a miss)."""
        skills = self.skills(context)
        signature = skills.signature
        with self._lock:
            found = self._boxes.get(signature)
            if found is not None:
                self._boxes.move_to_end(signature)
                return found
        job = _BuildJob(self, skills)
        await anyio.to_thread.run_sync(job)
        return job.take()

    def box_sync(self, context: RuntimeContext | None = None) -> SkillBox:
        """`box` for sync code (builds on the calling thread)."""
        skills = self.skills(context)
        with self._lock:
            found = self._boxes.get(skills.signature)
            if found is not None:
                self._boxes.move_to_end(skills.signature)
                return found
        return self._build(skills)

    async def open_view(
        self,
        context: RuntimeContext,
        store: SessionStore,
        config: ToolRequestConfig | None = None,
        *,
        middleware: Sequence[Middleware] = (),
    ) -> ToolView:
        """The request's view: its session, its tools, and the loader of its skills."""
        box = await self.box(context)
        return await box.registry.open_view(context, store, config, middleware=middleware)

    async def prompt(self, context: RuntimeContext | None = None) -> str:
        """The skills prompt fragment of the request."""
        return (await self.box(context)).prompt

    # - building -

    def _build(self, skills: SkillSet) -> SkillBox:
        signature = skills.signature
        with self._lock:
            lock = self._building.setdefault(signature, threading.Lock())
        with lock:  # a concurrent miss waits here, then finds the box
            with self._lock:
                found = self._boxes.get(signature)
                if found is not None:
                    self._boxes.move_to_end(signature)
                    return found
            box = self._materialise(skills)
            with self._lock:
                self._boxes[signature] = box
                self.builds += 1
                while len(self._boxes) > self.max_boxes:
                    # dropped here; its folder goes when no view or call holds the box
                    self._boxes.popitem(last=False)
                self._building.pop(signature, None)
        return box

    def _materialise(self, skills: SkillSet) -> SkillBox:
        folder: Path | None = None
        placed: list[AgentSkill] = []
        for skill in skills:
            if skill.origin is not None:
                placed.append(skill)
                continue
            if folder is None:
                folder = self._new_folder(skills.signature)
            placed.append(skill.with_origin(_write_skill(folder, skill)))
        final_skills = SkillSet(placed)
        registry = self.registry
        if len(final_skills):
            owned = None if folder is None else BoxFolder(folder)
            hold = None if owned is None else owned.held
            loader = LoadSkillThroughPath(final_skills, registry.groups(), hold=hold)
            registry = registry.with_tools(loader)
            if owned is not None:  # the box is reachable while its loader is
                weakref.finalize(loader, owned.release).atexit = False
        return SkillBox(
            signature=skills.signature,
            skills=final_skills,
            registry=registry,
            prompt=skill_prompt(final_skills, files_root=self.files_root),
            folder=folder,
        )

    def _new_folder(self, signature: str) -> Path:
        """A new folder for one box: unique even when several views share a work folder."""
        with self._lock:
            if self._work_dir is None:
                self._work_dir = Path(tempfile.mkdtemp(prefix="ferrotool-skills-"))
                LIVE.add(self._work_dir)
                self._made.append(self._work_dir)
            work = self._work_dir
        work.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f"{signature[:16]}-", dir=work))

    def __repr__(self) -> str:
        return f"<SkillViews of {len(self.repositories)} repositories, {len(self._boxes)} boxes>"


@final
class _BuildJob:
    """A build for a worker thread that keeps nothing once taken.

    An idle worker thread keeps its last job's callable, arguments and result: had they been
    the box, it would outlive its eviction (and its folder stay) until the thread's next job.
    """

    __slots__ = ("_box", "_skills", "_views")

    def __init__(self, views: SkillViews, skills: SkillSet) -> None:
        self._views: SkillViews | None = views
        self._skills: SkillSet | None = skills
        self._box: SkillBox | None = None

    def __call__(self) -> None:
        views, skills = self._views, self._skills
        self._views = self._skills = None
        if views is None or skills is None:
            raise RuntimeError("a build job runs once")
        self._box = views._build(skills)

    def take(self) -> SkillBox:
        box, self._box = self._box, None
        if box is None:
            raise RuntimeError("the build job has not run, or its box was taken")
        return box


def folder_name(skill_id: str) -> str:
    """The name of a skill's folder in a box: distinct for distinct ids, on any file system.

    The id's ASCII letters, digits, ``-`` and ``_`` (anything else becomes ``_``, at most 40
    of them), then ``-`` and 16 hex digits of the id's SHA-256: two ids that read alike once
    cleaned (``a b`` and ``a_b``), that differ only in case (``Skill``, ``skill``: one
    folder on a case-insensitive file system) or in their Unicode normalisation (one folder
    on a normalising one) still get folders of their own. Never hidden, never ``.`` or
    ``..``.
    """
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in skill_id)
    digest = hashlib.sha256(skill_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{cleaned[:_NAME_CHARS] or 'skill'}-{digest}"


_NAME_CHARS: Final = 40


def _write_skill(root: Path, skill: AgentSkill) -> Path:
    """Write a skill's ``SKILL.md`` and resources under ``root``; return its folder.

    The folder is new (`folder_name`): a skill never writes into another's. A resource whose
    path is not a plain relative one is skipped (never written outside).
    """
    folder = root / folder_name(skill.skill_id)
    root.mkdir(parents=True, exist_ok=True)
    folder.mkdir()
    (folder / SKILL_FILE).write_text(skill_markdown(skill), encoding="utf-8")
    real_root = real(folder)
    for key, value in skill.resources.items():
        cleaned = clean_path(key)
        if cleaned is None or cleaned == SKILL_FILE:
            continue
        target = folder / cleaned
        if not is_inside(real(target), real_root):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if value.startswith(BASE64_PREFIX):
            try:
                target.write_bytes(base64.b64decode(value[len(BASE64_PREFIX) :], validate=True))
            except ValueError:
                target.write_text(value, encoding="utf-8")
        else:
            target.write_text(value, encoding="utf-8")
    return folder


def _close(boxes: OrderedDict[str, SkillBox], made: list[Path]) -> None:
    """A collected `SkillViews`: drop its boxes, then its work folder if no box is left in it.

    A box still held by a view keeps its folder (and so the work folder) until exit.
    """
    boxes.clear()  # each box no view holds releases its folder here
    for folder in made:
        try:
            left = [name for name in os.listdir(folder) if not name.startswith(TRASH_PREFIX)]
        except OSError:
            continue
        if not left:  # after the boxes' own deletions, queued first
            delete(folder, rename=False)


__all__ = ["DEFAULT_MAX_BOXES", "SkillBox", "SkillViews", "folder_name"]
