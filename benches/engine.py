"""Execution-engine benchmark cases: batches, middleware and tracing, the approval round trip.

Five groups of `benches.run`; everything here is built before any clock starts, and
`benches.test_bench_smoke` checks every implementation's results once. Times are per awaited
call of the implementation, in one event loop per group (`benches.run.measure_group_async`).

- **batch_wait**: ``await toolkit.call_tools(calls)`` of 10 calls of ``wait_10ms``, an
  ``async def`` tool (concurrency-safe, the default) whose body is ``await anyio.sleep(0.010)``,
  against ``await toolkit.call_tool(call)`` of it once. The ratio batch ÷ one call is the target
  (≤ 1.3x). Beside them, two floors with no tool library at all: ``await anyio.sleep(0.010)``
  and ``asyncio.gather`` of 10 such sleeps.
- **batch_overhead**: a batch of 100 calls of ``async def add(a: int, b: int) -> int``, the
  raw JSON arguments (``{"a": i, "b": 1}``) as input. Two floors, the 100 raw calls
  ``add(**orjson.loads(arguments))`` run by ``asyncio.gather`` (a task each) and awaited in turn
  in one task; the floor of the figures is the faster of the two (the cheapest way to run the
  calls at all: a batch that needs no task per call is not held against the cost of tasks).
  Tool layers, each fed the raw arguments:
  ferrotool's ``await toolkit.call_tools(100 calls)`` (the default view: no session, no
  middleware); the same ``toolkit.call_tool(call)`` coroutines gathered by hand
  (``asyncio.gather``); pydantic-ai's ``ToolManager.handle_call`` and the OpenAI Agents SDK's
  ``FunctionTool.on_invoke_tool``, one task per call, gathered (how each is built and driven:
  `benches.agent_loops`). Whole agent loops on the same scripted turns: ferrotool's
  ``run_agent``, pydantic-ai's ``Agent.run`` with a ``FunctionModel`` whose first response holds
  the 100 tool calls and whose second is the final text, the OpenAI Agents SDK's ``Runner.run``
  with a scripted `Model` of the SDK (``get_response`` returns prebuilt output items: the 100
  ``function_call`` items, then once their outputs are in the input the final message),
  ``ModelSettings(parallel_tool_calls=True)``; each also with the final text only and with one
  call (`benches.agent_loops`). Per-call overhead (`batch_overheads`) is (time - floor) / 100
  for a tool layer; a loop's time is its 100-call run minus its text-only run, so the model's
  and the loop's cost per run cancel; what does not cancel is the second turn (a second model
  request over a history of 100 tool returns, and the loop's nodes of that turn), counted here
  as per-call overhead. The cross-check (100-call run - 1-call run) / 99 - floor / 100 compares
  two runs of two turns each, so that cost cancels too. Targets: call_tools' per-call overhead
  ÷ the gathered call_tool's (≤ 1.3x), the faster peer's bare tool layer's ÷ call_tools' (≥ 2x),
  the faster peer loop's ÷ run_agent's (≥ 5x), and the faster peer loop's ÷ call_tools' (≥ 3x).
- **batch_overhead_sync**: a batch of 100 calls of ``def add_sync(a: int, b: int) -> int``, an
  inline tool (``ferrotool.tool(add_sync, inline=True)``: run on the caller's thread), same raw
  arguments. The floor: ``[add_sync(**orjson.loads(arguments)) for ...]``; beside it a loop of
  ``toolkit.call_tool_sync(call)`` and ``await toolkit.call_tools(100 calls)``. Target:
  call_tools ÷ the loop of call_tool_sync (≤ 1.5x); each row's per-call overhead over the floor
  (`sync_overheads`) is under the table.
- **middleware_cost**: one call of the plain async tool ``add`` (``{"a": 1, "b": 2}``): the
  floor is ``Toolkit.call_tool`` with no middleware (the tool's Rust direct call, reached from
  the toolkit's Rust ``call_tool``); beside it the same tool's bare `_core.DirectCall` (no
  toolkit: what the floor costs minus the name lookup and dispatch), the call through a view
  built once (``registry.view().call_tool``), and ``Toolkit.call_tool`` on toolkits with one
  pass-through middleware (``return await next(call, context)``), with
  ``ferrotool.telemetry.Tracing()`` while no tracer provider is set (the OpenTelemetry API's
  no-op provider: tracing off), and with ``Tracing(tracer_provider=...)`` on an SDK
  ``TracerProvider`` whose ``SimpleSpanProcessor`` hands each span to an exporter that drops it
  (tracing on). The cost of each is its time minus the floor's, per call and as a percentage of
  the floor (`middleware_costs`). Beside them, the hand-written references of the targets: an
  ``async def core(call, ctx)`` doing the call by hand (``add(**orjson.loads(arguments))``), the
  same core inside ``async def layer(call, ctx, nxt): return await nxt(call, ctx)`` (what the
  pass-through middleware's cost is held against: `layer_cost_ratio`), and a hand-made layer
  making OpenTelemetry's span with the same four attributes around ``Toolkit.call_tool`` on the
  same SDK provider (what ``Tracing()`` on is held against).
- **approval_round_trip**: a batch of one call of ``deploy``, a `ToolBase` whose
  ``check_permissions`` returns ``PermissionDecision.ask(...)``: ``view = await
  registry.open_view(context, store)``, ``await view.call_tools([call], context)`` (the call
  waits; the batch's suspension is stored in the session), then ``await
  registry.resume(context, store, [Confirmation(call.id, True)])`` (accepted with
  compare-and-set, the call runs). One session per store, reused by every round trip (each one
  leaves nothing waiting). Beside it, the store's own part on a session of its own: the same
  three loads and two compare-and-sets (`ApprovalRoundTrip.store_only`). With
  `InMemorySessionStore` and with ``RedisSessionStore.from_url(FERROTOOL_REDIS_URL)``.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final, NamedTuple

import anyio
import orjson

import ferrotool
from benches import tools as t
from benches.agent_loops import (
    AGENTS,
    AGENTS_LAYER,
    AGENTS_LAYER_NOTE,
    AGENTS_NOTE,
    BATCH,
    FERROTOOL,
    FINAL_TEXT,
    ONE_RUN,
    PAI_LAYER,
    PAI_LAYER_NOTE,
    PYDANTIC_AI,
    SECOND_TURN_NOTE,
    TEXT_RUN,
    TOOLS_RUN,
    ferrotool_runs,
    openai_agents_layer,
    openai_agents_runs,
    peer_run,
    pydantic_ai_layer,
    pydantic_ai_runs,
)
from ferrotool import (
    Confirmation,
    InMemorySessionStore,
    PermissionContext,
    PermissionDecision,
    Registry,
    RuntimeContext,
    SessionKey,
    SessionStore,
    SuspensionKind,
    ToolBase,
    ToolBatch,
    ToolCallParam,
    Toolkit,
    ToolkitConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
)

# --- batch_wait ----------------------------------------------------------------------------------

WAIT_SECONDS: Final = 0.010
WAIT_CALLS: Final = 10
WAIT_CASE: Final = f"{WAIT_CALLS} calls, {WAIT_SECONDS * 1000:g} ms each"
WAIT_ONE: Final = "call_tool, 1 call"
WAIT_BATCH: Final = f"call_tools, {WAIT_CALLS} calls"
WAIT_SLEEP: Final = "floor: anyio.sleep(0.010)"
WAIT_GATHER: Final = f"floor: asyncio.gather of {WAIT_CALLS} sleeps"
WAITED: Final = "waited"


async def wait_10ms() -> str:
    """Wait 10 ms, as a tool waiting on I/O would."""
    await anyio.sleep(WAIT_SECONDS)
    return WAITED


def wait_toolkit() -> Toolkit:
    """A toolkit of ``wait_10ms`` alone."""
    toolkit = Toolkit()
    toolkit.register(ferrotool.tool(wait_10ms))
    return toolkit


def wait_implementations() -> dict[str, t.Built]:
    """The ``batch_wait`` implementations, in table order."""
    toolkit = wait_toolkit()
    calls = tuple(ToolUseBlock(f"call_{i}", "wait_10ms", "{}") for i in range(WAIT_CALLS))

    async def gather() -> list[object]:
        return await asyncio.gather(*(anyio.sleep(WAIT_SECONDS) for _ in range(WAIT_CALLS)))

    return {
        WAIT_ONE: t.Built(functools.partial(toolkit.call_tool, calls[0]), True, _read_one),
        WAIT_BATCH: t.Built(functools.partial(toolkit.call_tools, calls), True, _read_waits),
        WAIT_SLEEP: t.Built(functools.partial(anyio.sleep, WAIT_SECONDS), True, _read_none),
        WAIT_GATHER: t.Built(gather, True, _read_none),
    }


def _read_one(result: ToolResultBlock) -> t.Outcome:
    ok = result.state is ToolResultState.SUCCESS and result.content == WAITED
    return t.Outcome(ok, result.content)


def _read_waits(batch: ToolBatch) -> t.Outcome:
    ids = [f"call_{i}" for i in range(WAIT_CALLS)]
    ok = (
        batch.suspension is None
        and [r.id for r in batch.results] == ids
        and all(r.state is ToolResultState.SUCCESS and r.content == WAITED for r in batch.results)
    )
    return t.Outcome(ok, [r.content for r in batch.results])


def _read_none(result: object) -> t.Outcome:
    return t.Outcome(result is None or result == [None] * WAIT_CALLS, result)


# --- batch_overhead ------------------------------------------------------------------------------

OVERHEAD_CALLS: Final = BATCH
OVERHEAD_CASE: Final = f"{OVERHEAD_CALLS} calls of add"
OV_FLOOR: Final = "floor: asyncio.gather of the raw calls"
OV_FLOOR_SEQ: Final = "floor: the raw calls awaited in turn"
OV_FT: Final = f"ferrotool call_tools, {OVERHEAD_CALLS} calls"
OV_GATHERED: Final = "ferrotool call_tool, gathered"
OV_LAYERS: Final = {PYDANTIC_AI: PAI_LAYER, AGENTS: AGENTS_LAYER}
"""Each peer's bare tool layer's row."""
LOOPS: Final = (PYDANTIC_AI, AGENTS)
"""The peers whose whole agent loops are timed."""

# The names of the derived per-call overheads.
FT_FIGURE: Final = "ferrotool"
GATHERED_FIGURE: Final = "ferrotool call_tool, gathered"
FT_LOOP_FIGURE: Final = "ferrotool run_agent"
CROSS_CHECK: Final = ", cross-check"


def layer_figure(peer: str) -> str:
    """The derived figure of a peer's bare tool layer: ``"pydantic-ai tool layer"``."""
    return f"{peer} tool layer"


