"""Run every benchmark case side by side and report median per-call times.

Usage::

    python -m benches.run                 # full run: prints Markdown, writes benches/results.json
    python -m benches.run --quick         # a few short repeats, no JSON written (a smoke test)
    python -m benches.run --markdown benches/RESULTS-table.md
    python -m benches.run --only tool_async --only tool_inline   # some groups only

Every measurement is a `timeit`-style loop: the loop count is calibrated once per
implementation so that one repeat takes about ``--target-ms``, then every implementation of a
group is timed in turn, repeat after repeat (interleaved, so that drift on a noisy machine hits
all of them alike). The median over the repeats is reported, with ratios against the floor or
the peer measured in the same run. The garbage collector is off while a loop runs, as in
`timeit`.

The tool-call groups (``tool_*``, `benches.tools`) time async calls inside one event loop per
case (``anyio.run`` once, the loop inside it), so the loop's start-up is not counted; a sync
implementation in the same group is timed by the same `timeit` loop as elsewhere.

The request-view groups (``view_build``, ``view_schemas``, ``reset_tools``, `benches.views`) time
`Registry.view` over registries of 10 to 100,000 tools, a view's provider tool list, and a
session's ``reset_tools`` round trip through an in-memory and a Redis session store.

The execution-engine groups (``batch_wait``, ``batch_overhead``, ``batch_overhead_sync``,
``middleware_cost``, ``approval_round_trip``, `benches.engine`) time a batch of waiting tools
against one call, the per-call overhead of a batch of 100 trivial tools (ferrotool's
``call_tools`` against its own ``call_tool`` gathered, pydantic-ai's and the OpenAI Agents SDK's
bare tool layers, and the three libraries' whole agent loops), the same batch of inline sync
tools against a loop of ``call_tool_sync``, what middleware and tracing add to a call, and an
approval's suspend and resume through each session store. Figures computed from several medians
(per-call overheads, costs above the floor) are printed under their group's table and kept under
``derived`` in the JSON.
The MCP groups (``mcp_client``, ``mcp_serve``, `benches.mcp_bench`) time real processes:
ferrotool's MCP client against a bare SDK ``ClientSession`` on one stdio server, and
``ferrotool serve`` against the SDK's ``MCPServer`` and FastMCP under one load over loopback HTTP.
The ``scale`` group (`benches.scale`) serves the same load with one and two ``ferrotool serve``
workers, each server process held to 0.4 CPU by a cgroup (skipped where cgroups are not
writable), against two servers on two ports.
The ``import_time`` group (`benches.imports`) times ``import ferrotool`` in fresh interpreters
against the import of its dependencies.
The ``sandbox`` group (`benches.sandbox`) times a command's start-up: a plain spawn of ``true``,
the same under bubblewrap, and ``execute_shell_command`` without and with its sandbox.
The ``durable`` group (`benches.durable`) times a turn of 10 tool calls run plainly and durably
(each call a DBOS step) on SQLite and on Postgres (``FERROTOOL_POSTGRES_URL``; skipped without
it): ferrotool's ``DurableToolkit``, its ``DurableAgent`` (the whole turn, model replies recorded)
and its toolset in pydantic-ai's DBOS agent against that agent with a function tool, and the cost
durability adds per call.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import statistics
import sys
import time
import timeit
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio

from benches import adapters as ag
from benches import cases as c
from benches import durable as du
from benches import engine as e
from benches import imports as im
from benches import mcp_bench as mb
from benches import memory as mem
from benches import sandbox as sb
from benches import scale as sc
from benches import skills as sk
from benches import structured as so
from benches import tools as t
from benches import views as v

HERE = Path(__file__).resolve().parent


@dataclass
class Measurement:
    """The timings of one implementation on one case."""

    group: str
    case: str
    impl: str
    loops: int
    times_us: list[float] = field(default_factory=list)

    @property
    def median_us(self) -> float:
        return statistics.median(self.times_us)

    @property
    def min_us(self) -> float:
        return min(self.times_us)

    @property
    def spread(self) -> float:
        """The interquartile range of the repeats, as a fraction of the median."""
        if len(self.times_us) < 2:
            return 0.0
        low, _, high = statistics.quantiles(self.times_us, n=4)
        return (high - low) / self.median_us


@dataclass(frozen=True)
class Target:
    """One target of the spec, checked against the measurements of this run."""

    name: str
    measured: float
    limit: float
    higher_is_better: bool
    unit: str = "x"

    @property
    def met(self) -> bool:
        if self.higher_is_better:
            return self.measured >= self.limit
        return self.measured <= self.limit

    def verdict(self) -> str:
        if self.met:
            return "met"
        if self.higher_is_better:
            return f"missed: {self.measured:.2f}x of the {self.limit:g}x asked"
        return f"missed by {(self.measured / self.limit - 1) * 100:.0f}%"


@dataclass(frozen=True)
class Note:
    """Something the tables must say: a peer left out (and why), or driven unlike its defaults."""

    group: str
    case: str
    impl: str
    text: str


NOTES: list[Note] = []


def _note(group: str, case: str, impl: str, text: str) -> None:
    NOTES.append(Note(group, case, impl, text))
    print(f"{group} {case} {impl}: {text}", file=sys.stderr, flush=True)


# --- timing ----------------------------------------------------------------------------------


def _time_loop(fn: Callable[[], object], loops: int) -> float:
    """Seconds per call over ``loops`` calls, with the garbage collector off."""
    timer = timeit.Timer("fn()", globals={"fn": fn})
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return timer.timeit(loops) / loops
    finally:
        if gc_was_enabled:
            gc.enable()


def _calibrate(fn: Callable[[], object], target_s: float) -> int:
    """The loop count that makes one repeat last about ``target_s``."""
    fn()  # warm up
    loops = 1
    while True:
        elapsed = _time_loop(fn, loops) * loops
        if elapsed >= target_s / 4 or loops >= 10_000_000:
            break
        loops *= 4 if elapsed < target_s / 40 else 2
    return max(1, round(loops * target_s / max(elapsed, 1e-9)))


def measure_group(
    group: str,
    case: str,
    impls: dict[str, Callable[[], object]],
    repeats: int,
    target_s: float,
) -> list[Measurement]:
    """Time each implementation ``repeats`` times, interleaved."""
    results = [
        Measurement(group, case, name, _calibrate(fn, target_s)) for name, fn in impls.items()
    ]
    for _ in range(repeats):
        for result, fn in zip(results, impls.values(), strict=True):
            result.times_us.append(_time_loop(fn, result.loops) * 1e6)
        gc.collect()
    return results


async def _time_loop_async(fn: Callable[[], Awaitable[object]], loops: int) -> float:
    """Seconds per awaited call over ``loops`` calls, with the garbage collector off."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(loops):
            await fn()
        return (time.perf_counter() - start) / loops
    finally:
        if gc_was_enabled:
            gc.enable()


async def _timed(built: t.Built, loops: int) -> float:
    if built.awaitable:
        return await _time_loop_async(built.call, loops)
    return _time_loop(built.call, loops)


async def _calibrate_async(built: t.Built, target_s: float) -> int:
    """`_calibrate` for an implementation that may be awaited."""
    await _timed(built, 1)  # warm up
    loops = 1
    while True:
        elapsed = await _timed(built, loops) * loops
        if elapsed >= target_s / 4 or loops >= 10_000_000:
            break
        loops *= 4 if elapsed < target_s / 40 else 2
    return max(1, round(loops * target_s / max(elapsed, 1e-9)))


def measure_group_async(
    group: str,
    case: str,
    impls: dict[str, t.Built],
    repeats: int,
    target_s: float,
    *,
    around: Callable[[], AbstractAsyncContextManager[object]] | None = None,
) -> list[Measurement]:
    """`measure_group` inside one event loop: each implementation is awaited if it is async.

    Each implementation's context (if any) is entered once around the whole loop; ``around``
    (an async context, such as a store whose connections belong to the loop) is entered
    first, inside the loop, and left last.
    """

    async def main() -> list[Measurement]:
        async with AsyncExitStack() as outer:
            if around is not None:
                await outer.enter_async_context(around())
            return await measured()

    async def measured() -> list[Measurement]:
        with ExitStack() as stack:
            for built in impls.values():
                if built.context is not None:
                    stack.enter_context(built.context())
            results = [
                Measurement(group, case, name, await _calibrate_async(built, target_s))
                for name, built in impls.items()
            ]
            for _ in range(repeats):
                for result, built in zip(results, impls.values(), strict=True):
                    result.times_us.append(await _timed(built, result.loops) * 1e6)
                gc.collect()
        return results

    return anyio.run(main)


