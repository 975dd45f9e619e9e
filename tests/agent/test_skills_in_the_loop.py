"""Skills in the agent loop: the skills prompt each turn, a loaded skill's tools on the next."""

from __future__ import annotations

from pathlib import Path

from ferrotool import (
    InMemorySessionStore,
    RuntimeContext,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.agent import (
    ModelReply,
    RunFinished,
    ScriptedModel,
    UserMessage,
    results_in,
    run_agent,
)
from ferrotool.skills import FileSystemSkillRepository, SkillViews, create_skill_tool_group

CONTEXT = RuntimeContext(user_id="ann", session_id="s1")
SKILL_MD = (
    "---\nname: csv-report\ndescription: Summarise CSV files.\n---\n"
    "Count the rows, then chart the totals with the chart tool.\n"
)


@tool
def chart(column: str) -> str:
    """Draw a chart of one column."""
    return f"chart of {column}"


async def test_a_loaded_skill_brings_its_tools_and_the_prompt_lists_the_skills(
    tmp_path: Path,
) -> None:
    (tmp_path / "csv-report").mkdir()
    (tmp_path / "csv-report" / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    toolkit = Toolkit()
    create_skill_tool_group(toolkit, "charts", "Charting", skill_name="csv-report")
    toolkit.register(chart, group="charts")
    skills = FileSystemSkillRepository(tmp_path, source="local")
    views = SkillViews(toolkit.snapshot(), [skills])
    store = InMemorySessionStore()
    load = '{"skillId": "csv-report_local", "path": "SKILL.md"}'
    model = ScriptedModel(
        [
            ModelReply(calls=(ToolUseBlock("c1", "load_skill_through_path", load),)),
            ModelReply(calls=(ToolUseBlock("c2", "chart", '{"column": "total"}'),)),
            lambda request: ModelReply(results_in(request)[0].content),
        ]
    )
    view = await views.open_view(CONTEXT, store)
    assert "chart" not in view
    outcome = await run_agent(
        model,
        view,
        [UserMessage("Summarise sales.csv")],
        CONTEXT,
        system="You are helpful.",
        instructions=[lambda _: views.prompt(CONTEXT)],
    ).result()
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "chart of total"
    first, second, _ = model.requests
    assert first.system.startswith("You are helpful.\n\n")
    assert "csv-report" in first.system
    assert "Summarise CSV files." in first.system
    assert second.system == first.system  # byte-stable for prompt caches
    assert "chart" not in first.tools.schemas_json().decode()
    assert '"chart"' in second.tools.schemas_json().decode()
    loaded = results_in(second)[0]
    assert loaded.state is ToolResultState.SUCCESS
    assert "Count the rows" in loaded.content
