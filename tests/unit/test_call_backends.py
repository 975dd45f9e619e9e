"""Plain calls (a Rust `PendingCall`) under anyio, on every backend: run, interleave, cancel.

`test_pending_call.py` drives a `PendingCall` by hand and through asyncio tasks; here the same
awaitable is run by anyio task groups, cancel scopes and timeouts, so that trio (whose traps
and `Cancelled` are not asyncio's) is exercised as well.
"""

from __future__ import annotations

import anyio
import pytest

from ferrotool import TextBlock, Toolkit, ToolResultBlock, ToolUseBlock, tool
from ferrotool._core import PendingCall


def call(name: str, arguments: str = "{}", id: str = "c1") -> ToolUseBlock:
    return ToolUseBlock(id, name, arguments)


async def test_each_backend_runs_its_own_loop(anyio_backend: str) -> None:
    if anyio_backend == "trio":
        import trio

        assert trio.lowlevel.current_task() is not None  # raises outside trio
    else:
        import asyncio

        assert asyncio.current_task() is not None  # raises outside asyncio


async def test_pending_calls_interleave_in_a_task_group() -> None:
    """Three plain calls wait at once on an event only the test sets: each suspends and is
    resumed by the event loop, and every caller gets its own result."""
    go = anyio.Event()
    waiting = 0

    @tool
    async def echo(word: str) -> str:
        nonlocal waiting
        waiting += 1
        await go.wait()
        await anyio.sleep(0)
        return word.upper()

    kit = Toolkit()
    kit.register(echo)
    assert isinstance(kit.call_tool(call("echo", '{"word": "x"}')), PendingCall)
    results: dict[str, ToolResultBlock] = {}

    async def run(word: str) -> None:
        results[word] = await kit.call_tool(call("echo", f'{{"word": "{word}"}}', id=word))

    async with anyio.create_task_group() as group:
        for word in ("a", "b", "c"):
            group.start_soon(run, word)
        while waiting < 3:
            await anyio.sleep(0)
        assert results == {}
        go.set()
    assert {word: result.output for word, result in results.items()} == {
        word: (TextBlock(word.upper()),) for word in ("a", "b", "c")
    }
    assert [results[word].id for word in ("a", "b", "c")] == ["a", "b", "c"]


async def test_a_cancelled_caller_cancels_the_tool_and_sees_its_cancellation() -> None:
    started = anyio.Event()
    seen: list[str] = []

    @tool
    async def wait_forever() -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            seen.append("cancelled")
            raise
        finally:
            seen.append("finally")
        return "never"

    kit = Toolkit()
    kit.register(wait_forever)
    returned: list[ToolResultBlock] = []

    async def run() -> None:
        returned.append(await kit.call_tool(call("wait_forever")))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await started.wait()
        group.cancel_scope.cancel()
    assert seen == ["cancelled", "finally"]
    assert returned == []


async def test_a_timeout_around_a_pending_call_stops_the_tool() -> None:
    seen: list[str] = []

    @tool
    async def wait_forever() -> str:
        try:
            await anyio.sleep_forever()
        finally:
            seen.append("stopped")
        return "never"

    kit = Toolkit()
    kit.register(wait_forever)
    with pytest.raises(TimeoutError):
        with anyio.fail_after(0.05):
            await kit.call_tool(call("wait_forever"))
    assert seen == ["stopped"]
    with anyio.move_on_after(0.05) as scope:
        await kit.call_tool(call("wait_forever"))
    assert scope.cancelled_caught
    assert seen == ["stopped", "stopped"]


async def test_a_pending_call_survives_a_cancel_scope_that_does_not_fire() -> None:
    @tool
    async def slow(word: str) -> str:
        await anyio.sleep(0.01)
        return word

    kit = Toolkit()
    kit.register(slow)
    with anyio.fail_after(5):
        result = await kit.call_tool(call("slow", '{"word": "ok"}'))
    assert result.output == (TextBlock("ok"),)
