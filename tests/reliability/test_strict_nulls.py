"""Strict-mode nulls: a ``null`` at a property the canonical schema leaves optional means "left
out", whatever error the ``null`` alone would cause.

Strict provider schemas make every property required and the optional ones nullable, so models
send ``null`` for every argument they leave out. For every demo tool and a sample of the BFCL
corpus, every argument set generated from the *strict* schema is accepted by the call whenever
the canonical schema accepts it with its nulls dropped.
"""

from __future__ import annotations

import enum
import json
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrotool import (
    JsonSchemaValidator,
    SchemaOnlyTool,
    StrictSchemaWarning,
    Toolkit,
    ToolRequestConfig,
    ToolResultState,
    ToolSpec,
    ToolUseBlock,
    tool,
    tool_definition,
)
from ferrotool.cli.demo import DEMO_CONTEXT, demo_toolkit
from ferrotool.testing import valid_arguments

CASES_FILE = (
    Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "bfcl" / "cases.jsonl"
)
EVERY = 60


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@tool(inline=True)
def get_weather(
    city: str,
    unit: Unit = Unit.CELSIUS,
    scale: Literal["short", "long"] = "short",
    days: int = 1,
    region: str | int | None = None,
) -> str:
    """Get the weather (an Enum, a Literal, an int and a union, all optional)."""
    return f"{city} {unit.value} {scale} {days} {region}"


