"""Box folders of `SkillViews`: deleted once evicted and unused, never while in use.

A long-running server sees a new set of per-session skills on many requests; each set is
written to a folder of its own. These tests hold that the folders on disk stay bounded by the
boxes cached and in use, that a box in use (a view over it, a running load) keeps its files
until released, that threads and tasks racing with eviction never find a file missing, and that
folders the caller owns are never touched.
"""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from ferrotool import (
    EMPTY_STATE,
    InMemorySessionStore,
    RuntimeContext,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
    ToolView,
)
from ferrotool.skills import (
    LOAD_SKILL,
    AgentSkill,
    ContextSkillRepository,
    FileSystemSkillRepository,
    LoadSkillThroughPath,
    SkillBox,
    SkillSet,
    SkillViews,
)
from ferrotool.skills._folders import TRASH_PREFIX, settle
from ferrotool.skills.resources import listing as real_listing


def _skills(*names: str) -> SkillSet:
    return SkillSet(
        AgentSkill(
            name=name,
            description=f"{name} things",
            content="Follow the steps.",
            resources={"notes/a.md": f"notes of {name}", "scripts/run.py": "print(1)\n"},
        )
        for name in names
    )


def _context(index: int, session: str = "s") -> RuntimeContext:
    return RuntimeContext.of(_skills(f"k{index}"), user_id="u", session_id=session)


def _views(max_boxes: int, work: Path | None = None) -> SkillViews:
    return SkillViews(
        Toolkit().snapshot(), [ContextSkillRepository()], max_boxes=max_boxes, work_dir=work
    )


def _boxes_in(work: Path) -> list[Path]:
    """The box folders in ``work`` (not those released, renamed and being deleted)."""
    return sorted(
        path for path in work.iterdir() if path.is_dir() and not path.name.startswith(TRASH_PREFIX)
    )


def _folders_after_deletions(work: Path) -> list[Path]:
    """Every folder in ``work`` once the background deletions are done."""
    settle()
    return sorted(path for path in work.iterdir() if path.is_dir())


def _loader(view: ToolView) -> LoadSkillThroughPath:
    found = view.get_tool(LOAD_SKILL)
    assert isinstance(found, LoadSkillThroughPath)
    return found


def _origin(skills: SkillSet, name: str) -> Path:
    skill = skills.get(name)
    assert skill is not None
    assert skill.origin is not None
    return skill.origin


def _load(path: str, skill_id: str) -> ToolUseBlock:
    return ToolUseBlock.of("c", LOAD_SKILL, {"skillId": skill_id, "path": path})


async def test_200_skill_sets_keep_the_disk_bounded(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "mine.txt").write_text("the caller's")
    views = _views(4, work)
    store = InMemorySessionStore()
    most = 0
    for index in range(200):
        context = _context(index, session=f"s{index}")
        view = await views.open_view(context, store)
        result = await view.call_tool(_load("notes/a.md", f"k{index}_custom"), context)
        assert result.state is ToolResultState.SUCCESS
        assert f"notes of k{index}" in result.content
        del view
        most = max(most, len(_boxes_in(work)))
    assert views.builds == 200
    assert most <= 5  # the cached boxes, and the one being built
    assert len(_folders_after_deletions(work)) == 4
    assert (work / "mine.txt").read_text() == "the caller's"


async def test_generated_work_folder_stays_bounded_too() -> None:
    views = _views(2)
    first = await views.box(_context(0))
    assert first.folder is not None
    work = first.folder.parent
    del first
    for index in range(1, 60):
        await views.box(_context(index))
        assert len(_boxes_in(work)) <= 2
    assert len(_folders_after_deletions(work)) == 2


async def test_an_evicted_box_is_deleted_at_once_when_unused(tmp_path: Path) -> None:
    views = _views(1, tmp_path)
    box = await views.box(_context(0))
    folder = box.folder
    assert folder is not None
    del box
    assert folder.is_dir()  # cached: kept
    await views.box(_context(1))  # evicts box 0, which nothing holds
    assert not folder.exists()


