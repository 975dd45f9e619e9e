"""Static checks of the public API's types (``mypy --strict tests/typing``); also run by pytest."""

from __future__ import annotations

import dataclasses
from typing import Any, assert_type

import anyio
import pytest

import ferrotool
from ferrotool import (
    AgentTool,
    ErrorDetail,
    FunctionTool,
    JsonValue,
    PermissionContext,
    PermissionDecision,
    Registry,
    RuntimeContext,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolSpec,
    ToolUseBlock,
    tool,
)
from ferrotool.errors import ErrorDetailFields


@tool
def add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b


@tool(read_only=True)
async def echo(text: str) -> str:
    """Echo."""
    return text


@dataclasses.dataclass
class Args:
    query: str


class Search(ToolBase[Args]):
    name = "search"

    async def call(self, param: ToolCallParam[Args]) -> str:
        assert_type(param.input, Args)
        assert_type(param.context, RuntimeContext)
        return param.input.query

    async def check_permissions(
        self, tool_input: Args, context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.allow()


class Db:
    pass


def test_public_types() -> None:
    assert isinstance(add, FunctionTool)
    assert_type(add(1, 2), int)
    assert_type(echo.spec, ToolSpec)
    toolkit = Toolkit()
    registered = toolkit.register(add)
    assert_type(registered, tuple[AgentTool, ...])
    assert_type(toolkit.snapshot(), Registry)
    assert_type(toolkit.get_tool("add"), AgentTool | None)
    assert_type(toolkit.schemas_json("openai_chat"), bytes)
    assert_type(toolkit.names(), tuple[str, ...])
    block = ToolUseBlock("c1", "add", '{"a": 1}')
    assert_type(block.input, dict[str, JsonValue])
    result = toolkit.call_tool_sync(block)
    assert_type(result, ToolResultBlock)
    assert_type(result.state, ToolResultState)
    detail: ErrorDetail | None = None
    fields: ErrorDetailFields | None = detail  # the fields `ValidationError.errors` is typed with
    assert fields is None
    assert result.content == "2"
    assert_type(Search().parse_arguments('{"query": "q"}'), Args)
    context = RuntimeContext.of(Db(), user_id="u")
    assert_type(context.get(Db), Db | None)
    assert_type(context.require(Db), Db)

    async def main() -> ToolResultBlock:
        return await toolkit.call_tool(block, context)

    assert_type(anyio.run(main), ToolResultBlock)


def test_spec_fields_read_the_spec_and_are_never_set() -> None:
    search = Search(timeout=2.0)
    assert_type(search.name, str)
    assert_type(Search.name, str)
    assert_type(search.read_only, bool)
    assert_type(search.timeout, float | None)
    assert_type(ToolBase.mcp_server, str | None)
    assert (search.name, search.timeout) == ("search", 2.0)
    with pytest.raises(AttributeError, match="read from the tool's spec"):
        search.name = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="read from the tool's spec"):
        search.read_only = True  # type: ignore[misc]


# Type aliases carry no docstring of their own; the modules that define them document them.
ALIASES = frozenset(
    {
        "JsonValue",
        "ContentBlock",
        "ProviderFormat",
        "Injected",
        "ProgressSink",
        "DocstringStyle",
        "Middleware",
        "Next",
        "ResultSink",
        "EventSink",
        "ToolEvent",
        "Reply",
    }
)


def test_every_public_name_is_documented() -> None:
    undocumented = []
    for name in ferrotool.__all__:
        value: Any = getattr(ferrotool, name)
        if name.isupper() or name in ALIASES:
            continue
        if not (getattr(value, "__doc__", None) or "").strip():
            undocumented.append(name)
    assert undocumented == []