def measure_cases(
    group: str,
    impls: dict[tuple[str, str], Callable[[], object]],
    repeats: int,
    target_s: float,
) -> list[Measurement]:
    """`measure_group` over several cases at once, keyed by (case, implementation).

    Every implementation of every case is timed in turn within each repeat, so ratios between
    cases (a small registry against a large one) see the same drift of a noisy machine.
    """
    keyed = {f"{case}\x00{impl}": fn for (case, impl), fn in impls.items()}
    results = measure_group(group, "", keyed, repeats, target_s)
    for result in results:
        result.case, result.impl = result.impl.split("\x00")
    return results


def measure_fresh(
    group: str,
    case: str,
    impls: dict[str, Callable[[Callable[..., Any]], object]],
    factory: Callable[[], Callable[..., Any]],
    repeats: int,
    target_s: float,
) -> list[Measurement]:
    """Time one-shot work on fresh functions: each call gets a function never seen before.

    The functions (and their classes) are built before the clock starts; only the loop over
    them is timed.
    """

    def run_once(derive: Callable[[Callable[..., Any]], object], count: int) -> float:
        functions = [factory() for _ in range(count)]
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            for fn in functions:
                derive(fn)
            return (time.perf_counter() - start) / count
        finally:
            gc.enable()

    results: list[Measurement] = []
    for name, derive in impls.items():
        per_call = run_once(derive, 3)
        results.append(Measurement(group, case, name, max(3, round(target_s / per_call))))
    for _ in range(repeats):
        for result, derive in zip(results, impls.values(), strict=True):
            result.times_us.append(run_once(derive, result.loops) * 1e6)
    return results


# --- the benchmarks --------------------------------------------------------------------------


def bench_call(repeats: int, target_s: float) -> list[Measurement]:
    """Validate raw JSON into typed arguments and call the function: S1 to S5."""
    out: list[Measurement] = []
    builders = c.call_implementations()
    for case in c.CASES:
        fn = case.factory()
        raw = case.raw
        impls: dict[str, Callable[[], object]] = {}
        for name, build in builders.items():
            run = build(fn)
            impls[name] = _bind(run, raw)
        out += measure_group("call", case.name, impls, repeats, target_s)
    return out


def _bind(run: Callable[[bytes], object], raw: bytes) -> Callable[[], object]:
    return lambda: run(raw)


def bench_derive(repeats: int, target_s: float) -> list[Measurement]:
    """Derive a schema and a validator from a fresh function: S1 to S3."""
    out: list[Measurement] = []
    impls = c.derive_implementations()
    for case in c.CASES[:3]:
        out += measure_fresh("derive", case.name, impls, case.factory, repeats, target_s)
    return out


def bench_compile(repeats: int, target_s: float) -> list[Measurement]:
    """Compile a validator from S2's ready JSON Schema."""
    schema = c.derived_schema(c.CASES_BY_NAME["S2"])
    impls = {
        name: _bind_method(compile_, schema)
        for name, compile_ in c.compile_implementations().items()
    }
    if not impls:
        return []
    return measure_group("compile", "S2", impls, repeats, target_s)


def bench_mapping(repeats: int, target_s: float) -> list[Measurement]:
    """Validate an already parsed mapping against a JSON Schema: S1 to S5."""
    out: list[Measurement] = []
    for case in c.CASES:
        schema = c.derived_schema(case)
        validators = c.mapping_validators(schema)
        mapping = case.payload
        impls: dict[str, Callable[[], object]] = {}
        for name, validator in validators.items():
            if case.valid:
                impls[f"{name} is_valid"] = _bind_method(validator.is_valid, mapping)
                impls[f"{name} validate"] = _bind_method(validator.validate, mapping)
            else:
                impls[f"{name} is_valid"] = _bind_method(validator.is_valid, mapping)
                impls[f"{name} errors"] = _errors_of(name, validator, mapping)
        if impls:
            out += measure_group("mapping", case.name, impls, repeats, target_s)
    return out


def _bind_method(method: Callable[[Any], object], value: object) -> Callable[[], object]:
    return lambda: method(value)


def _errors_of(name: str, validator: Any, mapping: object) -> Callable[[], object]:
    if name == c.JSONSCHEMA_RS:
        return lambda: list(validator.iter_errors(mapping))
    return lambda: validator.errors(mapping)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]


async def _outcomes(impls: dict[str, t.Built]) -> dict[str, t.Outcome]:
    out: dict[str, t.Outcome] = {}
    for name, built in impls.items():
        with ExitStack() as stack:
            if built.context is not None:
                stack.enter_context(built.context())
            try:
                out[name] = await t.outcome(built)
            except Exception as exc:
                out[name] = t.Outcome(False, exc)
    return out


def _agrees(case: c.Case, name: str, outcome: t.Outcome) -> bool:
    """Valid payloads give the expected value; S5 is an error (except for the floor)."""
    if name == t.FLOOR:
        return outcome.ok
    if not case.valid:
        return not outcome.ok and not isinstance(outcome.value, Exception)
    return outcome.ok and outcome.value == t.EXPECTED[case.name]


def bench_tools(group: str, mode: t.Mode, repeats: int, target_s: float) -> list[Measurement]:
    """Raw JSON arguments to a tool result, S1 to S5, every implementation of one mode.

    A peer that is not installed, has no such mode, cannot express a case's signature, or
    disagrees with the case's validity (S1 to S4 valid, S5 an error) is left out of the timing
    with a note saying why.
    """
    out: list[Measurement] = []
    builders = t.implementations(mode)
    for name, builder in builders.items():
        if isinstance(builder, str):
            _note(group, "S1-S5", name, builder)
    for case in c.CASES:
        fn = t.make_function(case, is_async=mode == "async")
        raw = case.raw.decode()
        impls: dict[str, t.Built] = {}
        for name, builder in builders.items():
            if isinstance(builder, str):
                continue
            try:
                built = builder(fn, raw)
            except Exception as exc:
                _note(group, case.name, name, f"cannot express {case.name}: {_first_line(exc)}")
                continue
            if built.note:
                _note(group, case.name, name, built.note)
            impls[name] = built
        for name, outcome in anyio.run(_outcomes, impls).items():
            if not _agrees(case, name, outcome):
                _note(group, case.name, name, f"not timed, wrong outcome: {outcome!r:.160}")
                del impls[name]
        out += measure_group_async(group, case.name, impls, repeats, target_s)
    return out


def bench_tool_async(repeats: int, target_s: float) -> list[Measurement]:
    """Tool call with ``async def`` tools: S1 to S5."""
    return bench_tools("tool_async", "async", repeats, target_s)


def bench_tool_inline(repeats: int, target_s: float) -> list[Measurement]:
    """Tool call with sync tools run on the caller's thread: S1 to S5."""
    return bench_tools("tool_inline", "inline", repeats, target_s)


def bench_tool_thread(repeats: int, target_s: float) -> list[Measurement]:
    """Tool call with sync tools run on a worker thread: S1 to S5."""
    return bench_tools("tool_thread", "thread", repeats, target_s)


REGISTER_COUNT = 1000
REGISTER_CASE = "1,000 tools"
REGISTER_IMPL = "ferrotool tool(fn) + Toolkit.register"


def bench_tool_register(repeats: int, target_s: float) -> list[Measurement]:
    """Make 1,000 distinct functions tools and register them in a fresh `Toolkit`.

    The functions are built before the clock starts (new ones for every repeat); the timed
    section is ``Toolkit()`` plus ``register(tool(fn))`` for each, so derivation included. One
    repeat is one toolkit of 1,000; a first, untimed one warms up.
    """
    result = Measurement("tool_register", REGISTER_CASE, REGISTER_IMPL, REGISTER_COUNT)
    for repeat in range(repeats + 1):
        functions = t.distinct_functions(REGISTER_COUNT, tag=f"r{repeat}_")
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            toolkit = t.register_all(functions)
            elapsed = time.perf_counter() - start
        finally:
            gc.enable()
        assert len(toolkit) == REGISTER_COUNT
        if repeat:
            result.times_us.append(elapsed * 1e6)
    return [result]


SCHEMA_COUNT = 100
SCHEMA_CASE = "100 tools"


