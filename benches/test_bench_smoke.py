"""Each benchmark case runs once per implementation, and every result is checked.

So that no benchmark silently measures a failing path: every peer accepts S1 to S4 and returns
the function's result, rejects S5 with the error at ``items[2].qty``, and the typed peers build
real records. The tool-call peers (`benches.tools`) agree with ferrotool on S1 to S5: the same
value for S1 to S4, an error (and no call) for S5, in every mode. No timing here.
"""

from __future__ import annotations

import datetime as dt
import enum
import importlib.util
import inspect
import logging
from collections.abc import Callable
from typing import Any

import anyio
import orjson
import pytest

import ferrotool
from benches import adapters as ag
from benches import agent_loops as al
from benches import cases as c
from benches import engine as e
from benches import imports as im
from benches import mcp_bench as mb
from benches import memory as mem
from benches import run
from benches import sandbox as sb
from benches import scale as sc
from benches import skills as sk
from benches import structured as so
from benches import tools as t
from benches import views as v

VALID = [case for case in c.CASES if case.valid]
EXPECTED_RESULT = {"S1": "Paris", "S2": 3, "S3": "nightly-report", "S4": 200}
TYPED = (c.FT_CALL, c.FT_VALIDATE, c.PYDANTIC, c.MSGSPEC)

_builders = c.call_implementations()


def _spy(case: c.Case) -> tuple[Callable[..., Any], list[dict[str, Any]]]:
    """The case's function, wrapped (signature kept) to record the arguments it receives."""
    fn = case.factory()
    seen: list[dict[str, Any]] = []

    def record(**kwargs: Any) -> Any:
        seen.append(kwargs)
        return fn(**kwargs)

    # Keep the original signature and annotations so every library derives the same schema.
    record.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    record.__annotations__ = fn.__annotations__
    record.__name__ = fn.__name__
    record.__qualname__ = fn.__qualname__
    record.__doc__ = fn.__doc__
    return record, seen


def test_payloads_match_the_spec() -> None:
    assert len(c.S2_PAYLOAD["items"]) == 3
    assert len(c.S4_PAYLOAD["items"]) == 200
    assert c.S5_PAYLOAD["items"][2]["qty"] == "three"
    assert c.S2_PAYLOAD["items"][2]["qty"] != "three"
    assert len(c.S3_PAYLOAD) == 12
    for case in c.CASES:
        fn = case.factory()
        params = inspect.signature(fn).parameters
        assert set(case.payload) == set(params), case.name  # every field present


@pytest.mark.parametrize("impl", list(_builders))
@pytest.mark.parametrize("case", VALID, ids=lambda case: case.name)
def test_valid_payload_calls_the_function(case: c.Case, impl: str) -> None:
    fn, seen = _spy(case)
    result = _builders[impl](fn)(case.raw)
    assert result == EXPECTED_RESULT[case.name]
    assert len(seen) == 1
    kwargs = seen[0]
    assert set(kwargs) == set(case.payload)
    if impl in TYPED and case.name in ("S2", "S4"):
        assert c.is_dataclass_instance(kwargs["customer"])
        assert all(c.is_dataclass_instance(item) for item in kwargs["items"])
        assert kwargs["items"][2].qty == case.payload["items"][2]["qty"]
    if impl == c.MSGSPEC_STRUCT and case.name in ("S2", "S4"):
        import msgspec

        assert isinstance(kwargs["customer"], msgspec.Struct)
        assert all(isinstance(item, msgspec.Struct) for item in kwargs["items"])
        assert kwargs["items"][2].qty == case.payload["items"][2]["qty"]
    if impl in TYPED and case.name == "S3":
        assert isinstance(kwargs["start_at"], dt.datetime)
        assert isinstance(kwargs["priority"], enum.Enum)
        assert kwargs["priority"].value == "high"


@pytest.mark.parametrize("impl", [name for name in _builders if name != c.FLOOR])
def test_s5_is_rejected_with_its_errors(impl: str) -> None:
    case = c.CASES_BY_NAME["S5"]
    fn, seen = _spy(case)
    errors = _builders[impl](fn)(case.raw)
    assert seen == []  # the function is never called
    assert isinstance(errors, (list, tuple))
    assert len(errors) == 1
    text = repr(errors[0]) + str(errors[0])
    if impl.startswith("ferrotool"):
        assert errors[0].path == ("items", 2, "qty")
    elif impl == c.PYDANTIC:
        assert errors[0]["loc"] == ("items", 2, "qty")
    else:
        assert "three" in text or "items" in text


def test_floor_does_not_validate() -> None:
    case = c.CASES_BY_NAME["S5"]
    assert c.floor(case.factory())(case.raw) == 3


@pytest.mark.parametrize("derive", list(c.derive_implementations()))
@pytest.mark.parametrize("case", c.CASES[:3], ids=lambda case: case.name)
def test_derive_on_a_fresh_function(case: c.Case, derive: str) -> None:
    first, second = case.factory(), case.factory()
    assert first is not second
    assert first.__annotations__ != second.__annotations__ or case.name == "S1"
    result = c.derive_implementations()[derive](first)
    assert result is not None


@pytest.mark.skipif(not c.HAS_JSONSCHEMA_VALIDATOR, reason="JsonSchemaValidator not available")
@pytest.mark.parametrize("case", c.CASES, ids=lambda case: case.name)
def test_mapping_validators_agree(case: c.Case) -> None:
    schema = c.derived_schema(case)
    validators = c.mapping_validators(schema)
    assert validators
    for name, validator in validators.items():
        assert validator.is_valid(case.payload) is case.valid, name
        if case.valid:
            validator.validate(case.payload)
        else:
            errors = run._errors_of(name, validator, case.payload)()
            assert len(errors) == 1, name  # type: ignore[arg-type]