async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def add_calls(count: int = OVERHEAD_CALLS) -> tuple[ToolUseBlock, ...]:
    """``count`` calls of ``add``: call ``i`` adds ``i`` and 1."""
    return tuple(ToolUseBlock(f"call_{i}", "add", f'{{"a": {i}, "b": 1}}') for i in range(count))


EXPECTED_SUMS: Final = [i + 1 for i in range(OVERHEAD_CALLS)]


def overhead_implementations() -> tuple[dict[str, t.Built], dict[str, str]]:
    """The ``batch_overhead`` implementations in table order, and the rows left out (why)."""
    calls = add_calls()
    toolkit = Toolkit()
    toolkit.register(ferrotool.tool(add))
    raw = [call.arguments for call in calls]
    loads = orjson.loads
    call_tool = toolkit.call_tool

    async def floor() -> list[int]:
        return await asyncio.gather(*(add(**loads(arguments)) for arguments in raw))

    async def in_turn() -> list[int]:
        return [await add(**loads(arguments)) for arguments in raw]

    async def gathered() -> list[ToolResultBlock]:
        return await asyncio.gather(*(call_tool(call) for call in calls))

    impls = {
        OV_FLOOR: t.Built(floor, True, _read_sums),
        OV_FLOOR_SEQ: t.Built(in_turn, True, _read_sums),
        OV_FT: t.Built(functools.partial(toolkit.call_tools, calls), True, _read_batch_sums),
        OV_GATHERED: t.Built(gathered, True, _read_result_sums),
    }
    missing: dict[str, str] = {}
    for name, build, module in (
        (PAI_LAYER, pydantic_ai_layer, "pydantic_ai"),
        (AGENTS_LAYER, openai_agents_layer, "agents"),
    ):
        try:
            impls.update(build(calls, add, EXPECTED_SUMS))
        except Exception as exc:  # an import failing, or a peer API that moved
            missing[name] = f"unavailable: {type(exc).__name__}: {exc} (import {module})"
    impls.update(ferrotool_runs(calls, toolkit, EXPECTED_SUMS))
    for peer, build, module in (
        (PYDANTIC_AI, pydantic_ai_runs, "pydantic_ai"),
        (AGENTS, openai_agents_runs, "agents"),
    ):
        try:
            impls.update(build(calls, add, EXPECTED_SUMS))
        except Exception as exc:  # an import failing, or a peer API that moved
            missing[peer] = f"unavailable: {type(exc).__name__}: {exc} (import {module})"
    return impls, missing