def bench_tool_schemas(repeats: int, target_s: float) -> list[Measurement]:
    """``toolkit.schemas("openai_chat")`` and ``schemas_json`` of 100 tools, from the cache."""
    if not t.HAS_PROVIDERS:
        _note(
            "tool_schemas",
            SCHEMA_CASE,
            "ferrotool",
            "skipped: ferrotool.providers (which Toolkit.schemas needs) is not there yet",
        )
        return []
    try:
        toolkit = t.schema_toolkit(SCHEMA_COUNT)
    except Exception as exc:
        _note("tool_schemas", SCHEMA_CASE, "ferrotool", f"skipped: {_first_line(exc)}")
        return []
    impls: dict[str, Callable[[], object]] = {
        'schemas("openai_chat")': functools.partial(toolkit.schemas, "openai_chat"),
        'schemas_json("openai_chat")': functools.partial(toolkit.schemas_json, "openai_chat"),
    }
    return measure_group("tool_schemas", SCHEMA_CASE, impls, repeats, target_s)


VIEW_IMPL = "view(state, config)"
VIEW_NAMES_IMPL = "view(state, config).names()"


def bench_view_build(repeats: int, target_s: float) -> list[Measurement]:
    """``registry.view(state, config)`` with 20 external tools over 10 to 100,000 backend tools.

    Each registry is `StubTool`\\ s (a prebuilt spec, no derivation) over ``basic`` and four
    groups, two of them active in the session; the 20 `SchemaOnlyTool`\\ s and the request
    config are built once. Both implementations of every size are interleaved in one
    measurement (`measure_cases`). Before timing, each view's names are checked.
    """
    state = v.view_state()
    config = v.request_config(v.external_tools())
    impls: dict[tuple[str, str], Callable[[], object]] = {}
    for size in v.BACKEND_SIZES:
        case = v.size_case(size)
        registry = v.backend_registry(size)
        names = registry.view(state, config).names()
        if names != v.expected_view_names(size):
            _note("view_build", case, VIEW_NAMES_IMPL, f"not timed, wrong names: {names[:8]!r}")
            continue
        impls[case, VIEW_IMPL] = functools.partial(registry.view, state, config)
        impls[case, VIEW_NAMES_IMPL] = _view_names(registry, state, config)
    return measure_cases("view_build", impls, repeats, target_s)


def _view_names(registry: Any, state: Any, config: Any) -> Callable[[], tuple[str, ...]]:
    view = registry.view
    return lambda: view(state, config).names()


SCHEMAS_WARM = f"{v.SCHEMA_VISIBLE} tools, warm"
SCHEMAS_COLD = f"{v.SCHEMA_VISIBLE} tools, first call"


def bench_view_schemas(repeats: int, target_s: float) -> list[Measurement]:
    """A view's ``openai_chat`` tool list for 100 visible tools (79 function tools in ``basic``
    and an active group, the meta tool, 20 external tools; 20 more in an inactive group).

    Warm: one view, its per-tool definitions cached by a first call. First call: each timed call
    is on a view of a fresh registry with fresh external tools (built before the clock), so
    every definition is built and the visible list computed (`measure_fresh`).
    """
    function_tools = v.schema_function_tools()
    registry = v.schema_registry(function_tools)
    state, config = v.schema_state(), v.request_config(v.external_tools())
    view = registry.view(state, config)
    tools = view.schemas(v.SCHEMA_FORMAT)  # the warm-up: every definition built and cached
    names = [tool["function"]["name"] for tool in tools]
    if names != v.expected_schema_names(function_tools):
        _note("view_schemas", SCHEMAS_WARM, "view", f"not timed, wrong tools: {names[:8]!r}")
        return []
    fmt = v.SCHEMA_FORMAT
    warm: dict[str, Callable[[], object]] = {
        f'schemas("{fmt}")': functools.partial(view.schemas, fmt),
        f'schemas_json("{fmt}")': functools.partial(view.schemas_json, fmt),
        f'view(state, config).schemas_json("{fmt}")': _view_schemas_json(
            registry, state, config, fmt
        ),
    }
    out = measure_group("view_schemas", SCHEMAS_WARM, warm, repeats, target_s)
    cold: dict[str, Callable[[Any], object]] = {
        f'schemas("{fmt}")': lambda fresh: fresh.schemas(fmt),
        f'schemas_json("{fmt}")': lambda fresh: fresh.schemas_json(fmt),
    }
    factory = functools.partial(v.fresh_schema_view, function_tools)
    out += measure_fresh("view_schemas", SCHEMAS_COLD, cold, factory, repeats, target_s)
    return out


def _view_schemas_json(registry: Any, state: Any, config: Any, fmt: Any) -> Callable[[], bytes]:
    view = registry.view
    return lambda: view(state, config).schemas_json(fmt)


RESET_ROUND_TRIP = "open_view + reset_tools"
RESET_STORE_ONLY = "store load + compare_and_set"
MEMORY_CASE = "InMemorySessionStore"
REDIS_CASE = "RedisSessionStore"


def bench_reset_tools(repeats: int, target_s: float) -> list[Measurement]:
    """A session's ``reset_tools`` round trip, per store: `ResetRoundTrip`.

    ``open_view`` loads the state and builds the view; ``reset_tools`` validates the JSON of
    booleans, loads the state again and writes it with compare-and-set, and answers. The store's
    own part (one load, one compare-and-set on a session of its own) is timed beside it. One
    event loop per store; the Redis store is opened inside it, its keys (under a prefix of this
    run) deleted and its client closed at the end. No Redis server: the case is skipped with a
    note (an error under ``FERROTOOL_REQUIRE_REDIS=1``).
    """
    registry = v.schema_registry(v.schema_function_tools())
    stores: list[tuple[str, v.StoreOpener]] = [(MEMORY_CASE, v.memory_store)]
    url = v.redis_url()
    problem = v.redis_problem(url)
    if problem is None:
        stores.append((REDIS_CASE, v.redis_store(url, v.redis_prefix())))
    elif v.redis_required():
        raise RuntimeError(f"FERROTOOL_REQUIRE_REDIS=1 but {problem}")
    else:
        _note("reset_tools", REDIS_CASE, RESET_ROUND_TRIP, f"skipped: {problem}")
    out: list[Measurement] = []
    for case, open_store in stores:
        trip = v.ResetRoundTrip(registry, open_store, f"s-{uuid.uuid4().hex[:12]}")
        problem = anyio.run(v.check_round_trip, trip)
        if problem is not None:
            _note("reset_tools", case, RESET_ROUND_TRIP, f"not timed, wrong outcome: {problem}")
            continue
        impls = {
            RESET_ROUND_TRIP: t.Built(trip.round_trip, True, _reset_outcome),
            RESET_STORE_ONLY: t.Built(trip.store_only, True, _reset_outcome),
        }
        out += measure_group_async(
            "reset_tools", case, impls, repeats, target_s, around=trip.opened
        )
    return out


def _reset_outcome(result: object) -> t.Outcome:
    return t.Outcome(result is not None, result)


# --- the execution engine (`benches.engine`) ------------------------------------------------


def _checked(group: str, case: str, impls: dict[str, t.Built]) -> dict[str, t.Built]:
    """The implementations whose one untimed run gave the expected results; a note for each
    of the others (left out of the timing)."""
    for name, outcome in anyio.run(_outcomes, impls).items():
        if not outcome.ok:
            _note(group, case, name, f"not timed, wrong outcome: {outcome!r:.160}")
            del impls[name]
    return impls


def bench_batch_wait(repeats: int, target_s: float) -> list[Measurement]:
    """``call_tools`` of 10 calls of a tool that sleeps 10 ms against one ``call_tool`` of it."""
    impls = _checked("batch_wait", e.WAIT_CASE, e.wait_implementations())
    return measure_group_async("batch_wait", e.WAIT_CASE, impls, repeats, target_s)


def bench_batch_overhead(repeats: int, target_s: float) -> list[Measurement]:
    """A batch of 100 trivial async tools: the floor, ferrotool's call_tools and its call_tool
    gathered, the peers' bare tool layers, and the three libraries' agent runs.

    Every run is interleaved in one measurement; the per-call overheads are derived from the
    medians (`engine.batch_overheads`). A peer that is not installed is left out with a note.
    """
    group, case = "batch_overhead", e.OVERHEAD_CASE
    impls, missing = e.overhead_implementations()
    for peer, why in missing.items():
        _note(group, case, peer, why)
    impls = _checked(group, case, impls)
    for layer, note in ((e.PAI_LAYER, e.PAI_LAYER_NOTE), (e.AGENTS_LAYER, e.AGENTS_LAYER_NOTE)):
        if layer in impls:
            _note(group, case, layer, note)
    for peer in (e.FERROTOOL, *e.LOOPS):
        if e.peer_run(peer, e.TOOLS_RUN) in impls:
            _note(group, case, e.peer_run(peer, e.TOOLS_RUN), e.SECOND_TURN_NOTE)
    if e.peer_run(e.AGENTS, e.TOOLS_RUN) in impls:
        _note(group, case, e.AGENTS, e.AGENTS_NOTE)
    return measure_group_async(group, case, impls, repeats, target_s)