@pytest.mark.parametrize("compile_", list(c.compile_implementations()))
def test_compile_s2_schema(compile_: str) -> None:
    schema = c.derived_schema(c.CASES_BY_NAME["S2"])
    validator: Any = c.compile_implementations()[compile_](schema)
    assert validator.is_valid(c.S2_PAYLOAD)
    assert not validator.is_valid(c.S5_PAYLOAD)


_TOOL_BUILDERS = {mode: t.implementations(mode) for mode in t.MODES}
_TOOL_IMPLS = [(mode, name) for mode, builders in _TOOL_BUILDERS.items() for name in builders]
_PEER_MODULES = {
    t.PYDANTIC_AI: "pydantic_ai",
    t.AGENTS: "agents",
    t.MCP: "mcp",
    t.MCP_CONVERT: "mcp",
    t.LANGCHAIN: "langchain_core",
}


def _builder(mode: t.Mode, impl: str) -> t.Builder:
    builder = _TOOL_BUILDERS[mode][impl]
    if isinstance(builder, str):
        module = _PEER_MODULES.get(impl)
        # A peer that is not installed, or has no such mode, is skipped (the run says so too);
        # one that is installed but cannot be driven is a failure.
        if builder.startswith("not applicable") or (
            module is not None and importlib.util.find_spec(module) is None
        ):
            pytest.skip(builder)
        pytest.fail(builder)
    return builder


async def _outcome(built: t.Built) -> t.Outcome:
    if built.context is None:
        return await t.outcome(built)
    with built.context():
        return await t.outcome(built)


@pytest.mark.parametrize("case", c.CASES, ids=lambda case: case.name)
@pytest.mark.parametrize(("mode", "impl"), _TOOL_IMPLS, ids=lambda v: str(v).replace(" ", "-"))
def test_tool_call_agrees_with_ferrotool(mode: t.Mode, impl: str, case: c.Case) -> None:
    builder = _builder(mode, impl)
    seen: list[dict[str, Any]] = []
    fn = t.make_function(case, is_async=mode == "async", record=seen.append)
    assert inspect.iscoroutinefunction(fn) is (mode == "async")
    built = builder(fn, case.raw.decode())
    outcome = anyio.run(_outcome, built)
    if impl == t.FLOOR:  # no validation: S5 is called too
        assert outcome.ok, outcome
        assert len(seen) == 1
        return
    if case.valid:
        assert outcome == t.Outcome(True, t.EXPECTED[case.name])
        assert len(seen) == 1
        assert set(seen[0]) == set(case.payload)
        assert t.records_built(seen[0], case), seen[0]
    else:
        assert not outcome.ok, outcome
        assert seen == []  # rejected before the call
        assert "qty" in str(outcome.value) or impl == t.AGENTS  # agents: a fixed error text


@pytest.mark.parametrize(("mode", "impl"), _TOOL_IMPLS, ids=lambda v: str(v).replace(" ", "-"))
def test_building_an_implementation_leaves_the_root_logger_as_it_was(
    mode: t.Mode, impl: str
) -> None:
    """A peer that configures the process's logging would make ferrotool's records of invalid
    calls print during the runs measured after it (the S5 rows)."""
    builder = _builder(mode, impl)
    root = logging.getLogger()
    kept = root.level, list(root.handlers)
    # The root logger of a process that configured no logging (pytest adds handlers of its own,
    # which would make `logging.basicConfig` a no-op).
    root.handlers.clear()
    root.setLevel(logging.WARNING)
    try:
        case = c.CASES_BY_NAME["S5"]
        builder(t.make_function(case, is_async=mode == "async"), case.raw.decode())
        assert (root.level, root.handlers) == (logging.WARNING, [])
    finally:
        root.setLevel(kept[0])
        root.handlers[:] = kept[1]


def test_ferrotool_s5_result_names_the_error() -> None:
    case = c.CASES_BY_NAME["S5"]
    built = t.ferrotool_tool("async")(t.make_function(case, is_async=True), case.raw.decode())
    result = anyio.run(built.call)
    assert result.state is ferrotool.ToolResultState.ERROR
    assert "items[2].qty" in result.content or "/items/2/qty" in str(result.metadata)


def test_distinct_tools_register() -> None:
    functions = t.distinct_functions(20, tag="x")
    assert len({fn.__name__ for fn in functions}) == 20
    toolkit = t.register_all(functions)
    assert len(toolkit) == 20
    block = ferrotool.ToolUseBlock("call_1", "tool_x0007", '{"city_7": "Oslo"}')
    assert anyio.run(toolkit.call_tool, block).content == "Oslo"


@pytest.mark.skipif(not t.HAS_PROVIDERS, reason="ferrotool.providers._definitions is not there yet")
@pytest.mark.parametrize("case", mem.CASES)
def test_memory_traces_each_holder(case: str) -> None:
    figures = {impl: mem.traced_bytes(impl, case, 20) for impl in mem.IMPLS}
    if mem.available(mem.PYDANTIC_AI) is not None:
        del figures[mem.PYDANTIC_AI]
    assert 0 < figures[mem.FLOOR] < figures[mem.FERROTOOL]
    assert all(size > figures[mem.FLOOR] for impl, size in figures.items() if impl != mem.FLOOR)


