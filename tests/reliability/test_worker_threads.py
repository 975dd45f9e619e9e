"""Worker threads under faults: a sync tool that never returns times out at once, keeps its
worker slot until it does return, and the pool serves every other call again then."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from ferrotool import (
    ExecutionConfig,
    Toolkit,
    ToolkitConfig,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.errors import StuckToolWarning


@tool
def quick(n: int) -> int:
    """Returns at once."""
    return n * 2


@pytest.mark.filterwarnings("ignore::ferrotool.errors.StuckToolWarning")
async def test_a_tool_that_never_returns_times_out_and_keeps_its_slot_until_it_returns() -> None:
    release = threading.Event()

    @tool(timeout=0.3)
    def stuck() -> str:
        """Never returns (until the test lets it)."""
        release.wait(30)
        return "late"

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
        # Both abandoned threads still block, and hold both slots: a call waits for one.
        waiting = await kit.call_tools(
            [ToolUseBlock("w", "quick", '{"n": 1}')], config=ExecutionConfig(timeout=0.2)
        )
        assert "timed out after 0.2 s" in waiting.results[0].content
        release.set()
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
        release.set()


async def test_a_stuck_tool_is_named_in_a_warning() -> None:
    release = threading.Event()

    @tool(timeout=0.05)
    def hangs() -> str:
        """Blocks past its timeout."""
        release.wait(5)
        return "late"

    kit = Toolkit(ToolkitConfig(max_threads=1))
    kit.register(hangs)
    try:
        with pytest.warns(StuckToolWarning, match=r"sync tool 'hangs' \(call h1\)"):
            result = await kit.call_tool(ToolUseBlock("h1", "hangs", "{}"))
        assert "timed out" in result.content
    finally:
        release.set()