def bench_batch_overhead_sync(repeats: int, target_s: float) -> list[Measurement]:
    """A batch of 100 trivial inline sync tools: call_tools, a loop of call_tool_sync, the floor."""
    group, case = "batch_overhead_sync", e.SYNC_CASE
    impls = _checked(group, case, e.sync_implementations())
    return measure_group_async(group, case, impls, repeats, target_s)


def bench_middleware_cost(repeats: int, target_s: float) -> list[Measurement]:
    """One plain async tool call: no middleware, a view, one pass-through middleware, tracing
    off and on."""
    group, case = "middleware_cost", e.MW_CASE
    impls, missing, exporter = e.middleware_implementations()
    problem = e.tracing_off_problem()
    if problem is not None and e.MW_TRACING_OFF in impls:
        _note(group, case, e.MW_TRACING_OFF, problem)
    for name, why in missing.items():
        _note(group, case, name, why)
    impls = _checked(group, case, impls)
    if e.MW_TRACING_ON in impls:
        _note(group, case, e.MW_TRACING_ON, e.TRACING_ON_NOTE)
    before = exporter.exported
    out = measure_group_async(group, case, impls, repeats, target_s)
    if e.MW_TRACING_ON in impls and exporter.exported == before:
        _note(group, case, e.MW_TRACING_ON, "no span reached the exporter while timed")
    return out


def bench_structured_output(repeats: int, target_s: float) -> list[Measurement]:
    """A tool with an output schema against the same tool as text only (`benches.structured`):
    a record, an ``int`` and a ``list[int]``, each sync (``call_tool_sync``) and async."""
    out: list[Measurement] = []
    for case in so.GROUP_CASES:
        impls = _checked("structured_output", case, so.implementations(case))
        out += measure_group_async("structured_output", case, impls, repeats, target_s)
    return out


def bench_approval_round_trip(repeats: int, target_s: float) -> list[Measurement]:
    """An approval's suspend and resume, per store: `engine.ApprovalRoundTrip`.

    One event loop per store, the store opened inside it (and its keys deleted at the end); no
    Redis server: that case is skipped with a note (an error under
    ``FERROTOOL_REQUIRE_REDIS=1``).
    """
    group = "approval_round_trip"
    stores: list[tuple[str, e.StoreOpener]] = [(MEMORY_CASE, e.memory_store)]
    url = v.redis_url()
    problem = v.redis_problem(url)
    if problem is None:
        stores.append((REDIS_CASE, e.redis_store(url, v.redis_prefix())))
    elif v.redis_required():
        raise RuntimeError(f"FERROTOOL_REQUIRE_REDIS=1 but {problem}")
    else:
        _note(group, REDIS_CASE, e.AP_ROUND_TRIP, f"skipped: {problem}")
    out: list[Measurement] = []
    for case, open_store in stores:
        trip = e.ApprovalRoundTrip(open_store, f"s-{uuid.uuid4().hex[:12]}")
        problem = anyio.run(e.check_approval, trip)
        if problem is not None:
            _note(group, case, e.AP_ROUND_TRIP, f"not timed, wrong outcome: {problem}")
            continue
        impls = {
            e.AP_ROUND_TRIP: t.Built(trip.round_trip, True, _resumed_outcome),
            e.AP_STORE_ONLY: t.Built(trip.store_only, True, _reset_outcome),
        }
        out += measure_group_async(group, case, impls, repeats, target_s, around=trip.opened)
    return out


def _resumed_outcome(batch: Any) -> t.Outcome:
    problem = e.round_trip_problem(batch)
    return t.Outcome(problem is None, problem or batch)


def _medians(results: list[Measurement], group: str, case: str) -> dict[str, float]:
    return {m.impl: m.median_us for m in results if (m.group, m.case) == (group, case)}


def derived(results: list[Measurement]) -> list[tuple[str, str, e.Derived]]:
    """The figures computed from several medians of one group: (group, case, figure)."""
    out: list[tuple[str, str, e.Derived]] = []
    for group, case, compute in (
        ("batch_overhead", e.OVERHEAD_CASE, e.batch_overheads),
        ("batch_overhead_sync", e.SYNC_CASE, e.sync_overheads),
        ("middleware_cost", e.MW_CASE, e.middleware_costs),
        ("durable", du.SQLITE, du.added),
        ("durable", du.POSTGRES, du.added),
    ):
        out += [(group, case, figure) for figure in compute(_medians(results, group, case))]
    return out


def _derived_lines(results: list[Measurement], group: str) -> list[str]:
    if group == "adapters":
        return [f"- {line}" for line in _per_call(list(_rows(results, group)))]
    if group == "sandbox":
        cost = sb.sandbox_cost(_medians(results, group, sb.CASE))
        if cost is None:
            return []
        extra, ratio = cost
        return [f"- the sandbox's cost per command: {_fmt_us(extra)} µs ({ratio:.2f}x the call)"]
    if group == "agent_loop":
        return [
            f"- {m.case}, {m.impl}: {m.median_us / ag.TURNS[m.case]:,.1f} µs per model turn"
            for m in _rows(results, group)
        ]
    if group == "durable":
        lines = []
        for case in (du.SQLITE, du.POSTGRES):
            medians = _medians(results, group, case)
            lines += [
                f"- {case}, added per call, {f.name}: {_fmt_us(f.value_us)} µs ({f.how})"
                for f in du.added(medians)
            ]
            lines += [
                f"- {case}, added per call, {name} ÷ {du.PAI_FIGURE}'s: {r:.2f}x"
                for name, r in du.ratios(medians).items()
            ]
        return lines
    figures = [figure for g, _, figure in derived(results) if g == group]
    if group in ("batch_overhead", "batch_overhead_sync"):
        lines = [
            f"- per-call overhead, {f.name}: {_fmt_us(f.value_us)} µs ({f.how})" for f in figures
        ]
        ratios: list[tuple[str, float | None]]
        if group == "batch_overhead_sync":
            medians = _medians(results, group, e.SYNC_CASE)
            ratios = [("call_tools ÷ the loop of call_tool_sync (time)", e.sync_ratio(medians))]
        else:
            ratios = [
                (
                    "call_tools' per-call overhead ÷ the gathered call_tool's",
                    e.gathered_ratio(figures),
                ),
                (
                    "call_tools ÷ the gathered call_tool (time)",
                    e.gathered_time_ratio(_medians(results, group, e.OVERHEAD_CASE)),
                ),
                ("faster peer's bare tool layer ÷ call_tools'", e.layer_ratio(figures)),
                ("faster peer's agent loop ÷ run_agent's", e.loop_ratio(figures)),
                (
                    "the same on the cross-check figures",
                    e.loop_ratio(figures, cross_check=True),
                ),
                ("faster peer's agent loop ÷ call_tools'", e.overhead_ratio(figures)),
                (
                    "the same on the peers' cross-check figures",
                    e.overhead_ratio(figures, cross_check=True),
                ),
            ]
        lines += [f"- {what}: {ratio:.2f}x" for what, ratio in ratios if ratio is not None]
        return lines
    return [f"- {f.name}: {f.value_us:+.3f} µs per call above the floor ({f.how})" for f in figures]


SKILL_CACHED = f"{sk.LOAD_SKILLS} skills, view cached"
SKILL_COLD = f"{sk.LOAD_SKILLS} skills, first request (view built)"
SKILL_LOAD_IMPL = "open_view + load_skill_through_path"
SKILL_FLOOR = "floor: read SKILL.md"
SKILL_VIEW_IMPL = "box(context).registry.view(state)"


def bench_skill_load(repeats: int, target_s: float) -> list[Measurement]:
    """A skill's ``SKILL.md`` loaded through a request's view (`benches.skills`)."""
    out: list[Measurement] = []
    with sk.work_dir() as work:
        trip = sk.LoadTrip(sk.registry(), work)
        if not sk.load_ok(anyio.run(trip.cached)) or not sk.load_ok(anyio.run(trip.cold)):
            _note("skill_load", SKILL_CACHED, SKILL_LOAD_IMPL, "not timed, wrong outcome")
            return out
        floor = trip.floor_path()
        read = t.Built(floor.read_text, False, _skill_outcome)
        for case, call in ((SKILL_CACHED, trip.cached), (SKILL_COLD, trip.cold)):
            impls = {SKILL_LOAD_IMPL: t.Built(call, True, _skill_outcome), SKILL_FLOOR: read}
            out += measure_group_async("skill_load", case, impls, repeats, target_s)
    return out


