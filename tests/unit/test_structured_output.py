"""Structured output: output schemas derived from return types, and the structured value."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypedDict

import anyio
import orjson
import pydantic
import pytest

from ferrotool import (
    ExecutionConfig,
    JsonValue,
    SchemaError,
    TextBlock,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool._values.content import ContentBlock


@dataclass(frozen=True)
class Point:
    """A point."""

    x: int
    y: int


@dataclass(frozen=True)
class Node:
    """A tree node."""

    name: str
    children: list[Node]


class Span(NamedTuple):
    """A span."""

    start: int
    end: int


class Stats(TypedDict):
    """Counts."""

    words: int


class Owner(pydantic.BaseModel):
    """An owner."""

    name: str


POINT: dict[str, JsonValue] = {
    "type": "object",
    "description": "A point.",
    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
    "required": ["x", "y"],
    "additionalProperties": False,
}


def wrapped(schema: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


def output_of(item: object) -> dict[str, JsonValue] | None:
    assert isinstance(item, ToolBase)
    data = item.spec.output_schema_json
    if data is None:
        return None
    schema = orjson.loads(data)
    assert isinstance(schema, dict)
    return schema


# - derivation -


def test_a_record_is_the_output_schema_inlined_at_the_root() -> None:
    @tool
    def point() -> Point:
        return Point(1, 2)

    @tool
    def span() -> Span:
        return Span(1, 2)

    @tool
    def stats() -> Stats:
        return {"words": 1}

    assert output_of(point) == POINT
    assert not point.output_wrapped
    span_schema = output_of(span)
    assert span_schema is not None
    assert span_schema["type"] == "object"
    assert span_schema["required"] == ["start", "end"]
    assert output_of(stats) == {
        "type": "object",
        "description": "Counts.",
        "properties": {"words": {"type": "integer"}},
        "required": ["words"],
        "additionalProperties": False,
    }


def test_a_pydantic_model_and_a_dict_are_objects() -> None:
    @tool
    async def owner() -> Owner:
        return Owner(name="a")

    @tool
    def scores() -> dict[str, float]:
        return {}

    schema = output_of(owner)
    assert schema is not None
    assert schema["type"] == "object"
    assert schema["required"] == ["name"]
    assert "$ref" not in schema
    assert output_of(scores) == {"type": "object", "additionalProperties": {"type": "number"}}
    assert not owner.output_wrapped
    assert not scores.output_wrapped


def test_a_recursive_record_keeps_its_definition() -> None:
    @tool
    def tree() -> Node:
        return Node("root", [])

    schema = output_of(tree)
    assert schema is not None
    assert schema["type"] == "object"
    defs = schema["$defs"]
    assert isinstance(defs, dict)
    assert set(defs) == {"Node"}
    assert b'"#/$defs/Node"' in orjson.dumps(schema["properties"])


@pytest.mark.parametrize(
    ("annotation", "inner"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    ],
)
def test_other_types_are_wrapped_in_result(annotation: object, inner: dict[str, JsonValue]) -> None:
    def fn() -> None: ...

    fn.__annotations__["return"] = annotation
    made = tool(fn)
    assert output_of(made) == wrapped(inner)
    assert made.output_wrapped


def test_a_wrapped_record_moves_its_definitions_to_the_root() -> None:
    @tool
    def points() -> list[Point]:
        return []

    @tool
    def find() -> Point | None:
        return None

    assert output_of(points) == {
        **wrapped({"type": "array", "items": {"$ref": "#/$defs/Point"}}),
        "$defs": {"Point": POINT},
    }
    assert output_of(find) == {
        **wrapped({"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]}),
        "$defs": {"Point": POINT},
    }


def test_a_sync_function_returning_an_awaitable_is_read_through_it() -> None:
    async def inner() -> int:
        return 1

    @tool
    def later() -> Awaitable[int]:
        return inner()

    assert output_of(later) == wrapped({"type": "integer"})


@pytest.mark.parametrize(
    "annotation",
    [
        str,
        None,
        type(None),
        str | None,
        object,
        Any,
        ToolResultBlock,
        TextBlock,
        ContentBlock,
        list[ContentBlock],
        tuple[TextBlock, ...],
        Point | ToolResultBlock,
        Awaitable[str],
    ],
)
def test_types_that_say_nothing_of_the_result_have_no_output_schema(annotation: object) -> None:
    def fn() -> None: ...

    fn.__annotations__["return"] = annotation
    made = tool(fn)
    assert made.spec.output_schema_json is None
    assert not made.output_wrapped


class Opaque:
    """A class with no fields."""


def test_no_annotation_and_no_schema_for_a_class_without_one() -> None:
    @tool
    def plain():  # type: ignore[no-untyped-def]
        return 1

    @tool
    def opaque() -> Opaque:
        return Opaque()

    assert plain.spec.output_schema_json is None
    assert opaque.spec.output_schema_json is None
    with pytest.raises(SchemaError, match="required"):

        @tool(output_schema=True)
        def required() -> Opaque:
            return Opaque()


def test_options_switch_off_declare_and_require() -> None:
    @tool(output_schema=False)
    def off() -> Point:
        return Point(1, 2)

    @tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    def declared() -> dict[str, int]:
        return {"n": 1}

    @tool(output_schema={"type": "integer"})
    def scalar() -> object:
        return 1

    @tool(output_schema=Point)
    def typed() -> object:
        return Point(1, 2)

    @tool(converter=str)
    def converted() -> Point:
        return Point(1, 2)

    assert output_of(off) is None
    assert output_of(declared) == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert output_of(scalar) == wrapped({"type": "integer"})
    assert scalar.output_wrapped
    assert output_of(typed) == POINT
    assert output_of(converted) is None
    with pytest.raises(SchemaError, match="no output schema"):

        @tool(output_schema=True)
        def text() -> str:
            return ""

    with pytest.raises(SchemaError, match="invalid output_schema"):

        @tool(output_schema={"type": 12})
        def bad() -> int:
            return 1


def test_the_schema_is_computed_once_and_shared_by_bound_tools() -> None:
    class Shop:
        @tool
        def price(self, sku: str) -> Point:
            """Price.

            Args:
                sku: The item.
            """
            return Point(1, 1)

    first, second = Shop(), Shop()
    data = first.price.spec.output_schema_json
    assert data is not None
    assert data is second.price.spec.output_schema_json


# - explicit tools -


class Area(ToolBase[dict[str, object]]):
    """The area."""

    name = "area"
    output_schema = float

    async def call(self, param: ToolCallParam[dict[str, object]]) -> object:
        return 6.0


class Where(ToolBase[dict[str, object]]):
    """Where."""

    name = "where"

    async def call(self, param: ToolCallParam[dict[str, object]]) -> object:
        return {"x": 1, "y": 2}


def test_tool_base_declares_an_output_schema_on_the_class_or_the_constructor() -> None:
    assert output_of(Area()) == wrapped({"type": "number"})
    assert Area().output_wrapped
    assert output_of(Where()) is None
    assert output_of(Where(output_schema=Point)) == POINT
    assert output_of(Where(output_schema=POINT)) == POINT
    assert output_of(Area(output_schema={"type": "object"})) == {"type": "object"}
    with pytest.raises(SchemaError, match="invalid output_schema"):
        Where(output_schema={"type": "nope"})


# - results -


@tool
def point(x: int) -> Point:
    """A point.

    Args:
        x: Across.
    """
    return Point(x, 0)


@tool
async def double(n: int) -> int:
    """Twice n.

    Args:
        n: The number.
    """
    return 2 * n


@tool
def halve(n: int) -> float:
    """Half n.

    Args:
        n: The number.
    """
    return n / 2


@tool
def find(x: int) -> Point | None:
    """A point if x is positive.

    Args:
        x: Across.
    """
    return Point(x, 0) if x > 0 else None


@tool
def either(x: int) -> int | str:
    """x, or its name.

    Args:
        x: The number.
    """
    return x if x else "zero"


@tool
def refuse(x: int) -> int | ToolResultBlock:
    """Refuse.

    Args:
        x: The number.
    """
    return ToolResultBlock.error("no")


@tool(output_schema={"type": "integer"})
def counted(x: int) -> ToolResultBlock:
    """A result with its own structured value.

    Args:
        x: The number.
    """
    return ToolResultBlock.success(str(x), structured={"result": x})


@tool
def positive(n: int) -> bool:
    """Whether n is positive.

    Args:
        n: The number.
    """
    return n > 0


@tool(timeout=5)
def slow_double(n: int) -> int:
    """Twice n, through the whole pipeline.

    Args:
        n: The number.
    """
    return 2 * n


@tool
def plain(n: int) -> Any:
    """n, with no output schema.

    Args:
        n: The number.
    """
    return n


def kit() -> Toolkit:
    toolkit = Toolkit()
    for item in (point, double, halve, find, either, refuse, counted, positive, slow_double, plain):
        toolkit.register(item)
    toolkit.register(Area())
    return toolkit


CASES: list[tuple[str, str, str, JsonValue]] = [
    ("point", '{"x": 3}', '{"x":3,"y":0}', {"x": 3, "y": 0}),
    ("double", '{"n": 21}', "42", {"result": 42}),
    ("halve", '{"n": 3}', "1.5", {"result": 1.5}),
    ("find", '{"x": 2}', '{"x":2,"y":0}', {"result": {"x": 2, "y": 0}}),
    ("find", '{"x": 0}', "Done", {"result": None}),
    ("either", '{"x": 0}', "zero", {"result": "zero"}),
    ("either", '{"x": 5}', "5", {"result": 5}),
    ("counted", '{"x": 4}', "4", {"result": 4}),
    ("positive", '{"n": 4}', "true", {"result": True}),
    ("slow_double", '{"n": 4}', "8", {"result": 8}),
    ("plain", '{"n": 4}', "4", 4),
    ("area", "{}", "6.0", {"result": 6.0}),
]


@pytest.mark.parametrize(("name", "arguments", "content", "structured"), CASES)
async def test_the_result_keeps_its_text_and_its_structured_value(
    name: str, arguments: str, content: str, structured: JsonValue
) -> None:
    result = await kit().call_tool(ToolUseBlock("c1", name, arguments))
    assert result.state is ToolResultState.SUCCESS
    assert result.content == content
    assert result.structured == structured


@pytest.mark.parametrize(("name", "arguments", "content", "structured"), CASES)
def test_the_sync_call_keeps_the_structured_value(
    name: str, arguments: str, content: str, structured: JsonValue
) -> None:
    result = kit().call_tool_sync(ToolUseBlock("c1", name, arguments))
    assert result.content == content
    assert result.structured == structured


def test_the_rust_direct_call_wraps_too() -> None:
    toolkit = kit()
    for name in ("double", "halve", "find", "point"):
        assert toolkit._table.entries[name].direct is not None
    assert toolkit._table.entries["slow_double"].direct is None
    direct = toolkit._table.entries["halve"].direct
    assert direct is not None
    assert direct.run(ToolUseBlock("c1", "halve", '{"n": 1}')).structured == {"result": 0.5}
    found = toolkit._table.entries["find"].direct
    assert found is not None
    assert found.run(ToolUseBlock("c2", "find", '{"x": 0}')).structured == {"result": None}
    # str, int and None results are built in Rust, wrapped there; the others by `convert`.
    either = toolkit._table.entries["either"].direct
    doubled = toolkit._table.entries["double"].direct
    assert either is not None
    assert doubled is not None
    assert either.run(ToolUseBlock("c3", "either", '{"x": 0}')).structured == {"result": "zero"}

    async def double_two() -> ToolResultBlock:
        assert doubled is not None
        return await doubled(ToolUseBlock("c4", "double", '{"n": 2}'))

    assert anyio.run(double_two).structured == {"result": 4}


async def test_a_batch_keeps_each_structured_value() -> None:
    calls = [
        ToolUseBlock(f"c{i}", name, arguments) for i, (name, arguments, _, _) in enumerate(CASES)
    ]
    batch = await kit().call_tools(calls)
    assert [result.structured for result in batch.results] == [case[3] for case in CASES]
    assert [result.content for result in batch.results] == [case[2] for case in CASES]


async def test_a_returned_result_is_not_wrapped() -> None:
    result = await kit().call_tool(ToolUseBlock("c1", "refuse", '{"x": 1}'))
    assert result.state is ToolResultState.ERROR
    assert result.structured is None
    assert refuse.spec.output_schema_json is None


def test_a_sync_tool_on_a_worker_thread_wraps() -> None:
    @tool(execution=ExecutionConfig(max_attempts=2))
    def retried(n: int) -> list[int]:
        """Retried.

        Args:
            n: The number.
        """
        return [n]

    toolkit = Toolkit()
    toolkit.register(retried)
    assert toolkit._table.entries["retried"].direct is None
    result = anyio.run(toolkit.call_tool, ToolUseBlock("c1", "retried", '{"n": 1}'))
    assert result.structured == {"result": [1]}
    assert result.content == "[1]"
