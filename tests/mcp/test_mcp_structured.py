"""Structured output over ``ferrotool serve``: the SDK's client lists and validates it."""

from __future__ import annotations

import json
import os

import anyio
import jsonschema_rs
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp_support import PYTHON, SERVERS
from servers.structured import toolkit

from ferrotool.mcp.server import McpToolServer


def stdio() -> StdioServerParameters:
    return StdioServerParameters(
        command=PYTHON,
        args=["-m", "ferrotool", "serve", "structured:toolkit"],
        env={"PYTHONPATH": os.pathsep.join([str(SERVERS), os.environ.get("PYTHONPATH", "")])},
    )


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


CALLS: list[tuple[str, dict[str, object], object]] = [
    ("point", {"x": 1, "y": 2}, {"x": 1, "y": 2, "label": None}),
    ("span", {"start": 3, "end": 5}, {"start": 3, "end": 5}),
    ("stats", {"text": "a b\nc"}, {"words": 3, "lines": 2}),
    ("owner", {"name": "Ann"}, {"name": "Ann", "pets": []}),
    ("double", {"n": 21}, {"result": 42}),
    (
        "points",
        {"n": 2},
        {"result": [{"x": 0, "y": 0, "label": None}, {"x": 1, "y": 1, "label": None}]},
    ),
    ("find", {"x": 4}, {"result": {"x": 4, "y": 0, "label": None}}),
    ("find", {"x": 0}, {"result": None}),
    ("scores", {}, {"a": 1.5, "b": 2.0}),
    ("area", {"w": 2, "h": 3}, {"result": 6.0}),
]


def test_the_listing_has_an_object_output_schema_for_every_typed_result() -> None:
    listed = json.loads(McpToolServer(toolkit()).registry.view().schemas_json("mcp"))
    schemas = {tool["name"]: tool.get("outputSchema") for tool in listed}
    assert schemas["greet"] is None
    for name, schema in schemas.items():
        if name != "greet":
            assert schema["type"] == "object", name
            jsonschema_rs.meta.validate(
                {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
            )
    assert schemas["double"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }


async def test_the_sdk_client_validates_structured_content_over_stdio() -> None:
    with anyio.fail_after(60):
        async with Client(stdio()) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert tools["greet"].output_schema is None
            assert tools["point"].output_schema is not None
            assert tools["point"].output_schema["required"] == ["x", "y"]
            for name, arguments, expected in CALLS:
                result = await client.call_tool(name, arguments)  # validates, or raises
                assert not result.is_error, name
                assert result.structured_content == expected, name
                if isinstance(expected, dict) and "result" not in expected:
                    assert json.loads(text(result)) == expected, name
            greeting = await client.call_tool("greet", {"name": "Bo"})
            assert greeting.structured_content is None
            assert text(greeting) == "hello Bo"


@pytest.mark.parametrize(("name", "arguments", "expected"), CALLS)
async def test_each_structured_value_matches_its_listed_schema(
    name: str, arguments: dict[str, object], expected: object
) -> None:
    server = McpToolServer(toolkit())
    listed = json.loads(server.registry.view().schemas_json("mcp"))
    schema = next(tool["outputSchema"] for tool in listed if tool["name"] == name)
    jsonschema_rs.validate(schema, expected)