def _skill_outcome(result: object) -> t.Outcome:
    return t.Outcome(result is not None, result)


def bench_skill_views(repeats: int, target_s: float) -> list[Measurement]:
    """A request's view over 10 to 1,000 skills, its box cached (`benches.skills`)."""
    impls: dict[tuple[str, str], Callable[[], object]] = {}
    with sk.work_dir() as work:
        base = sk.registry()
        for size in sk.VIEW_SIZES:
            request = sk.ViewOverSkills(base, size, work)
            if not sk.view_ok(request.build(), size):
                _note("skill_views", sk.view_case(size), SKILL_VIEW_IMPL, "not timed, wrong view")
                continue
            impls[sk.view_case(size), SKILL_VIEW_IMPL] = request.build
        return measure_cases("skill_views", impls, repeats, target_s)


def bench_adapters(repeats: int, target_s: float) -> list[Measurement]:
    """Provider adapters: a turn's tool calls read, and its results written (`benches.adapters`).

    Each implementation is checked to give the turn's calls (or one message per result) before
    it is timed.
    """
    out: list[Measurement] = []
    for provider in ag.PROVIDERS:
        for count in ag.CALL_COUNTS:
            case = ag.case_name(provider, count)
            impls = ag.adapter_implementations(provider, count)
            for name, fn in list(impls.items()):
                made = list(fn())  # type: ignore[call-overload]
                calls_ok = name == ag.RESULTS or made == ag.expected_calls(count)
                if len(made) < count or not calls_ok:
                    _note("adapters", case, name, f"not timed, wrong output: {made!r:.160}")
                    del impls[name]
            out += measure_group("adapters", case, impls, repeats, target_s)
    return out


def bench_agent_loop(repeats: int, target_s: float) -> list[Measurement]:
    """One agent run: `run_agent` against pydantic-ai's ``Agent.run`` (`benches.adapters`)."""
    out: list[Measurement] = []
    for case in ag.LOOP_CASES:
        impls: dict[str, t.Built] = {}
        for name, loop in ag.loop_implementations(case).items():
            if isinstance(loop, str):
                _note("agent_loop", case, name, loop)
                continue
            impls[name] = t.Built(loop, True, _loop_outcome)
        for name, outcome in anyio.run(_outcomes, impls).items():
            if outcome != t.Outcome(True, "done"):
                _note("agent_loop", case, name, f"not timed, wrong outcome: {outcome!r:.160}")
                del impls[name]
        out += measure_group_async("agent_loop", case, impls, repeats, target_s)
    return out


def _loop_outcome(result: object) -> t.Outcome:
    return t.Outcome(result == "done", result)


def bench_sandbox(repeats: int, target_s: float) -> list[Measurement]:
    """A command's start-up with and without the shell's sandbox (`benches.sandbox`)."""
    problem = sb.problem()
    if problem is not None:
        for impl in (sb.BARE_SANDBOX, sb.TOOL_SANDBOXED):
            _note("sandbox", sb.CASE, impl, f"skipped: {problem}")
    with sb.work_dir() as work:
        impls = {
            name: t.Built(call, True, _sandbox_outcome)
            for name, call in sb.implementations(work).items()
        }
        for name, outcome in anyio.run(_outcomes, impls).items():
            if not outcome.ok:
                _note("sandbox", sb.CASE, name, f"not timed, wrong outcome: {outcome.value!r:.160}")
                del impls[name]
        return measure_group_async("sandbox", sb.CASE, impls, repeats, target_s)


def _sandbox_outcome(result: object) -> t.Outcome:
    return t.Outcome(sb.ok(result), result)


def bench_import_time(repeats: int, target_s: float) -> list[Measurement]:
    """``import ferrotool`` in a fresh interpreter, against its dependencies (`benches.imports`).

    One figure per interpreter (``loops`` is 1): ``repeats`` fresh interpreters per statement,
    interleaved; ``target_s`` does not apply.
    """
    times = im.measure(repeats)
    return [
        Measurement("import_time", im.CASE, name, 1, [t * 1e6 for t in seconds])
        for name, seconds in times.items()
    ]


def bench_tool_memory(repeats: int, target_s: float) -> list[Measurement]:
    """Bytes per registered tool, ferrotool against pydantic-ai and the floor (`benches.memory`).

    One slope per figure (``loops`` is 1; the figure is in bytes, not microseconds): traced
    allocations are the same run after run, so ``repeats`` does not apply. A quick run (repeats
    shorter than 10 ms) measures from 100 to 400 tools instead of 1,000 to 4,000.
    """
    del repeats
    counts = mem.QUICK_COUNTS if target_s < 0.01 else mem.COUNTS
    for impl in mem.IMPLS:
        problem = mem.available(impl)
        if problem is not None:
            _note("tool_memory", "all", impl, problem)
    return [
        Measurement("tool_memory", case, impl, 1, values)
        for (case, impl), values in mem.measure(counts=counts).items()
    ]


# --- report ----------------------------------------------------------------------------------


MCP_BARE = "mcp ClientSession.call_tool"
MCP_FERROTOOL = "ferrotool Toolkit.call_tool (McpClient)"
MCP_CLIENT_CASE = "add, stdio, one call after another"
MCP_SERVE_ONE = "ferrotool serve"
MCP_SERVE_TWO = "ferrotool serve, 2 workers"
MCP_SERVE_PEERS = {"sdk": "mcp MCPServer", "fastmcp": "FastMCP"}


def bench_mcp_client(repeats: int, target_s: float) -> list[Measurement]:
    """The MCP client's cost per call: ferrotool's against a bare SDK ``ClientSession``.

    Both call ``add`` on their own copy of one stdio server (the SDK's ``MCPServer``), one call
    after another; ferrotool's call validates the arguments, calls, and converts the result.
    """
    pair = mb.ClientPair()
    impls = {
        MCP_FERROTOOL: t.Built(pair.ferrotool, True, _text_outcome),
        MCP_BARE: t.Built(pair.bare, True, _text_outcome),
    }
    return measure_group_async(
        "mcp_client", MCP_CLIENT_CASE, impls, repeats, target_s, around=pair.opened
    )


def _text_outcome(result: object) -> t.Outcome:
    return t.Outcome(result == "3", result)


def bench_mcp_serve(repeats: int, target_s: float) -> list[Measurement]:
    """Servers over streamable HTTP on loopback: ``m.load`` against each, interleaved.

    A repeat's figure is microseconds per call at the load's throughput (1e6 / calls per
    second); each server's p50 and p99 latencies (medians over the repeats) are in the notes.
    ``ferrotool serve`` runs with one worker, and with two over a shared Redis store when a
    Redis server answers.
    """
    quick = target_s < 0.02
    calls, concurrency = (200, 20) if quick else (2000, 50)
    rounds = 1 if quick else min(repeats, 5)
    case = f"{calls} calls, concurrency {concurrency}"
    url = v.redis_url()
    problem = v.redis_problem(url)
    kinds: list[tuple[str, str, dict[str, Any]]] = [
        (MCP_SERVE_ONE, "ferrotool", {}),
        *((label, kind, {}) for kind, label in MCP_SERVE_PEERS.items()),
    ]
    if problem is None:
        kinds.append((MCP_SERVE_TWO, "ferrotool", {"workers": 2, "store": url}))
    else:
        _note("mcp_serve", case, MCP_SERVE_TWO, f"skipped: {problem}")
    results = [Measurement("mcp_serve", case, label, calls) for label, _, _ in kinds]
    p50: dict[str, list[float]] = {label: [] for label, _, _ in kinds}
    p99: dict[str, list[float]] = {label: [] for label, _, _ in kinds}
    with ExitStack() as stack:
        ports = [stack.enter_context(mb.server(kind, **options)) for _, kind, options in kinds]
        for port in ports:
            mb.run_load(port, min(calls, 100), concurrency)  # warm every worker
        for _ in range(rounds):
            for result, port in zip(results, ports, strict=True):
                run = mb.run_load(port, calls, concurrency)
                result.times_us.append(1e6 / run.throughput)
                p50[result.impl].append(run.percentile(0.5) * 1e3)
                p99[result.impl].append(run.percentile(0.99) * 1e3)
    for result in results:
        throughput = 1e6 / result.median_us
        _note(
            "mcp_serve",
            case,
            result.impl,
            f"{throughput:.0f} calls/s, p50 {statistics.median(p50[result.impl]):.1f} ms, "
            f"p99 {statistics.median(p99[result.impl]):.1f} ms",
        )
    return results


