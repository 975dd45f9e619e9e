"""Middleware: an onion around every call, able to rewrite, read the scratch layer and
short-circuit; the Rust direct call stays at the core; tracing is one middleware."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from ferrotool import (
    Emitter,
    Middleware,
    Next,
    PermissionContext,
    PermissionDecision,
    RuntimeContext,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolkitConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    _core,
    tool,
)
from ferrotool._core import IsSet, PendingCall
from ferrotool._execution import middleware
from ferrotool.telemetry import Tracing


@tool
async def echo(text: str) -> str:
    """Echo (a plain tool: the Rust direct call runs it)."""
    return text


@tool
async def whoami(context: RuntimeContext) -> str:
    """Reads a message a middleware left in the scratch layer."""
    return str(context.scratch.get("tenant", "nobody"))


class Forbidden(ToolBase[dict[str, object]]):
    name = "forbidden"
    input_schema = {"type": "object", "properties": {}}

    async def check_permissions(
        self, tool_input: dict[str, object], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.deny("no")

    async def call(self, param: ToolCallParam[dict[str, object]]) -> None:
        raise AssertionError("never runs")


def recorder(name: str, seen: list[str]) -> Middleware:
    async def middleware(
        call: ToolUseBlock, context: RuntimeContext, next: Next
    ) -> ToolResultBlock:
        seen.append(f"{name} in")
        result = await next(call, context)
        seen.append(f"{name} out")
        return result

    return middleware


async def test_middleware_is_an_onion_the_first_outermost() -> None:
    seen: list[str] = []
    kit = Toolkit(ToolkitConfig(middleware=[recorder("a", seen), recorder("b", seen)]))
    kit.register(echo)
    view = kit.snapshot().view(middleware=[recorder("view", seen)])
    result = await view.call_tool(ToolUseBlock("c1", "echo", '{"text": "hi"}'))
    assert result.content == "hi"
    assert seen == ["a in", "b in", "view in", "view out", "b out", "a out"]


async def test_middleware_rewrites_calls_and_results_and_passes_scratch_to_tools() -> None:
    async def tenant(call: ToolUseBlock, context: RuntimeContext, next: Next) -> ToolResultBlock:
        if call.name == "echo":
            call = call._replace(arguments='{"text": "rewritten"}')
        result = await next(call, context.with_scratch("tenant", "acme"))
        return result._replace(metadata={"seen_by": "tenant"})

    kit = Toolkit(ToolkitConfig(middleware=[tenant]))
    kit.register(echo)
    kit.register(whoami)
    first = await kit.call_tool(ToolUseBlock("c1", "echo", '{"text": "original"}'))
    second = await kit.call_tool(ToolUseBlock("c2", "whoami", "{}"))
    assert (first.content, first.metadata) == ("rewritten", {"seen_by": "tenant"})
    assert second.content == "acme"


async def test_middleware_can_short_circuit() -> None:
    ran: list[str] = []

    async def cache(call: ToolUseBlock, context: RuntimeContext, next: Next) -> ToolResultBlock:
        if call.arguments == '{"text": "cached"}':
            return ToolResultBlock.success("from the cache", id=call.id, name=call.name)
        ran.append(call.id)
        return await next(call, context)

    kit = Toolkit(ToolkitConfig(middleware=[cache]))
    kit.register(echo)
    hit = await kit.call_tool(ToolUseBlock("c1", "echo", '{"text": "cached"}'))
    miss = await kit.call_tool(ToolUseBlock("c2", "echo", '{"text": "fresh"}'))
    assert (hit.content, miss.content, ran) == ("from the cache", "fresh", ["c2"])


async def test_the_core_inside_middleware_is_the_rust_direct_call() -> None:
    cores: list[type] = []

    async def inspect(call: ToolUseBlock, context: RuntimeContext, next: Next) -> ToolResultBlock:
        running: Awaitable[ToolResultBlock] = next(call, context)
        cores.append(type(running))
        return await running

    kit = Toolkit(ToolkitConfig(middleware=[inspect]))
    kit.register(echo)
    kit.register(whoami)
    await kit.call_tool(ToolUseBlock("c1", "echo", '{"text": "hi"}'))
    await kit.call_tool(ToolUseBlock("c2", "whoami", "{}"))
    assert cores[0] is PendingCall  # the plain tool: validated, run and converted in Rust
    assert cores[1] is not PendingCall  # a tool with an injected context: the pipeline


async def test_middleware_wraps_every_call_of_a_batch() -> None:
    seen: list[str] = []

    async def named(call: ToolUseBlock, context: RuntimeContext, next: Next) -> ToolResultBlock:
        seen.append(call.id)
        return await next(call, context)

    kit = Toolkit(ToolkitConfig(middleware=[named]))
    kit.register(echo)
    calls = [ToolUseBlock(f"c{i}", "echo", f'{{"text": "{i}"}}') for i in range(4)]
    batch = await kit.call_tools(calls)
    assert sorted(seen) == ["c0", "c1", "c2", "c3"]
    assert [r.content for r in batch.results] == ["0", "1", "2", "3"]


async def test_the_onion_is_built_with_the_view_not_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []
    kit = Toolkit(ToolkitConfig(middleware=[recorder("outer", seen)]))
    kit.register(echo)
    view = kit.snapshot().view(middleware=[recorder("own", seen)])
    built: list[Next] = []
    layer = middleware._Layer

    def counted(mw: Middleware, inner: Next) -> Next:
        built.append(inner)
        return layer(mw, inner)

    monkeypatch.setattr(middleware, "_Layer", counted)
    calls = [ToolUseBlock(f"c{i}", "echo", f'{{"text": "{i}"}}') for i in range(3)]
    for call in calls:
        await view.call_tool(call)
        await kit.call_tool(call)
    await view.call_tools(calls)
    assert built == []
    assert seen[:4] == ["outer in", "own in", "own out", "outer out"]
    assert len(seen) == 4 * 3 + 2 * 3 + 4 * 3


async def test_next_called_twice_or_from_a_task_of_the_middleware_runs_the_same_call() -> None:
    chunks: list[str] = []

    @tool
    async def chatty(text: str, emitter: Emitter) -> str:
        """Reports progress, so the call's own sink shows it reached the core."""
        emitter.emit(text)
        return text

    async def twice_in_a_task(
        call: ToolUseBlock, context: RuntimeContext, next: Next
    ) -> ToolResultBlock:
        await next(call, context)
        results: list[ToolResultBlock] = []

        async def again() -> None:
            results.append(await next(call, context))

        async with anyio.create_task_group() as group:
            group.start_soon(again)
        return results[0]

    kit = Toolkit(ToolkitConfig(middleware=[twice_in_a_task]))
    kit.register(chatty)
    result = await kit.call_tool(
        ToolUseBlock("c1", "chatty", '{"text": "hi"}'),
        on_progress=lambda progress: chunks.append(progress.chunk.text),  # type: ignore[union-attr]
    )
    assert (result.content, chunks) == ("hi", ["hi", "hi"])


