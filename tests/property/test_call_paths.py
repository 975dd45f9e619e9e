"""Every path of the one call pipeline gives the same result, for every kind of tool.

For generated arguments (valid, invalid, malformed, and valid ones with explicit nulls), each
call runs every way it can: ``call_tool`` (the Rust direct call for plain tools, the async
pipeline for the others), ``call_tool_sync`` (the Rust direct call run to its result, or the
sync pipeline), and the async and sync pipelines forced (`run_call`, `run_call_sync`), also
for the tools Rust runs directly. The results must be equal.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal

import anyio
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrotool import (
    AgentTool,
    Emitter,
    Param,
    PermissionContext,
    PermissionDecision,
    RuntimeContext,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolResultBlock,
    ToolUseBlock,
    tool,
)
from ferrotool._execution.compiled import Invoke
from ferrotool._execution.pipeline import CallScope, run_call, run_call_sync
from ferrotool.testing import invalid_arguments, valid_arguments


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Item:
    sku: str
    qty: Annotated[int, Param(ge=1)]


@tool(inline=True)
def describe(name: str, count: int = 1, color: Color = Color.RED, note: str | None = None) -> str:
    """Describe something."""
    if count > 90:
        raise ValueError(f"too many: {count}")
    return f"{name} x{count} {color.value} {note}"


@tool(inline=True)
def total(items: list[Item], scale: float = 1.0) -> float:
    """Add up the quantities."""
    return sum(item.qty for item in items) * scale


@tool(inline=True)
def tally(words: list[str], unique: bool = False) -> int:
    """Count words."""
    return len(set(words)) if unique else len(words)


@tool(inline=True)
def record(key: Literal["a", "b"], value: int | None = None) -> dict[str, Any]:
    """Return a record."""
    return {"key": key, "value": value}


@tool(inline=True)
def nothing(flag: bool = False) -> None:
    """Return nothing."""


@tool
async def shout(word: str, times: int = 1) -> str:
    """Shout, asynchronously."""
    if times > 90:
        raise RuntimeError("hoarse")
    return word.upper() * times


@tool
async def count_async(items: list[Item]) -> int:
    """Count items, asynchronously."""
    return len(items)


@tool
def on_thread(name: str, count: int = 1) -> str:
    """A sync tool run on a worker thread."""
    if count > 90:
        raise ValueError("too many")
    return name * count


@tool(inline=True)
def with_context(word: str, context: RuntimeContext, emitter: Emitter) -> str:
    """A tool with injected values (not a direct call)."""
    emitter.emit(word)
    return f"{word} {context.user_id} {emitter.call_id}"


@tool(inline=True, converter=lambda value: ToolResultBlock.success(f"<{value}>"))
def converted(n: int) -> int:
    """A tool with a converter (not a direct call)."""
    return n * 2


@dataclasses.dataclass
class Search:
    query: str
    limit: Annotated[int, Param(ge=1, le=50)] = 10


class SearchTool(ToolBase[Search]):
    """A typed `ToolBase` that checks its permissions."""

    name = "search"
    input_schema = Search

    async def check_permissions(
        self, tool_input: Search, context: PermissionContext
    ) -> PermissionDecision:
        if tool_input.query == "forbidden":
            return PermissionDecision.deny("not this query")
        return PermissionDecision.allow()

    async def call(self, param: ToolCallParam[Search]) -> str:
        if param.input.limit > 45:
            raise RuntimeError("limit too high for the backend")
        return f"{param.input.query}:{param.input.limit}"


class EchoTool(ToolBase[dict[str, Any]]):
    """A JSON Schema `ToolBase`."""

    name = "echo"
    input_schema = {
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": 20},
            "times": {"type": "integer", "minimum": 0, "maximum": 5},
        },
        "required": ["text"],
        "additionalProperties": False,
    }

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> dict[str, Any]:
        return {"echo": param.input["text"] * param.input.get("times", 1)}


DIRECT: list[AgentTool] = [describe, total, tally, record, nothing, shout, count_async, on_thread]
OTHERS: list[AgentTool] = [with_context, converted, SearchTool(), EchoTool()]
TOOLS: list[AgentTool] = [*DIRECT, *OTHERS]
TOOLKIT = Toolkit()
for _item in TOOLS:
    TOOLKIT.register(_item)
CONTEXT = RuntimeContext(user_id="ann", session_id="s1")


def test_the_direct_tools_are_direct_and_the_others_are_not() -> None:
    for item in DIRECT:
        assert TOOLKIT._table.entries[item.spec.name].direct is not None, item.spec.name
    for item in OTHERS:
        assert TOOLKIT._table.entries[item.spec.name].direct is None, item.spec.name


def _check(name: str, arguments: str) -> None:
    call = ToolUseBlock("c1", name, arguments)
    compiled = TOOLKIT._table.entries[name]
    scope = CallScope.of(call, TOOLKIT._runner, CONTEXT)
    expected = anyio.run(run_call, compiled, scope)
    assert anyio.run(TOOLKIT.call_tool, call, CONTEXT) == expected
    assert TOOLKIT.call_tool_sync(call, CONTEXT) == expected
    if compiled.invoke is not Invoke.AWAIT and compiled.invoke is not Invoke.CALL:
        assert run_call_sync(compiled, scope) == expected
    if compiled.direct is not None and compiled.invoke is not Invoke.AWAIT:
        assert compiled.direct.run(call) == expected


def _with_nulls(arguments: str, data: st.DataObject) -> str:
    document = orjson.loads(arguments)
    if isinstance(document, dict) and document:
        for key in data.draw(st.sets(st.sampled_from(sorted(document)))):
            document[key] = None
    return orjson.dumps(document).decode()


names = st.sampled_from(TOOLS)


@settings(max_examples=150, deadline=None)
@given(names.flatmap(lambda t: st.tuples(st.just(t.spec.name), valid_arguments(t))))
def test_valid_arguments_give_the_same_result(case: tuple[str, str]) -> None:
    _check(*case)


@settings(max_examples=150, deadline=None)
@given(
    names.flatmap(
        lambda t: st.tuples(st.just(t.spec.name), invalid_arguments(t, include_malformed_json=True))
    )
)
def test_invalid_arguments_give_the_same_result(case: tuple[str, Any]) -> None:
    name, bad = case
    _check(name, bad.arguments)


@settings(max_examples=150, deadline=None)
@given(names.flatmap(lambda t: st.tuples(st.just(t.spec.name), valid_arguments(t))), st.data())
def test_explicit_nulls_give_the_same_result(case: tuple[str, str], data: st.DataObject) -> None:
    name, arguments = case
    _check(name, _with_nulls(arguments, data))