def _read_sums(result: list[int]) -> t.Outcome:
    return t.Outcome(result == EXPECTED_SUMS, result)


def _results_ok(results: Sequence[ToolResultBlock]) -> bool:
    return (
        [r.id for r in results] == [f"call_{i}" for i in range(OVERHEAD_CALLS)]
        and all(r.state is ToolResultState.SUCCESS for r in results)
        and [t.unwrapped(r.structured) for r in results] == EXPECTED_SUMS
    )


def _read_batch_sums(batch: ToolBatch) -> t.Outcome:
    return t.Outcome(batch.suspension is None and _results_ok(batch.results), batch)


def _read_result_sums(results: list[ToolResultBlock]) -> t.Outcome:
    return t.Outcome(_results_ok(results), [t.unwrapped(r.structured) for r in results])


class Derived(NamedTuple):
    """A figure computed from several medians of one group."""

    name: str
    value_us: float
    how: str


def batch_overheads(median: Mapping[str, float]) -> list[Derived]:
    """Per-call overhead over the floor of each implementation measured (see the docstring).

    Args:
        median: The group's medians (µs) by implementation name.
    """
    floors = [median[row] for row in (OV_FLOOR, OV_FLOOR_SEQ) if row in median]
    if not floors:
        return []
    floor = min(floors)  # the cheapest way to run the raw calls at all
    n = OVERHEAD_CALLS
    out: list[Derived] = []
    layers = [(FT_FIGURE, OV_FT, "call_tools"), (GATHERED_FIGURE, OV_GATHERED, "gathered")]
    layers += [(layer_figure(peer), row, "gathered") for peer, row in OV_LAYERS.items()]
    for name, row, what in layers:
        if row in median:
            out.append(Derived(name, (median[row] - floor) / n, f"({what} - floor) / {n}"))
    for peer, name in ((FERROTOOL, FT_LOOP_FIGURE), *((p, p) for p in LOOPS)):
        tools, text, one = (
            median.get(peer_run(peer, run)) for run in (TOOLS_RUN, TEXT_RUN, ONE_RUN)
        )
        if tools is None or text is None:
            continue
        out.append(
            Derived(name, (tools - text - floor) / n, f"({n} calls - text only - floor) / {n}")
        )
        if one is not None:
            out.append(
                Derived(
                    f"{name}{CROSS_CHECK}",
                    (tools - one) / (n - 1) - floor / n,
                    f"({n} calls - 1 call) / {n - 1} - floor / {n}",
                )
            )
    return out


