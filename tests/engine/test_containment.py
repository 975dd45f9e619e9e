"""Every call contained: what any step of a call raises is that call's error result.

An exception in argument validation, a tool's ``check_permissions``, ``match_rule`` or
``generate_suggestions``, a middleware, the tool or the conversion of its value becomes the
error result of that call, naming the step, through ``call_tool``, ``call_tool_sync``,
``call_tools``, ``stream_tools`` and ``resume``; every other call of a batch keeps its own
result. A tool's `BaseException` that is no `Exception` goes on as itself (never inside an
exception group), and a stream dropped without being closed never cancels its consumer.
"""

from __future__ import annotations

import gc
import os
from typing import Any

import anyio
import anyio.to_thread
import pytest

from ferrotool import (
    Confirmation,
    ExecutionConfig,
    Injected,
    InMemorySessionStore,
    Next,
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionDecision,
    PermissionRule,
    RuntimeContext,
    ToolBase,
    ToolCallFinished,
    ToolCallParam,
    ToolCallStarted,
    ToolContextState,
    ToolEvent,
    Toolkit,
    ToolkitConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    ToolView,
    tool,
)
from ferrotool.errors import InjectionError

ERROR = ToolResultState.ERROR
SUCCESS = ToolResultState.SUCCESS
STEPS = ("check_permissions", "match_rule", "generate_suggestions")


class Checked(ToolBase[dict[str, Any]]):
    """A tool whose permission methods raise at the step it is told (``fail``)."""

    input_schema = {"type": "object", "properties": {"path": {"type": "string"}}}

    def __init__(self, name: str, fail: str) -> None:
        super().__init__(name=name)
        self.fail = fail

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        if self.fail == "check_permissions":
            raise RuntimeError("check_permissions broke")
        if self.fail in ("generate_suggestions", "ask"):
            return PermissionDecision.ask("may I?")
        return PermissionDecision.passthrough("no opinion")

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        if self.fail == "match_rule":
            raise RuntimeError("match_rule broke")
        return False

    def generate_suggestions(self, tool_input: dict[str, Any]) -> tuple[PermissionRule, ...]:
        if self.fail == "generate_suggestions":
            raise RuntimeError("generate_suggestions broke")
        return ()

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        return f"{self.name} ran"


class Encoding(ToolBase[dict[str, Any]]):
    """A tool whose own check encodes a path holding a lone surrogate (what `os.fsdecode`
    makes of bytes that are no UTF-8)."""

    name = "encoding"
    input_schema = {"type": "object", "properties": {"path": {"type": "string"}}}

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        path = os.fsdecode(os.fsencode(str(tool_input["path"])) + b"\xff")
        if path.encode("utf-8").startswith(b"/etc"):
            return PermissionDecision.deny("no system files")
        return PermissionDecision.passthrough("no opinion")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        return "never"


class Unconvertible:
    """A value that is no JSON, and whose text raises."""

    def __str__(self) -> str:
        raise RuntimeError("no text for this value")


def _unconvertible(value: object) -> object:
    raise RuntimeError("the converter broke")


@tool
async def echo(text: str) -> str:
    """Echo."""
    return text


@tool(converter=_unconvertible)
async def converted() -> str:
    """Its converter raises."""
    return "never seen"


@tool
async def odd() -> object:
    """Returns a value that cannot become a result."""
    return Unconvertible()


class Stop(BaseException):
    """A tool's own `BaseException` (not an `Exception`)."""


@tool
async def stops() -> str:
    """Raises `Stop`."""
    await anyio.sleep(0)
    raise Stop("stop here")


@tool
async def slow(seconds: float) -> str:
    """Sleeps."""
    await anyio.sleep(seconds)
    return "slept"


async def breaking(call: ToolUseBlock, context: RuntimeContext, next: Next) -> ToolResultBlock:
    """A middleware that raises for calls whose id starts with ``mw``, and returns a wrong
    value for ids starting with ``mv``."""
    if call.id.startswith("mw"):
        raise RuntimeError("middleware broke")
    if call.id.startswith("mv"):
        return "not a result"  # type: ignore[return-value]
    return await next(call, context)


def _kit(*, middleware: bool = False) -> Toolkit:
    kit = Toolkit(ToolkitConfig(middleware=[breaking] if middleware else []))
    for item in (echo, converted, odd, stops, slow, Encoding()):
        kit.register(item)
    for step in STEPS:
        kit.register(Checked(step, step))
    return kit


def _rules_view(kit: Toolkit) -> ToolView:
    """A view whose session has rules: every rule-matching step runs."""
    rules = [
        PermissionRule(tool_name=name, behavior=PermissionBehavior.ALLOW, rule_content="/x")
        for name in (*STEPS, "encoding")
    ]
    rules += [
        PermissionRule(tool_name=name, behavior=PermissionBehavior.ALLOW)
        for name in ("echo", "odd", "converted", "slow", "stops")
    ]
    state = ToolContextState(permissions=PermissionContextState().with_rules(rules))
    return kit.snapshot().view(state)


