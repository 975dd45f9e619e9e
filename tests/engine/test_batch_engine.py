"""How a batch runs its calls: workers rather than a task per call, and calls that never yield
run on the spot, in the batch's own task.

Whatever path a call takes inside a batch (its Rust direct call awaited by a worker, run on the
spot, or the pipeline), its result is the one `call_tool` gives for it alone.
"""

from __future__ import annotations

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrotool import (
    Emitter,
    ExecutionConfig,
    ToolCallFinished,
    ToolCallStarted,
    ToolEvent,
    Toolkit,
    ToolkitConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    tool,
)


class Stop(BaseException):
    """Neither an `Exception` nor a cancellation: it goes on out of a batch."""


def _kit(seen: list[int] | None = None, max_concurrent_calls: int = 256) -> Toolkit:
    def task() -> None:
        if seen is not None:
            seen.append(anyio.get_current_task().id)

    @tool(inline=True)
    def double(n: int) -> int:
        """Doubles n; fails for 13."""
        task()
        if n == 13:
            raise ValueError("unlucky")
        return 2 * n

    @tool(inline=True)
    def halt(n: int) -> int:
        """Stops everything."""
        raise Stop(n)

    @tool
    async def triple(n: int) -> int:
        """Triples n after a checkpoint; fails for 13."""
        task()
        await anyio.sleep(0)
        if n == 13:
            raise ValueError("unlucky")
        return 3 * n

    @tool
    def square(n: int) -> int:
        """Squares n on a worker thread."""
        return n * n

    @tool
    async def chatty(n: int, emitter: Emitter) -> str:
        """Reports progress, then answers: the pipeline runs it (it takes an emitter)."""
        emitter.emit(f"at {n}")
        await anyio.sleep(0)
        return f"said {n}"

    kit = Toolkit(ToolkitConfig(max_concurrent_calls=max_concurrent_calls))
    for item in (double, halt, triple, square, chatty):
        kit.register(item)
    return kit


def _call(index: int, name: str, argument: str) -> ToolUseBlock:
    return ToolUseBlock(f"c{index}", name, f'{{"n": {argument}}}')


async def test_a_slot_of_inline_calls_runs_in_the_batchs_own_task() -> None:
    seen: list[int] = []
    kit = _kit(seen)
    batch = await kit.call_tools([_call(i, "double", str(i)) for i in range(12)])
    assert [r.structured for r in batch.results] == [{"result": 2 * i} for i in range(12)]
    assert set(seen) == {anyio.get_current_task().id}


async def test_a_slot_runs_on_no_more_tasks_than_its_width() -> None:
    seen: list[int] = []
    kit = _kit(seen)
    calls = [_call(i, "triple", str(i)) for i in range(12)] * 1
    batch = await kit.call_tools(calls, config=ExecutionConfig(max_concurrency=4))
    assert [r.structured for r in batch.results] == [{"result": 3 * i} for i in range(12)]
    assert len(set(seen)) == 4  # four workers, each took calls in turn
    assert anyio.get_current_task().id not in seen


async def test_the_toolkits_limit_bounds_the_workers_of_every_batch() -> None:
    running = 0
    peak = 0

    @tool
    async def wait(n: int) -> int:
        """Waits a little."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.sleep(0.005)
        running -= 1
        return n

    kit = Toolkit(ToolkitConfig(max_concurrent_calls=3))
    kit.register(wait)
    async with anyio.create_task_group() as group:
        for batch in range(4):
            calls = [ToolUseBlock(f"b{batch}-{i}", "wait", f'{{"n": {i}}}') for i in range(6)]
            group.start_soon(kit.call_tools, calls)
    assert peak == 3


async def test_a_base_exception_on_the_spot_goes_on_and_pairs_every_call() -> None:
    kit = _kit()
    events: list[ToolEvent] = []
    calls = [_call(0, "double", "1"), _call(1, "halt", "2"), _call(2, "double", "3")]
    try:
        await kit.call_tools(calls, on_event=events.append)
    except Stop:
        pass
    else:  # pragma: no cover - the assertion below says what went wrong
        raise AssertionError("the batch swallowed a BaseException")
    finished = {e.result.id: e.result.state for e in events if isinstance(e, ToolCallFinished)}
    assert finished == {
        "c0": ToolResultState.SUCCESS,
        "c1": ToolResultState.INTERRUPTED,
        "c2": ToolResultState.INTERRUPTED,
    }
    assert sum(isinstance(e, ToolCallStarted) for e in events) == 2


async def test_events_of_calls_run_on_the_spot_pair_in_order() -> None:
    kit = _kit()
    events: list[ToolEvent] = []
    await kit.call_tools([_call(i, "double", str(i)) for i in range(3)], on_event=events.append)
    assert [(type(e).__name__, _id(e)) for e in events] == [
        (kind, f"c{i}") for i in range(3) for kind in ("ToolCallStarted", "ToolCallFinished")
    ]


def _id(event: ToolEvent) -> str | None:
    if isinstance(event, ToolCallStarted):
        return event.call.id
    assert isinstance(event, ToolCallFinished)
    return event.result.id


_NAMES = st.sampled_from(["double", "triple", "square", "chatty", "missing"])
_ARGUMENTS = st.sampled_from(["1", "7", "13", '"x"', "null", "-4"])


def _key(result: ToolResultBlock) -> tuple[object, ...]:
    return (result.id, result.name, result.state, result.content, result.structured)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(_NAMES, _ARGUMENTS), min_size=1, max_size=24),
    st.booleans(),
    st.integers(min_value=1, max_value=5),
)
def test_a_batchs_results_are_each_calls_own(
    plan: list[tuple[str, str]], parallel: bool, width: int
) -> None:
    calls = [_call(i, name, argument) for i, (name, argument) in enumerate(plan)]
    kit = _kit()

    async def run() -> None:
        batch = await kit.call_tools(
            calls, parallel=parallel, config=ExecutionConfig(max_concurrency=width)
        )
        alone = [await kit.call_tool(call) for call in calls]
        assert [_key(r) for r in batch.results] == [_key(r) for r in alone]

    anyio.run(run)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(_NAMES, _ARGUMENTS), min_size=1, max_size=24),
    st.integers(min_value=0, max_value=6),
)
def test_a_cancellation_at_any_moment_pairs_every_direct_call_once(
    plan: list[tuple[str, str]], checkpoints: int
) -> None:
    calls = [_call(i, name, argument) for i, (name, argument) in enumerate(plan)]
    kit = _kit()
    events: list[ToolEvent] = []

    async def run() -> None:
        with anyio.CancelScope() as scope:

            async def cancel_later() -> None:
                for _ in range(checkpoints):
                    await anyio.sleep(0)
                scope.cancel()

            async with anyio.create_task_group() as group:
                group.start_soon(cancel_later)
                await kit.call_tools(
                    calls, config=ExecutionConfig(max_concurrency=3), on_event=events.append
                )

    anyio.run(run)
    finished = [e.result.id for e in events if isinstance(e, ToolCallFinished)]
    assert sorted(finished, key=str) == sorted((c.id for c in calls), key=str)