def _fastest_over(figures: Sequence[Derived], peers: Sequence[str], ours: str) -> float | None:
    """The lowest of the ``peers`` figures ÷ the ``ours`` figure (``None``: one is missing, or
    ours is not above the floor)."""
    by_name = {figure.name: figure.value_us for figure in figures}
    mine = by_name.get(ours)
    theirs = [by_name[name] for name in peers if name in by_name]
    if mine is None or not theirs or mine <= 0:
        return None
    return min(theirs) / mine


def overhead_ratio(figures: Sequence[Derived], *, cross_check: bool = False) -> float | None:
    """The faster peer loop's per-call overhead ÷ call_tools': the target's figure, or with
    ``cross_check`` the same on the peers' cross-check figures."""
    suffix = CROSS_CHECK if cross_check else ""
    return _fastest_over(figures, [f"{peer}{suffix}" for peer in LOOPS], FT_FIGURE)


def loop_ratio(figures: Sequence[Derived], *, cross_check: bool = False) -> float | None:
    """The faster peer loop's per-call overhead ÷ run_agent's (both from their text-only runs,
    or with ``cross_check`` both from their 1-call runs)."""
    suffix = CROSS_CHECK if cross_check else ""
    peers = [f"{peer}{suffix}" for peer in LOOPS]
    return _fastest_over(figures, peers, f"{FT_LOOP_FIGURE}{suffix}")