GOOD = ToolUseBlock("ok", "echo", '{"text": "fine"}')


def _assert_step(result: ToolResultBlock, step: str, text: str) -> None:
    assert result.state is ERROR, result
    assert step in result.content, result.content
    assert text in result.content, result.content


# - one call -


async def test_a_call_without_a_name_is_an_unknown_tool() -> None:
    kit = _kit()
    call = ToolUseBlock("n1", None, "{}")  # type: ignore[arg-type]
    result = await kit.call_tool(call)
    assert result.state is ERROR
    assert "Tool not found: None" in result.content
    batch = await kit.call_tools([call, GOOD])
    assert [r.state for r in batch.results] == [ERROR, SUCCESS]
    assert (await anyio.to_thread.run_sync(kit.call_tool_sync, call)).content == result.content


def _extension_routes_any_name() -> bool:
    """Whether the compiled extension's ``call_tool`` hands a name no dict can hold to the
    pipeline (an extension built before raised the dict's `TypeError`)."""
    kit = Toolkit()
    kit.register(echo)
    try:
        kit.call_tool(ToolUseBlock("probe", [], "{}")).close()  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


async def test_a_call_whose_name_is_no_name_is_an_unknown_tool_in_a_batch() -> None:
    kit = _kit()
    call = ToolUseBlock("n1", ["echo"], "{}")  # type: ignore[arg-type]
    batch = await kit.call_tools([call, GOOD])
    assert [r.state for r in batch.results] == [ERROR, SUCCESS]
    assert "Tool not found: ['echo']" in batch.results[0].content
    assert "not found" in (await kit.snapshot().view().call_tool(call)).content


@pytest.mark.skipif(
    not _extension_routes_any_name(), reason="the compiled extension is older than its source"
)
async def test_a_call_whose_name_is_no_name_is_an_unknown_tool() -> None:
    kit = _kit()
    result = await kit.call_tool(ToolUseBlock("n1", ["echo"], "{}"))  # type: ignore[arg-type]
    assert result.state is ERROR
    assert "Tool not found" in result.content


@pytest.mark.parametrize("step", STEPS)
async def test_a_raising_permission_step_is_the_calls_error_result(step: str) -> None:
    view = _rules_view(_kit())
    result = await view.call_tool(ToolUseBlock("c1", step, '{"path": "/x/a"}'))
    _assert_step(result, step, f"{step} broke")
    assert result.metadata["step"] == step


async def test_a_lone_surrogate_the_permission_check_encodes_is_the_calls_error_result() -> None:
    view = _rules_view(_kit())
    result = await view.call_tool(ToolUseBlock("c1", "encoding", '{"path": "/x"}'))
    _assert_step(result, "check_permissions", "UnicodeEncodeError")


@pytest.mark.parametrize(
    "arguments",
    [
        '{"text": "\ud800"}',
        '{"text": "\\ud800"}',
        '{"text": "\ud800"}'.encode("utf-8", "surrogatepass"),
    ],
)
async def test_a_lone_surrogate_in_the_arguments_is_the_calls_error_result(
    arguments: str | bytes,
) -> None:
    kit = _kit(middleware=True)
    call = ToolUseBlock("c1", "echo", arguments)  # type: ignore[arg-type]
    assert (await kit.call_tool(call)).state is ERROR
    batch = await kit.call_tools([call, GOOD])
    assert [r.state for r in batch.results] == [ERROR, SUCCESS]


@tool(inline=True)
def echo_inline(text: str) -> str:
    """Echo, on the caller's thread."""
    return text


def _extension_measures_text() -> bool:
    """Whether the compiled extension reads a lone surrogate in the arguments as invalid text
    (an extension built before ``is_empty_text`` measured the text raised while encoding it)."""
    kit = Toolkit()
    kit.register(echo_inline)
    try:
        kit.call_tool_sync(ToolUseBlock("probe", "echo_inline", '{"text": "\ud800"}'))
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.skipif(
    not _extension_measures_text(), reason="the compiled extension is older than its source"
)
@pytest.mark.parametrize("name", ["echo", "echo_inline"])
async def test_a_lone_surrogate_reaching_the_direct_call_is_the_calls_error_result(
    name: str,
) -> None:
    kit = Toolkit()
    kit.register(echo)
    kit.register(echo_inline)
    call = ToolUseBlock("c1", name, '{"text": "\ud800"}')
    result = await kit.call_tool(call)
    assert result.state is ERROR
    assert "a lone surrogate" in result.content
    assert (await anyio.to_thread.run_sync(kit.call_tool_sync, call)) == result
    batch = await kit.call_tools([call, GOOD])
    assert [r.state for r in batch.results] == [ERROR, SUCCESS]