def test_schemas_of_registered_tools() -> None:
    toolkit = t.schema_toolkit(5)
    tools = toolkit.schemas("openai_chat")
    assert [tool["function"]["name"] for tool in tools] == [f"tool_s{i:04d}" for i in range(5)]
    assert orjson.loads(toolkit.schemas_json("openai_chat")) == tools
    assert toolkit.schemas_json("openai_chat") is toolkit.schemas_json("openai_chat")


def test_harness_quick_run(tmp_path: Any) -> None:
    out = tmp_path / "results.json"
    table = tmp_path / "table.md"
    argv = ["--quick", "--repeats=1", "--target-ms=1", f"--json={out}", f"--markdown={table}"]
    assert run.main(argv) == 0
    document = orjson.loads(out.read_bytes())
    groups = {row["group"] for row in document["results"]}
    assert {"call", "derive", "tool_async", "tool_inline", "tool_thread", "tool_register"} <= groups
    assert {"view_build", "view_schemas", "reset_tools"} <= groups
    assert {"skill_load", "skill_views"} <= groups
    assert {"mcp_client", "mcp_serve"} <= groups
    assert "sandbox" in groups
    assert "import_time" in groups
    assert ("tool_schemas" in groups) is t.HAS_PROVIDERS
    tool_rows = {(row["group"], row["case"], row["impl"]) for row in document["results"]}
    for case in c.CASES:
        for group in ("tool_async", "tool_inline", "tool_thread"):
            assert (group, case.name, t.FT_TOOL) in tool_rows
            assert (group, case.name, t.FLOOR) in tool_rows
        assert ("tool_inline", case.name, t.FT_TOOL_SYNC) in tool_rows
    for size in v.BACKEND_SIZES:
        for impl in (run.VIEW_IMPL, run.VIEW_NAMES_IMPL):
            assert ("view_build", v.size_case(size), impl) in tool_rows
    assert ("reset_tools", run.MEMORY_CASE, run.RESET_ROUND_TRIP) in tool_rows
    for memory_case in mem.CASES:
        assert ("tool_memory", memory_case, mem.FERROTOOL) in tool_rows
    assert any(row["case"] == run.SCHEMAS_COLD for row in document["results"])
    targets = {target["name"] for target in document["targets"]}
    assert f"{run.VIEW_IMPL}: 100,000 tools / 10 tools" in targets
    assert "skill view: 1,000 skills / 10 skills" in targets
    notes = document["notes"]
    assert all("wrong outcome" not in note["text"] for note in notes), notes
    assert all("not timed" not in note["text"] for note in notes), notes
    assert "| S1 | floor |" in table.read_text()
    assert ferrotool.__version__ in document["machine"]["version_ferrotool"]
    engine_groups = {"batch_wait", "batch_overhead", "middleware_cost", "approval_round_trip"}
    assert engine_groups <= groups
    assert ("batch_wait", e.WAIT_CASE, e.WAIT_BATCH) in tool_rows
    assert ("batch_overhead", e.OVERHEAD_CASE, e.OV_FT) in tool_rows
    assert ("middleware_cost", e.MW_CASE, e.MW_FLOOR) in tool_rows
    assert ("approval_round_trip", run.MEMORY_CASE, e.AP_ROUND_TRIP) in tool_rows
    assert "batch of 10 async 10 ms waits: call_tools / one call_tool" in targets
    derived = {(row["group"], row["name"]) for row in document["derived"]}
    assert ("batch_overhead", "ferrotool") in derived
    assert ("middleware_cost", e.MW_PASS) in derived


# --- request views and session state (`benches.views`) ----------------------------------------


@pytest.fixture(scope="module")
def registries() -> dict[int, ferrotool.Registry]:
    """The view_build registries, built once (100,000 tools take a few seconds)."""
    return {size: v.backend_registry(size) for size in v.BACKEND_SIZES}


@pytest.mark.parametrize("size", v.BACKEND_SIZES)
def test_view_sees_exactly_the_expected_tools(
    registries: dict[int, ferrotool.Registry], size: int
) -> None:
    registry = registries[size]
    assert len(registry) == size + 1  # the meta tool too
    externals = v.external_tools()
    view = registry.view(v.view_state(), v.request_config(externals))
    names = view.names()
    assert names == v.expected_view_names(size)
    # basic, db and search: 3/5 of the backend, one of them replaced by an external tool.
    assert len(names) == 1 + size * 3 // 5 - 1 + v.EXTERNAL_COUNT
    assert len(set(names)) == len(names)
    assert view.active_groups == frozenset(v.ACTIVE)
    assert view.get_tool(v.SHADOWED) is externals[0]
    assert names[-v.EXTERNAL_COUNT :] == tuple(tool.spec.name for tool in externals)
    hidden = [v.backend_name(i) for i in (2, 4, size - 1) if i < size]  # deploy, admin
    assert all(name in registry and name not in view for name in hidden)
    # A second view of the same session and request sees the same (cached) list.
    assert registry.view(v.view_state(), v.request_config(externals)).names() == names


def test_view_schemas_list_100_definitions() -> None:
    function_tools = v.schema_function_tools()
    registry = v.schema_registry(function_tools)
    view = registry.view(v.schema_state(), v.request_config(v.external_tools()))
    tools = view.schemas(v.SCHEMA_FORMAT)
    assert len(tools) == v.SCHEMA_VISIBLE == 100
    names = [tool["function"]["name"] for tool in tools]
    assert names == v.expected_schema_names(function_tools)
    assert len(set(names)) == 100
    assert all(tool["type"] == "function" and "parameters" in tool["function"] for tool in tools)
    assert orjson.loads(view.schemas_json(v.SCHEMA_FORMAT)) == tools
    # A fresh view (fresh registry, fresh external tools) gives the same bytes on its first call.
    fresh = v.fresh_schema_view(function_tools)
    assert fresh.get_tool("client_01") is not view.get_tool("client_01")
    assert fresh.schemas_json(v.SCHEMA_FORMAT) == view.schemas_json(v.SCHEMA_FORMAT)


