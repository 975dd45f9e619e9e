"""The Rust call path of plain tools: `call_tool` returns a `PendingCall`, a coroutine in all but
type. These tests drive it by hand (``send``, ``throw``, ``close``), through asyncio's tasks, under
a tracing interpreter, and through the garbage collector."""

from __future__ import annotations

import asyncio
import collections.abc
import gc
import sys
import weakref
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

import pytest

from ferrotool import TextBlock, Toolkit, ToolResultBlock, ToolResultState, ToolUseBlock, tool
from ferrotool._core import PendingCall

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


class _Step:
    """An awaitable that suspends its awaiter once (like ``asyncio.sleep(0)``)."""

    def __await__(self) -> Generator[str, object, object]:
        return (yield "suspended")


@dataclass
class _Seen:
    events: list[str]


def _toolkit(seen: _Seen) -> Toolkit:
    @tool(inline=True)
    def shout(word: str) -> str:
        """Shout a word."""
        return word.upper()

    @tool(inline=True, output_schema=False)  # the direct call's own int conversion
    def count(items: list[int]) -> int:
        """Count items."""
        return len(items)

    @tool(inline=True)
    def nothing() -> None:
        """Do nothing."""

    @tool(inline=True)
    def record(name: str) -> dict[str, str]:
        """Return a record."""
        return {"name": name}

    @tool(inline=True)
    def fail(reason: str) -> str:
        """Always fail."""
        raise RuntimeError(reason)

    @tool
    async def slow(word: str) -> str:
        """Suspend once, then answer."""
        seen.events.append("started")
        try:
            sent = await _Step()
            seen.events.append(f"resumed with {sent!r}")
        except BaseException as exc:
            seen.events.append(f"got {type(exc).__name__}")
            raise
        finally:
            seen.events.append("finally")
        return word

    toolkit = Toolkit()
    for item in (shout, count, nothing, record, fail, slow):
        toolkit.register(item)
    return toolkit


@pytest.fixture
def seen() -> _Seen:
    return _Seen([])


@pytest.fixture
def toolkit(seen: _Seen) -> Toolkit:
    return _toolkit(seen)


def _finish(awaitable: Any, value: object = None) -> ToolResultBlock:
    with pytest.raises(StopIteration) as stop:
        awaitable.send(value)
    result = stop.value.value
    assert isinstance(result, ToolResultBlock)
    return result


def test_plain_tools_get_a_pending_call_that_is_a_coroutine(toolkit: Toolkit) -> None:
    pending: object = toolkit.call_tool(ToolUseBlock("c1", "shout", '{"word": "hi"}'))
    assert type(pending) is PendingCall
    assert isinstance(pending, collections.abc.Coroutine)
    assert asyncio.iscoroutine(pending)
    pending.close()


@pytest.mark.parametrize(
    ("name", "arguments", "text", "structured"),
    [
        ("shout", '{"word": "hi"}', "HI", None),
        ("count", '{"items": [1, 2, 3]}', "3", 3),
        ("nothing", "", "Done", None),
        ("record", '{"name": "Ada"}', '{"name":"Ada"}', {"name": "Ada"}),
    ],
)
def test_one_send_finishes_an_inline_call(
    toolkit: Toolkit, name: str, arguments: str, text: str, structured: object
) -> None:
    result = _finish(toolkit.call_tool(ToolUseBlock("c1", name, arguments)))
    assert result.state is ToolResultState.SUCCESS
    assert (result.id, result.name) == ("c1", name)
    assert result.output == (TextBlock(text),)
    assert result.structured == structured


def test_invalid_arguments_and_failures_become_results(toolkit: Toolkit) -> None:
    invalid = _finish(toolkit.call_tool(ToolUseBlock("c1", "shout", '{"word": 5}')))
    assert invalid.state is ToolResultState.ERROR
    assert "word: expected string" in invalid.output[0].text  # type: ignore[union-attr]
    bad_json = _finish(toolkit.call_tool(ToolUseBlock("c2", "shout", '{"word": ')))
    assert bad_json.state is ToolResultState.ERROR
    failed = _finish(toolkit.call_tool(ToolUseBlock("c3", "fail", '{"reason": "kaput"}')))
    assert failed.state is ToolResultState.ERROR
    assert failed.output == (TextBlock("Error: Tool execution failed: kaput"),)