async def test_a_raising_middleware_is_the_calls_error_result() -> None:
    kit = _kit(middleware=True)
    result = await kit.call_tool(ToolUseBlock("mw1", "echo", '{"text": "a"}'))
    _assert_step(result, "middleware", "middleware broke")
    assert result.metadata["step"] == "middleware"


async def test_a_middleware_returning_no_result_is_the_calls_error_result() -> None:
    kit = _kit(middleware=True)
    result = await kit.call_tool(ToolUseBlock("mv1", "echo", '{"text": "a"}'))
    _assert_step(result, "middleware", "str")


@pytest.mark.parametrize(("name", "text"), [("odd", "no text"), ("converted", "converter broke")])
async def test_a_value_that_cannot_be_converted_is_the_calls_error_result(
    name: str, text: str
) -> None:
    kit = _kit()
    call = ToolUseBlock("c1", name, "{}")
    for result in (
        await kit.call_tool(call),
        await anyio.to_thread.run_sync(kit.call_tool_sync, call),
    ):
        _assert_step(result, "convert", text)


# - batches, streams, resume -


def _failing_calls() -> list[ToolUseBlock]:
    return [
        ToolUseBlock("n1", None, "{}"),  # type: ignore[arg-type]
        ToolUseBlock("c1", "check_permissions", '{"path": "/x/a"}'),
        ToolUseBlock("c2", "match_rule", '{"path": "/x/a"}'),
        ToolUseBlock("c3", "generate_suggestions", '{"path": "/x/a"}'),
        ToolUseBlock("c4", "encoding", '{"path": "/x"}'),
        ToolUseBlock("mw1", "echo", '{"text": "a"}'),
        ToolUseBlock("mv1", "echo", '{"text": "a"}'),
        ToolUseBlock("c5", "odd", "{}"),
        ToolUseBlock("c6", "echo", '{"text": "\ud800"}'),
    ]


def _failing_view() -> ToolView:
    return _rules_view(_kit(middleware=True))


@pytest.mark.parametrize("parallel", [True, False])
async def test_in_a_batch_every_failing_step_keeps_every_other_result(parallel: bool) -> None:
    calls = _failing_calls()
    batch = await _failing_view().call_tools([GOOD, *calls, GOOD], parallel=parallel)
    assert [r.id for r in batch.results] == ["ok", *(c.id for c in calls), "ok"]
    assert [r.state for r in batch.results] == [SUCCESS, *[ERROR] * len(calls), SUCCESS]
    assert batch.results[0].content == batch.results[-1].content == "fine"


async def test_a_stream_reports_every_failing_step_as_its_calls_result() -> None:
    calls = _failing_calls()
    async with _failing_view().stream_tools([*calls, GOOD]) as events:
        finished = [e.result async for e in events if isinstance(e, ToolCallFinished)]
    assert sorted(r.id or "" for r in finished) == sorted([*(c.id for c in calls), "ok"])
    assert {r.id: r.state for r in finished}["ok"] is SUCCESS


async def test_a_resumed_call_whose_step_raises_is_its_error_result() -> None:
    armed: set[str] = set()

    async def breaks_when_armed(
        call: ToolUseBlock, context: RuntimeContext, next: Next
    ) -> ToolResultBlock:
        if call.id in armed:
            raise RuntimeError("middleware broke")
        return await next(call, context)

    kit = Toolkit(ToolkitConfig(middleware=[breaks_when_armed]))
    kit.register(Checked("asks", "ask"))
    store = InMemorySessionStore()
    context = RuntimeContext(user_id="u", session_id="s")
    view = await kit.open_view(context, store)
    calls = [ToolUseBlock("a1", "asks", "{}"), ToolUseBlock("a2", "asks", "{}")]
    asked = await view.call_tools(calls)
    assert asked.suspension is not None
    armed.add("a1")
    view = await view.reload()
    settled = await view.resume([Confirmation("a1", True), Confirmation("a2", True)])
    assert [(r.id, r.state) for r in settled.results] == [("a1", ERROR), ("a2", SUCCESS)]
    _assert_step(settled.results[0], "middleware", "middleware broke")


# - BaseException and cancellation -


@pytest.mark.parametrize("parallel", [True, False])
async def test_a_tools_base_exception_leaves_a_batch_as_itself(parallel: bool) -> None:
    kit = _kit()
    events: list[ToolEvent] = []
    calls = [
        ToolUseBlock("s1", "slow", '{"seconds": 0.5}'),
        ToolUseBlock("b1", "stops", "{}"),
        ToolUseBlock("s2", "slow", '{"seconds": 0.5}'),
    ]
    with anyio.fail_after(5), pytest.raises(Stop, match="stop here"):
        await kit.call_tools(calls, parallel=parallel, on_event=events.append)
    finished = [e.result for e in events if isinstance(e, ToolCallFinished)]
    assert sorted(r.id or "" for r in finished) == ["b1", "s1", "s2"]