async def _round_trip_leaves(trip: v.ResetRoundTrip) -> dict[str, Any]:
    """Two round trips and one direct write; what the store holds after (store still open)."""
    async with trip.opened():
        first = await trip.round_trip()
        second = await trip.round_trip()
        state = await trip.store.load(trip.key)
        view = await trip.registry.open_view(trip.context, trip.store)
        direct = await trip.store_only()
        return {
            "results": [first, second],
            "state": state,
            "db_visible": "tool_v0040" in view and "tool_v0079" not in view,
            "direct": direct,
        }


def _check_round_trip(trip: v.ResetRoundTrip) -> None:
    left = anyio.run(_round_trip_leaves, trip)
    for revision, result in enumerate(left["results"], start=1):
        assert result.state is ferrotool.ToolResultState.SUCCESS, result
        assert result.structured == {"active_groups": ["db"]}
        assert result.metadata["revision"] == revision
        assert "db" in result.content
    assert dict(left["state"].groups) == {"db": True, "ops": False}
    assert left["state"].revision == 2
    assert left["db_visible"]
    assert dict(left["direct"].groups) == {"db": True, "ops": False}
    assert left["direct"].revision == 1
    assert anyio.run(v.check_round_trip, trip) is None  # what the benchmark checks too


def test_reset_tools_round_trip_in_memory() -> None:
    registry = v.schema_registry(v.schema_function_tools())
    _check_round_trip(v.ResetRoundTrip(registry, v.memory_store, "memory"))


def test_reset_tools_round_trip_in_redis() -> None:
    url = v.redis_url()
    problem = v.redis_problem(url)
    if problem is not None:
        if v.redis_required():
            pytest.fail(f"FERROTOOL_REQUIRE_REDIS=1 but {problem}", pytrace=False)
        pytest.skip(problem)
    import redis

    registry = v.schema_registry(v.schema_function_tools())
    prefix = v.redis_prefix()
    _check_round_trip(v.ResetRoundTrip(registry, v.redis_store(url, prefix), "redis"))
    client = redis.Redis.from_url(url, socket_timeout=5)
    try:
        assert list(client.scan_iter(match=f"{prefix}*")) == []  # every key deleted
    finally:
        client.close()


# --- the execution engine (`benches.engine`) ----------------------------------------------------


def _run_once(built: t.Built) -> Any:
    """One call of an implementation, in a fresh event loop: its raw result."""

    async def main() -> Any:
        return await built.call()

    return anyio.run(main)


def test_batch_wait_implementations_give_their_results() -> None:
    impls = e.wait_implementations()
    assert list(impls) == [e.WAIT_ONE, e.WAIT_BATCH, e.WAIT_SLEEP, e.WAIT_GATHER]
    assert e.wait_toolkit().get_spec("wait_10ms").concurrency_safe  # type: ignore[union-attr]
    one = _run_once(impls[e.WAIT_ONE])
    assert one.state is ferrotool.ToolResultState.SUCCESS
    assert one.content == e.WAITED
    batch = _run_once(impls[e.WAIT_BATCH])
    assert batch.suspension is None
    assert [r.id for r in batch.results] == [f"call_{i}" for i in range(e.WAIT_CALLS)]
    assert [r.content for r in batch.results] == [e.WAITED] * e.WAIT_CALLS
    for name, built in impls.items():
        assert anyio.run(_outcome, built).ok, name


_OVERHEAD_PEERS = {e.FERROTOOL: "ferrotool", e.PYDANTIC_AI: "pydantic_ai", e.AGENTS: "agents"}
_LAYER_PEERS = {e.PAI_LAYER: "pydantic_ai", e.AGENTS_LAYER: "agents"}
_OVERHEAD_RUNS = {e.TOOLS_RUN: e.OVERHEAD_CALLS, e.TEXT_RUN: 0, e.ONE_RUN: 1}


@pytest.fixture(scope="module")
def overhead() -> tuple[dict[str, t.Built], dict[str, str]]:
    return e.overhead_implementations()


def test_batch_overhead_floor_and_ferrotool_sum_every_call(
    overhead: tuple[dict[str, t.Built], dict[str, str]],
) -> None:
    impls, _ = overhead
    assert _run_once(impls[e.OV_FLOOR]) == [i + 1 for i in range(100)]
    batch = _run_once(impls[e.OV_FT])
    assert batch.suspension is None
    assert len(batch.results) == e.OVERHEAD_CALLS == 100
    assert [r.id for r in batch.results] == [call.id for call in e.add_calls()]
    assert all(r.state is ferrotool.ToolResultState.SUCCESS for r in batch.results)
    assert [t.unwrapped(r.structured) for r in batch.results] == [i + 1 for i in range(100)]
    assert anyio.run(_outcome, impls[e.OV_FT]).ok
    gathered = _run_once(impls[e.OV_GATHERED])
    assert [r.id for r in gathered] == [call.id for call in e.add_calls()]
    assert all(r.state is ferrotool.ToolResultState.SUCCESS for r in gathered)
    assert [t.unwrapped(r.structured) for r in gathered] == [i + 1 for i in range(100)]
    assert anyio.run(_outcome, impls[e.OV_GATHERED]).ok


