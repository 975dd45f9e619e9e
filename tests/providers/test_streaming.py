"""Streamed arguments: whatever the split, the final call is the whole, every partial a prefix."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ferrotool import ArgumentsAccumulator, JsonValue, ToolCallStream, ToolUseBlock
from ferrotool.providers.streaming import EVERY_CALL, CallDelta

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
ARGUMENTS = st.dictionaries(TEXT, VALUES, max_size=5)


def dumped(value: JsonValue, style: int) -> str:
    """JSON text as models write it: compact, spaced, indented, or with every character escaped."""
    if style == 0:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if style == 1:
        return json.dumps(value, ensure_ascii=False)
    if style == 2:
        return json.dumps(value, indent=2)
    return json.dumps(value, ensure_ascii=True)


def prefix_of(partial: JsonValue, whole: JsonValue) -> bool:
    """``partial`` is ``whole`` cut short: every member but the last whole, the last a prefix."""
    if isinstance(whole, dict):
        if not isinstance(partial, dict):
            return False
        keys, all_keys = list(partial), list(whole)
        if keys != all_keys[: len(keys)]:
            return False
        if not keys:
            return True
        *done, last = keys
        return all(partial[k] == whole[k] for k in done) and prefix_of(partial[last], whole[last])
    if isinstance(whole, list):
        if not isinstance(partial, list) or len(partial) > len(whole):
            return False
        if not partial:
            return True
        return partial[:-1] == whole[: len(partial) - 1] and prefix_of(
            partial[-1], whole[len(partial) - 1]
        )
    if isinstance(whole, str):
        return isinstance(partial, str) and whole.startswith(partial)
    return type(partial) is type(whole) and partial == whole


@given(ARGUMENTS, st.integers(0, 3), st.data())
def test_any_split_gives_the_whole_call_and_prefix_partials(
    value: dict[str, JsonValue], style: int, data: st.DataObject
) -> None:
    text = dumped(value, style)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12), label="cuts"))
    accumulator = ArgumentsAccumulator("call_1", "tool")
    previous: dict[str, JsonValue] = {}
    start = 0
    for cut in [*cuts, len(text)]:
        accumulator.add(text[start:cut])
        start = cut
        partial = accumulator.partial()
        assert prefix_of(partial, value), (text[:cut], partial)
        assert prefix_of(previous, partial), (previous, partial)
        previous = partial
    assert accumulator.block() == ToolUseBlock("call_1", "tool", text)
    assert json.loads(accumulator.block().arguments) == value
    assert accumulator.partial() == value


@given(st.text(max_size=40), st.data())
def test_malformed_text_never_raises_and_keeps_the_last_good_partial(
    text: str, data: st.DataObject
) -> None:
    accumulator = ArgumentsAccumulator()
    for piece in data.draw(st.lists(st.text(max_size=6), max_size=6)):
        accumulator.add(piece)
        assert isinstance(accumulator.partial(), dict)
    accumulator.add(text)
    assert isinstance(accumulator.partial(), dict)


def test_no_text_is_an_empty_object() -> None:
    assert ArgumentsAccumulator("c1", "ping").block() == ToolUseBlock("c1", "ping", "{}")
    assert ArgumentsAccumulator().partial() == {}


def test_a_trailing_number_waits_for_its_end_and_true_does_not() -> None:
    accumulator = ArgumentsAccumulator()
    accumulator.add('{"flag": true, "n": 12')
    assert accumulator.partial() == {"flag": True}
    accumulator.add("3")
    assert accumulator.partial() == {"flag": True}
    accumulator.add("}")
    assert accumulator.partial() == {"flag": True, "n": 123}
    text = ArgumentsAccumulator()
    text.add('{"s": "12')  # digits inside a string are text, shown as they come
    assert text.partial() == {"s": "12"}


def test_a_stream_keeps_calls_by_index_and_ends_them() -> None:
    calls = ToolCallStream(lambda event: event if isinstance(event, list) else [])
    calls.feed([CallDelta(1, "c2", "b"), CallDelta(0, "c1", "a", '{"x"')])
    calls.feed([CallDelta(0, arguments=": 1}"), CallDelta(5, done=True)])  # 5: no call there
    assert len(calls) == 2
    assert calls.blocks() == (ToolUseBlock("c1", "a", '{"x": 1}'), ToolUseBlock("c2", "b", "{}"))
    assert not any(call.done for call in calls.calls)
    calls.feed([CallDelta(EVERY_CALL, done=True)])
    assert all(call.done for call in calls.calls)
