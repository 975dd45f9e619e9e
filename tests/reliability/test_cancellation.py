"""Cancellation is never swallowed: a cancelled caller sees its cancellation, and the call's
``INTERRUPTED`` result still reaches its result sink.

Checked for a tool the Rust direct call runs and for one the Python pipeline runs, under plain
asyncio (tasks, `asyncio.timeout`, `TaskGroup`) and under anyio cancel scopes. A deadline that
belongs to the call (the tool's own timeout) is a result, not a cancellation of the caller.
"""

from __future__ import annotations

import asyncio

import anyio
import pytest

from ferrotool import (
    RuntimeContext,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    tool,
)


@tool
async def wait_direct(seconds: float = 60.0) -> str:
    """Sleeps (run by the Rust direct call)."""
    await anyio.sleep(seconds)
    return "woke"


@tool
async def wait_pipeline(context: RuntimeContext, seconds: float = 60.0) -> str:
    """Sleeps (run by the Python pipeline: it takes the context)."""
    await anyio.sleep(seconds)
    return "woke"


@tool(timeout=0.05)
async def wait_with_deadline(seconds: float = 60.0) -> str:
    """Sleeps past its own timeout."""
    await anyio.sleep(seconds)
    return "woke"


TOOLKIT = Toolkit()
for _item in (wait_direct, wait_pipeline, wait_with_deadline):
    TOOLKIT.register(_item)
NAMES = ("wait_direct", "wait_pipeline")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("name", NAMES)
async def test_a_cancelled_asyncio_task_is_cancelled_and_the_result_delivered(name: str) -> None:
    delivered: list[ToolResultBlock] = []
    task = asyncio.create_task(
        TOOLKIT.call_tool(ToolUseBlock("c1", name, "{}"), on_result=delivered.append)
    )
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert [(r.id, r.state) for r in delivered] == [("c1", ToolResultState.INTERRUPTED)]


@pytest.mark.parametrize("name", NAMES)
async def test_asyncio_timeout_keeps_its_meaning(name: str) -> None:
    delivered: list[ToolResultBlock] = []
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await TOOLKIT.call_tool(ToolUseBlock("c1", name, "{}"), on_result=delivered.append)
    assert [r.state for r in delivered] == [ToolResultState.INTERRUPTED]


@pytest.mark.parametrize("name", NAMES)
async def test_a_task_group_cancels_its_calls(name: str) -> None:
    delivered: list[ToolResultBlock] = []

    async def fail_soon() -> None:
        await asyncio.sleep(0.02)
        raise RuntimeError("sibling failed")

    async def run_group() -> None:
        async with asyncio.TaskGroup() as group:
            for index in range(3):
                call = ToolUseBlock(f"c{index}", name, "{}")
                group.create_task(TOOLKIT.call_tool(call, on_result=delivered.append))
            group.create_task(fail_soon())

    with pytest.raises(ExceptionGroup) as caught:
        await run_group()
    assert caught.group_contains(RuntimeError, match="sibling failed")
    assert sorted((r.id, r.state) for r in delivered) == [
        (f"c{index}", ToolResultState.INTERRUPTED) for index in range(3)
    ]


@pytest.mark.parametrize("name", [*NAMES, "wait_with_deadline"])
async def test_calls_in_an_expired_anyio_scope_stop_instead_of_spinning(name: str) -> None:
    calls = 0
    with anyio.fail_after(5):  # a spinning loop would never leave the inner scope
        with anyio.move_on_after(0.05):
            while True:
                calls += 1
                await TOOLKIT.call_tool(ToolUseBlock(f"c{calls}", name, '{"seconds": 0.01}'))
    assert calls < 100


async def test_the_tools_own_deadline_is_a_result_not_a_cancellation() -> None:
    result = await TOOLKIT.call_tool(ToolUseBlock("c1", "wait_with_deadline", "{}"))
    assert result.state is ToolResultState.ERROR
    assert "timed out after 0.05 s" in result.content
    await anyio.sleep(0)  # the caller was not cancelled: it goes on


async def test_every_call_of_a_cancelled_gather_is_paired_with_a_result() -> None:
    delivered: list[ToolResultBlock] = []
    gathered = asyncio.gather(
        *(
            TOOLKIT.call_tool(
                ToolUseBlock(f"c{index}", NAMES[index % 2], "{}"), on_result=delivered.append
            )
            for index in range(10)
        )
    )
    await asyncio.sleep(0.02)
    gathered.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gathered
    assert sorted(str(r.id) for r in delivered) == sorted(f"c{index}" for index in range(10))
    assert {r.state for r in delivered} == {ToolResultState.INTERRUPTED}