def _without_nulls(value: Any) -> Any:
    """Every ``null`` object member dropped, at any depth (the test's own rule)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _strict_schema(spec: ToolSpec) -> dict[str, Any] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StrictSchemaWarning)
        definition = tool_definition(spec, "openai_chat", strict=True)
    if not definition.strict:
        return None
    function = definition.definition()["function"]
    assert isinstance(function, dict)
    parameters = function["parameters"]
    assert isinstance(parameters, dict)
    return parameters


def test_nulls_for_every_kind_of_optional_parameter_are_left_out() -> None:
    kit = Toolkit()
    kit.register(get_weather)
    arguments = '{"city": "Paris", "unit": null, "scale": null, "days": null, "region": null}'
    result = kit.call_tool_sync(ToolUseBlock("c1", "get_weather", arguments))
    assert (result.state, result.content) == (ToolResultState.SUCCESS, "Paris celsius short 1 None")


def test_one_null_does_not_block_the_others_and_real_errors_still_show() -> None:
    kit = Toolkit()
    kit.register(get_weather)
    arguments = '{"city": "Paris", "unit": null, "scale": "huge", "days": null}'
    result = kit.call_tool_sync(ToolUseBlock("c1", "get_weather", arguments))
    assert result.state is ToolResultState.ERROR
    assert "scale" in result.content
    assert "unit" not in result.content
    assert "days" not in result.content


def test_a_null_beside_a_number_beyond_64_bits_is_still_read() -> None:
    @tool(inline=True)
    def big(n: int, label: str = "x") -> str:
        """A big integer and an optional label."""
        return f"{n} {label}"

    kit = Toolkit()
    kit.register(big)
    n = 10**30
    result = kit.call_tool_sync(ToolUseBlock("c1", "big", f'{{"n": {n}, "label": null}}'))
    assert (result.state, result.content) == (ToolResultState.SUCCESS, f"{n} x")


@dataclass(frozen=True)
class Line:
    name: str
    qty: int = 1
    note: str | None = None


@tool(inline=True)
def order(lines: list[Line] | None = None, tags: tuple[str, Line] | None = None) -> str:
    """An optional list of records and an optional pair: nulls nested under a union."""
    return f"{lines} {tags}"


def test_nulls_inside_an_optional_list_of_records_are_left_out() -> None:
    kit = Toolkit()
    kit.register(order)
    arguments = '{"lines": [{"name": "b", "qty": null, "note": null}], "tags": null}'
    result = kit.call_tool_sync(ToolUseBlock("c1", "order", arguments))
    assert result.state is ToolResultState.SUCCESS, result.content
    assert result.content == "[Line(name='b', qty=1, note=None)] None"
    pair = '{"lines": null, "tags": ["t", {"name": "c", "qty": null}]}'
    result = kit.call_tool_sync(ToolUseBlock("c2", "order", pair))
    assert result.content == "None ('t', Line(name='c', qty=1, note=None))", result.content
    # A null where the record requires a value is still the model's mistake, named.
    missing = '{"lines": [{"name": null}]}'
    result = kit.call_tool_sync(ToolUseBlock("c3", "order", missing))
    assert result.state is ToolResultState.ERROR
    assert "lines/0/name" in result.content or "lines.0.name" in result.content, result.content


def test_nulls_under_a_union_of_arrays_reach_a_client_tools_records() -> None:
    record = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["name"],
    }
    schema = {
        "type": "object",
        "properties": {"items": {"anyOf": [{"type": "array", "items": record}, {"type": "null"}]}},
    }
    client_tool = SchemaOnlyTool({"name": "client_tool", "parameters": schema})
    view = Toolkit().snapshot().view(config=ToolRequestConfig([client_tool]))
    arguments = '{"items": [{"name": "b", "n": null}]}'
    result = view.call_tool_sync(ToolUseBlock("c1", "client_tool", arguments))
    assert result.is_suspended, result.content


def test_a_null_beside_a_number_beyond_a_float_is_an_error_result() -> None:
    @tool(inline=True)
    def measure(x: float, label: str = "x") -> str:
        """A float and an optional label."""
        return f"{x} {label}"

    kit = Toolkit()
    kit.register(measure)
    result = kit.call_tool_sync(ToolUseBlock("c1", "measure", '{"x": 1e400, "label": null}'))
    assert result.state is ToolResultState.ERROR
    assert "number_too_large" in result.content or "1.7976931348623157e308" in result.content


@cache
def _demo_strict() -> tuple[tuple[str, dict[str, Any]], ...]:
    kit = demo_toolkit()
    out = []
    for spec in kit.specs():
        strict = _strict_schema(spec)
        if strict is not None:
            out.append((spec.name, strict))
    return tuple(out)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_demo_tools_accept_every_strict_argument_set(data: st.DataObject) -> None:
    kit = demo_toolkit()
    name, strict = data.draw(st.sampled_from(_demo_strict()))
    arguments = data.draw(valid_arguments(strict))
    spec = kit.get_spec(name)
    assert spec is not None
    canonical = JsonSchemaValidator(spec.parameters_json)
    if not canonical.is_valid(_without_nulls(orjson.loads(arguments))):
        return
    result = kit.call_tool_sync(ToolUseBlock("c1", name, arguments), DEMO_CONTEXT)
    assert result.state is not ToolResultState.ERROR or "Invalid arguments" not in result.content, (
        name,
        arguments,
        result.content,
    )


@cache
def _bfcl_strict() -> tuple[tuple[dict[str, Any], dict[str, Any]], ...]:
    if not CASES_FILE.is_file():
        return ()
    out = []
    with CASES_FILE.open(encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            if index % EVERY or not line.strip():
                continue
            schema = json.loads(line)["schema"]
            spec = SchemaOnlyTool({"name": "t", "parameters": schema}).spec
            strict = _strict_schema(spec)
            if strict is not None:
                out.append((schema, strict))
    return tuple(out)


@pytest.mark.skipif(not CASES_FILE.is_file(), reason=f"no BFCL corpus at {CASES_FILE}")
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_bfcl_tools_accept_every_strict_argument_set(data: st.DataObject) -> None:
    schema, strict = data.draw(st.sampled_from(_bfcl_strict()))
    arguments = data.draw(valid_arguments(strict))
    if not JsonSchemaValidator(schema).is_valid(_without_nulls(orjson.loads(arguments))):
        return
    client_tool = SchemaOnlyTool({"name": "client_tool", "parameters": schema})
    view = Toolkit().snapshot().view(config=ToolRequestConfig([client_tool]))
    result = view.call_tool_sync(ToolUseBlock("c1", "client_tool", arguments))
    assert result.is_suspended, (schema, arguments, result.content)