def bench_scale(repeats: int, target_s: float) -> list[Measurement]:
    """``ferrotool serve`` with 1 and 2 workers, each held to 0.4 CPU (`benches.scale`).

    A repeat's figure is microseconds per call at the load's throughput (1e6 / calls per
    second); the calls per second, the ratio against one worker and the CPU each server process
    got (medians over the repeats) are in the notes.
    """
    quick = target_s < 0.02
    calls = 400 if quick else 4000
    rounds = 1 if quick else min(repeats, 7)
    url = v.redis_url()
    problem = sc.cgroup_problem() or v.redis_problem(url)
    if problem is not None:
        print(f"scale: skipped: {problem}", file=sys.stderr, flush=True)
        for case in sc.CASES:
            for impl in sc.SETUPS:
                _note("scale", sc.case_name(case, calls), impl, f"skipped: {problem}")
        return []
    figures = sc.measure(url, rounds, calls)
    for line in sc.summary(figures):
        print(f"scale: {line}", file=sys.stderr, flush=True)
    results = []
    for (case, impl), figure in figures.items():
        name = sc.case_name(case, calls)
        results.append(
            Measurement("scale", name, impl, calls, [1e6 / run.throughput for run in figure.runs])
        )
        ratio = figure.throughput / figures[case, sc.ONE].throughput
        cpu = ", ".join(f"{value:.2f}" for value in figure.cpu)
        _note(
            "scale",
            name,
            impl,
            f"{figure.throughput:.0f} calls/s, {ratio:.2f}x one worker; CPU each process got"
            f" (of {sc.QUOTA:g}): {cpu}; {figure.per_cpu_second:.0f} calls per CPU second",
        )
    return results


def bench_durable(repeats: int, target_s: float) -> list[Measurement]:
    """A turn of 10 calls, plain and durable, on SQLite and on Postgres (`benches.durable`).

    DBOS is launched on each database in turn; every implementation is checked once on it (a
    durable one must record a step per call) before the case is timed. The Postgres case runs
    when ``FERROTOOL_POSTGRES_URL`` names a server, and is skipped with a note otherwise.
    """
    group = "durable"
    problem = du.problem()
    if problem is not None:
        _note(group, du.SQLITE, "all", problem)
        return []
    setup = du.setup()
    cases: list[tuple[str, str | None]] = [(du.SQLITE, None)]
    url = du.postgres_url()
    if url is None:
        _note(group, du.POSTGRES, "all", f"skipped: {du.POSTGRES_ENV} is not set")
    else:
        cases.append((du.POSTGRES, url))
    out: list[Measurement] = []
    for case, database_url in cases:
        with du.launched(database_url):
            impls = dict(setup.implementations)
            for name, why in anyio.run(du.check, impls).items():
                _note(group, case, name, why)
                del impls[name]
            out += measure_group_async(group, case, impls, repeats, target_s)
    _note(group, "all", du.PAI_DURABLE, du.MODEL_NOTE)
    return out


def _find(results: list[Measurement], group: str, case: str, impl: str) -> Measurement | None:
    for m in results:
        if (m.group, m.case, m.impl) == (group, case, impl):
            return m
    return None


def targets(results: list[Measurement]) -> list[Target]:
    """The spec's targets, evaluated on this run's medians."""
    out: list[Target] = []

    def ratio(group: str, case: str, num: str, den: str) -> float | None:
        a, b = _find(results, group, case, num), _find(results, group, case, den)
        if a is None or b is None:
            return None
        return a.median_us / b.median_us

    for case, limit in (("S1", 1.2), ("S2", 1.5), ("S3", 1.5), ("S4", 1.1), ("S5", 3.0)):
        r = ratio("call", case, c.FT_CALL, c.FLOOR)
        if r is not None:
            what = "full error list" if case == "S5" else "validate + call"
            out.append(Target(f"{case} {what}: call_json / floor", r, limit, False))
    for case in ("S1", "S2", "S3"):
        r = ratio("derive", case, c.PYDANTIC_DERIVE, c.FT_DERIVE)
        if r is not None:
            out.append(Target(f"{case} derive: pydantic / ferrotool", r, 10.0, True))
    r = ratio("compile", "S2", c.JSONSCHEMA_RS_COMPILE, c.FT_COMPILE)
    if r is not None:
        out.append(Target("S2 compile: jsonschema-rs / ferrotool", r, 2.0, True))
    for case in ("S1", "S2", "S3", "S4"):
        for method in ("is_valid", "validate"):
            r = ratio("mapping", case, f"{c.FT_COMPILE} {method}", f"{c.JSONSCHEMA_RS} {method}")
            if r is not None:
                out.append(
                    Target(f"{case} mapping {method}: ferrotool / jsonschema-rs", r, 1.0, False)
                )
    r = ratio("import_time", im.CASE, im.FERROTOOL, im.FLOOR)
    if r is not None:
        out.append(Target("import ferrotool / its dependencies' import", r, im.TARGET, False))
    r = ratio("tool_async", "S1", t.FT_TOOL, t.PYDANTIC_AI)
    if r is not None:
        out.append(Target("S1 async tool call: ferrotool / pydantic-ai", r, 1.2, False))
    # mcp's target is against ``Tool.run`` as its server runs it (``convert_result=True``): the
    # configuration the target's own figure (about 32 us) describes, and the one that ends, like
    # `call_tool`, in a result the model is shown. The bare ``run`` returns the function's value
    # unconverted; its ratio is in the table.
    for peer, label, limit in (
        (t.AGENTS, "openai-agents", 5.0),
        (t.MCP_CONVERT, "mcp Tool.run + convert_result", 10.0),
    ):
        r = ratio("tool_async", "S1", peer, t.FT_TOOL)
        if r is not None:
            out.append(Target(f"S1 async tool call: {label} / ferrotool", r, limit, True))
    for case in ("S1", "S2", "S3", "S4"):
        r = ratio("tool_inline", case, t.FT_TOOL, t.FLOOR)
        if r is not None:
            out.append(Target(f"{case} inline sync tool call: ferrotool / floor", r, 1.5, False))
        r = ratio("tool_inline", case, t.FT_TOOL_SYNC, t.FT_DIRECT_RUN)
        if r is not None:
            limit = 1.1 if case == "S4" else 1.5
            out.append(Target(f"{case} call_tool_sync / its DirectCall.run", r, limit, False))
    for case in so.GROUP_CASES:
        r = ratio("structured_output", case, so.STRUCTURED, so.TEXT)
        if r is not None:
            out.append(Target(f"structured output, {case}: structured / text only", r, 1.15, False))
    for case in mem.CASES:
        r = ratio("tool_memory", case, mem.FERROTOOL, mem.PYDANTIC_AI)
        if r is not None:
            out.append(Target(f"memory per tool, {case}: ferrotool / pydantic-ai", r, 1.0, False))
    r = ratio("mcp_client", MCP_CLIENT_CASE, MCP_FERROTOOL, MCP_BARE)
    if r is not None:
        out.append(Target("MCP client per call: ferrotool / bare ClientSession", r, 1.2, False))
    serve = [m_ for m_ in results if m_.group == "mcp_serve"]
    ours = next((m_ for m_ in serve if m_.impl == MCP_SERVE_ONE), None)
    peers = [m_ for m_ in serve if m_.impl in MCP_SERVE_PEERS.values()]
    if ours is not None and peers:
        fastest = min(peer.median_us for peer in peers)
        out.append(
            Target(
                "MCP serve throughput: ferrotool / faster peer", fastest / ours.median_us, 2.0, True
            )
        )
    two = next((m_ for m_ in serve if m_.impl == MCP_SERVE_TWO), None)
    if ours is not None and two is not None:
        out.append(
            Target(
                "MCP serve throughput: 2 workers / 1 worker",
                ours.median_us / two.median_us,
                1.8,
                True,
            )
        )
    for provider in ag.PROVIDERS:
        count = ag.CALL_COUNTS[-1]
        case = ag.case_name(provider, count)
        for impl, what in ((ag.FROM_SDK, "per call"), (ag.RESULTS, "per result")):
            m = _find(results, "adapters", case, impl)
            if m is not None:
                name = f"{provider} {impl} {what} ({count} a turn)"
                out.append(Target(name, m.median_us / count, 2.0, False, unit=" µs"))
    for case in ag.LOOP_CASES:
        r = ratio("agent_loop", case, ag.PAI_LOOP, ag.FT_LOOP)
        if r is not None:
            out.append(Target(f"agent run, {case}: pydantic-ai / ferrotool", r, 3.0, True))
    small, large = v.size_case(v.BACKEND_SIZES[0]), v.size_case(v.BACKEND_SIZES[-1])
    # The target is on building the view; listing its names is O(visible tools) by nature
    # (60,000 of them at 100,000), so that row is measured but not a target.
    a, b = (
        _find(results, "view_build", large, VIEW_IMPL),
        _find(results, "view_build", small, VIEW_IMPL),
    )
    if a is not None and b is not None:
        out.append(Target(f"{VIEW_IMPL}: {large} / {small}", a.median_us / b.median_us, 1.5, False))
    r = ratio("batch_wait", e.WAIT_CASE, e.WAIT_BATCH, e.WAIT_ONE)
    if r is not None:
        out.append(
            Target("batch of 10 async 10 ms waits: call_tools / one call_tool", r, 1.3, False)
        )
    figures = e.batch_overheads(_medians(results, "batch_overhead", e.OVERHEAD_CASE))
    batch = "batch of 100 trivial async tools, overhead per call"
    for name, r, limit, higher in (
        (f"{batch}: faster peer / ferrotool", e.overhead_ratio(figures), 3.0, True),
        (f"{batch}: call_tools / gathered call_tool", e.gathered_ratio(figures), 1.3, False),
        (f"{batch}: faster peer's bare tool layer / call_tools", e.layer_ratio(figures), 2.0, True),
        (f"{batch}: faster peer's agent loop / run_agent", e.loop_ratio(figures), 5.0, True),
    ):
        if r is not None:
            out.append(Target(name, r, limit, higher))
    r = e.sync_ratio(_medians(results, "batch_overhead_sync", e.SYNC_CASE))
    if r is not None:
        name = "batch of 100 trivial inline sync tools: call_tools / loop of call_tool_sync"
        out.append(Target(name, r, 1.5, False))
    # The "middleware and tracing-off cost under 10% of the direct call" is evaluated as
    # the cost a toolkit without middleware pays for the hook: its call_tool against the same
    # tool's bare Rust DirectCall (an upper bound: the name lookup and dispatch are in it too).
    # A Python middleware layer, tracing off or on, is reported per call in the group's table.
    r = ratio("middleware_cost", e.MW_CASE, e.MW_FLOOR, e.MW_BARE)
    if r is not None:
        out.append(
            Target(
                "no middleware: Toolkit.call_tool / bare Rust DirectCall (hook's cost, bound)",
                r,
                1.1,
                False,
            )
        )
    for m_ in results:
        if m_.group == "scale" and m_.impl == sc.TWO:
            r = ratio("scale", m_.case, sc.ONE, sc.TWO)
            if r is not None:
                case = m_.case.split(",")[0]
                name = f"scale, {case}: 2 workers / 1 worker, {sc.QUOTA:g} CPU each"
                out.append(Target(name, r, 1.8, True))
    for case in (du.SQLITE, du.POSTGRES):
        durable_ratios = du.ratios(_medians(results, "durable", case))
        for figure in du.TARGETS:
            r = durable_ratios.get(figure)
            if r is not None:
                name = f"durable, {case}: cost added per call, {figure} / {du.PAI_FIGURE}"
                out.append(Target(name, r, 1.0, False))
    medians = _medians(results, "middleware_cost", e.MW_CASE)
    r = e.layer_cost_ratio(medians)
    if r is not None:
        name = "one pass-through middleware's cost / a hand-written coroutine layer's"
        out.append(Target(name, r, 1.5, False))
    r = ratio("middleware_cost", e.MW_CASE, e.MW_TRACING_OFF, e.MW_FLOOR)
    if r is not None:
        out.append(Target("Tracing() off: Toolkit.call_tool / no middleware", r, 1.1, False))
    r = ratio("middleware_cost", e.MW_CASE, e.MW_TRACING_ON, e.MW_HAND_SPAN)
    if r is not None:
        name = "Tracing() on / OpenTelemetry's own span in a hand-made layer"
        out.append(Target(name, r, 1.2, False))
    few, many = sk.view_case(sk.VIEW_SIZES[0]), sk.view_case(sk.VIEW_SIZES[-1])
    a = _find(results, "skill_views", many, SKILL_VIEW_IMPL)
    b = _find(results, "skill_views", few, SKILL_VIEW_IMPL)
    if a is not None and b is not None:
        name = f"skill view: {many} / {few}"
        out.append(Target(name, a.median_us / b.median_us, 1.5, False))
    return out