async def test_calls_with_no_context_share_the_chain_of_nexts_and_keep_their_own_results() -> None:
    nexts: dict[str, set[int]] = {"outer": set(), "middle": set()}

    def layer(name: str) -> Middleware:
        async def middleware(
            call: ToolUseBlock, context: RuntimeContext, next: Next
        ) -> ToolResultBlock:
            nexts[name].add(id(next))
            await anyio.sleep(0)  # the calls interleave
            result = await next(call, context)
            return result._replace(metadata={**result.metadata, name: call.id})

        return middleware

    async def inner(call: ToolUseBlock, context: RuntimeContext, next: Next) -> ToolResultBlock:
        await anyio.sleep(0)
        return await next(call, context)

    kit = Toolkit(ToolkitConfig(middleware=[layer("outer"), layer("middle"), inner]))
    kit.register(echo)
    results: dict[str, ToolResultBlock] = {}

    async def one(i: int) -> None:
        results[f"c{i}"] = await kit.call_tool(ToolUseBlock(f"c{i}", "echo", f'{{"text": "{i}"}}'))

    async with anyio.create_task_group() as group:
        for i in range(8):
            group.start_soon(one, i)
    for i in range(8):
        result = results[f"c{i}"]
        assert (result.id, result.content) == (f"c{i}", str(i))
        assert result.metadata == {"outer": f"c{i}", "middle": f"c{i}"}
    assert (len(nexts["outer"]), len(nexts["middle"])) == (1, 1)  # built once, not per call
    assert nexts["outer"] != nexts["middle"]


