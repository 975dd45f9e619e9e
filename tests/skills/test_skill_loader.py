"""load_skill_through_path: schema, formats, refusals, activation in the session only."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import orjson
import pytest

from ferrotool import (
    InMemorySessionStore,
    RegistrationError,
    RuntimeContext,
    SessionKey,
    Toolkit,
    ToolkitConfig,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.skills import (
    LOAD_SKILL,
    AgentSkill,
    FileSystemSkillRepository,
    SkillSet,
    add_skills,
    create_skill_tool_group,
    register_skill_tools,
    skill_group_name,
    skill_prompt,
    skills_of,
)
from ferrotool.skills.loader import bound_groups


@tool
def chart(data: str) -> str:
    """Draw a chart."""
    return f"chart of {data}"


@tool
def summarize(text: str) -> str:
    """Summarize a text."""
    return text[:10]


def _load(skill_id: str, path: str, call_id: str = "c1") -> ToolUseBlock:
    return ToolUseBlock.of(call_id, LOAD_SKILL, {"skillId": skill_id, "path": path})


def _toolkit(collection: Path) -> tuple[Toolkit, str]:
    toolkit = Toolkit(ToolkitConfig(meta_tool=True))
    create_skill_tool_group(toolkit, "pdf_tools", "PDF helpers", skill_name="pdf")
    toolkit.register(chart, group="pdf_tools")
    skills = add_skills(toolkit, FileSystemSkillRepository(collection, source="fs"))
    pdf = skills.get("pdf")
    assert pdf is not None
    return toolkit, pdf.skill_id


def test_loader_is_registered_ungrouped_with_an_enum_of_ids(collection: Path) -> None:
    toolkit, pdf_id = _toolkit(collection)
    registry = toolkit.snapshot()
    assert registry.group_of(LOAD_SKILL) == frozenset({"basic"})
    spec = registry.get_spec(LOAD_SKILL)
    assert spec is not None
    schema = orjson.loads(spec.parameters_json)
    assert schema["required"] == ["skillId", "path"]
    assert pdf_id in schema["properties"]["skillId"]["enum"]
    assert len(schema["properties"]["skillId"]["enum"]) == 4
    assert LOAD_SKILL in registry.view().names()  # visible in any session
    assert "pdf_tools" not in toolkit.snapshot().view().active_groups


def test_no_skills_no_loader() -> None:
    toolkit = Toolkit()
    add_skills(toolkit, SkillSet())
    assert LOAD_SKILL not in toolkit


def test_loader_name_taken_is_refused() -> None:
    toolkit = Toolkit()

    @tool(name=LOAD_SKILL)
    def impostor() -> str:
        """Not the loader."""
        return ""

    toolkit.register(impostor)
    with pytest.raises(RegistrationError, match="skill loader"):
        add_skills(toolkit, AgentSkill(name="a", description="d", content="c"))


async def test_loading_skill_md_returns_the_instructions(collection: Path) -> None:
    toolkit, pdf_id = _toolkit(collection)
    result = await toolkit.call_tool(_load(pdf_id, "SKILL.md"))
    assert result.state is ToolResultState.SUCCESS
    assert pdf_id == "pdf_fs"
    assert result.content.startswith(
        "Successfully loaded skill: pdf_fs\n\nName: pdf\n"
        "Description: Extract text and tables from PDF files; fill forms.\n"
        "Source: fs\n\nContent:\n---\n# PDF\n"
    )
    assert result.content.endswith("references/forms.md.\n---\n")
    assert result.metadata["activated"] is False  # no session: nothing to activate


async def test_loading_a_resource(collection: Path) -> None:
    toolkit, pdf_id = _toolkit(collection)
    result = await toolkit.call_tool(_load(pdf_id, "scripts/extract.py"))
    assert result.content == (
        f"Successfully loaded resource from skill: {pdf_id}\nResource path: scripts/extract.py"
        "\n\nContent:\n---\nimport sys\nprint('text of', sys.argv[1])\n\n---\n"
    )


async def test_lazy_skill_is_served_from_disk(collection: Path) -> None:
    toolkit = Toolkit()
    skills = add_skills(toolkit, FileSystemSkillRepository(collection, lazy=True))
    docx = skills.get("docx")
    assert docx is not None
    assert not docx.resources
    result = await toolkit.call_tool(_load(docx.skill_id, "ooxml.md"))
    assert result.state is ToolResultState.SUCCESS
    assert "Parts and relationships." in result.content
    logo = await toolkit.call_tool(
        _load(skills.get("brand-guidelines").skill_id, "assets/logo.png")  # type: ignore[union-attr]
    )
    assert "Content:\n---\nbase64:" in logo.content


@pytest.mark.parametrize(
    "path",
    [
        ".",
        "./",
        "..",
        "../docx/SKILL.md",
        "scripts/../../docx/SKILL.md",
        "/etc/passwd",
        "scripts",
        "scripts/",
        ".env",
        ".cache/x.txt",
        "%2e%2e/docx/SKILL.md",
        "%252e%252e/docx/SKILL.md",
        "scripts\\..\\..\\docx\\SKILL.md",
        "C:/Windows/win.ini",
        "scripts/extract.py\x00.md",
        "skill.md",
        "missing.md",
    ],
)
async def test_refused_or_missing_paths_list_the_resources(collection: Path, path: str) -> None:
    toolkit, pdf_id = _toolkit(collection)
    store = InMemorySessionStore()
    context = RuntimeContext(user_id="u", session_id="s")
    view = await toolkit.snapshot().open_view(context, store)
    result = await view.call_tool(_load(pdf_id, path), context)
    assert result.state is ToolResultState.ERROR
    assert result.content == (
        f"Error: Resource not found: '{path}' in skill '{pdf_id}'.\n\nAvailable resources:\n"
        "1. SKILL.md\n2. references/forms.md\n3. scripts/extract.py"
    )
    state = await store.load(SessionKey("u", "s"))
    assert not state.skills  # nothing activated
    assert not state.groups


async def test_symlink_out_of_the_skill_is_refused(collection: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    os.symlink(secret, collection / "pdf" / "leak.txt")
    os.symlink(tmp_path, collection / "pdf" / "up")
    toolkit = Toolkit()
    skills = add_skills(toolkit, FileSystemSkillRepository(collection, lazy=True))
    pdf_id = skills.get("pdf").skill_id  # type: ignore[union-attr]
    for path in ("leak.txt", "up/secret.txt"):
        result = await toolkit.call_tool(_load(pdf_id, path))
        assert result.state is ToolResultState.ERROR
        assert "TOP SECRET" not in result.content


async def test_missing_parameters_and_unknown_skill(collection: Path) -> None:
    toolkit, pdf_id = _toolkit(collection)
    loader = toolkit.get_tool(LOAD_SKILL)
    assert loader is not None
    from ferrotool import Emitter, ToolCallParam

    async def direct(arguments: dict[str, str]) -> str:
        call = ToolUseBlock.of("d", LOAD_SKILL, arguments)
        param = ToolCallParam(arguments, call, RuntimeContext(), None, Emitter(call))
        return (await loader.call(param)).content  # type: ignore[attr-defined, no-any-return]

    assert await direct({"skillId": " ", "path": "SKILL.md"}) == (
        "Error: Missing or empty required parameter: skillId"
    )
    assert await direct({"skillId": pdf_id, "path": ""}) == (
        "Error: Missing or empty required parameter: path"
    )
    assert await direct({"skillId": "nope", "path": "SKILL.md"}) == (
        "Error: Skill not found: 'nope'. Please check the skill ID."
    )
    # through the toolkit, the enum refuses an unknown id first
    result = await toolkit.call_tool(_load("nope", "SKILL.md"))
    assert result.state is ToolResultState.ERROR
    assert "skillId" in result.content


async def test_load_activates_bound_groups_in_the_session_only(collection: Path) -> None:
    toolkit, pdf_id = _toolkit(collection)
    pdf = skills_of(toolkit.snapshot()).get("pdf")
    assert pdf is not None
    register_skill_tools(toolkit, pdf, summarize)
    registry = toolkit.snapshot()
    assert registry.groups()[-1].name == skill_group_name(pdf)
    assert registry.groups()[-1].active is False
    store = InMemorySessionStore()
    mine = RuntimeContext(user_id="u", session_id="mine")
    other = RuntimeContext(user_id="u", session_id="other")
    view = await registry.open_view(mine, store)
    assert "chart" not in view
    assert "summarize" not in view
    result = await view.call_tool(_load(pdf_id, "SKILL.md"), mine)
    assert result.metadata["groups"] == ["pdf_tools", skill_group_name(pdf)]
    after = await registry.open_view(mine, store)
    assert "chart" in after
    assert "summarize" in after
    assert after.state.skills == frozenset({pdf_id})
    assert (await after.call_tool(ToolUseBlock.of("c", "chart", {"data": "x"}), mine)).content
    untouched = await registry.open_view(other, store)
    assert "chart" not in untouched
    assert not untouched.state.skills
    assert "chart" not in registry.view()  # the registry never changes
    assert "chart" not in toolkit.snapshot().view()


async def test_concurrent_loads_in_many_sessions(collection: Path) -> None:
    toolkit, pdf_id = _toolkit(collection)
    registry = toolkit.snapshot()
    store = InMemorySessionStore()
    skills = skills_of(registry)
    ids = [skill.skill_id for skill in skills]

    async def session(index: int) -> None:
        context = RuntimeContext(user_id="u", session_id=f"s{index}")
        view = await registry.open_view(context, store)
        chosen = ids[index % len(ids)]
        calls = [_load(chosen, "SKILL.md", f"a{index}"), _load(pdf_id, "SKILL.md", f"b{index}")]
        batch = await view.call_tools(calls, context)
        assert all(r.state is ToolResultState.SUCCESS for r in batch.results)

    async with anyio.create_task_group() as group:
        for index in range(200):
            group.start_soon(session, index)
    for index in range(200):
        state = await store.load(SessionKey("u", f"s{index}"))
        assert state.skills == {ids[index % len(ids)], pdf_id}
        assert state.groups == {"pdf_tools": True}


def test_skill_group_reminder_once_and_binding() -> None:
    toolkit = Toolkit()
    group = create_skill_tool_group(toolkit, "g", "Tools", skill_name="data-analysis")
    assert group.active is False
    assert group.skill_name == "data-analysis"
    assert group.description.count("data-analysis") == 1
    assert group.description.startswith("Tools\n\n**")
    plain = toolkit.create_group("plain", "x")
    skill = AgentSkill(name="data-analysis", description="d", content="c")
    other = AgentSkill(name="other", description="d", content="c")
    assert bound_groups(skill, [group, plain]) == ("g",)
    assert bound_groups(other, [group, plain]) == ()  # an unbound group binds to no skill
    with pytest.raises(ValueError, match="skill_name"):
        create_skill_tool_group(toolkit, "h", skill_name=" ")


def test_groups_added_later_are_bound_too(collection: Path) -> None:
    toolkit = Toolkit()
    add_skills(toolkit, FileSystemSkillRepository(collection))
    create_skill_tool_group(toolkit, "late", skill_name="docx")
    loader = toolkit.snapshot().get_tool(LOAD_SKILL)
    docx = skills_of(toolkit.snapshot()).get("docx")
    assert docx is not None
    assert loader.activates(docx.skill_id) == ("late",)  # type: ignore[union-attr]


def test_prompt_lists_skills_escaped_and_stable() -> None:
    skills = [
        AgentSkill(
            name="b<&>",
            description="say \"hi\" & 'bye'",
            content="c",
            metadata={"name": "b", "tags": ["x", "y"], "bad key": 1, "meta": {"v": True}},
        ),
        AgentSkill(name="a", description="first", content="c"),
    ]
    prompt = skill_prompt(skills)
    assert prompt == skill_prompt(reversed(skills))
    assert prompt.startswith("## Available Skills\n<usage>")
    assert "load_skill_through_path" in prompt
    assert prompt.index("<name>a</name>") < prompt.index("<name>b&lt;&amp;&gt;</name>")
    assert "<description>say &quot;hi&quot; &amp; &apos;bye&apos;</description>" in prompt
    assert "<skill-id>b&lt;&amp;&gt;_custom</skill-id>" in prompt
    assert "<item>" not in prompt
    full = skill_prompt(skills, metadata=True)
    assert "<tags>\n    <item>x</item>\n    <item>y</item>\n  </tags>" in full
    assert '<entry key="bad key">1</entry>' in full
    assert "<meta>\n    <v>true</v>\n  </meta>" in full
    assert skill_prompt([]) == ""


@pytest.mark.asyncio_only("the Redis store is built on redis.asyncio")
async def test_activation_and_todos_survive_the_redis_store(
    collection: Path, redis_url: str, redis_prefix: str
) -> None:
    from ferrotool.builtins import TodoWrite
    from ferrotool.redis import RedisSessionStore

    toolkit, pdf_id = _toolkit(collection)
    toolkit.register(TodoWrite())
    registry = toolkit.snapshot()
    context = RuntimeContext(user_id="u", session_id="redis")
    async with RedisSessionStore.from_url(redis_url, prefix=redis_prefix) as store:
        view = await registry.open_view(context, store)
        todo = ToolUseBlock.of("t", "todo_write", {"todos": [{"content": "read the skill"}]})
        batch = await view.call_tools([_load(pdf_id, "SKILL.md"), todo], context)
        assert [r.state for r in batch.results] == [ToolResultState.SUCCESS] * 2
        state = await store.load(SessionKey("u", "redis"))
        assert state.skills == {pdf_id}
        assert state.groups == {"pdf_tools": True}
        assert state.data["todos"][0]["content"] == "read the skill"  # type: ignore[index, call-overload]
        assert "chart" in await registry.open_view(context, store)