def test_an_async_tool_is_driven_through_its_suspensions(toolkit: Toolkit, seen: _Seen) -> None:
    pending = toolkit.call_tool(ToolUseBlock("c1", "slow", '{"word": "hi"}'))
    assert seen.events == []  # nothing runs before the first send
    assert pending.send(None) == "suspended"
    result = _finish(pending, "wake")
    assert seen.events == ["started", "resumed with 'wake'", "finally"]
    assert result.output == (TextBlock("hi"),)
    with pytest.raises(RuntimeError, match="already awaited"):
        pending.send(None)


def test_next_drives_like_send_none(toolkit: Toolkit) -> None:
    pending = toolkit.call_tool(ToolUseBlock("c1", "slow", '{"word": "hi"}'))
    assert next(pending) == "suspended"  # type: ignore[call-overload]
    with pytest.raises(StopIteration) as stop:
        next(pending)  # type: ignore[call-overload]
    assert stop.value.value.output == (TextBlock("hi"),)


def test_a_cancellation_thrown_in_interrupts_the_tool_and_goes_on(
    toolkit: Toolkit, seen: _Seen
) -> None:
    pending = toolkit.call_tool(ToolUseBlock("c1", "slow", '{"word": "hi"}'))
    pending.send(None)
    with pytest.raises(asyncio.CancelledError):
        pending.throw(asyncio.CancelledError())
    assert seen.events == ["started", "got CancelledError", "finally"]


def test_an_exit_thrown_in_propagates(toolkit: Toolkit, seen: _Seen) -> None:
    pending = toolkit.call_tool(ToolUseBlock("c1", "slow", '{"word": "hi"}'))
    pending.send(None)
    with pytest.raises(KeyboardInterrupt):
        pending.throw(KeyboardInterrupt)
    assert seen.events[-1] == "finally"


def test_throw_before_the_first_send_runs_nothing(toolkit: Toolkit, seen: _Seen) -> None:
    pending = toolkit.call_tool(ToolUseBlock("c1", "slow", '{"word": "hi"}'))
    with pytest.raises(ValueError, match="stop"):
        pending.throw(ValueError, "stop")
    assert seen.events == []
    with pytest.raises(RuntimeError, match="already awaited"):
        pending.send(None)
    with pytest.raises(TypeError, match="BaseException"):
        toolkit.call_tool(ToolUseBlock("c2", "slow", "{}")).throw(42)  # type: ignore[call-overload]


def test_close_stops_the_tool(toolkit: Toolkit, seen: _Seen) -> None:
    pending = toolkit.call_tool(ToolUseBlock("c1", "slow", '{"word": "hi"}'))
    pending.send(None)
    pending.close()
    assert seen.events == ["started", "got GeneratorExit", "finally"]
    pending.close()  # closing again is a no-op


def test_a_value_sent_to_a_fresh_call_is_refused(toolkit: Toolkit) -> None:
    pending = toolkit.call_tool(ToolUseBlock("c1", "shout", '{"word": "hi"}'))
    with pytest.raises(TypeError, match="non-None"):
        pending.send("x")