def layer_ratio(figures: Sequence[Derived]) -> float | None:
    """The faster peer's bare tool layer's per-call overhead ÷ call_tools'."""
    return _fastest_over(figures, [layer_figure(peer) for peer in OV_LAYERS], FT_FIGURE)


def gathered_ratio(figures: Sequence[Derived]) -> float | None:
    """call_tools' per-call overhead ÷ the gathered call_tool's (lower is better)."""
    by_name = {figure.name: figure.value_us for figure in figures}
    ours, gathered = by_name.get(FT_FIGURE), by_name.get(GATHERED_FIGURE)
    if ours is None or gathered is None or gathered <= 0:
        return None
    return ours / gathered


def gathered_time_ratio(median: Mapping[str, float]) -> float | None:
    """call_tools' time ÷ the gathered call_tool's: the same comparison without the floor, which
    is nearly all of the gathered call_tool's time (its overhead alone is small and noisy)."""
    ours, gathered = median.get(OV_FT), median.get(OV_GATHERED)
    if ours is None or gathered is None:
        return None
    return ours / gathered


# --- batch_overhead_sync -------------------------------------------------------------------------

SYNC_CASE: Final = f"{OVERHEAD_CALLS} calls of add_sync (inline)"
SYNC_FLOOR: Final = "floor: loop of the raw calls"
SYNC_LOOP: Final = "ferrotool call_tool_sync, in a loop"
SYNC_FT: Final = f"ferrotool call_tools, {OVERHEAD_CALLS} calls"