def machine() -> dict[str, str]:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for module in ("ferrotool", "pydantic", "msgspec", "jsonschema_rs", "orjson"):
        try:
            versions[module] = __import__(module).__version__
        except (ImportError, AttributeError):
            from importlib import metadata

            try:
                versions[module] = metadata.version(module.replace("_", "-"))
            except metadata.PackageNotFoundError:
                versions[module] = "not installed"
    from importlib import metadata

    for dist in (
        "pydantic-ai-slim",
        "openai-agents",
        "mcp",
        "langchain-core",
        "anyio",
        "opentelemetry-sdk",
        "redis",
    ):
        try:
            versions[dist.replace("-", "_")] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist.replace("-", "_")] = "not installed"
    core = Path(sys.modules["ferrotool._core"].__file__ or "")
    return {
        "ferrotool_path": str(core.parent),
        "cpus": str(os.cpu_count()),
        "core_extension_bytes": str(core.stat().st_size) if core.is_file() else "?",
        "cpu_model": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        **{f"version_{k}": v for k, v in versions.items()},
    }


def _fmt_us(us: float) -> str:
    if us >= 100:
        return f"{us:,.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def _rows(results: list[Measurement], group: str) -> Iterator[Measurement]:
    return (m for m in results if m.group == group)


GROUP_TITLES = {
    "call": (
        "Validate raw JSON into typed arguments and call the function",
        c.FLOOR,
        c.FT_CALL,
    ),
    "derive": ("Derive schema and validator from a fresh function", None, c.FT_DERIVE),
    "compile": ("Compile a validator from S2's ready JSON Schema", None, c.FT_COMPILE),
    "mapping": ("Validate a parsed mapping against a JSON Schema", None, None),
    "tool_async": (
        "Tool call, async tools: raw JSON arguments to a result",
        t.FLOOR,
        t.FT_TOOL,
    ),
    "tool_inline": (
        "Tool call, sync tools on the caller's thread: raw JSON arguments to a result",
        t.FLOOR,
        t.FT_TOOL,
    ),
    "tool_thread": (
        "Tool call, sync tools on a worker thread: raw JSON arguments to a result",
        t.FLOOR,
        t.FT_TOOL,
    ),
    "tool_register": (
        "Register 1,000 distinct tools in a fresh Toolkit (derivation + registration)",
        None,
        None,
    ),
    "tool_schemas": ("Provider tool list of 100 registered tools, from the cache", None, None),
    "tool_memory": (
        "Memory per registered tool: traced bytes, slope from 1,000 to 4,000 tools",
        None,
        mem.FERROTOOL,
    ),
    "view_build": (
        "Request view with 20 external tools over a registry of 10 to 100,000 tools",
        None,
        None,
    ),
    "view_schemas": ("A request view's provider tool list, 100 visible tools", None, None),
    "reset_tools": (
        "Session round trip: open_view from the store, then reset_tools",
        None,
        None,
    ),
    "batch_wait": (
        "Batch of 10 async tools that each wait 10 ms, against one call",
        e.WAIT_ONE,
        None,
    ),
    "batch_overhead": (
        "Batch of 100 trivial async tools: raw JSON arguments to results, per-call overhead",
        e.OV_FLOOR,
        None,
    ),
    "batch_overhead_sync": (
        "Batch of 100 trivial inline sync tools: raw JSON arguments to results",
        e.SYNC_FLOOR,
        e.SYNC_FT,
    ),
    "middleware_cost": (
        "One plain async tool call: middleware and tracing against the direct call",
        e.MW_FLOOR,
        None,
    ),
    "structured_output": (
        "One tool call with an output schema (structured) against the same tool as text only",
        so.TEXT,
        None,
    ),
    "approval_round_trip": (
        "Approval round trip: a batch that asks, then resume with the approval",
        None,
        None,
    ),
    "skill_load": ("Skill load through a request's view", SKILL_FLOOR, None),
    "skill_views": ("A request's view over 10 to 1,000 skills, its box cached", None, None),
    "mcp_client": ("MCP client: one tool call over stdio, per call", MCP_BARE, MCP_FERROTOOL),
    "mcp_serve": (
        "MCP servers over streamable HTTP on loopback: microseconds per call at full load",
        None,
        None,
    ),
    "scale": (
        "ferrotool serve scale-out, each server process held to 0.4 CPU: µs per call at full load",
        sc.ONE,
        None,
    ),
    "adapters": ("Provider adapters: a turn's tool calls in, its results out", ag.FLOOR, None),
    "agent_loop": ("One agent run: model turns around the tool calls", None, ag.FT_LOOP),
    "sandbox": ("A command's start-up: plain spawn, the shell tool, the sandbox", sb.FLOOR, None),
    "import_time": ("Import in a fresh interpreter, against the dependencies", im.FLOOR, None),
    "durable": (
        "A turn of 10 trivial tool calls, plain and durable (each call a recorded DBOS step)",
        None,
        None,
    ),
}
# The figure's column header where it is not a time.
FIGURE_LABELS = {"tool_memory": "bytes per tool"}
# The base column's header where the base is not a floor.
BASE_LABELS = {
    "batch_wait": "x one call",
    "structured_output": "x text only",
    "scale": "x 1 worker's time",
}
# Groups whose ratio column is this median over ferrotool's (how many times slower a peer is),
# rather than ferrotool's over this one.
PEER_OVER_OURS = {"tool_async", "tool_inline", "tool_thread", "agent_loop"}


