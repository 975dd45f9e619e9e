"""Worker threads under faults: a sync tool that never returns times out, and the pool keeps
serving every other call."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from ferrotool import Toolkit, ToolkitConfig, ToolResultState, ToolUseBlock, tool

RELEASE = threading.Event()


@tool(timeout=0.3)
def stuck() -> str:
    """Never returns (until the test ends)."""
    RELEASE.wait(30)
    return "late"


@tool
def quick(n: int) -> int:
    """Returns at once."""
    return n * 2


@pytest.mark.asyncio_only(
    "under trio an abandoned worker thread keeps its pool slot until it returns (trio's rule, "
    "which bounds the threads alive): the pool serves others once the stuck tools give up"
)
async def test_a_tool_that_never_returns_times_out_and_the_pool_keeps_serving() -> None:
    kit = Toolkit(ToolkitConfig(max_threads=2))
    kit.register(stuck)
    kit.register(quick)
    try:
        started = time.monotonic()
        first = await kit.call_tool(ToolUseBlock("s1", "stuck", "{}"))
        second = await kit.call_tool(ToolUseBlock("s2", "stuck", "{}"))
        assert (first.state, second.state) == (ToolResultState.ERROR, ToolResultState.ERROR)
        assert "timed out after 0.3 s" in first.content
        assert time.monotonic() - started < 5
        # Both abandoned threads still block, yet the pool of two serves 50 more calls.
        results: list[int] = []

        async def one(n: int) -> None:
            result = await kit.call_tool(ToolUseBlock(f"q{n}", "quick", f'{{"n": {n}}}'))
            assert result.state is ToolResultState.SUCCESS
            results.append(int(result.content))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for n in range(50):
                    group.start_soon(one, n)
        assert sorted(results) == [2 * n for n in range(50)]
    finally:
        RELEASE.set()