@pytest.mark.parametrize("layer", list(_LAYER_PEERS))
def test_batch_overhead_peer_tool_layers_sum_every_call(
    overhead: tuple[dict[str, t.Built], dict[str, str]], layer: str
) -> None:
    impls, missing = overhead
    if layer in missing:
        if importlib.util.find_spec(_LAYER_PEERS[layer]) is None:
            pytest.skip(missing[layer])
        pytest.fail(missing[layer])  # installed, but it could not be driven
    # The peer's own tool layer returns the function's values, call by call, in call order.
    assert _run_once(impls[layer]) == [i + 1 for i in range(100)]
    assert anyio.run(_outcome, impls[layer]).ok


def test_batch_overhead_peer_tool_layers_read_wrong_sums_as_wrong() -> None:
    calls = e.add_calls(3)
    for build, module in (
        (al.pydantic_ai_layer, "pydantic_ai"),
        (al.openai_agents_layer, "agents"),
    ):
        if importlib.util.find_spec(module) is None:
            continue
        (built,) = build(calls, e.add, [1, 2, 4]).values()
        outcome = anyio.run(_outcome, built)
        assert outcome == t.Outcome(False, [1, 2, 3]), module


def test_batch_overhead_sync_rows_sum_every_call() -> None:
    impls = e.sync_implementations()
    assert list(impls) == [e.SYNC_FLOOR, e.SYNC_LOOP, e.SYNC_FT]
    assert impls[e.SYNC_FLOOR].call() == [i + 1 for i in range(100)]
    looped = impls[e.SYNC_LOOP].call()
    assert [t.unwrapped(r.structured) for r in looped] == [i + 1 for i in range(100)]
    batch = _run_once(impls[e.SYNC_FT])
    assert batch.suspension is None
    assert [r.id for r in batch.results] == [call.id for call in e.sync_calls()]
    assert [t.unwrapped(r.structured) for r in batch.results] == [i + 1 for i in range(100)]
    for name, built in impls.items():
        assert anyio.run(_outcome, built).ok, name


def test_sync_overheads_arithmetic() -> None:
    medians = {e.SYNC_FLOOR: 100.0, e.SYNC_LOOP: 600.0, e.SYNC_FT: 750.0}
    figures = {f.name: f.value_us for f in e.sync_overheads(medians)}
    assert figures == pytest.approx({e.SYNC_LOOP: 5.0, e.SYNC_FT: 6.5})
    assert e.sync_ratio(medians) == pytest.approx(1.25)
    assert e.sync_ratio({e.SYNC_FT: 750.0}) is None
    assert e.sync_overheads({e.SYNC_FT: 750.0}) == []


@pytest.mark.parametrize("run_name", list(_OVERHEAD_RUNS))
@pytest.mark.parametrize("peer", list(_OVERHEAD_PEERS))
def test_batch_overhead_peer_runs_return_every_call(
    overhead: tuple[dict[str, t.Built], dict[str, str]], peer: str, run_name: str
) -> None:
    impls, missing = overhead
    if peer in missing:
        if importlib.util.find_spec(_OVERHEAD_PEERS[peer]) is None:
            pytest.skip(missing[peer])
        pytest.fail(missing[peer])  # installed, but it could not be driven
    built = impls[e.peer_run(peer, run_name)]
    outcome = anyio.run(_outcome, built)
    count = _OVERHEAD_RUNS[run_name]
    # The agent's final output is the scripted text, and the tools' returns are the sums of
    # exactly the scripted calls, in call order.
    assert outcome == t.Outcome(True, [i + 1 for i in range(count)])


def test_batch_overheads_arithmetic() -> None:
    medians = {
        e.OV_FLOOR: 1_000.0,
        e.OV_FT: 3_000.0,
        e.peer_run(e.PYDANTIC_AI, e.TOOLS_RUN): 60_000.0,
        e.peer_run(e.PYDANTIC_AI, e.TEXT_RUN): 10_000.0,
        e.peer_run(e.PYDANTIC_AI, e.ONE_RUN): 15_050.0,
        e.peer_run(e.AGENTS, e.TOOLS_RUN): 90_000.0,
        e.peer_run(e.AGENTS, e.TEXT_RUN): 5_000.0,
    }
    figures = {f.name: f.value_us for f in e.batch_overheads(medians)}
    assert figures == pytest.approx(
        {
            "ferrotool": 20.0,
            e.PYDANTIC_AI: 490.0,
            f"{e.PYDANTIC_AI}, cross-check": 44_950.0 / 99 - 10.0,
            e.AGENTS: 840.0,
        }
    )
    # The faster peer (pydantic-ai here) over ferrotool.
    assert e.overhead_ratio(e.batch_overheads(medians)) == pytest.approx(490.0 / 20.0)
    # Only pydantic-ai has a cross-check figure here (no 1-call run of the agents SDK).
    cross = (44_950.0 / 99 - 10.0) / 20.0
    assert e.overhead_ratio(e.batch_overheads(medians), cross_check=True) == pytest.approx(cross)
    # No bare layers, no run_agent runs, no gathered call_tool: none of their ratios.
    assert e.layer_ratio(e.batch_overheads(medians)) is None
    assert e.loop_ratio(e.batch_overheads(medians)) is None
    assert e.gathered_ratio(e.batch_overheads(medians)) is None
    del medians[e.OV_FT]
    assert e.overhead_ratio(e.batch_overheads(medians)) is None
    assert e.batch_overheads({e.OV_FT: 3_000.0}) == []