def add_sync(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def sync_calls() -> tuple[ToolUseBlock, ...]:
    """The batch of ``add_sync``: call ``i`` adds ``i`` and 1."""
    return tuple(ToolUseBlock(c.id, "add_sync", c.arguments) for c in add_calls())


def sync_implementations() -> dict[str, t.Built]:
    """The ``batch_overhead_sync`` implementations, in table order."""
    calls = sync_calls()
    toolkit = Toolkit()
    toolkit.register(ferrotool.tool(add_sync, inline=True))
    raw = [call.arguments for call in calls]
    loads = orjson.loads
    call_tool_sync = toolkit.call_tool_sync

    def floor() -> list[int]:
        return [add_sync(**loads(arguments)) for arguments in raw]

    def loop() -> list[ToolResultBlock]:
        return [call_tool_sync(call) for call in calls]

    return {
        SYNC_FLOOR: t.Built(floor, False, _read_sums),
        SYNC_LOOP: t.Built(loop, False, _read_result_sums),
        SYNC_FT: t.Built(functools.partial(toolkit.call_tools, calls), True, _read_batch_sums),
    }


def sync_overheads(median: Mapping[str, float]) -> list[Derived]:
    """Per-call overhead over the floor of the loop of call_tool_sync and of call_tools."""
    floor = median.get(SYNC_FLOOR)
    if floor is None:
        return []
    n = OVERHEAD_CALLS
    return [
        Derived(row, (median[row] - floor) / n, f"(time - floor) / {n}")
        for row in (SYNC_LOOP, SYNC_FT)
        if row in median
    ]


def sync_ratio(median: Mapping[str, float]) -> float | None:
    """call_tools' time ÷ the loop of call_tool_sync's (lower is better)."""
    ours, loop = median.get(SYNC_FT), median.get(SYNC_LOOP)
    if ours is None or loop is None:
        return None
    return ours / loop


# --- middleware_cost -----------------------------------------------------------------------------

MW_CASE: Final = "add(1, 2), plain async tool"
MW_FLOOR: Final = "Toolkit.call_tool, no middleware"
MW_BARE: Final = "the tool's bare Rust DirectCall"
MW_VIEW: Final = "view.call_tool (view built once), no middleware"
MW_PASS: Final = "Toolkit.call_tool, 1 pass-through middleware"
MW_TRACING_OFF: Final = "Toolkit.call_tool, Tracing(), no tracer provider set (off)"
MW_TRACING_ON: Final = "Toolkit.call_tool, Tracing(), SDK provider + no-op exporter (on)"
MW_CALL: Final = ToolUseBlock("call_1", "add", '{"a": 1, "b": 2}')
MW_HAND_CORE: Final = "hand-written: async def core (orjson.loads + add)"
MW_HAND_LAYER: Final = "hand-written: async def layer around that core"
MW_HAND_SPAN: Final = "hand-written: OpenTelemetry span layer around Toolkit.call_tool (on)"


async def pass_through(
    call: ToolUseBlock, context: RuntimeContext, next: ferrotool.Next
) -> ToolResultBlock:
    """The least a middleware is: hand the call on."""
    return await next(call, context)


class DroppingExporter:
    """A span exporter that keeps nothing, counting what it is handed."""

    def __init__(self) -> None:
        self.exported = 0
        self.names: set[str] = set()

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        self.exported += len(spans)
        if len(self.names) < 8:
            self.names.update(span.name for span in spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


TRACING_ON_NOTE: Final = (
    "SimpleSpanProcessor: each span is handed to the exporter as it ends, on the caller's "
    "thread (a BatchSpanProcessor would queue it for a worker thread); the exporter drops it"
)


def tracing_off_problem() -> str | None:
    """Why the tracing-off row would not measure the API's no-op provider, or ``None``."""
    try:
        from opentelemetry import trace
    except ImportError as exc:
        return f"unavailable: {exc} (pip install opentelemetry-api)"
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider):
        return None
    return f"a global tracer provider is set ({type(provider).__name__}): the row measures it"


def _toolkit(middleware: Sequence[ferrotool.Middleware] = ()) -> Toolkit:
    toolkit = Toolkit(ToolkitConfig(middleware=middleware))
    toolkit.register(ferrotool.tool(add))
    return toolkit


def middleware_implementations() -> tuple[dict[str, t.Built], dict[str, str], DroppingExporter]:
    """The ``middleware_cost`` implementations in table order, the rows left out (why), and the
    tracing-on row's exporter."""
    plain = _toolkit()
    registry = plain.snapshot()
    direct = registry._table.entries["add"].direct  # the floor's own Rust direct call
    if direct is None:  # pragma: no cover - a plain async tool always has one
        raise RuntimeError("add has no Rust direct call: the floor is not the direct call")
    view = registry.view()
    impls = {
        MW_FLOOR: t.Built(functools.partial(plain.call_tool, MW_CALL), True, _read_three),
        MW_BARE: t.Built(functools.partial(direct, MW_CALL), True, _read_three),
        MW_VIEW: t.Built(functools.partial(view.call_tool, MW_CALL), True, _read_three),
    }
    layered = _toolkit([pass_through])
    impls[MW_PASS] = t.Built(functools.partial(layered.call_tool, MW_CALL), True, _read_three)
    loads = orjson.loads

    async def core(call: ToolUseBlock, context: object) -> int:
        return await add(**loads(call.arguments))

    async def layer(
        call: ToolUseBlock, context: object, nxt: Callable[[ToolUseBlock, object], Any]
    ) -> int:
        return int(await nxt(call, context))

    impls[MW_HAND_CORE] = t.Built(functools.partial(core, MW_CALL, None), True, _read_int)
    impls[MW_HAND_LAYER] = t.Built(functools.partial(layer, MW_CALL, None, core), True, _read_int)
    missing: dict[str, str] = {}
    exporter = DroppingExporter()
    try:
        from ferrotool.telemetry import Tracing
    except ImportError as exc:  # the otel extra is not installed
        for name in (MW_TRACING_OFF, MW_TRACING_ON):
            missing[name] = f"unavailable: {exc} (pip install 'ferrotool[otel]')"
        return impls, missing, exporter
    off = _toolkit([Tracing()])
    impls[MW_TRACING_OFF] = t.Built(functools.partial(off.call_tool, MW_CALL), True, _read_three)
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    except ImportError as exc:
        missing[MW_TRACING_ON] = f"unavailable: {exc} (pip install opentelemetry-sdk)"
    else:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))  # type: ignore[arg-type]
        on = _toolkit([Tracing(tracer_provider=provider)])
        impls[MW_TRACING_ON] = t.Built(functools.partial(on.call_tool, MW_CALL), True, _read_three)
        tracer = provider.get_tracer("hand-made")

        async def traced(call: ToolUseBlock) -> ToolResultBlock:
            with tracer.start_as_current_span(
                f"execute_tool {call.name}", record_exception=True
            ) as span:
                span.set_attribute("gen_ai.operation.name", "execute_tool")
                span.set_attribute("gen_ai.tool.name", call.name)
                span.set_attribute("gen_ai.tool.call.id", call.id)
                span.set_attribute("gen_ai.tool.type", "function")
                return await plain.call_tool(call)

        impls[MW_HAND_SPAN] = t.Built(functools.partial(traced, MW_CALL), True, _read_three)
    return impls, missing, exporter


