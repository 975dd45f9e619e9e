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
from collections.abc import Callable
from typing import Any

import anyio
import orjson
import pytest

import ferrotool
from benches import adapters as ag
from benches import cases as c
from benches import run
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
    assert ("tool_schemas" in groups) is t.HAS_PROVIDERS
    tool_rows = {(row["group"], row["case"], row["impl"]) for row in document["results"]}
    for case in c.CASES:
        for group in ("tool_async", "tool_inline", "tool_thread"):
            assert (group, case.name, t.FT_TOOL) in tool_rows
            assert (group, case.name, t.FLOOR) in tool_rows
    for size in v.BACKEND_SIZES:
        for impl in (run.VIEW_IMPL, run.VIEW_NAMES_IMPL):
            assert ("view_build", v.size_case(size), impl) in tool_rows
    assert ("reset_tools", run.MEMORY_CASE, run.RESET_ROUND_TRIP) in tool_rows
    assert any(row["case"] == run.SCHEMAS_COLD for row in document["results"])
    targets = {target["name"] for target in document["targets"]}
    assert f"{run.VIEW_IMPL}: 100,000 tools / 10 tools" in targets
    notes = document["notes"]
    assert all("wrong outcome" not in note["text"] for note in notes), notes
    assert all("not timed" not in note["text"] for note in notes), notes
    assert "| S1 | floor |" in table.read_text()
    assert ferrotool.__version__ in document["machine"]["version_ferrotool"]


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