async def test_a_view_in_use_keeps_its_box_until_released(tmp_path: Path) -> None:
    views = _views(1, tmp_path)
    context = _context(0)
    view = await views.open_view(context, InMemorySessionStore())
    folder = _origin(_loader(view).skills, "k0")
    for index in range(1, 4):  # box 0 evicted, then others built and evicted
        await views.box(_context(index))
    gc.collect()
    assert (folder / "notes" / "a.md").read_text() == "notes of k0"
    missing = await view.call_tool(_load("nope.md", "k0_custom"), context)
    assert "scripts/run.py" in missing.content  # listed from memory and disk alike
    loaded = await view.call_tool(_load("scripts/run.py", "k0_custom"), context)
    assert loaded.state is ToolResultState.SUCCESS
    assert len(_boxes_in(tmp_path)) == 2  # the cached box, and the one in use
    del view, missing, loaded
    assert not folder.parent.exists()  # the last user let go: taken away at once
    assert len(_folders_after_deletions(tmp_path)) == 1


async def test_a_kept_box_keeps_its_folder_until_dropped(tmp_path: Path) -> None:
    views = _views(1, tmp_path)
    box = await views.box(_context(0))
    assert box.folder is not None
    await views.box(_context(1))
    gc.collect()
    assert box.folder.is_dir()
    folder = box.folder
    del box
    assert not folder.exists()


async def test_a_running_load_holds_the_folder_through_eviction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    views = _views(1, tmp_path)
    context = _context(0)
    folder = (await views.box(context)).folder
    assert folder is not None
    seen: list[list[str]] = []

    def evicting_listing(skill: AgentSkill) -> tuple[list[str], int]:
        # mid-call: the box is evicted and every reference outside the call is gone
        views.box_sync(_context(1))
        gc.collect()
        assert folder.is_dir()
        names, more = real_listing(skill)
        seen.append(names)
        return names, more

    monkeypatch.setattr("ferrotool.skills.loader.listing", evicting_listing)
    result = await (await views.open_view(context, InMemorySessionStore())).call_tool(
        _load("missing.md", "k0_custom"), context
    )
    assert seen == [["SKILL.md", "notes/a.md", "scripts/run.py"]]
    assert result.state is ToolResultState.ERROR
    del result
    gc.collect()
    assert not folder.exists()  # released after the call


def test_the_loader_holds_its_folder_while_it_reads() -> None:
    events: list[str] = []

    @contextmanager
    def hold() -> Iterator[None]:
        events.append("held")
        yield
        events.append("released")

    skills = _skills("a")
    loader = LoadSkillThroughPath(skills, hold=hold)
    box = Toolkit().snapshot().with_tools(loader)
    resource = box.call_tool_sync(_load("notes/a.md", "a_custom"))
    assert resource.state is ToolResultState.SUCCESS
    assert events == ["held", "released"]
    box.call_tool_sync(_load("SKILL.md", "a_custom"))  # from memory: nothing read from disk
    assert events == ["held", "released"]
    missing = box.call_tool_sync(_load("gone.md", "a_custom"))
    assert missing.state is ToolResultState.ERROR
    assert events == ["held", "released"] * 2


async def test_tasks_racing_eviction_never_miss_a_file(tmp_path: Path) -> None:
    views = _views(2, tmp_path)
    store = InMemorySessionStore()
    failures: list[str] = []

    async def one(index: int) -> None:
        context = _context(index % 12, session=f"t{index}")
        view = await views.open_view(context, store)
        folder = _origin(_loader(view).skills, f"k{index % 12}")
        for _ in range(3):
            await anyio.sleep(0)  # let other tasks build and evict meanwhile
            if not (folder / "notes" / "a.md").is_file():
                failures.append(f"{folder} missing")
            listed = await view.call_tool(_load("x.md", f"k{index % 12}_custom"), context)
            if "scripts/run.py" not in listed.content:
                failures.append(listed.content)

    async with anyio.create_task_group() as group:
        for index in range(120):
            group.start_soon(one, index)
    assert failures == []
    gc.collect()
    assert len(_folders_after_deletions(tmp_path)) == 2


