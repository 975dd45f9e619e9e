"""FastMCP and ferrotool tools, both ways, in one process: a ferrotool tool served by FastMCP
(`fastmcp_tool`), and a FastMCP server's tools in a toolkit (`McpClient.in_process`)."""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import fastmcp
import mcp_types as types
import pytest
from fastmcp import FastMCP
from mcp.server import MCPServer
from servers import fastmcp_server
from servers.progress_kit import toolkit as progress_toolkit

from ferrotool import (
    Emitter,
    RuntimeContext,
    TextBlock,
    Toolkit,
    ToolProgress,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.interop.mcp import fastmcp_tool, to_mcp_tool
from ferrotool.mcp import McpClient, register_mcp
from ferrotool.mcp.server import McpToolServer

Report = tuple[float, float | None, str | None]


@dataclass(frozen=True)
class Point:
    """A point."""

    x: int
    y: int


@dataclass(frozen=True)
class Unit:
    """Injected from the runtime context: the unit of every shift."""

    size: int


@tool(read_only=True, inject=(Unit,))
async def shift(point: Point, by: int, unit: Unit, emitter: Emitter) -> Point:
    """Move a point along both axes.

    Args:
        point: The point.
        by: How many units.
    """
    emitter.progress(1, 2, "moving")
    emitter.progress(2, 2, "moved")
    return Point(point.x + by * unit.size, point.y + by * unit.size)


def fastmcp_with_shift() -> FastMCP:
    server: FastMCP = FastMCP("shapes")
    server.add_tool(fastmcp_tool(shift, context=RuntimeContext.of(Unit(10))))
    return server


# - a ferrotool tool served by FastMCP -


@pytest.mark.asyncio_only("FastMCP's server runs on asyncio")
async def test_fastmcp_lists_the_tool_with_ferrotools_definition() -> None:
    kit = Toolkit()
    kit.register(shift)
    expected = to_mcp_tool(kit, "shift")
    with anyio.fail_after(30):
        async with fastmcp.Client(fastmcp_with_shift()) as client:
            (listed,) = await client.list_tools()
    assert listed.name == "shift"
    # FastMCP inlines the $defs it lists; the schema is ferrotool's, with its descriptions and
    # its closed objects (a pydantic model of the signature would leave them open).
    schema = listed.input_schema
    assert "$defs" in expected.input_schema
    assert schema["required"] == expected.input_schema["required"] == ["point", "by"]
    assert schema["properties"]["by"] == {"type": "integer", "description": "How many units."}
    assert schema["properties"]["point"] == {
        "type": "object",
        "description": "The point.",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
        "additionalProperties": False,
    }
    assert schema["additionalProperties"] is False
    assert "unit" not in schema["properties"]  # injected, not the model's
    assert listed.annotations is not None
    assert listed.annotations.read_only_hint is True
    assert listed.description == "Move a point along both axes."


@pytest.mark.asyncio_only("FastMCP's server runs on asyncio")
async def test_fastmcp_calls_run_through_ferrotool() -> None:
    seen: list[Report] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(30):
        async with fastmcp.Client(fastmcp_with_shift(), progress_handler=progress) as client:
            result = await client.call_tool("shift", {"point": {"x": 1, "y": 2}, "by": 3})
            wrong = await client.call_tool(
                "shift", {"point": {"x": "one"}, "by": 3}, raise_on_error=False
            )
    assert [block.text for block in result.content if isinstance(block, types.TextContent)] == [
        '{"x":31,"y":32}'
    ]
    assert seen == [(1.0, 2.0, "moving"), (2.0, 2.0, "moved")]
    assert wrong.is_error
    (text,) = [block.text for block in wrong.content if isinstance(block, types.TextContent)]
    assert "point/x: expected integer" in text
    assert 'expected property "y"' in text  # every problem, as ferrotool's validator says


def test_an_external_tool_is_refused() -> None:
    from ferrotool import InteropError
    from ferrotool.interop.mcp import from_mcp

    external = from_mcp(types.Tool(name="remote", input_schema={"type": "object"}))
    with pytest.raises(InteropError, match="external"):
        fastmcp_tool(external)


# - a FastMCP server's tools in a toolkit, in process -


@pytest.mark.asyncio_only("FastMCP's server runs on asyncio")
async def test_a_fastmcp_servers_tools_import_in_process() -> None:
    client = McpClient.in_process("fast", fastmcp_server.server)
    kit = Toolkit()
    chunks: list[ToolProgress] = []
    with anyio.fail_after(30):
        await register_mcp(kit, client, trust=True)
        try:
            assert {"mcp__fast__add", "mcp__fast__count"} <= set(kit.names())
            added = await kit.call_tool(ToolUseBlock("a", "mcp__fast__add", '{"a": 2, "b": 5}'))
            counted = await kit.call_tool(
                ToolUseBlock("c", "mcp__fast__count", "{}"), on_progress=chunks.append
            )
        finally:
            await client.close()
    assert (added.state, added.content) == (ToolResultState.SUCCESS, "7")
    assert counted.content == "counted"
    assert [(chunk.progress, chunk.total, chunk.chunk) for chunk in chunks] == [
        (float(step), 3.0, TextBlock(f"step {step} of 3")) for step in (1, 2, 3)
    ]


@pytest.mark.asyncio_only("FastMCP's server runs on asyncio")
async def test_a_ferrotool_tool_round_trips_through_fastmcp_in_process() -> None:
    client = McpClient.in_process("shapes", fastmcp_with_shift())
    kit = Toolkit()
    with anyio.fail_after(30):
        await register_mcp(kit, client)
        try:
            call = ToolUseBlock("s", "mcp__shapes__shift", '{"point": {"x": 0, "y": 0}, "by": 1}')
            result = await kit.call_tool(call)
        finally:
            await client.close()
    assert (result.state, result.content) == (ToolResultState.SUCCESS, '{"x":10,"y":10}')


async def test_the_sdks_servers_and_ferrotools_own_import_in_process() -> None:
    sdk: MCPServer = MCPServer("sdk")

    def multiply(a: int, b: int) -> int:
        """Multiply."""
        return a * b

    sdk.add_tool(multiply, name="times")
    kit = Toolkit()
    chunks: list[ToolProgress] = []
    sdk_client = McpClient.in_process("sdk", sdk)
    own = McpClient.in_process("own", McpToolServer(progress_toolkit()))
    with anyio.fail_after(30):
        await register_mcp(kit, sdk_client, trust=True)
        await register_mcp(kit, own)
        try:
            times = await kit.call_tool(ToolUseBlock("t", "mcp__sdk__times", '{"a": 6, "b": 7}'))
            thirds = await kit.call_tool(
                ToolUseBlock("p", "mcp__own__thirds", "{}"), on_progress=chunks.append
            )
        finally:
            await sdk_client.close()
            await own.close()
    assert times.content == "42"
    assert thirds.content == "three thirds"
    assert [(chunk.progress, chunk.total) for chunk in chunks] == [(1, 3), (2, 3), (3, 3)]


def test_in_process_takes_only_servers() -> None:
    with pytest.raises(TypeError, match="not dict"):
        McpClient.in_process("x", {})
