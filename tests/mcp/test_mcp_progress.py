"""Progress with numbers, both ways: a tool's ``Emitter.progress`` becomes MCP
``notifications/progress`` under ``ferrotool serve``, and an MCP server's progress notifications
reach the ferrotool call's emitter with their numbers."""

from __future__ import annotations

import os
from collections.abc import Iterator

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_support import PYTHON, SERVERS, free_port, stop, wait_port
from servers.progress_kit import toolkit as progress_toolkit

from ferrotool import (
    Emitter,
    TextBlock,
    Toolkit,
    ToolProgress,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.mcp import McpClient, ProgressHandler, register_mcp

Report = tuple[float, float | None, str | None]
THIRDS: list[Report] = [(1.0, 3.0, "1 of 3"), (2.0, 3.0, "2 of 3"), (3.0, 3.0, "3 of 3")]
HALVES: list[Report] = [(1.0, 2.0, "one half"), (2.0, 2.0, None), (3.0, None, "done counting")]


def _pythonpath() -> str:
    """The test servers' folder, then this checkout's ferrotool (the subprocess imports it)."""
    return os.pathsep.join([str(SERVERS), os.environ.get("PYTHONPATH", "")])


def numbers(chunks: list[ToolProgress]) -> list[tuple[float | None, float | None, object]]:
    return [(chunk.progress, chunk.total, chunk.chunk) for chunk in chunks]


# - the emitter -


async def test_emitter_progress_carries_the_numbers_and_the_message() -> None:
    chunks: list[ToolProgress] = []
    kit = progress_toolkit()
    result = await kit.call_tool(ToolUseBlock("t1", "thirds", "{}"), on_progress=chunks.append)
    assert result.content == "three thirds"
    assert numbers(chunks) == [
        (1.0, 3.0, TextBlock("1 of 3")),
        (2.0, 3.0, TextBlock("2 of 3")),
        (3.0, 3.0, TextBlock("3 of 3")),
    ]
    assert {(chunk.call_id, chunk.tool_name) for chunk in chunks} == {("t1", "thirds")}


async def test_a_sync_tool_reports_numbers_from_its_thread_and_emit_still_sends_chunks() -> None:
    chunks: list[ToolProgress] = []
    await progress_toolkit().call_tool(ToolUseBlock("h", "halves", "{}"), on_progress=chunks.append)
    assert numbers(chunks) == [
        (1.0, 2.0, TextBlock("one half")),
        (2.0, 2.0, TextBlock("")),
        (None, None, TextBlock("done counting")),
    ]


def test_tool_progress_built_as_before_has_no_numbers() -> None:
    progress = ToolProgress("c", "t", TextBlock("x"))
    assert (progress.progress, progress.total) == (None, None)
    with pytest.raises(AttributeError):
        progress.progress = 1.0  # type: ignore[misc]  # frozen


async def test_progress_numbers_must_be_numbers() -> None:
    seen: list[BaseException] = []

    @tool
    def wrong(emitter: Emitter) -> str:
        """Reports a string as progress."""
        try:
            emitter.progress("half")  # type: ignore[arg-type]  # the mistake under test
        except TypeError as error:
            seen.append(error)
        return "ok"

    kit = Toolkit()
    kit.register(wrong)
    await kit.call_tool(ToolUseBlock("w", "wrong", "{}"), on_progress=lambda _: None)
    assert [str(error) for error in seen] == ["progress must be a number, not str"]


# - ferrotool serve, to the SDK's own client -


def _reporter(seen: list[Report]) -> ProgressHandler:
    async def report(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    return report


async def _calls(client: Client) -> tuple[list[Report], list[Report]]:
    thirds: list[Report] = []
    halves: list[Report] = []
    result = await client.call_tool("thirds", {}, progress_callback=_reporter(thirds))
    assert not result.is_error
    await client.call_tool("halves", {}, progress_callback=_reporter(halves))
    return thirds, halves


async def test_in_process_serve_sends_the_numbers() -> None:
    from ferrotool.mcp.server import McpToolServer

    served = McpToolServer(progress_toolkit())
    with anyio.fail_after(30):
        async with Client(served.server, mode="legacy") as client:
            assert await _calls(client) == (THIRDS, HALVES)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_serve_over_stdio_sends_the_numbers(mode: str) -> None:
    parameters = StdioServerParameters(
        command=PYTHON,
        args=["-m", "ferrotool", "serve", "progress_kit:toolkit"],
        env={"PYTHONPATH": _pythonpath()},
    )
    with anyio.fail_after(30):
        async with Client(parameters, mode=mode) as client:
            assert await _calls(client) == (THIRDS, HALVES)


@pytest.fixture(scope="module")
def served_http() -> Iterator[int]:
    """``ferrotool serve progress_kit:toolkit`` over streamable HTTP; yields its port."""
    import subprocess

    port = free_port()
    command = [PYTHON, "-m", "ferrotool", "serve", "progress_kit:toolkit"]
    command += ["--transport", "streamable-http", "--port", str(port)]
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_port(port, process)
        yield port
    finally:
        stop(process)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_serve_over_streamable_http_sends_the_numbers(served_http: int, mode: str) -> None:
    with anyio.fail_after(30):
        async with Client(f"http://127.0.0.1:{served_http}/mcp", mode=mode) as client:
            assert await _calls(client) == (THIRDS, HALVES)


# - the client: servers' progress notifications reach the emitter -


async def _progress_of(client: McpClient, tool_name: str) -> list[ToolProgress]:
    kit = Toolkit()
    chunks: list[ToolProgress] = []
    with anyio.fail_after(30):
        await register_mcp(kit, client, trust=True)
        try:
            call = ToolUseBlock("p1", tool_name, "{}")
            result = await kit.call_tool(call, on_progress=chunks.append)
            assert result.state is ToolResultState.SUCCESS, result.content
        finally:
            await client.close()
    assert {chunk.call_id for chunk in chunks} == {"p1"}
    return chunks


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_servers_progress_reaches_the_emitter(sdk_http: int, mode: str) -> None:
    client = McpClient.streamable_http("sdk", f"http://127.0.0.1:{sdk_http}/mcp", mode=mode)
    chunks = await _progress_of(client, "mcp__sdk__progress")
    assert numbers(chunks) == [(1.0, 2.0, TextBlock("half")), (2.0, 2.0, TextBlock("all"))]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_fastmcp_servers_progress_reaches_the_emitter(fastmcp_http: int, mode: str) -> None:
    client = McpClient.streamable_http("fast", f"http://127.0.0.1:{fastmcp_http}/mcp", mode=mode)
    chunks = await _progress_of(client, "mcp__fast__count")
    assert numbers(chunks) == [
        (1.0, 3.0, TextBlock("step 1 of 3")),
        (2.0, 3.0, TextBlock("step 2 of 3")),
        (3.0, 3.0, TextBlock("step 3 of 3")),
    ]