def test_threads_racing_eviction_never_miss_a_file(tmp_path: Path) -> None:
    views = _views(2, tmp_path)
    failures: list[str] = []
    barrier = threading.Barrier(8)

    def one(worker: int) -> None:
        barrier.wait()
        for step in range(40):
            index = (worker * 7 + step) % 10
            box: SkillBox | None = views.box_sync(_context(index))
            assert box is not None
            view = box.registry.view(EMPTY_STATE)
            box = None  # only the view holds it now
            folder = _origin(_loader(view).skills, f"k{index}")
            if not (folder / "scripts" / "run.py").is_file():
                failures.append(f"{folder} missing")
            listed = view.call_tool_sync(_load("x.md", f"k{index}_custom"))
            if "scripts/run.py" not in listed.content:
                failures.append(listed.content)

    threads = [threading.Thread(target=one, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    gc.collect()
    assert len(_folders_after_deletions(tmp_path)) == 2


async def test_the_callers_folders_are_never_deleted(collection: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    views = SkillViews(
        Toolkit().snapshot(),
        [FileSystemSkillRepository(collection, source="fs"), ContextSkillRepository()],
        max_boxes=1,
        work_dir=work,
    )
    before = sorted(str(path.relative_to(collection)) for path in collection.rglob("*"))
    for index in range(6):
        skills = (await views.box(_context(index))).skills
        assert _origin(skills, "pdf") == collection / "pdf"  # the caller's, not copied
    # only the in-memory skill is materialised; one cached box left in the caller's work folder
    assert len(_folders_after_deletions(work)) == 1
    assert (work / "notes.txt").read_text() == "mine"
    assert sorted(str(path.relative_to(collection)) for path in collection.rglob("*")) == before
    only_own = SkillViews(
        Toolkit().snapshot(), [FileSystemSkillRepository(collection)], max_boxes=1
    )
    own_box = await only_own.box()
    assert own_box.folder is None  # every skill has its folder: nothing generated
    del own_box, only_own
    gc.collect()
    assert sorted(str(path.relative_to(collection)) for path in collection.rglob("*")) == before


async def test_a_collected_skill_views_deletes_its_folders() -> None:
    views = _views(4)
    folders = []
    for index in range(3):
        folder = (await views.box(_context(index))).folder
        assert folder is not None
        folders.append(folder)
    work = folders[0].parent
    del views
    gc.collect()
    assert not any(folder.exists() for folder in folders)
    settle()
    assert not work.exists()


def test_what_is_left_is_deleted_at_exit(tmp_path: Path) -> None:
    program = textwrap.dedent(
        """
        import sys
        import anyio
        from pathlib import Path
        from ferrotool import InMemorySessionStore, Toolkit, RuntimeContext
        from ferrotool.skills import AgentSkill, SkillSet, SkillViews, ContextSkillRepository

        given = Path(sys.argv[1])
        def context(name):
            skills = SkillSet([AgentSkill(name=name, description="d", content="c",
                                          resources={"r.txt": "r"})])
            return RuntimeContext.of(skills, session_id="s")
        generated = SkillViews(Toolkit().snapshot(), [ContextSkillRepository()])
        kept = SkillViews(Toolkit().snapshot(), [ContextSkillRepository()], work_dir=given,
                          max_boxes=1)
        one = anyio.run(generated.box, context("a"))
        in_use = anyio.run(kept.open_view, context("b"), InMemorySessionStore())
        anyio.run(kept.box, context("c"))  # evicts "b", still in use at exit
        print(one.folder)
        print(in_use.get_tool("load_skill_through_path").skills.get("b").origin.parent)
        print(anyio.run(kept.box, context("c")).folder)
        """
    )
    given = tmp_path / "given"
    given.mkdir()
    (given / "mine.txt").write_text("mine")
    out = subprocess.run(
        [sys.executable, "-c", program, str(given)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    generated, in_use, cached = (Path(line) for line in out)
    assert in_use.parent == given
    assert cached.parent == given
    assert not generated.exists()
    assert not generated.parent.exists()  # the generated work folder too
    assert not in_use.exists()
    assert not cached.exists()
    assert given.is_dir()
    assert (given / "mine.txt").read_text() == "mine"


async def test_deletion_runs_off_the_releasing_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    real_rmtree = shutil.rmtree

    def recording_rmtree(path: Path, ignore_errors: bool = False) -> None:
        threads.append(threading.current_thread().name)
        real_rmtree(path, ignore_errors=ignore_errors)

    monkeypatch.setattr("ferrotool.skills._folders.shutil.rmtree", recording_rmtree)
    views = _views(1, tmp_path)
    folder = (await views.box(_context(0))).folder
    assert folder is not None
    await views.box(_context(1))  # released here, on the event loop's thread
    assert not folder.exists()  # taken away at once
    settle()
    assert threads == ["ferrotool-skill-folders"]
    assert len(_folders_after_deletions(tmp_path)) == 1