@tool
def stops_on_a_thread() -> str:
    """Raises `Stop` on its worker thread."""
    raise Stop("stop on a thread")


@pytest.mark.parametrize("timeout", [None, 5.0])
async def test_a_sync_tools_base_exception_leaves_a_batch_as_itself(timeout: float | None) -> None:
    kit = _kit()
    kit.register(stops_on_a_thread)
    calls = [
        ToolUseBlock("s1", "slow", '{"seconds": 0.5}'),
        ToolUseBlock("b1", "stops_on_a_thread"),
    ]
    with anyio.fail_after(5), pytest.raises(Stop, match="stop on a thread"):
        await kit.call_tools(calls, config=ExecutionConfig(timeout=timeout))


class Database:
    """A context value a tool needs."""


@tool
async def needs_a_database(db: Injected[Database]) -> str:
    """Asks for a context value."""
    return "never"


async def test_a_missing_context_value_leaves_a_batch_as_itself() -> None:
    kit = _kit()
    kit.register(needs_a_database)
    calls = [ToolUseBlock("s1", "slow", '{"seconds": 0.5}'), ToolUseBlock("d1", "needs_a_database")]
    with anyio.fail_after(5), pytest.raises(InjectionError, match="needs Database"):
        await kit.call_tools(calls)


async def test_a_tools_base_exception_leaves_a_stream_as_itself() -> None:
    kit = _kit()
    calls = [ToolUseBlock("s1", "slow", '{"seconds": 0.5}'), ToolUseBlock("b1", "stops", "{}")]
    seen: list[ToolEvent] = []

    async def consume() -> None:
        async with kit.stream_tools(calls) as events:
            async for event in events:
                seen.append(event)  # noqa: PERF401 (what came before the raise is kept)

    with anyio.fail_after(5), pytest.raises(Stop, match="stop here"):
        await consume()
    assert [type(event) for event in seen[:2]] == [ToolCallStarted, ToolCallStarted]


async def test_a_cancelled_batch_still_goes_on_as_a_cancellation() -> None:
    kit = _kit()
    calls = [ToolUseBlock(f"s{i}", "slow", '{"seconds": 1}') for i in range(3)]
    with anyio.move_on_after(0.05) as scope:
        await kit.call_tools(calls)
    assert scope.cancelled_caught


# - a dropped stream -


async def _unrelated_work() -> None:
    for _ in range(20):
        await anyio.sleep(0.01)


@pytest.mark.parametrize("how", ["dropped", "aclose"])
async def test_a_stream_left_unfinished_never_cancels_its_consumer(how: str) -> None:
    kit = _kit()
    delivered: list[ToolEvent] = []
    calls = [ToolUseBlock(f"s{i}", "slow", '{"seconds": 0.05}') for i in range(4)]
    with anyio.fail_after(5):
        stream = kit.stream_tools(calls, on_event=delivered.append)
        first = await stream.__anext__()
        assert first is not None
        if how == "aclose":
            await stream.aclose()
        del stream
        gc.collect()
        await _unrelated_work()  # a stray cancellation would arrive here
        gc.collect()
        await _unrelated_work()
    finished = [e.result for e in delivered if isinstance(e, ToolCallFinished)]
    assert sorted(r.id or "" for r in finished) == [f"s{i}" for i in range(4)]


async def test_a_stream_dropped_mid_batch_stops_its_calls() -> None:
    kit = _kit()
    delivered: list[ToolEvent] = []
    calls = [ToolUseBlock(f"s{i}", "slow", '{"seconds": 5}') for i in range(3)]
    with anyio.fail_after(3):
        stream = kit.stream_tools(calls, on_event=delivered.append)
        await stream.__anext__()
        del stream
        gc.collect()
        while sum(isinstance(e, ToolCallFinished) for e in delivered) < 3:
            await anyio.sleep(0.01)
    finished = [e.result for e in delivered if isinstance(e, ToolCallFinished)]
    assert {r.state for r in finished} == {ToolResultState.INTERRUPTED}


# - what still raises: a programmer's mistakes -


async def test_arguments_that_are_not_text_refuse_the_batch_before_anything_runs() -> None:
    kit = _kit()
    ran: list[ToolEvent] = []
    with pytest.raises(TypeError, match="'c2'"):
        await kit.call_tools(
            [GOOD, ToolUseBlock("c2", "echo", {"text": "a"})],  # type: ignore[arg-type]
            on_event=ran.append,
        )
    assert ran == []
