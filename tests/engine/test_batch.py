"""Batches: slots of concurrency-safe calls, unsafe calls alone, results in call order.

The overlap of calls is observed, not assumed: every tool records when it starts and ends, and
the tests check which calls ran at the same time.
"""

from __future__ import annotations

import anyio
import pytest

from ferrotool import (
    Emitter,
    ExecutionConfig,
    ToolBase,
    ToolCallFinished,
    ToolCallParam,
    ToolCallStarted,
    ToolEvent,
    Toolkit,
    ToolkitConfig,
    ToolProgress,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool._execution.batch import slots


class Clock:
    """Records the start and end of every call, in an order of events."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.running: set[str] = set()
        self.overlaps: set[frozenset[str]] = set()

    def start(self, call_id: str) -> None:
        for other in self.running:
            self.overlaps.add(frozenset({call_id, other}))
        self.running.add(call_id)
        self.events.append(("start", call_id))

    def end(self, call_id: str) -> None:
        self.running.discard(call_id)
        self.events.append(("end", call_id))


def _toolkit(clock: Clock, max_concurrent_calls: int = 256) -> Toolkit:
    class Safe(ToolBase[dict[str, object]]):
        name = "safe"
        input_schema = {"type": "object", "properties": {"wait": {"type": "number"}}}

        async def call(self, param: ToolCallParam[dict[str, object]]) -> str:
            clock.start(param.call.id)
            await anyio.sleep(float(param.input.get("wait", 0.02)))  # type: ignore[arg-type]
            clock.end(param.call.id)
            return param.call.id

    class Unsafe(ToolBase[dict[str, object]]):
        name = "unsafe"
        concurrency_safe = False
        input_schema = {"type": "object", "properties": {"wait": {"type": "number"}}}

        async def call(self, param: ToolCallParam[dict[str, object]]) -> str:
            clock.start(param.call.id)
            await anyio.sleep(float(param.input.get("wait", 0.02)))  # type: ignore[arg-type]
            clock.end(param.call.id)
            return param.call.id

    @tool
    async def boom() -> str:
        """Always fails."""
        raise RuntimeError("boom")

    @tool
    async def progress_text(emitter: object = None) -> ToolResultBlock:
        """Returns a RUNNING text: the batch makes it a success."""
        return ToolResultBlock.text("done, in a way")

    kit = Toolkit(ToolkitConfig(max_concurrent_calls=max_concurrent_calls))
    kit.register(Safe())
    kit.register(Unsafe())
    kit.register(boom)
    kit.register(progress_text)
    return kit


def _calls(pattern: str, prefix: str = "c") -> list[ToolUseBlock]:
    """``"SSUSUUS"`` -> calls c0..c6 of the safe and unsafe tools."""
    names = {"S": "safe", "U": "unsafe"}
    return [ToolUseBlock(f"{prefix}{i}", names[kind], "{}") for i, kind in enumerate(pattern)]


def test_slots_follow_the_chapters_example() -> None:
    calls = _calls("SSUSUUS")
    cut = list(slots(calls, lambda name: name == "safe", parallel=True))
    assert cut == [[0, 1], [2], [3], [4], [5], [6]]
    assert list(slots(calls, lambda name: True, parallel=False)) == [[i] for i in range(7)]


async def test_the_chapters_example_runs_as_its_slots() -> None:
    clock = Clock()
    batch = await _toolkit(clock).call_tools(_calls("SSUSUUS"))
    assert [r.id for r in batch.results] == [f"c{i}" for i in range(7)]
    assert [r.content for r in batch.results] == [f"c{i}" for i in range(7)]
    assert clock.overlaps == {frozenset({"c0", "c1"})}
    order = [call_id for kind, call_id in clock.events if kind == "start"]
    assert order[2:] == ["c2", "c3", "c4", "c5", "c6"]


async def test_parallel_false_runs_everything_in_sequence() -> None:
    clock = Clock()
    await _toolkit(clock).call_tools(_calls("SSSS"), parallel=False)
    assert clock.overlaps == set()


async def test_a_batchs_concurrency_is_bounded() -> None:
    clock = Clock()
    peak = 0

    class Counting(Clock):
        def start(self, call_id: str) -> None:
            nonlocal peak
            super().start(call_id)
            peak = max(peak, len(self.running))

    counting = Counting()
    kit = _toolkit(counting)
    await kit.call_tools(_calls("S" * 12), config=ExecutionConfig(max_concurrency=3))
    assert peak == 3
    del clock


async def test_the_toolkits_limit_bounds_every_batch_together() -> None:
    peak = 0

    class Counting(Clock):
        def start(self, call_id: str) -> None:
            nonlocal peak
            super().start(call_id)
            peak = max(peak, len(self.running))

    kit = _toolkit(Counting(), max_concurrent_calls=4)
    async with anyio.create_task_group() as group:
        for batch in range(3):
            group.start_soon(kit.call_tools, _calls("S" * 5, f"b{batch}-"))
    assert peak == 4


async def test_a_failing_call_changes_no_other_result_and_running_becomes_success() -> None:
    clock = Clock()
    calls = [
        ToolUseBlock("a", "safe", "{}"),
        ToolUseBlock("b", "boom", "{}"),
        ToolUseBlock("c", "nope", "{}"),
        ToolUseBlock("d", "safe", '{"wait": "x"}'),
        ToolUseBlock("e", "progress_text", "{}"),
        ToolUseBlock("f", "safe", "{}"),
    ]
    batch = await _toolkit(clock).call_tools(calls)
    states = [(r.id, r.state) for r in batch.results]
    assert states == [
        ("a", ToolResultState.SUCCESS),
        ("b", ToolResultState.ERROR),
        ("c", ToolResultState.ERROR),
        ("d", ToolResultState.ERROR),
        ("e", ToolResultState.SUCCESS),
        ("f", ToolResultState.SUCCESS),
    ]
    assert "boom" in batch.results[1].content
    assert "Tool not found" in batch.results[2].content
    assert "wait" in batch.results[3].content
    assert batch.results[4].content == "done, in a way"
    assert batch.suspension is None
    assert not batch.all_denied


async def test_events_pair_every_call_and_carry_progress() -> None:
    @tool
    async def chatty(emitter: Emitter) -> str:
        """Emits progress."""
        emitter.emit("half way")
        return "done"

    kit = Toolkit()
    kit.register(chatty)
    events: list[ToolEvent] = []
    await kit.call_tools([ToolUseBlock("c1", "chatty", "{}")], on_event=events.append)
    kinds = [type(event) for event in events]
    assert kinds == [ToolCallStarted, ToolProgress, ToolCallFinished]
    progress = events[1]
    assert isinstance(progress, ToolProgress)
    assert (progress.call_id, progress.chunk.text) == ("c1", "half way")  # type: ignore[union-attr]


async def test_stream_tools_yields_the_same_batch_as_events() -> None:
    clock = Clock()
    kit = _toolkit(clock)
    async with kit.stream_tools(_calls("SUS")) as events:
        seen: list[ToolEvent] = [event async for event in events]
    finished = [event.result for event in seen if isinstance(event, ToolCallFinished)]
    assert sorted(r.id or "" for r in finished) == ["c0", "c1", "c2"]
    assert sum(isinstance(event, ToolCallStarted) for event in seen) == 3


async def test_leaving_a_stream_early_cancels_the_rest_of_the_batch() -> None:
    clock = Clock()
    kit = _toolkit(clock)
    delivered: list[ToolEvent] = []
    calls = [ToolUseBlock(f"c{i}", "unsafe", '{"wait": 0.2}') for i in range(5)]
    with anyio.fail_after(2):
        async with kit.stream_tools(calls, on_event=delivered.append) as events:
            async for event in events:
                if isinstance(event, ToolCallFinished):
                    break
    finished = [event.result for event in delivered if isinstance(event, ToolCallFinished)]
    assert sorted(r.id or "" for r in finished) == [f"c{i}" for i in range(5)]
    assert [r.state for r in finished[1:]] == [ToolResultState.INTERRUPTED] * 4


@pytest.mark.parametrize("how", ["scope", "fail_after"])
async def test_a_cancelled_batch_pairs_every_call_and_goes_on(how: str) -> None:
    clock = Clock()
    kit = _toolkit(clock)
    delivered: list[ToolEvent] = []
    calls = [
        ToolUseBlock(f"c{i}", "unsafe" if i % 3 else "safe", '{"wait": 0.05}') for i in range(9)
    ]
    if how == "scope":
        with anyio.move_on_after(0.12) as scope:
            await kit.call_tools(calls, on_event=delivered.append)
        assert scope.cancelled_caught
    else:
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0.12):
                await kit.call_tools(calls, on_event=delivered.append)
    finished = [event.result for event in delivered if isinstance(event, ToolCallFinished)]
    assert sorted(r.id or "" for r in finished) == sorted(c.id for c in calls)
    assert ToolResultState.INTERRUPTED in {r.state for r in finished}
