"""Faults injected into real MCP server processes: each ends as a result, never as a crash."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio
from mcp_support import PYTHON, RAW, SDK, free_port, start, stop

from ferrotool import Toolkit, ToolResultState, ToolUseBlock
from ferrotool.mcp import McpClient, register_mcp


def call(name: str, arguments: object = None, id: str = "c") -> ToolUseBlock:
    return ToolUseBlock(id, f"mcp__raw__{name}", json.dumps(arguments or {}))


def methods(log: Path) -> list[object]:
    return [json.loads(line).get("method") for line in log.read_text().splitlines()]


async def registered(log: Path, **options: float) -> tuple[Toolkit, McpClient]:
    client = McpClient.stdio("raw", PYTHON, [RAW], env={"FAULTS_LOG": str(log)}, **options)  # type: ignore[arg-type]
    toolkit = Toolkit()
    await register_mcp(toolkit, client, trust=True)
    return toolkit, client


async def test_a_stdio_server_dying_mid_call_is_an_error_and_restarts_with_backoff(
    tmp_path: Path,
) -> None:
    log = tmp_path / "log.jsonl"
    with anyio.fail_after(30):
        toolkit, client = await registered(log, backoff=0.3)
        try:
            died = await toolkit.call_tool(call("die"))
            assert died.state is ToolResultState.ERROR
            assert "closed during the call" in died.content
            start_time = time.monotonic()
            after = await toolkit.call_tool(call("echo", {"text": "back"}))
            assert after.content == "back"
            assert time.monotonic() - start_time >= 0.3  # waited before starting it again
            assert methods(log).count("initialize") == 2
            again = await toolkit.call_tool(call("echo", {"text": "fast"}))
            assert again.content == "fast"
        finally:
            await client.close()


async def test_garbage_on_stdout_is_an_error_result_not_a_crash(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        toolkit, client = await registered(tmp_path / "log.jsonl", request_timeout=20)
        try:
            result = await toolkit.call_tool(call("garbage"))
            assert result.state is ToolResultState.ERROR
            assert "not JSON-RPC: 'this is not JSON-RPC'" in result.content
            assert (await toolkit.call_tool(call("echo", {"text": "ok"}))).content == "ok"
        finally:
            await client.close()


async def test_a_hanging_server_times_out_and_is_told_to_stop(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with anyio.fail_after(30):
        toolkit, client = await registered(log, request_timeout=0.5)
        try:
            start_time = time.monotonic()
            result = await toolkit.call_tool(call("slow", {"seconds": 10}))
            assert time.monotonic() - start_time < 5
            assert result.state is ToolResultState.ERROR
            assert "did not answer within 0.5 s" in result.content
            while "notifications/cancelled" not in methods(log):
                await anyio.sleep(0.02)
            assert (await toolkit.call_tool(call("echo", {"text": "ok"}))).content == "ok"
        finally:
            await client.close()


async def test_a_hundred_concurrent_calls_over_one_session(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    results: dict[str, str] = {}
    with anyio.fail_after(60):
        toolkit, client = await registered(log)
        try:

            async def one(index: int) -> None:
                result = await toolkit.call_tool(call("echo", {"text": f"n{index}"}, id=str(index)))
                results[result.id or ""] = result.content

            async with anyio.create_task_group() as group:
                for index in range(100):
                    group.start_soon(one, index)
        finally:
            await client.close()
    assert results == {str(index): f"n{index}" for index in range(100)}
    assert methods(log).count("initialize") == 1


async def test_an_http_server_that_drops_is_reconnected() -> None:
    port = free_port()
    process = start([SDK, "streamable-http", str(port)], port)
    client = McpClient.streamable_http("sdk", f"http://127.0.0.1:{port}/mcp", backoff=0.05)
    toolkit = Toolkit()
    echo = ToolUseBlock("e", "mcp__sdk__echo", '{"text": "hi"}')
    try:
        with anyio.fail_after(60):
            await register_mcp(toolkit, client, trust=True)
            assert (await toolkit.call_tool(echo)).content == "hi"
            stop(process)
            dropped = await toolkit.call_tool(echo)
            assert dropped.state is ToolResultState.ERROR
            process = start([SDK, "streamable-http", str(port)], port)
            assert (await toolkit.call_tool(echo)).content == "hi"
    finally:
        await client.close()
        stop(process)