async def test_the_innermost_next_takes_a_call_and_a_context_by_position_or_by_name() -> None:
    async def calling(call: ToolUseBlock, context: RuntimeContext, next: Next) -> ToolResultBlock:
        how: Any = next
        if call.id == "named":
            return await how(call=call, context=context)  # type: ignore[no-any-return]
        if call.id == "mixed":
            return await how(call, context=context)  # type: ignore[no-any-return]
        if call.id == "short":
            return await how(call)  # type: ignore[no-any-return]
        if call.id == "long":
            return await how(call, context, None)  # type: ignore[no-any-return]
        if call.id == "twice":
            return await how(call, call=call)  # type: ignore[no-any-return]
        return await how(call, context, agent=None)  # type: ignore[no-any-return]

    kit = Toolkit(ToolkitConfig(middleware=[calling]))
    kit.register(echo)
    for call_id in ("named", "mixed"):
        result = await kit.call_tool(ToolUseBlock(call_id, "echo", '{"text": "hi"}'))
        assert (result.state, result.content) == (ToolResultState.SUCCESS, "hi")
    problems = {
        "short": "missing required argument 'context'",
        "long": "takes 2 positional arguments but 3 were given",
        "twice": "multiple values for argument 'call'",
        "unknown": "unexpected keyword argument 'agent'",
    }
    for call_id, problem in problems.items():
        result = await kit.call_tool(ToolUseBlock(call_id, "echo", '{"text": "hi"}'))
        assert result.state is ToolResultState.ERROR
        assert result.metadata["step"] == "middleware"
        assert problem in result.content


async def test_a_context_a_middleware_hands_on_routes_the_call_by_what_it_carries() -> None:
    cores: list[type] = []

    async def replacing(call: ToolUseBlock, context: RuntimeContext, next: Next) -> ToolResultBlock:
        if call.id == "fresh":
            context = RuntimeContext()  # empty, but not the toolkit's own
        elif call.id == "scratch":
            context = context.with_scratch("tenant", "acme")
        running: Awaitable[ToolResultBlock] = next(call, context)
        cores.append(type(running))
        return await running

    kit = Toolkit(ToolkitConfig(middleware=[replacing]))
    kit.register(echo)
    kit.register(whoami)
    for call_id in ("same", "fresh", "scratch"):
        result = await kit.call_tool(ToolUseBlock(call_id, "echo", '{"text": "hi"}'))
        assert result.content == "hi"
    told = await kit.call_tool(ToolUseBlock("scratch", "whoami", "{}"))
    assert told.content == "acme"
    assert cores == [PendingCall, PendingCall, PendingCall, cores[-1]]
    assert cores[-1] is not PendingCall  # a tool with an injected context: the pipeline


async def test_an_onion_with_no_layer_bound_to_a_toolkit_leaves_its_calls_as_they_are() -> None:
    kit = Toolkit(ToolkitConfig(middleware=[recorder("a", [])]))
    kit.register(echo)
    empty = _core.Onion(
        (),
        settle=lambda call, value: ToolResultBlock.success("settled", id=call.id, name=call.name),
        failed=lambda call, error: ToolResultBlock.error("failed", id=call.id, name=call.name),
        result_type=ToolResultBlock,
        running=ToolResultState.RUNNING,
    )
    view = kit.snapshot().view()
    kit._bind(
        {},
        lambda *args: view.call_tool(args[1], args[2]),
        (empty, view.bare, RuntimeContext()),
        direct_sync={},
        pipeline_sync=lambda *args: view.call_tool_sync(args[1]),
    )
    result = await kit.call_tool(ToolUseBlock("c1", "echo", '{"text": "hi"}'))
    assert (result.state, result.content) == (ToolResultState.SUCCESS, "hi")