@pytest.mark.asyncio_only("asyncio tasks and gather; test_call_backends.py covers anyio and trio")
async def test_asyncio_tasks_run_and_cancel_pending_calls(toolkit: Toolkit) -> None:
    task = asyncio.create_task(toolkit.call_tool(ToolUseBlock("c1", "shout", '{"word": "a"}')))
    assert (await task).output == (TextBlock("A"),)

    started = asyncio.Event()

    @tool
    async def wait_forever() -> str:
        """Wait until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    waiting = Toolkit()
    waiting.register(wait_forever)
    task = asyncio.create_task(waiting.call_tool(ToolUseBlock("c2", "wait_forever", "{}")))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
    gathered = await asyncio.gather(
        *(
            toolkit.call_tool(ToolUseBlock(f"c{i}", "count", f'{{"items": [{i}]}}'))
            for i in range(3)
        )
    )
    assert [r.id for r in gathered] == ["c0", "c1", "c2"]


def test_a_tracing_interpreter_sees_the_same_calls(toolkit: Toolkit, seen: _Seen) -> None:
    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        return tracer

    async def both() -> tuple[ToolResultBlock, ToolResultBlock]:
        first = await toolkit.call_tool(ToolUseBlock("c1", "slow", '{"word": "hi"}'))
        second = await toolkit.call_tool(ToolUseBlock("c2", "count", '{"items": []}'))
        return first, second

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        coroutine = both()
        assert coroutine.send(None) == "suspended"
        with pytest.raises(StopIteration) as stop:
            coroutine.send(None)
    finally:
        sys.settrace(previous)
    first, second = stop.value.value
    assert first.output == (TextBlock("hi"),)
    assert second.structured == 0


def test_a_reference_cycle_through_a_pending_call_is_collected(toolkit: Toolkit) -> None:
    class Call:
        """A call object that refers back to its own pending call."""

        id = "c1"
        name = "shout"
        arguments = '{"word": "hi"}'
        pending: object = None

    call = Call()
    pending = toolkit.call_tool(call)  # type: ignore[arg-type]
    call.pending = pending
    collected: list[bool] = []
    weakref.finalize(call, collected.append, True)
    del call, pending
    gc.collect()
    assert collected == [True]


def test_pending_calls_do_not_leak() -> None:
    toolkit = _toolkit(_Seen([]))

    def calls() -> Iterator[ToolResultBlock]:
        for i in range(200):
            yield _finish(toolkit.call_tool(ToolUseBlock(f"c{i}", "shout", '{"word": "x"}')))

    for _ in calls():
        pass
    gc.collect()
    before = sum(1 for o in gc.get_objects() if type(o) is PendingCall)
    for _ in calls():
        pass
    gc.collect()
    assert sum(1 for o in gc.get_objects() if type(o) is PendingCall) == before


def test_call_tool_sync_runs_plain_sync_tools_in_rust(toolkit: Toolkit) -> None:
    @tool
    def threaded(word: str, times: int | None = None) -> str:
        """A sync tool that `call_tool` would run on a worker thread."""
        return word * (times or 1)

    toolkit.register(threaded)
    plan = toolkit._table.entries["threaded"].direct
    assert plan is not None
    assert toolkit.call_tool_sync(
        ToolUseBlock("c1", "threaded", '{"word": "a", "times": 2}')
    ).output == (TextBlock("aa"),)
    # An explicit null for the optional parameter counts as omitted.
    retried = toolkit.call_tool_sync(ToolUseBlock("c2", "threaded", '{"word": "b", "times": null}'))
    assert retried.output == (TextBlock("b"),)
    invalid = toolkit.call_tool_sync(ToolUseBlock("c3", "threaded", '{"word": 1}'))
    assert invalid.state is ToolResultState.ERROR
    assert invalid.metadata["errors"] == [
        {"code": "wrong_type", "pointer": "/word", "expected": "string", "found": "integer 1"}
    ]
    failed = toolkit.call_tool_sync(ToolUseBlock("c4", "fail", '{"reason": "no"}'))
    assert failed.output == (TextBlock("Error: Tool execution failed: no"),)
    counted = toolkit.call_tool_sync(ToolUseBlock("c5", "count", '{"items": [1]}'))
    assert counted.structured == 1


def test_run_refuses_an_async_tool(toolkit: Toolkit) -> None:
    plan = toolkit._table.entries["slow"].direct
    assert plan is not None
    with pytest.raises(TypeError, match="sync tools"):
        plan.run(ToolUseBlock("c1", "slow", '{"word": "hi"}'))


async def test_a_call_cannot_be_awaited_twice_at_once(toolkit: Toolkit) -> None:
    pending = toolkit.call_tool(ToolUseBlock("c1", "slow", '{"word": "hi"}'))
    assert pending.send(None) == "suspended"
    with pytest.raises(RuntimeError, match="being awaited already"):
        await pending
    pending.close()
