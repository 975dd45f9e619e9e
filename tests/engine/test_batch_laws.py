"""Laws of batches, for generated batches of calls with random delays and outcomes.

* results come back one per call, in call order, each stamped with its call's id and name;
* an unsafe call overlaps no other call; calls overlap only inside one slot of consecutive
  concurrency-safe calls;
* under a cancellation at a random moment ("cancellation storms"), every call is still paired
  with exactly one result event, and the cancellation reaches the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrotool import (
    JsonValue,
    ToolBase,
    ToolCallFinished,
    ToolCallParam,
    ToolEvent,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool._execution.batch import slots


@dataclass(frozen=True)
class Planned:
    """One generated call: its tool's kind, how long it takes, how it ends."""

    safe: bool
    delay_ms: int
    outcome: str  # "ok", "raise", "invalid"


plans = st.lists(
    st.builds(
        Planned,
        safe=st.booleans(),
        delay_ms=st.integers(min_value=0, max_value=8),
        outcome=st.sampled_from(["ok", "ok", "ok", "raise", "invalid"]),
    ),
    min_size=1,
    max_size=12,
)


class Tracker:
    def __init__(self) -> None:
        self.running: set[str] = set()
        self.overlaps: set[frozenset[str]] = set()

    def start(self, call_id: str) -> None:
        self.overlaps.update(frozenset({call_id, other}) for other in self.running)
        self.running.add(call_id)

    def end(self, call_id: str) -> None:
        self.running.discard(call_id)


def _toolkit(tracker: Tracker) -> Toolkit:
    schema: dict[str, JsonValue] = {
        "type": "object",
        "properties": {"delay": {"type": "integer"}, "fail": {"type": "boolean"}},
        "required": ["delay"],
        "additionalProperties": False,
    }

    async def work(param: ToolCallParam[dict[str, object]]) -> str:
        tracker.start(param.call.id)
        try:
            await anyio.sleep(int(param.input["delay"]) / 1000)  # type: ignore[call-overload]
            if param.input.get("fail"):
                raise RuntimeError(f"failed {param.call.id}")
            return f"done {param.call.id}"
        finally:
            tracker.end(param.call.id)

    class Safe(ToolBase[dict[str, object]]):
        name = "safe"
        input_schema = schema

        async def call(self, param: ToolCallParam[dict[str, object]]) -> str:
            return await work(param)

    class Unsafe(ToolBase[dict[str, object]]):
        name = "unsafe"
        concurrency_safe = False
        input_schema = schema

        async def call(self, param: ToolCallParam[dict[str, object]]) -> str:
            return await work(param)

    kit = Toolkit()
    kit.register(Safe())
    kit.register(Unsafe())
    return kit


def _call(index: int, plan: Planned) -> ToolUseBlock:
    name = "safe" if plan.safe else "unsafe"
    if plan.outcome == "invalid":
        return ToolUseBlock(f"c{index}", name, '{"delay": "soon"}')
    fail = "true" if plan.outcome == "raise" else "false"
    return ToolUseBlock(f"c{index}", name, f'{{"delay": {plan.delay_ms}, "fail": {fail}}}')


@settings(max_examples=60, deadline=None)
@given(plans, st.booleans())
def test_results_in_call_order_and_overlap_only_within_a_slot(
    batch: list[Planned], parallel: bool
) -> None:
    tracker = Tracker()
    kit = _toolkit(tracker)
    calls = [_call(index, plan) for index, plan in enumerate(batch)]

    async def run() -> None:
        result = await kit.call_tools(calls, parallel=parallel)
        assert [(r.id, r.name) for r in result.results] == [(c.id, c.name) for c in calls]
        for plan, outcome in zip(batch, result.results, strict=True):
            expected = ToolResultState.SUCCESS if plan.outcome == "ok" else ToolResultState.ERROR
            assert outcome.state is expected

    anyio.run(run)
    allowed: set[frozenset[str]] = set()
    for slot in slots(calls, lambda name: name == "safe", parallel):
        ids = [calls[index].id for index in slot]
        allowed.update(frozenset({a, b}) for a in ids for b in ids if a != b)
    assert tracker.overlaps <= allowed


@settings(max_examples=60, deadline=None)
@given(plans, st.integers(min_value=0, max_value=12), st.booleans())
def test_a_cancellation_at_any_moment_pairs_every_call_with_one_result(
    batch: list[Planned], cancel_after_ms: int, parallel: bool
) -> None:
    tracker = Tracker()
    kit = _toolkit(tracker)
    calls = [_call(index, plan) for index, plan in enumerate(batch)]
    events: list[ToolEvent] = []
    outcome: dict[str, bool] = {}

    async def run() -> None:
        with anyio.move_on_after(cancel_after_ms / 1000) as scope:
            await kit.call_tools(calls, parallel=parallel, on_event=events.append)
            outcome["finished"] = True
        outcome["cancelled"] = scope.cancelled_caught

    anyio.run(run)
    finished = [event.result.id for event in events if isinstance(event, ToolCallFinished)]
    assert sorted(finished, key=str) == sorted((c.id for c in calls), key=str)
    assert outcome.get("finished", False) != outcome["cancelled"]
    assert tracker.running == set()