def _traced(record: bool = False) -> tuple[Toolkit, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing = Tracing(tracer_provider=provider, record_arguments=record, record_results=record)
    kit = Toolkit(ToolkitConfig(middleware=[tracing]))
    kit.register(echo)
    kit.register(Forbidden())
    return kit, exporter


async def test_each_call_is_a_span_after_the_genai_conventions() -> None:
    kit, exporter = _traced()
    await kit.call_tool(ToolUseBlock("c1", "echo", '{"text": "secret"}'))
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool echo"
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
    }
    assert span.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize(
    ("call", "error_type"),
    [
        (ToolUseBlock("c1", "forbidden", "{}"), "denied"),
        (ToolUseBlock("c2", "echo", '{"text": 1}'), "error"),
        (ToolUseBlock("c3", "nope", "{}"), "error"),
    ],
)
async def test_failures_denials_and_unknown_tools_are_error_spans(
    call: ToolUseBlock, error_type: str
) -> None:
    kit, exporter = _traced()
    result = await kit.call_tool(call)
    assert result.state in (ToolResultState.ERROR, ToolResultState.DENIED)
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == error_type


async def test_arguments_and_results_are_recorded_only_when_asked() -> None:
    kit, exporter = _traced(record=True)
    await kit.call_tool(ToolUseBlock("c1", "echo", '{"text": "secret"}'))
    (span,) = exporter.get_finished_spans()
    assert (span.attributes or {})["gen_ai.tool.call.arguments"] == '{"text": "secret"}'
    assert (span.attributes or {})["gen_ai.tool.call.result"] == "secret"


# - layers that say whether they take part (`active()`) -


class Switch:
    """A layer that takes part only while switched on, and counts the calls it sees."""

    def __init__(self, on: bool) -> None:
        self.on = on
        self.seen: list[str] = []

    def active(self) -> bool:
        return self.on

    async def __call__(
        self, call: ToolUseBlock, context: RuntimeContext, next: Next
    ) -> ToolResultBlock:
        self.seen.append(call.id or "")
        return (await next(call, context)).with_state(ToolResultState.SUCCESS)


async def test_an_inactive_layer_is_left_out_of_the_call_and_asked_again_next_time() -> None:
    outer, inner = Switch(False), Switch(True)
    kit = Toolkit(ToolkitConfig(middleware=[outer, inner]))
    kit.register(echo)
    assert (await kit.call_tool(ToolUseBlock("c1", "echo", '{"text": "a"}'))).content == "a"
    outer.on, inner.on = True, False
    assert (await kit.call_tool(ToolUseBlock("c2", "echo", '{"text": "b"}'))).content == "b"
    outer.on = False
    view = kit.snapshot().view()
    assert (await view.call_tool(ToolUseBlock("c3", "echo", '{"text": "c"}'))).content == "c"
    assert (outer.seen, inner.seen) == (["c2"], ["c1"])


class Watching(Switch):
    """A layer whose ``active`` is an `IsSet` over a namespace: read by the onion, not called."""

    def __init__(self, namespace: dict[str, object]) -> None:
        super().__init__(True)
        self.active = IsSet(namespace, "provider")  # type: ignore[method-assign]


async def test_a_layer_watching_a_slot_takes_part_while_the_slot_holds_a_value() -> None:
    namespace: dict[str, object] = {}
    layer = Watching(namespace)
    kit = Toolkit(ToolkitConfig(middleware=[layer]))
    kit.register(echo)
    view = kit.snapshot().view()
    states: list[object] = [None, "set", 0, None]
    for n, value in enumerate(states):
        namespace["provider"] = value
        for entry in (kit.call_tool, view.call_tool):
            assert (await entry(ToolUseBlock(f"c{n}", "echo", '{"text": "a"}'))).content == "a"
    del namespace["provider"]
    await kit.call_tool(ToolUseBlock("c9", "echo", '{"text": "a"}'))
    assert layer.seen == ["c1", "c1", "c2", "c2"]
    assert layer.active() is False
    namespace["provider"] = "set"
    assert layer.active() is True


async def test_a_layer_whose_active_raises_is_the_calls_middleware_error() -> None:
    class Broken(Switch):
        def active(self) -> bool:
            raise RuntimeError("cannot tell")

    kit = Toolkit(ToolkitConfig(middleware=[Broken(True)]))
    kit.register(echo)
    for entry in (kit.call_tool, kit.snapshot().view().call_tool):
        result = await entry(ToolUseBlock("c1", "echo", '{"text": "a"}'))
        assert result.state is ToolResultState.ERROR
        assert "middleware" in result.content
        assert "cannot tell" in result.content
