"""Dynamic skill views: built once per content signature, shared, evicted, cleaned at exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import anyio
import orjson

from ferrotool import (
    InMemorySessionStore,
    RuntimeContext,
    SessionKey,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.builtins import Sandbox
from ferrotool.builtins.shell import ShellCommandTool
from ferrotool.skills import (
    LOAD_SKILL,
    AgentSkill,
    ContextSkillRepository,
    FileSystemSkillRepository,
    SkillFilter,
    SkillSet,
    SkillViews,
    add_skills,
    create_skill_tool_group,
)


@tool
def plot(values: list[float]) -> str:
    """Plot values."""
    return f"{len(values)} points"


def _session_skills(*names: str, content: str = "Follow the steps.") -> SkillSet:
    return SkillSet(
        AgentSkill(
            name=name,
            description=f"{name} things",
            content=content,
            resources={"notes/a.md": f"notes of {name}", "bin/tool.bin": "base64:AAEC"},
        )
        for name in names
    )


def _toolkit() -> Toolkit:
    toolkit = Toolkit()
    create_skill_tool_group(toolkit, "plotting", "Plot tools", skill_name="charts")
    toolkit.register(plot, group="plotting")
    return toolkit


async def test_real_collection_end_to_end_through_a_view(collection: Path) -> None:
    toolkit = _toolkit()
    # the sandbox's /tmp is its own: the collection (under the test's tmp_path) is bound in
    toolkit.register(
        ShellCommandTool(allow=[sys.executable], sandbox=Sandbox(read_only=[collection]))
    )
    views = SkillViews(
        toolkit.snapshot(),
        [FileSystemSkillRepository(collection, source="fs"), ContextSkillRepository()],
        files_root=True,
    )
    store = InMemorySessionStore()
    context = RuntimeContext.of(_session_skills("charts"), user_id="u", session_id="s")
    view = await views.open_view(context, store)
    enum = orjson.loads(view.get_spec(LOAD_SKILL).parameters_json)["properties"]["skillId"]["enum"]  # type: ignore[union-attr]
    assert enum == [
        "brand-guidelines_fs",
        "charts_custom",
        "docx_fs",
        "pdf_fs",
        "webapp-testing_fs",
    ]
    prompt = await views.prompt(context)
    assert prompt.count("<skill>") == 5
    assert f"<files-root>{collection / 'pdf'}</files-root>" in prompt
    assert "plot" not in view
    results = await view.call_tools(
        [
            ToolUseBlock.of("1", LOAD_SKILL, {"skillId": "pdf_fs", "path": "SKILL.md"}),
            ToolUseBlock.of("2", LOAD_SKILL, {"skillId": "charts_custom", "path": "notes/a.md"}),
            ToolUseBlock.of("3", LOAD_SKILL, {"skillId": "docx_fs", "path": "scripts/pack.py"}),
        ],
        context,
    )
    assert [r.state for r in results.results] == [ToolResultState.SUCCESS] * 3
    assert "notes of charts" in results.results[1].content
    view = await views.open_view(context, store)
    assert "plot" in view  # loading "charts" activated its bound group
    assert (await store.load(SessionKey("u", "s"))).skills == {
        "pdf_fs",
        "charts_custom",
        "docx_fs",
    }
    # the in-memory skill was materialised: a script of it runs from its folder
    box = await views.box(context)
    charts = box.skills.get("charts")
    assert charts is not None
    assert charts.origin is not None
    assert (charts.origin / "notes" / "a.md").read_text() == "notes of charts"
    assert (charts.origin / "bin" / "tool.bin").read_bytes() == b"\x00\x01\x02"
    assert (charts.origin / "SKILL.md").read_text().startswith('---\nname: "charts"')
    script = str(collection / "pdf" / "scripts" / "extract.py")
    run = await view.call_tool(
        ToolUseBlock.of(
            "4", "execute_shell_command", {"command": f"{sys.executable} {script} a.pdf"}
        ),
        context,
    )
    assert (
        run.content == "<returncode>0</returncode><stdout>text of a.pdf\n</stdout><stderr></stderr>"
    )


async def test_same_skills_reuse_the_box(collection: Path) -> None:
    repository = FileSystemSkillRepository(collection)
    views = SkillViews(_toolkit().snapshot(), [repository])
    first = await views.box()
    again = await views.box()
    assert again is first
    assert views.builds == 1
    # another repository object with the same content: same signature, same box
    other = SkillViews(_toolkit().snapshot(), [FileSystemSkillRepository(collection)])
    assert (await other.box()).signature == first.signature


async def test_signature_changes_when_a_skill_is_edited(collection: Path) -> None:
    views = SkillViews(_toolkit().snapshot(), [FileSystemSkillRepository(collection)])
    before = await views.box()
    skill_md = collection / "docx" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nNew rule.\n")
    after = await views.box()
    assert after.signature != before.signature
    assert views.builds == 2
    docx = after.skills.get("docx")
    assert docx is not None
    result = await after.registry.call_tool(
        ToolUseBlock.of("1", LOAD_SKILL, {"skillId": docx.skill_id, "path": "SKILL.md"})
    )
    assert "New rule." in result.content


async def test_concurrent_misses_share_one_build() -> None:
    views = SkillViews(_toolkit().snapshot(), [ContextSkillRepository()])
    skills = _session_skills(*(f"s{i}" for i in range(30)))
    contexts = [RuntimeContext.of(skills, session_id=f"x{i}") for i in range(50)]
    boxes = []

    async def one(context: RuntimeContext) -> None:
        boxes.append(await views.box(context))

    async with anyio.create_task_group() as group:
        for context in contexts:
            group.start_soon(one, context)
    assert views.builds == 1
    assert len({id(box) for box in boxes}) == 1


def test_concurrent_misses_from_threads_share_one_build() -> None:
    views = SkillViews(_toolkit().snapshot(), [ContextSkillRepository()])
    skills = _session_skills("a", "b")
    barrier = threading.Barrier(8)
    boxes = []

    def one() -> None:
        barrier.wait()
        boxes.append(views.box_sync(RuntimeContext.of(skills)))

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert views.builds == 1
    assert len({id(box) for box in boxes}) == 1


async def test_eviction_by_count_keeps_evicted_folders() -> None:
    views = SkillViews(_toolkit().snapshot(), [ContextSkillRepository()], max_boxes=2)
    boxes = [await views.box(RuntimeContext.of(_session_skills(f"k{i}"))) for i in range(4)]
    assert views.builds == 4
    assert all(box.folder is not None and box.folder.is_dir() for box in boxes)  # held here
    rebuilt = await views.box(RuntimeContext.of(_session_skills("k0")))
    assert views.builds == 5
    assert rebuilt is not boxes[0]
    assert rebuilt.signature == boxes[0].signature
    assert rebuilt.folder != boxes[0].folder  # a new folder: the old one is in use


async def test_a_callers_work_folder_is_used_and_left_alone(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    views = SkillViews(_toolkit().snapshot(), [ContextSkillRepository()], work_dir=work)
    box = await views.box(RuntimeContext.of(_session_skills("a")))
    assert box.folder is not None
    assert box.folder.parent == work


def test_generated_folders_are_removed_at_exit(tmp_path: Path) -> None:
    program = textwrap.dedent(
        """
        import anyio
        from ferrotool import Toolkit, RuntimeContext
        from ferrotool.skills import AgentSkill, SkillSet, SkillViews, ContextSkillRepository

        given = __import__("pathlib").Path(__import__("sys").argv[1])
        skills = SkillSet([AgentSkill(name="a", description="d", content="c",
                                      resources={"r.txt": "r"})])
        generated = SkillViews(Toolkit().snapshot(), [ContextSkillRepository()])
        kept = SkillViews(Toolkit().snapshot(), [ContextSkillRepository()], work_dir=given)
        one = anyio.run(generated.box, RuntimeContext.of(skills))
        two = anyio.run(kept.box, RuntimeContext.of(skills))
        print(one.folder)
        print(two.folder)
        """
    )
    given = tmp_path / "given"
    given.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", program, str(given)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split()
    generated, kept = Path(out[0]), Path(out[1])
    assert not generated.exists()
    assert not generated.parent.exists()
    assert not kept.exists()  # a box made in the caller's folder...
    assert given.exists()  # ...but not the folder itself


async def test_request_filter_lies_over_the_configured_one() -> None:
    views = SkillViews(
        _toolkit().snapshot(), [ContextSkillRepository()], filter=SkillFilter.except_("b")
    )
    skills = _session_skills("a", "b", "c")
    assert (await views.box(RuntimeContext.of(skills))).skills.names == ("a", "c")
    narrowed = RuntimeContext.of(skills, SkillFilter.disable("c"))
    assert (await views.box(narrowed)).skills.names == ("a",)
    widened = RuntimeContext.of(skills, SkillFilter.enable("b"))
    assert (await views.box(widened)).skills.names == ("a", "b", "c")


async def test_no_skills_no_loader() -> None:
    views = SkillViews(_toolkit().snapshot(), [ContextSkillRepository()])
    box = await views.box(RuntimeContext())
    assert LOAD_SKILL not in box.registry
    assert box.prompt == ""


async def test_toolkit_skills_are_the_lowest_priority() -> None:
    toolkit = _toolkit()
    add_skills(toolkit, AgentSkill(name="a", description="from toolkit", content="old"))
    views = SkillViews(toolkit.snapshot(), [ContextSkillRepository()])
    box = await views.box(RuntimeContext.of(_session_skills("a", content="new")))
    chosen = box.skills.get("a")
    assert chosen is not None
    assert chosen.content == "new"