def markdown(results: list[Measurement], info: dict[str, str], repeats: int) -> str:
    """The results as Markdown tables."""
    lines: list[str] = []
    for group, (title, base, ours) in GROUP_TITLES.items():
        rows = list(_rows(results, group))
        notes = [n for n in NOTES if n.group == group]
        if not rows and not notes:
            continue
        lines += [f"### {title}", ""]
        header = ["case", "implementation", FIGURE_LABELS.get(group, "median µs"), "IQR"]
        if base:
            header.append(BASE_LABELS.get(group, "x floor"))
        if ours:
            header.append("x ferrotool" if group in PEER_OVER_OURS else "ferrotool ÷ this")
        if group == "mapping":
            header.append("ferrotool ÷ jsonschema-rs")
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|")
        for m in rows:
            cells = [m.case, m.impl, _fmt_us(m.median_us), f"{m.spread:.0%}"]
            if base:
                b = _find(results, group, m.case, base)
                cells.append(f"{m.median_us / b.median_us:.2f}" if b else "")
            if ours:
                o = _find(results, group, m.case, ours)
                if o is None:
                    cells.append("")
                elif group in PEER_OVER_OURS:
                    cells.append(f"{m.median_us / o.median_us:.2f}")
                else:
                    cells.append(f"{o.median_us / m.median_us:.2f}")
            if group == "mapping":
                cells.append(_mapping_ratio(results, m))
            lines.append("| " + " | ".join(cells) + " |")
        if not rows:
            lines.pop()
            lines.pop()
        lines.append("")
        if group == "tool_register":
            lines += [
                f"- {m.impl}: {m.median_us / m.loops:.1f} µs per tool ({m.loops:,} per toolkit)"
                for m in rows
            ]
        extra = _derived_lines(results, group)
        lines += extra
        lines += [f"- {n.case} {n.impl}: {n.text}" for n in notes]
        if notes or extra or group == "tool_register":
            lines.append("")
    checked = targets(results)
    if checked:
        lines += [
            "### Targets",
            "",
            "| target | measured | asked | verdict |",
            "|---|---:|---:|---|",
        ]
        for target in checked:
            sign = "≥" if target.higher_is_better else "≤"
            unit = target.unit
            lines.append(
                f"| {target.name} | {target.measured:.2f}{unit} | {sign} {target.limit:g}{unit} "
                f"| {target.verdict()} |"
            )
        lines.append("")
    lines.append(
        f"Medians of {repeats} repeats (IQR: interquartile range of the repeats, relative to "
        f"the median); {info['cpus']} CPUs, {info['cpu_model']}, Python {info['python']}."
    )
    return "\n".join(lines) + "\n"


def _per_call(rows: list[Measurement]) -> list[str]:
    """The adapters' cost per call (or per result) in the largest turn measured."""
    count = ag.CALL_COUNTS[-1]
    return [
        f"{m.case}, {m.impl}: {m.median_us / count:.2f} µs per "
        f"{'result' if m.impl == ag.RESULTS else 'call'}"
        for m in rows
        if m.case.endswith(f"{count} calls")
    ]


def _mapping_ratio(results: list[Measurement], m: Measurement) -> str:
    if not m.impl.startswith(c.FT_COMPILE):
        return ""
    method = m.impl.rsplit(" ", 1)[1]
    peer = _find(results, "mapping", m.case, f"{c.JSONSCHEMA_RS} {method}")
    return f"{m.median_us / peer.median_us:.2f}" if peer else ""


# --- main ------------------------------------------------------------------------------------

BENCHES: dict[str, Callable[[int, float], list[Measurement]]] = {
    "call": bench_call,
    "derive": bench_derive,
    "compile": bench_compile,
    "mapping": bench_mapping,
    "tool_async": bench_tool_async,
    "tool_inline": bench_tool_inline,
    "tool_thread": bench_tool_thread,
    "tool_register": bench_tool_register,
    "tool_schemas": bench_tool_schemas,
    "tool_memory": bench_tool_memory,
    "view_build": bench_view_build,
    "view_schemas": bench_view_schemas,
    "reset_tools": bench_reset_tools,
    "batch_wait": bench_batch_wait,
    "batch_overhead": bench_batch_overhead,
    "batch_overhead_sync": bench_batch_overhead_sync,
    "middleware_cost": bench_middleware_cost,
    "structured_output": bench_structured_output,
    "approval_round_trip": bench_approval_round_trip,
    "skill_load": bench_skill_load,
    "skill_views": bench_skill_views,
    "mcp_client": bench_mcp_client,
    "mcp_serve": bench_mcp_serve,
    "scale": bench_scale,
    "adapters": bench_adapters,
    "agent_loop": bench_agent_loop,
    "sandbox": bench_sandbox,
    "import_time": bench_import_time,
    "durable": bench_durable,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 short repeats: a smoke test")
    parser.add_argument("--repeats", type=int, help="repeats per measurement (default 15)")
    parser.add_argument("--target-ms", type=float, help="length of one repeat (default 40 ms)")
    parser.add_argument("--only", choices=sorted(BENCHES), action="append", help="run a group")
    parser.add_argument("--markdown", type=Path, help="also write the Markdown table here")
    parser.add_argument(
        "--json",
        type=Path,
        help="where to write the results (default benches/results.json; none with --quick)",
    )
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 15)
    target_s = (args.target_ms or (5.0 if args.quick else 40.0)) / 1000

    if not c.HAS_JSONSCHEMA_VALIDATOR:
        print("ferrotool.JsonSchemaValidator is not available: compile and mapping skip it.")
    NOTES.clear()
    info = machine()  # before the run: another build may replace the extension's file meanwhile
    results: list[Measurement] = []
    started = time.perf_counter()
    for name in args.only or list(BENCHES):
        print(f"running {name}...", file=sys.stderr, flush=True)
        results += BENCHES[name](repeats, target_s)
    elapsed = time.perf_counter() - started

    if info["core_extension_bytes"].isdigit() and int(info["core_extension_bytes"]) > 16 << 20:
        print("warning: ferrotool._core looks like a debug build; rebuild with --release.")
    table = markdown(results, info, repeats)
    print(table)
    print(f"({elapsed:.0f} s)", file=sys.stderr)
    document = {
        "machine": info,
        "repeats": repeats,
        "target_ms": target_s * 1000,
        "elapsed_s": round(elapsed, 1),
        "results": [
            {**asdict(m), "median_us": m.median_us, "min_us": m.min_us, "iqr_fraction": m.spread}
            for m in results
        ],
        "targets": [{**asdict(target), "met": target.met} for target in targets(results)],
        "derived": [
            {"group": group, "case": case, **figure._asdict()}
            for group, case, figure in derived(results)
        ],
        "notes": [asdict(note) for note in NOTES],
    }
    json_path = args.json or (None if args.quick else HERE / "results.json")
    if json_path:
        json_path.write_text(json.dumps(document, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
