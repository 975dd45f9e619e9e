"""`Toolkit.call_tool` honours the context: the groups' default activation and the request
config the context carries; it never runs a tool its own view would hide."""

from __future__ import annotations

from ferrotool import (
    RuntimeContext,
    SchemaOnlyTool,
    Toolkit,
    ToolMergeMode,
    ToolRequestConfig,
    ToolResultState,
    ToolUseBlock,
    tool,
)


@tool
async def search(query: str) -> str:
    """Search."""
    return f"results for {query}"


@tool
async def db_query(sql: str) -> str:
    """Query."""
    return "3 rows"


@tool
async def status() -> str:
    """In a group active by default."""
    return "ok"


def _toolkit() -> Toolkit:
    kit = Toolkit()
    kit.register(search)
    kit.create_group("database", "Databases.")
    kit.register(db_query, group="database")
    kit.create_group("ops", "Operations.", active=True)
    kit.register(status, group="ops")
    return kit


async def test_a_tool_of_an_inactive_group_is_not_available() -> None:
    kit = _toolkit()
    result = await kit.call_tool(ToolUseBlock("c1", "db_query", '{"sql": "select 1"}'))
    assert result.state is ToolResultState.ERROR
    assert "is not available now" in result.content
    active = await kit.call_tool(ToolUseBlock("c2", "status", "{}"))
    assert active.content == "ok"


def test_the_sync_twin_hides_the_same_tools() -> None:
    kit = _toolkit()
    hidden = kit.call_tool_sync(ToolUseBlock("c1", "db_query", '{"sql": "x"}'))
    assert "is not available now" in hidden.content
    assert kit.call_tool_sync(ToolUseBlock("c2", "status", "{}")).content == "ok"


async def test_a_request_config_in_the_context_shapes_the_call() -> None:
    kit = _toolkit()
    client = SchemaOnlyTool({"name": "search", "parameters": {"type": "object"}})
    only_client = RuntimeContext().with_value(
        ToolRequestConfig([client], ToolMergeMode.EXTERNAL_ONLY)
    )
    replaced = await kit.call_tool(ToolUseBlock("c1", "search", "{}"), only_client)
    assert replaced.is_suspended  # the client's own `search` replaces the backend's
    hidden = await kit.call_tool(ToolUseBlock("c2", "status", "{}"), only_client)
    assert "this request uses only its own tools" in hidden.content
    plain = await kit.call_tool(ToolUseBlock("c3", "search", '{"query": "x"}'), RuntimeContext())
    assert plain.content == "results for x"
