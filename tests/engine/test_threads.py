"""Worker threads and event loops.

A sync tool that outlives its timeout keeps its worker slot until its thread returns, so no more
than ``max_threads`` threads ever run sync tools (a `StuckToolWarning` names the tool); and the
limits are kept per event loop, so one toolkit serves loops in many threads.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import Callable

import anyio
import pytest
import trio

from ferrotool import Toolkit, ToolkitConfig, ToolResultState, ToolUseBlock, tool
from ferrotool.errors import StuckToolWarning

STUCK = 0.5


@tool(timeout=0.05)
def stuck_tool() -> str:
    """Blocks its worker thread well past its timeout."""
    time.sleep(STUCK)
    return "late"


@tool
def stuck_untimed() -> str:
    """Blocks its worker thread, with no timeout of its own."""
    time.sleep(STUCK)
    return "late"


@tool
def quick(n: int) -> int:
    """Returns at once."""
    time.sleep(0.001)
    return n * 2


def _threads() -> int:
    return threading.active_count()


async def test_a_stuck_sync_tool_keeps_its_slot_until_its_thread_returns() -> None:
    kit = Toolkit(ToolkitConfig(max_threads=4))
    kit.register(stuck_tool)
    kit.register(quick)
    await kit.call_tool(ToolUseBlock("warm", "quick", '{"n": 1}'))  # the loop's first worker
    await anyio.sleep(0.05)
    before = _threads()
    peak = before
    timed_out = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StuckToolWarning)
        for wave in range(12):  # 120 calls, a wave of 10 every 50 ms, over a stuck period
            calls = [ToolUseBlock(f"s{wave}-{i}", "stuck_tool", "{}") for i in range(10)]
            started = time.monotonic()
            batch = await kit.call_tools(calls)
            assert time.monotonic() - started < STUCK  # the caller is never held up
            timed_out += sum("timed out after 0.05 s" in r.content for r in batch.results)
            peak = max(peak, _threads())
    assert timed_out == 120
    assert peak - before <= 4
    stuck = [w for w in caught if issubclass(w.category, StuckToolWarning)]
    assert stuck
    assert all("stuck_tool" in str(w.message) for w in stuck)
    # Once the stuck threads return, their slots serve calls again.
    await anyio.sleep(STUCK + 0.1)
    with anyio.fail_after(5):
        result = await kit.call_tool(ToolUseBlock("q", "quick", '{"n": 21}'))
    assert result.content == "42"
    assert _threads() - before <= 4


@pytest.mark.parametrize("name", ["stuck_tool", "stuck_untimed"])
async def test_a_cancelled_batch_of_sync_tools_keeps_the_threads_bounded(name: str) -> None:
    kit = Toolkit(ToolkitConfig(max_threads=2))
    kit.register(stuck_tool)
    kit.register(stuck_untimed)
    kit.register(quick)
    await anyio.sleep(0.05)
    before = _threads()
    peak = before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StuckToolWarning)
        for wave in range(6):
            calls = [ToolUseBlock(f"s{wave}-{i}", name, "{}") for i in range(4)]
            with anyio.move_on_after(0.02):
                await kit.call_tools(calls)
            peak = max(peak, _threads())
            await anyio.sleep(0.03)
    assert peak - before <= 2
    await anyio.sleep(STUCK + 0.1)
    with anyio.fail_after(5):  # every slot came back
        batch = await kit.call_tools(
            [ToolUseBlock(f"q{i}", "quick", f'{{"n": {i}}}') for i in range(4)]
        )
    assert {r.state for r in batch.results} == {ToolResultState.SUCCESS}


def _run_in_threads(count: int, run_one: Callable[[int], str], timeout: float) -> list[str]:
    """Run ``run_one(index)`` in ``count`` threads; a thread still running after ``timeout``
    (a hang) fails the test instead of hanging it."""
    outcomes: list[str] = []
    lock = threading.Lock()

    def body(index: int) -> None:
        try:
            value = run_one(index)
        except BaseException as exc:  # reported below
            value = f"raised {exc!r}"
        with lock:
            outcomes.append(str(value))

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    hung = sum(thread.is_alive() for thread in threads)
    assert hung == 0, f"{hung} of {count} event loops hung"
    return outcomes


def _calls(loop: int) -> list[ToolUseBlock]:
    return [ToolUseBlock(f"l{loop}-{n}", "quick", f'{{"n": {n}}}') for n in range(40)]


def _expected() -> str:
    return str([str(2 * n) for n in range(40)])


def test_one_toolkit_serves_asyncio_loops_in_eight_threads() -> None:
    kit = Toolkit(ToolkitConfig(max_threads=2))
    kit.register(quick)

    def run_one(index: int) -> str:
        async def main() -> str:
            batch = await kit.call_tools(_calls(index))
            return str([r.content for r in batch.results])

        return asyncio.run(main())

    outcomes = _run_in_threads(8, run_one, timeout=30)
    assert outcomes == [_expected()] * 8


def test_one_toolkit_serves_trio_runs_in_four_threads() -> None:
    kit = Toolkit(ToolkitConfig(max_threads=2))
    kit.register(quick)

    def run_one(index: int) -> str:
        async def main() -> str:
            batch = await kit.call_tools(_calls(index))
            return str([r.content for r in batch.results])

        return trio.run(main)

    outcomes = _run_in_threads(4, run_one, timeout=30)
    assert outcomes == [_expected()] * 4


def test_a_finished_loop_leaves_no_limits_behind() -> None:
    kit = Toolkit(ToolkitConfig(max_threads=2))
    kit.register(quick)

    async def main() -> None:
        await kit.call_tools(_calls(0))

    for _ in range(3):
        asyncio.run(main())
    gc.collect()
    assert kit.snapshot().view().runner.loops == 0


@pytest.mark.parametrize("max_threads", [1, 3])
async def test_sync_tools_never_run_on_more_threads_than_max_threads(max_threads: int) -> None:
    running: set[int] = set()
    most = 0
    lock = threading.Lock()

    @tool
    def counted(n: int) -> int:
        """Counts the threads running it at once."""
        nonlocal most
        with lock:
            running.add(threading.get_ident())
            most = max(most, len(running))
        time.sleep(0.002)
        with lock:
            running.discard(threading.get_ident())
        return n

    kit = Toolkit(ToolkitConfig(max_threads=max_threads))
    kit.register(counted)
    calls = [ToolUseBlock(f"c{n}", "counted", f'{{"n": {n}}}') for n in range(30)]
    batch = await kit.call_tools(calls)
    assert all(r.state is ToolResultState.SUCCESS for r in batch.results)
    assert 1 <= most <= max_threads
