"""MCP tool definitions both ways, listed through the MCP SDK's own server and client."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.types import ListToolsResult, PaginatedRequestParams, Tool

from ferrotool import InteropError, Toolkit, ToolResultState, ToolUseBlock, tool
from ferrotool.interop import mcp as bridge


@tool(read_only=True)
async def get_weather(city: str, days: int = 1) -> str:
    """Get the weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


@tool
async def book(city: str, nights: int) -> dict[str, object]:
    """Book a hotel."""
    return {"city": city, "nights": nights}


def kit() -> Toolkit:
    toolkit = Toolkit()
    toolkit.register(get_weather)
    toolkit.register(book)
    return toolkit


async def listed_by_a_client(tools: list[Tool]) -> list[Tool]:
    """The tools as an MCP client sees them, served by the SDK's low-level server."""

    async def list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    server: Server[Any] = Server("weather", on_list_tools=list_tools)
    async with Client(server) as client:
        return (await client.list_tools()).tools


async def test_exported_definitions_reach_an_mcp_client_unchanged() -> None:
    toolkit = kit()
    exported = bridge.to_mcp(toolkit)
    seen = await listed_by_a_client(exported)
    assert [t.name for t in seen] == ["get_weather", "book"]
    weather = seen[0]
    assert weather.input_schema == orjson.loads(toolkit.get_spec("get_weather").parameters_json)  # type: ignore[union-attr]
    assert weather.annotations is not None
    assert weather.annotations.read_only_hint is True
    assert seen[1].annotations is not None
    assert seen[1].annotations.read_only_hint is False
    assert weather.description == "Get the weather forecast for a city."


async def test_listed_definitions_import_as_external_tools_named_by_server() -> None:
    seen = await listed_by_a_client(bridge.to_mcp(kit()))
    imported = Toolkit()
    for definition in seen:
        imported.register(bridge.from_mcp(definition, server="weather"))
    assert imported.names() == ("mcp__weather__get_weather", "mcp__weather__book")
    spec = imported.get_spec("mcp__weather__get_weather")
    assert spec is not None
    assert spec.read_only
    assert spec.external
    assert spec.mcp_server == "weather"
    assert orjson.loads(spec.parameters_json) == seen[0].input_schema
    waiting = await imported.call_tool(
        ToolUseBlock("c1", "mcp__weather__book", '{"city": "Rome", "nights": 2}')
    )
    assert waiting.is_suspended
    invalid = await imported.call_tool(ToolUseBlock("c2", "mcp__weather__book", '{"city": 1}'))
    assert invalid.state is ToolResultState.ERROR
    assert "nights" in invalid.content


def test_a_definition_survives_the_round_trip() -> None:
    toolkit = kit()
    original = bridge.to_mcp_tool(toolkit, "get_weather")
    again = Toolkit()
    again.register(bridge.from_mcp(original.model_dump(by_alias=True, exclude_none=True)))
    assert bridge.to_mcp_tool(again, "get_weather") == original


def test_an_output_schema_is_kept_and_a_bad_definition_is_refused() -> None:
    output = {"type": "object", "properties": {"temp": {"type": "number"}}}
    definition = Tool(
        name="temp",
        description="Temperature.",
        input_schema={"type": "object", "properties": {}},
        output_schema=output,
    )
    assert orjson.loads(bridge.from_mcp(definition).spec.output_schema_json or b"") == output
    with pytest.raises(InteropError, match="not an MCP tool definition"):
        bridge.from_mcp({"description": "no name"})