def test_tool_layer_and_loop_overheads_arithmetic() -> None:
    medians = {
        e.OV_FLOOR: 1_000.0,
        e.OV_FT: 3_000.0,
        e.OV_GATHERED: 2_600.0,
        e.PAI_LAYER: 9_000.0,
        e.AGENTS_LAYER: 7_000.0,
        e.peer_run(e.FERROTOOL, e.TOOLS_RUN): 8_000.0,
        e.peer_run(e.FERROTOOL, e.TEXT_RUN): 2_000.0,
        e.peer_run(e.FERROTOOL, e.ONE_RUN): 2_060.0,
        e.peer_run(e.PYDANTIC_AI, e.TOOLS_RUN): 60_000.0,
        e.peer_run(e.PYDANTIC_AI, e.TEXT_RUN): 10_000.0,
        e.peer_run(e.PYDANTIC_AI, e.ONE_RUN): 15_050.0,
        e.peer_run(e.AGENTS, e.TOOLS_RUN): 90_000.0,
        e.peer_run(e.AGENTS, e.TEXT_RUN): 5_000.0,
        e.peer_run(e.AGENTS, e.ONE_RUN): 5_990.0,
    }
    figures = e.batch_overheads(medians)
    by_name = {f.name: f.value_us for f in figures}
    assert by_name == pytest.approx(
        {
            "ferrotool": 20.0,
            e.GATHERED_FIGURE: 16.0,
            e.layer_figure(e.PYDANTIC_AI): 80.0,
            e.layer_figure(e.AGENTS): 60.0,
            e.FT_LOOP_FIGURE: 50.0,
            f"{e.FT_LOOP_FIGURE}, cross-check": 5_940.0 / 99 - 10.0,
            e.PYDANTIC_AI: 490.0,
            f"{e.PYDANTIC_AI}, cross-check": 44_950.0 / 99 - 10.0,
            e.AGENTS: 840.0,
            f"{e.AGENTS}, cross-check": 84_010.0 / 99 - 10.0,
        }
    )
    assert e.gathered_ratio(figures) == pytest.approx(20.0 / 16.0)
    assert e.gathered_time_ratio(medians) == pytest.approx(3_000.0 / 2_600.0)
    # The faster peer's layer (the agents SDK's here) over call_tools.
    assert e.layer_ratio(figures) == pytest.approx(60.0 / 20.0)
    # The faster peer's loop (pydantic-ai's here) over run_agent.
    assert e.loop_ratio(figures) == pytest.approx(490.0 / 50.0)
    cross = (44_950.0 / 99 - 10.0) / (5_940.0 / 99 - 10.0)
    assert e.loop_ratio(figures, cross_check=True) == pytest.approx(cross)
    assert e.overhead_ratio(figures) == pytest.approx(490.0 / 20.0)
    # A ferrotool figure at or under the floor gives no ratio (nothing to divide by).
    medians[e.OV_GATHERED] = 900.0
    assert e.gathered_ratio(e.batch_overheads(medians)) is None


def test_the_batch_overhead_groups_report_their_targets(tmp_path: Any) -> None:
    out = tmp_path / "results.json"
    argv = ["--quick", "--repeats=1", "--target-ms=1", f"--json={out}"]
    assert run.main([*argv, "--only", "batch_overhead", "--only", "batch_overhead_sync"]) == 0
    document = orjson.loads(out.read_bytes())
    rows = {(row["group"], row["case"], row["impl"]) for row in document["results"]}
    for impl in (e.OV_FLOOR, e.OV_FT, e.OV_GATHERED, e.peer_run(e.FERROTOOL, e.TOOLS_RUN)):
        assert ("batch_overhead", e.OVERHEAD_CASE, impl) in rows
    for impl in (e.SYNC_FLOOR, e.SYNC_LOOP, e.SYNC_FT):
        assert ("batch_overhead_sync", e.SYNC_CASE, impl) in rows
    notes = document["notes"]
    assert all("not timed" not in note["text"] for note in notes), notes
    targets = {target["name"] for target in document["targets"]}
    batch = "batch of 100 trivial async tools, overhead per call"
    assert f"{batch}: call_tools / gathered call_tool" in targets
    assert "batch of 100 trivial inline sync tools: call_tools / loop of call_tool_sync" in targets
    derived = {(row["group"], row["name"]) for row in document["derived"]}
    assert ("batch_overhead", e.GATHERED_FIGURE) in derived
    assert ("batch_overhead", e.FT_LOOP_FIGURE) in derived
    assert ("batch_overhead_sync", e.SYNC_FT) in derived
    installed = {module for module in ("pydantic_ai", "agents") if importlib.util.find_spec(module)}
    if installed:
        assert f"{batch}: faster peer's bare tool layer / call_tools" in targets
        assert f"{batch}: faster peer's agent loop / run_agent" in targets
    for layer, module in _LAYER_PEERS.items():
        assert (("batch_overhead", e.OVERHEAD_CASE, layer) in rows) is (module in installed)


