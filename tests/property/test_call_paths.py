"""The Rust call of plain tools gives exactly the results of the Python pipeline.

For generated arguments (valid, invalid, malformed, and valid ones with explicit nulls), each
call runs three ways: ``call_tool`` (a `PendingCall` for async and inline tools),
``call_tool_sync`` (the Rust plan run to its result), and the Python path every other tool
takes. The three results must be equal.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal

import anyio
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrotool import AgentTool, Param, Toolkit, ToolResultBlock, ToolUseBlock, tool
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


TOOLS: list[AgentTool] = [describe, total, tally, record, nothing, shout, count_async]
TOOLKIT = Toolkit()
for _item in TOOLS:
    TOOLKIT.register(_item)


def _python_path(call: ToolUseBlock) -> ToolResultBlock:
    entry = TOOLKIT._table.entries[call.name]
    return anyio.run(TOOLKIT._call_parsed, entry, call, None, None, None)


def _check(name: str, arguments: str) -> None:
    call = ToolUseBlock("c1", name, arguments)
    entry = TOOLKIT._table.entries[name]
    assert entry.fast is not None  # every tool here takes the Rust call
    expected = _python_path(call)
    assert anyio.run(TOOLKIT.call_tool, call) == expected
    if not entry.awaits:
        assert TOOLKIT.call_tool_sync(call) == expected


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