def _read_three(result: ToolResultBlock) -> t.Outcome:
    ok = result.state is ToolResultState.SUCCESS and t.unwrapped(result.structured) == 3
    return t.Outcome(ok and result.id == MW_CALL.id, result.structured)


def _read_int(result: int) -> t.Outcome:
    return t.Outcome(result == 3, result)


def layer_cost_ratio(median: Mapping[str, float]) -> float | None:
    """What one pass-through middleware adds to a call ÷ what a hand-written coroutine layer
    adds to an ``async def`` core, in the same run (the target: at most 1.5x)."""
    names = (MW_PASS, MW_FLOOR, MW_HAND_LAYER, MW_HAND_CORE)
    if any(name not in median for name in names):
        return None
    hand = median[MW_HAND_LAYER] - median[MW_HAND_CORE]
    if hand <= 0:
        return None
    return (median[MW_PASS] - median[MW_FLOOR]) / hand


def middleware_costs(median: Mapping[str, float]) -> list[Derived]:
    """Each row's cost per call above the floor (µs; `Derived.how` holds the percentage)."""
    floor = median.get(MW_FLOOR)
    if floor is None:
        return []
    return [
        Derived(name, value - floor, f"{(value - floor) / floor:+.0%} of the floor")
        for name, value in median.items()
        if name not in (MW_FLOOR, MW_HAND_CORE, MW_HAND_LAYER)
    ]


# --- approval_round_trip -------------------------------------------------------------------------

AP_ROUND_TRIP: Final = "open_view + call_tools (asks) + resume (approved)"
AP_STORE_ONLY: Final = "store: 3 loads + 2 compare_and_set"
DEPLOYED: Final = "deployed to prod"


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys a service; asks a person first, every time."""

    name = "deploy"
    concurrency_safe = False
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"env": {"type": "string", "enum": ["staging", "prod"]}},
        "required": ["env"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        super().__init__()
        self.runs = 0

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask(f"Deploy to {tool_input['env']}?")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        self.runs += 1
        return f"deployed to {param.input['env']}"


def approval_registry() -> tuple[Registry, Deploy]:
    """A registry holding `Deploy` (and ``add``, which the batch does not call)."""
    deploy = Deploy()
    toolkit = Toolkit()
    toolkit.register(deploy)
    toolkit.register(ferrotool.tool(add))
    return toolkit.snapshot(), deploy


StoreOpener = Callable[[], AbstractAsyncContextManager[SessionStore]]


@asynccontextmanager
async def memory_store() -> AsyncIterator[SessionStore]:
    yield InMemorySessionStore()


def redis_store(url: str, prefix: str) -> StoreOpener:
    """``RedisSessionStore.from_url(url, prefix=prefix)``, closed on exit.

    Every key under the prefix is deleted on exit too (by a client of its own, in the same
    event loop).
    """

    @asynccontextmanager
    async def opened() -> AsyncIterator[SessionStore]:
        import redis.asyncio as aioredis

        from ferrotool.redis import RedisSessionStore

        try:
            async with RedisSessionStore.from_url(url, prefix=prefix) as store:
                yield store
        finally:
            client = aioredis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
            try:
                keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
                if keys:
                    await client.delete(*keys)
            finally:
                await client.aclose()

    return opened


class ApprovalRoundTrip:
    """One session's approval round trip over one store (opened by `opened`, in the loop)."""

    def __init__(self, open_store: StoreOpener, session: str) -> None:
        self.registry, self.tool = approval_registry()
        self._open_store = open_store
        self.context = RuntimeContext(user_id="bench", session_id=session)
        self.key = SessionKey("bench", session)
        self.direct_key = SessionKey("bench", f"{session}-direct")
        self.call = ToolUseBlock("call_deploy", "deploy", '{"env": "prod"}')
        self.calls = (self.call,)
        self.replies = (Confirmation(self.call.id, True),)
        self._pending = ferrotool.PendingToolCall(
            call=self.call,
            kind=SuspensionKind.CONFIRM,
            reply_id=uuid.uuid4().hex,
            message="Deploy to prod?",
        )
        self._store: SessionStore | None = None

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            raise RuntimeError("the round trip's store is not open (use `opened()`)")
        return self._store

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[ApprovalRoundTrip]:
        async with self._open_store() as store:
            self._store = store
            try:
                yield self
            finally:
                self._store = None

    async def round_trip(self) -> ToolBatch:
        """Run the batch (the call waits), then approve it: the resumed batch."""
        store, context = self.store, self.context
        view = await self.registry.open_view(context, store)
        await view.call_tools(self.calls, context)
        return await self.registry.resume(context, store, self.replies)

    async def suspend(self) -> ToolBatch:
        """The first half alone: open the view and run the batch (tests only)."""
        view = await self.registry.open_view(self.context, self.store)
        return await view.call_tools(self.calls, self.context)

    async def store_only(self) -> object:
        """The round trip's store operations on a session of its own, states prebuilt.

        ``open_view`` loads; storing the suspension loads and compares-and-sets; the resume's
        ``open_view`` loads and its acceptance compares-and-sets.
        """
        store, key = self.store, self.direct_key
        await store.load(key)
        state = await store.load(key)
        await store.compare_and_set(key, state.revision, state.with_pending((self._pending,)))
        state = await store.load(key)
        return await store.compare_and_set(
            key, state.revision, state.without_pending((self.call.id,))
        )