def test_middleware_rows_call_the_tool_through_what_they_name() -> None:
    impls, missing, exporter = e.middleware_implementations()
    assert missing == {}
    assert list(impls) == [
        e.MW_FLOOR,
        e.MW_BARE,
        e.MW_VIEW,
        e.MW_PASS,
        e.MW_HAND_CORE,
        e.MW_HAND_LAYER,
        e.MW_TRACING_OFF,
        e.MW_TRACING_ON,
        e.MW_HAND_SPAN,
    ]
    for hand in (e.MW_HAND_CORE, e.MW_HAND_LAYER):
        assert _run_once(impls.pop(hand)) == 3, hand
    spans = exporter.exported
    assert t.unwrapped(_run_once(impls.pop(e.MW_HAND_SPAN)).structured) == 3
    assert exporter.exported == spans + 1  # the hand-made span reached the same exporter
    for name, built in impls.items():
        result = _run_once(built)
        assert result.state is ferrotool.ToolResultState.SUCCESS, name
        assert t.unwrapped(result.structured) == 3, name
        assert result.id == "call_1", name

    def middleware(name: str) -> tuple[object, ...]:
        toolkit = impls[name].call.func.__self__  # a partial of the toolkit's call_tool
        return tuple(toolkit.config.middleware)

    assert middleware(e.MW_FLOOR) == ()
    assert middleware(e.MW_PASS) == (e.pass_through,)
    assert [type(m).__name__ for m in middleware(e.MW_TRACING_OFF)] == ["Tracing"]
    assert [type(m).__name__ for m in middleware(e.MW_TRACING_ON)] == ["Tracing"]
    assert isinstance(impls[e.MW_BARE].call.func, ferrotool._core.DirectCall)
    # Only the tracing-on row hands spans to the exporter: one per call.
    before = exporter.exported
    _run_once(impls[e.MW_TRACING_OFF])
    assert exporter.exported == before
    _run_once(impls[e.MW_TRACING_ON])
    assert exporter.exported == before + 1
    assert exporter.names == {"execute_tool add"}


def test_middleware_costs_arithmetic() -> None:
    costs = e.middleware_costs({e.MW_FLOOR: 2.0, e.MW_PASS: 3.0, e.MW_BARE: 1.5})
    assert [(c.name, c.value_us, c.how) for c in costs] == [
        (e.MW_PASS, 1.0, "+50% of the floor"),
        (e.MW_BARE, -0.5, "-25% of the floor"),
    ]
    assert e.middleware_costs({e.MW_PASS: 3.0}) == []


async def _approval_leaves(trip: e.ApprovalRoundTrip) -> dict[str, Any]:
    """A suspension alone, its resume, then a whole round trip (store still open)."""
    async with trip.opened():
        suspended = await trip.suspend()
        waiting = await trip.store.load(trip.key)
        resumed = await trip.registry.resume(trip.context, trip.store, trip.replies)
        after = await trip.store.load(trip.key)
        again = await trip.round_trip()
        return {
            "suspended": suspended,
            "waiting": waiting,
            "resumed": resumed,
            "after": after,
            "again": again,
            "runs": trip.tool.runs,
        }


def _check_approval(trip: e.ApprovalRoundTrip) -> None:
    left = anyio.run(_approval_leaves, trip)
    suspended = left["suspended"]
    assert [r.state for r in suspended.results] == [ferrotool.ToolResultState.RUNNING]
    assert suspended.results[0].needs_approval
    assert suspended.suspension is not None
    assert [p.call for p in suspended.suspension.pending] == [trip.call]
    assert suspended.suspension.kind is ferrotool.SuspensionKind.CONFIRM
    # The suspension is the session's: stored, then settled by the resume.
    assert [p.id for p in left["waiting"].pending_calls] == [trip.call.id]
    for batch in (left["resumed"], left["again"]):
        assert e.round_trip_problem(batch) is None
        assert batch.results[0].content == "deployed to prod"
        assert batch.results[0].id == trip.call.id
    assert left["resumed"].reply_id == suspended.suspension.reply_id
    assert left["after"].pending_calls == ()
    assert left["runs"] == 2  # once per approval, never while waiting
    assert anyio.run(e.check_approval, trip) is None  # what the benchmark checks too


def test_approval_round_trip_in_memory() -> None:
    _check_approval(e.ApprovalRoundTrip(e.memory_store, "memory"))


def test_approval_round_trip_in_redis() -> None:
    url = v.redis_url()
    problem = v.redis_problem(url)
    if problem is not None:
        if v.redis_required():
            pytest.fail(f"FERROTOOL_REQUIRE_REDIS=1 but {problem}", pytrace=False)
        pytest.skip(problem)
    import redis

    prefix = v.redis_prefix()
    _check_approval(e.ApprovalRoundTrip(e.redis_store(url, prefix), "redis"))
    client = redis.Redis.from_url(url, socket_timeout=5)
    try:
        assert list(client.scan_iter(match=f"{prefix}*")) == []  # every key deleted
    finally:
        client.close()


# --- skills (`benches.skills`) ------------------------------------------------------------------


def test_skill_load_cached_and_cold() -> None:
    with sk.work_dir() as work:
        trip = sk.LoadTrip(sk.registry(), work)
        assert sk.load_ok(anyio.run(trip.cached))
        assert sk.load_ok(anyio.run(trip.cold))
        assert trip.floor_path().read_text().startswith('---\nname: "skill-0"')
        assert not sk.load_ok(None)


@pytest.mark.parametrize("size", sk.VIEW_SIZES)
def test_skill_view_lists_every_skill(size: int) -> None:
    with sk.work_dir() as work:
        request = sk.ViewOverSkills(sk.registry(), size, work)
        view = request.build()
        assert sk.view_ok(view, size)
        assert request.build().get_spec(sk.LOAD_SKILL) == view.get_spec(sk.LOAD_SKILL)
        assert "bound_0" not in view


# --- MCP (`benches.mcp_bench`) ----------------------------------------------------------------


def test_mcp_clients_agree() -> None:
    async def both() -> tuple[str, str]:
        pair = mb.ClientPair()
        async with pair.opened():
            return await pair.bare(), await pair.ferrotool()

    assert anyio.run(both) == ("3", "3")


@pytest.mark.parametrize("kind", mb.SERVERS)
def test_mcp_load_checks_every_answer(kind: str) -> None:
    with mb.server(kind) as port:
        load = mb.run_load(port, 30, 5)
    assert len(load.latencies_s) == 30
    assert load.throughput > 0