def round_trip_problem(batch: ToolBatch) -> str | None:
    """What is wrong with a resumed batch, or ``None``."""
    if len(batch.results) != 1 or batch.suspension is not None:
        return f"expected one settled result and nothing waiting, got {batch!r:.200}"
    result = batch.results[0]
    if result.state is not ToolResultState.SUCCESS or result.content != DEPLOYED:
        return f"the approved call did not run: {result.state.name}: {result.content!r:.160}"
    return None


async def check_approval(trip: ApprovalRoundTrip, trips: int = 2) -> str | None:
    """Run ``trips`` round trips and the store's part once; check the session after each.

    Returns:
        What went wrong, or ``None``.
    """
    runs = trip.tool.runs
    async with trip.opened():
        for n in range(1, trips + 1):
            problem = round_trip_problem(await trip.round_trip())
            if problem is not None:
                return problem
            state = await trip.store.load(trip.key)
            if state.pending_calls:
                return f"calls still wait after round trip {n}: {state.pending_calls!r:.160}"
            if trip.tool.runs - runs != n:
                return f"the tool ran {trip.tool.runs - runs} times in {n} round trips"
        stored = await trip.store_only()
        state = await trip.store.load(trip.direct_key)
        if stored is None or state.pending_calls or state.revision != 2:
            return f"the store's own part left {state!r:.160}"
    return None


__all__ = [
    "AGENTS",
    "AGENTS_LAYER",
    "AGENTS_LAYER_NOTE",
    "AGENTS_NOTE",
    "FERROTOOL",
    "FINAL_TEXT",
    "ONE_RUN",
    "PAI_LAYER",
    "PAI_LAYER_NOTE",
    "PYDANTIC_AI",
    "SECOND_TURN_NOTE",
    "TEXT_RUN",
    "TOOLS_RUN",
    "ApprovalRoundTrip",
    "Derived",
    "batch_overheads",
    "check_approval",
    "gathered_ratio",
    "gathered_time_ratio",
    "layer_figure",
    "layer_ratio",
    "loop_ratio",
    "memory_store",
    "middleware_costs",
    "middleware_implementations",
    "overhead_implementations",
    "overhead_ratio",
    "peer_run",
    "redis_store",
    "sync_implementations",
    "sync_overheads",
    "sync_ratio",
    "wait_implementations",
    "wait_toolkit",
]