def test_mcp_load_splits_connections_and_keeps_sessions() -> None:
    with mb.server("ferrotool") as first, mb.server("ferrotool") as second:
        load = mb.run_load([first, second], 40, 4, sessions=["s-a", "s-b"])
    assert len(load.latencies_s) == 40


def test_scale_measures_under_quotas_or_says_why(tmp_path: Any) -> None:
    out = tmp_path / "results.json"
    argv = ["--quick", "--repeats=1", "--target-ms=1", f"--json={out}", "--only", "scale"]
    assert run.main(argv) == 0
    document = orjson.loads(out.read_bytes())
    rows = [(row["case"].split(",")[0], row["impl"]) for row in document["results"]]
    problem = sc.cgroup_problem() or v.redis_problem(v.redis_url())
    if problem is None:
        assert sorted(rows) == sorted((case, impl) for case in sc.CASES for impl in sc.SETUPS)
        targets = [target["name"] for target in document["targets"]]
        assert len(targets) == len(sc.CASES)
        assert all("CPU each process got" in note["text"] for note in document["notes"])
        assert not list(sc.CGROUP_CPU.glob("ferrotool-bench-*"))  # removed after
    else:
        assert rows == []
        assert {note["text"] for note in document["notes"]} == {f"skipped: {problem}"}


# --- provider adapters and the agent loop (`benches.adapters`) ---------------------------------


@pytest.mark.parametrize("count", ag.CALL_COUNTS)
@pytest.mark.parametrize("provider", ag.PROVIDERS)
def test_every_adapter_reads_the_turns_calls_and_writes_its_results(
    provider: str, count: int
) -> None:
    impls = ag.adapter_implementations(provider, count)
    assert list(impls) == [ag.FLOOR, ag.FROM_SDK, ag.FROM_DICT, ag.RESULTS]
    for name in (ag.FLOOR, ag.FROM_SDK, ag.FROM_DICT):
        assert list(impls[name]()) == ag.expected_calls(count), name  # type: ignore[call-overload]
    written = impls[ag.RESULTS]()
    assert isinstance(written, list)
    assert len(written) == count


@pytest.mark.parametrize("case", ag.LOOP_CASES)
def test_both_agent_loops_finish_the_scripted_run(case: str) -> None:
    loops = ag.loop_implementations(case)
    assert set(loops) == {ag.FT_LOOP, ag.PAI_LOOP}
    for name, loop in loops.items():
        assert not isinstance(loop, str), loop
        assert anyio.run(loop) == "done", name


def test_the_adapter_and_loop_groups_report_their_targets(tmp_path: Any) -> None:
    out = tmp_path / "results.json"
    argv = ["--quick", "--repeats=1", "--target-ms=1", f"--json={out}"]
    assert run.main([*argv, "--only", "adapters", "--only", "agent_loop"]) == 0
    document = orjson.loads(out.read_bytes())
    rows = {(row["group"], row["case"], row["impl"]) for row in document["results"]}
    for provider in ag.PROVIDERS:
        for impl in (ag.FLOOR, ag.FROM_SDK, ag.FROM_DICT, ag.RESULTS):
            assert ("adapters", ag.case_name(provider, 8), impl) in rows
    for case in ag.LOOP_CASES:
        assert ("agent_loop", case, ag.FT_LOOP) in rows
        assert ("agent_loop", case, ag.PAI_LOOP) in rows
    targets = {target["name"] for target in document["targets"]}
    assert "openai_chat tool_calls (SDK object) per call (8 a turn)" in targets
    assert f"agent run, {ag.ONE_CALL}: pydantic-ai / ferrotool" in targets
    assert document["notes"] == []


# --- the shell sandbox (`benches.sandbox`) -----------------------------------------------------


def test_every_sandbox_row_runs_true() -> None:
    with sb.work_dir() as work:
        impls = sb.implementations(work)
        expected = {sb.FLOOR, sb.TOOL_PLAIN}
        if sb.problem() is None:
            expected |= {sb.BARE_SANDBOX, sb.TOOL_SANDBOXED}
        assert expected <= set(impls)
        for name, call in impls.items():
            assert sb.ok(anyio.run(call)), name
    assert not sb.ok(1)
    assert sb.sandbox_cost({sb.TOOL_PLAIN: 2.0, sb.TOOL_SANDBOXED: 5.0}) == (3.0, 2.5)
    assert sb.sandbox_cost({sb.TOOL_PLAIN: 2.0}) is None


def test_every_import_statement_runs_in_a_fresh_interpreter() -> None:
    times = im.measure(1)
    assert set(times) == {im.FLOOR, im.FERROTOOL, im.FIRST_USE}
    assert all(len(seconds) == 1 and seconds[0] > 0 for seconds in times.values())
    assert im.ratio(times) > 0


# --- structured output (`benches.structured`) ------------------------------------------------


@pytest.mark.parametrize("case", so.GROUP_CASES)
def test_structured_output_rows_differ_only_in_the_structured_value(case: str) -> None:
    impls = so.implementations(case)

    async def outcomes() -> dict[str, t.Outcome]:
        out = {}
        for name, built in impls.items():
            value = built.call()
            out[name] = built.read(await value if built.awaitable else value)
        return out

    found = anyio.run(outcomes)
    assert found[so.TEXT].ok
    assert found[so.STRUCTURED].ok
    text, structured = found[so.TEXT].value, found[so.STRUCTURED].value
    # A record's schema is an object's: its value as it is; an int or a list is wrapped.
    assert structured == (text if case.startswith("record") else {"result": text})
