"""The Toolkit: registration, snapshots, presets, removal, and the single-call pipeline."""

from __future__ import annotations

import dataclasses
import enum
import logging
import threading
from typing import Annotated, Any

import anyio
import orjson
import pytest

from ferrotool import (
    Emitter,
    ExecutionConfig,
    FerrotoolError,
    ImageBlock,
    Injected,
    InjectionError,
    JsonSchemaValidator,
    JsonValue,
    Param,
    PermissionContext,
    PermissionDecision,
    RegistrationError,
    RuntimeContext,
    SchemaOnlyTool,
    SuspendTool,
    TextBlock,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolkitConfig,
    ToolProgress,
    ToolResultBlock,
    ToolResultState,
    ToolSpec,
    ToolUseBlock,
    tool,
)


@dataclasses.dataclass
class Item:
    sku: str
    qty: Annotated[int, Param(ge=1)]


class Color(enum.Enum):
    RED = "red"


@tool(inline=True)
def get_weather(city: str, days: int = 1) -> str:
    """Weather."""
    return f"{city}:{days}"


@tool
async def order(items: list[Item], note: str | None = None) -> dict[str, Any]:
    """Order items."""
    return {"count": sum(i.qty for i in items), "note": note}


@tool
def where() -> str:
    """The thread it ran on."""
    return threading.current_thread().name


@tool(inline=True)
def here() -> str:
    """The thread it ran on."""
    return threading.current_thread().name


@tool
def boom(message: str) -> str:
    """Raise."""
    raise RuntimeError(message)


def error_codes(result: ToolResultBlock) -> list[tuple[str, str]]:
    """(pointer, code) of each validation error a result carries."""
    errors = result.metadata["errors"]
    assert isinstance(errors, list)
    out = []
    for error in errors:
        assert isinstance(error, dict)
        out.append((str(error["pointer"]), str(error["code"])))
    return out


def call(name: str, arguments: str = "{}", id: str = "c1") -> ToolUseBlock:
    return ToolUseBlock(id, name, arguments)


@pytest.fixture
def toolkit() -> Toolkit:
    kit = Toolkit()
    for item in (get_weather, order, where, here, boom):
        kit.register(item)
    return kit


# --- registration ---


def test_register_function_tool_object_and_plain_function() -> None:
    kit = Toolkit()

    def plain(x: int) -> int:
        return x

    class Tools:
        @tool
        def a(self, x: int) -> int:
            return x

        @tool
        def b(self, y: str) -> str:
            return y

    class Explicit(ToolBase[dict[str, object]]):
        name = "explicit"

    kit.register(plain)
    kit.register(Tools())
    kit.register(Explicit())
    assert kit.names() == ("plain", "a", "b", "explicit")
    assert kit.get_tool("plain") is not None
    assert kit.get_tool("nope") is None
    assert "a" in kit
    assert len(kit) == 4
    assert list(kit) == list(kit.names())


def test_duplicates_name_both_origins() -> None:
    kit = Toolkit()
    kit.register(get_weather)

    @tool(name="get_weather")
    def other(city: str) -> str:
        return city

    with pytest.raises(RegistrationError) as info:
        kit.register(other)
    message = str(info.value)
    assert "'get_weather'" in message
    assert "test_toolkit.get_weather" in message
    assert "other" in message


def test_registration_mistakes_raise() -> None:
    kit = Toolkit()

    class Empty:
        pass

    class Holder:
        @tool
        def m(self, x: int) -> int:
            return x

        @tool
        def n(self, x: int) -> int:
            return x

    with pytest.raises(RegistrationError, match="Empty object has no @tool methods"):
        kit.register(Empty())
    with pytest.raises(RegistrationError, match="is a method: register the object"):
        kit.register(Holder.m)
    with pytest.raises(RegistrationError, match="single tool"):
        kit.register(Holder(), presets={"x": 1})
    assert len(kit) == 0  # nothing half-registered


def test_snapshot_is_immutable_and_cheap() -> None:
    kit = Toolkit()
    kit.register(get_weather)
    first = kit.snapshot()
    second = kit.snapshot()
    assert first._table is second._table  # O(1): shared until the toolkit changes
    kit.register(order)
    assert first.names() == ("get_weather",)
    assert kit.names() == ("get_weather", "order")
    kit.remove("get_weather")
    assert first.names() == ("get_weather",)
    assert kit.snapshot().names() == ("order",)


async def test_calls_follow_the_table_each_holder_sees() -> None:
    """``call_tool`` reads the table its holder has now: a snapshot keeps the tools it was
    taken with, the toolkit sees its removals and replacements at once (plain async and
    inline tools, which run straight from the Rust ``call_tool``, as well as the others)."""

    async def first(n: int) -> str:
        return f"first {n}"

    @tool(name="first", inline=True)
    def first_again(n: int) -> str:
        return f"first again {n}"

    kit = Toolkit()
    kit.register(first)
    before = kit.snapshot()
    kit.remove("first")
    assert (await kit.call_tool(call("first", '{"n": 1}'))).state is ToolResultState.ERROR
    assert (await before.call_tool(call("first", '{"n": 1}'))).content == "first 1"
    kit.register(first_again)
    assert (await kit.call_tool(call("first", '{"n": 2}'))).content == "first again 2"
    assert (await before.call_tool(call("first", '{"n": 3}'))).content == "first 3"
    after = kit.snapshot()
    kit.register(get_weather)  # copies the table the snapshot now shares
    assert (await after.call_tool(call("first", '{"n": 4}'))).content == "first again 4"
    assert (await kit.call_tool(call("get_weather", '{"city": "Oslo"}'))).content == "Oslo:1"
    missing = await after.call_tool(call("get_weather", "{}"))
    assert missing.content == "Error: Tool not found: get_weather."


def test_removal_when_disabled_is_a_logged_no_op(caplog: pytest.LogCaptureFixture) -> None:
    kit = Toolkit(ToolkitConfig(allow_removal=False))
    kit.register(get_weather)
    kit.create_group("g")

    @tool
    def only_in_g(key: str) -> str:
        return key

    kit.register(only_in_g, group="g")
    before = kit.names()
    with caplog.at_level(logging.WARNING, logger="ferrotool"):
        assert kit.remove("get_weather") is None
        assert kit.remove("nope") is None  # nothing is checked: nothing happens
        assert kit.remove_group("g") == ()
        assert kit.remove_group("nope") == ()
        assert kit.remove_if_same(get_weather) is False
        assert kit.remove_if_same(only_in_g) is False
    assert kit.names() == before
    assert "get_weather" in kit
    assert kit.group_of("only_in_g") == {"g"}
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "tool 'get_weather' not removed: removal is disabled for this toolkit",
        "tool 'nope' not removed: removal is disabled for this toolkit",
        "tool group 'g' not removed: removal is disabled for this toolkit",
        "tool group 'nope' not removed: removal is disabled for this toolkit",
        "tool 'get_weather' not removed: removal is disabled for this toolkit",
        "tool 'only_in_g' not removed: removal is disabled for this toolkit",
    ]
    # With removal allowed an unknown name still raises.
    with pytest.raises(RegistrationError, match="Tool not found: nope"):
        Toolkit().remove("nope")


def test_remove_if_same_removes_only_the_tool_it_is_given() -> None:
    @tool
    def lookup(key: str) -> str:
        return key

    @tool(name="lookup")
    def other_lookup(key: str) -> str:
        return key.upper()

    kit = Toolkit()
    kit.register(lookup)
    assert not kit.remove_if_same(other_lookup)  # another tool of the same name
    assert "lookup" in kit
    assert kit.remove_if_same(lookup)
    assert "lookup" not in kit
    assert not kit.remove_if_same(lookup)  # gone already
    # Someone else registered the name meanwhile: theirs stays.
    kit.register(other_lookup)
    assert not kit.remove_if_same(lookup)
    assert kit.get_tool("lookup") is other_lookup

    # A plain function, and a tool registered with presets (a copy around the same function).
    def plain(key: str) -> str:
        return key

    kit.register(plain)
    assert kit.remove_if_same(plain)
    kit.register(get_weather, presets={"city": "Oslo"})
    assert kit.remove_if_same(get_weather)
    assert "get_weather" not in kit
    disabled = Toolkit(ToolkitConfig(allow_removal=False))
    disabled.register(lookup)
    assert not disabled.remove_if_same(lookup)  # a no-op: removal is disabled
    assert disabled.get_tool("lookup") is lookup


def test_register_schemas_registers_all_or_nothing() -> None:
    kit = Toolkit()
    kit.register(get_weather)
    assert kit.register_schemas(None) == ()
    assert kit.register_schemas([]) == ()
    obj: dict[str, JsonValue] = {"type": "object", "properties": {}}
    registered = kit.register_schemas(
        [
            {"name": "pick_file", "parameters": obj},
            {"type": "function", "function": {"name": "ask_user", "parameters": obj}},
            {"name": "show_map", "inputSchema": obj},
        ]
    )
    assert [t.spec.name for t in registered] == ["pick_file", "ask_user", "show_map"]
    assert all(kit.is_external_tool(name) for name in ("pick_file", "ask_user", "show_map"))
    with pytest.raises(RegistrationError, match="get_weather"):
        kit.register_schemas([{"name": "late", "parameters": obj}, {"name": "get_weather"}])
    assert "late" not in kit  # nothing of a refused batch is registered
    with pytest.raises(ValueError, match="name"):
        kit.register_schemas([{"parameters": obj}])


def test_is_external_tool() -> None:
    kit = Toolkit()
    kit.register(get_weather)
    kit.register(
        SchemaOnlyTool({"name": "pick_file", "parameters": {"type": "object", "properties": {}}})
    )
    assert kit.is_external_tool("pick_file")
    assert not kit.is_external_tool("get_weather")
    assert not kit.is_external_tool("nope")
    assert kit.snapshot().is_external_tool("pick_file")


async def test_presets_are_hidden_and_win() -> None:
    @tool
    async def fetch(url: str, api_key: str, retries: int = 1) -> str:
        return f"{url}:{api_key}:{retries}"

    kit = Toolkit()
    kit.register(fetch, presets={"api_key": "secret"})
    properties = orjson.loads(kit.get_spec("fetch").parameters_json)["properties"]  # type: ignore[union-attr]
    assert list(properties) == ["url", "retries"]
    assert (
        "api_key" in orjson.loads(fetch.spec.parameters_json)["properties"]
    )  # the tool is unchanged
    result = await kit.call_tool(call("fetch", '{"url": "u"}'))
    assert result.content == "u:secret:1"
    sneaky = await kit.call_tool(call("fetch", '{"url": "u", "api_key": "mine"}'))
    assert sneaky.state is ToolResultState.ERROR
    assert "api_key" in sneaky.content
    kit.set_presets("fetch", {"api_key": "rotated", "retries": 3})
    assert (await kit.call_tool(call("fetch", '{"url": "u"}'))).content == "u:rotated:3"
    with pytest.raises(RegistrationError, match="Tool not found"):
        kit.set_presets("nope", {})
    with pytest.raises(ValueError, match="no parameter ghost"):
        kit.set_presets("fetch", {"ghost": 1})


async def test_presets_on_a_json_schema_tool() -> None:
    class Query(ToolBase[dict[str, object]]):
        name = "query"
        input_schema = {
            "type": "object",
            "properties": {"sql": {"type": "string"}, "db": {"type": "string"}},
            "required": ["sql", "db"],
            "additionalProperties": False,
        }

        async def call(self, param: ToolCallParam[dict[str, object]]) -> str:
            return f"{param.input['db']}:{param.input['sql']}"

    kit = Toolkit()
    kit.register(Query(), presets={"db": "prod"})
    exposed = orjson.loads(kit.get_spec("query").parameters_json)  # type: ignore[union-attr]
    assert exposed["required"] == ["sql"]
    assert list(exposed["properties"]) == ["sql"]
    assert (await kit.call_tool(call("query", '{"sql": "select 1"}'))).content == "prod:select 1"
    assert (await kit.call_tool(call("query", '{"sql": 1}'))).state is ToolResultState.ERROR


# --- the pipeline: the model's mistakes are results ---


async def test_success_stamps_the_call(toolkit: Toolkit) -> None:
    result = await toolkit.call_tool(call("get_weather", '{"city": "Oslo"}', id="x7"))
    assert result == ToolResultBlock.success("Oslo:1", id="x7", name="get_weather")


async def test_empty_arguments_count_as_empty_object(toolkit: Toolkit) -> None:
    assert (await toolkit.call_tool(call("where", ""))).state is ToolResultState.SUCCESS


async def test_unknown_tool_suggests_close_names(toolkit: Toolkit) -> None:
    result = await toolkit.call_tool(call("get_wether", "{}", id="u1"))
    assert result.state is ToolResultState.ERROR
    assert (result.id, result.name) == ("u1", "get_wether")
    assert result.content == "Error: Tool not found: get_wether. Did you mean: get_weather?"


async def test_bad_json_gives_the_position(toolkit: Toolkit) -> None:
    result = await toolkit.call_tool(call("get_weather", '{"city": "Oslo",'))
    assert result.state is ToolResultState.ERROR
    assert "line 1 column 16" in result.content
    assert error_codes(result) == [("", "invalid_json")]


async def test_invalid_arguments_list_every_error(toolkit: Toolkit) -> None:
    result = await toolkit.call_tool(
        call("order", '{"items": [{"sku": "a", "qty": 0}, {"sku": 5, "qty": "three"}], "x": 1}')
    )
    assert result.state is ToolResultState.ERROR
    pointers = set(error_codes(result))
    assert ("/items/0/qty", "number_too_small") in pointers
    assert ("/items/1/sku", "wrong_type") in pointers
    assert ("/items/1/qty", "wrong_type") in pointers
    assert ("/x", "unexpected_property") in pointers
    assert "items/1/qty: expected integer" in result.content
    assert result.content.endswith("Correct the arguments and call the tool again.")


async def test_huge_and_deep_input_are_results(toolkit: Toolkit) -> None:
    deep = '{"city": ' + "[" * 5000 + "]" * 5000 + "}"
    assert (await toolkit.call_tool(call("get_weather", deep))).state is ToolResultState.ERROR
    huge = '{"city": "' + "x" * (9 * 1024 * 1024) + '"}'
    result = await toolkit.call_tool(call("get_weather", huge))
    assert result.state is ToolResultState.ERROR
    assert "input_too_large" in result.content


async def test_a_raising_tool_gives_its_message_and_logs_the_traceback(
    toolkit: Toolkit, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="ferrotool"):
        result = await toolkit.call_tool(call("boom", '{"message": "disk full"}'))
    assert result.state is ToolResultState.ERROR
    assert result.content == "Error: Tool execution failed: disk full"
    assert "Traceback" not in result.content
    assert any(record.exc_info for record in caplog.records)


async def test_timeouts_are_results() -> None:
    @tool(timeout=0.05)
    async def slow() -> str:
        await anyio.sleep(5)
        return "late"

    @tool(timeout=0.05)
    def slow_sync() -> str:
        threading.Event().wait(0.5)
        return "late"

    kit = Toolkit()
    kit.register(slow)
    kit.register(slow_sync)
    for name in ("slow", "slow_sync"):
        with anyio.fail_after(2):
            result = await kit.call_tool(call(name))
        assert result.state is ToolResultState.ERROR
        assert result.content == "Error: Tool execution timed out after 0.05 s"


async def test_default_timeout_from_config() -> None:
    @tool
    async def slow() -> str:
        await anyio.sleep(5)
        return "late"

    kit = Toolkit(ToolkitConfig(execution=ExecutionConfig(timeout=0.05)))
    kit.register(slow)
    assert "timed out" in (await kit.call_tool(call("slow"))).content


async def test_sync_tools_run_on_worker_threads_unless_inline(toolkit: Toolkit) -> None:
    caller = threading.current_thread().name
    assert (await toolkit.call_tool(call("where"))).content != caller
    assert (await toolkit.call_tool(call("here"))).content == caller


async def test_thread_pool_is_bounded() -> None:
    running = 0
    peak = 0
    lock = threading.Lock()

    @tool
    def busy() -> None:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        threading.Event().wait(0.02)
        with lock:
            running -= 1

    kit = Toolkit(ToolkitConfig(max_threads=2))
    kit.register(busy)
    async with anyio.create_task_group() as group:
        for i in range(8):
            group.start_soon(kit.call_tool, call("busy", id=str(i)))
    assert peak == 2


async def test_cancelling_the_caller_interrupts_the_tool_and_delivers_its_result() -> None:
    started = anyio.Event()
    cancelled = False

    @tool
    async def wait_forever() -> str:
        nonlocal cancelled
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled = True
            raise
        return "never"

    kit = Toolkit()
    kit.register(wait_forever)
    results: list[ToolResultBlock] = []
    returned: list[ToolResultBlock] = []

    async def run() -> None:
        returned.append(
            await kit.call_tool(call("wait_forever", id="w1"), on_result=results.append)
        )

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await started.wait()
        group.cancel_scope.cancel()
    assert cancelled
    assert returned == []  # the caller saw its cancellation
    (result,) = results
    assert (result.id, result.state) == ("w1", ToolResultState.INTERRUPTED)


async def test_external_tools_validate_then_suspend() -> None:
    @tool(external=True)
    def client_side(path: str) -> str:
        raise AssertionError("never runs here")

    kit = Toolkit()
    kit.register(client_side)
    result = await kit.call_tool(call("client_side", '{"path": "/tmp"}', id="e1"))
    assert result.is_suspended
    assert result.state is ToolResultState.RUNNING
    assert (result.id, result.name) == ("e1", "client_side")
    invalid = await kit.call_tool(call("client_side", '{"path": 1}'))
    assert invalid.state is ToolResultState.ERROR
    assert not invalid.is_suspended


async def test_a_tool_can_suspend_itself() -> None:
    @tool
    async def handoff() -> str:
        raise SuspendTool("waiting for the client")

    kit = Toolkit()
    kit.register(handoff)
    result = await kit.call_tool(call("handoff"))
    assert result.is_suspended
    assert result.content == "waiting for the client"


async def test_a_tool_that_catches_ferrotool_errors_still_suspends() -> None:
    # `SuspendTool` is control flow, not an error: `except FerrotoolError` around a tool's own
    # work must not swallow it, on any path (direct call, worker thread, full pipeline).
    def guarded_work() -> str:
        try:
            raise SuspendTool("the client runs this")
        except FerrotoolError:
            return "swallowed"

    @tool(inline=True)
    def inline_handoff() -> str:
        return guarded_work()

    @tool
    def threaded_handoff() -> str:
        return guarded_work()

    @tool(timeout=5)
    async def timed_handoff() -> str:
        return guarded_work()

    assert not issubclass(SuspendTool, FerrotoolError)
    assert issubclass(SuspendTool, Exception)
    kit = Toolkit()
    for handoff in (inline_handoff, threaded_handoff, timed_handoff):
        kit.register(handoff)
        result = await kit.call_tool(call(handoff.name))
        assert result.is_suspended, handoff.name
        assert result.content == "the client runs this"
    assert kit.call_tool_sync(call("inline_handoff")).is_suspended


class Guarded(ToolBase[dict[str, object]]):
    name = "guarded"
    input_schema = {"type": "object", "properties": {"path": {"type": "string"}}}

    async def check_permissions(
        self, tool_input: dict[str, object], context: PermissionContext
    ) -> PermissionDecision:
        path = str(tool_input.get("path", ""))
        if path.startswith("/etc"):
            return PermissionDecision.deny(f"{path} is off limits")
        if path.startswith("/home"):
            return PermissionDecision.ask(f"write to {path}?")
        if path == "relative":
            return PermissionDecision.allow(updated_input={"path": "/srv/relative"})
        return PermissionDecision.passthrough(self.name)

    async def call(self, param: ToolCallParam[dict[str, object]]) -> str:
        return f"wrote {param.input['path']} for {param.context.user_id}"


async def test_permission_checks_run_before_the_tool() -> None:
    kit = Toolkit()
    kit.register(Guarded())
    context = RuntimeContext(user_id="ann")
    denied = await kit.call_tool(call("guarded", '{"path": "/etc/passwd"}'), context)
    assert denied.state is ToolResultState.DENIED
    assert denied.content == "Permission denied: /etc/passwd is off limits"
    ask = await kit.call_tool(call("guarded", '{"path": "/home/ann"}'), context)
    assert ask.needs_approval
    assert ask.state is ToolResultState.RUNNING
    assert ask.metadata["permission"] == {
        "behavior": "ask",
        "message": "write to /home/ann?",
        "suggested_rules": [
            {
                "tool_name": "guarded",
                "rule_content": None,
                "behavior": "allow",
                "source": "suggested",
            }
        ],
    }
    updated = await kit.call_tool(call("guarded", '{"path": "relative"}'), context)
    assert updated.content == "wrote /srv/relative for ann"
    plain = await kit.call_tool(call("guarded", '{"path": "/srv/x"}'), context)
    assert plain.content == "wrote /srv/x for ann"


class Database:
    def __init__(self, name: str) -> None:
        self.name = name


async def test_injection_reaches_the_tool() -> None:
    seen: list[ToolProgress] = []

    @tool
    async def report(query: str, db: Injected[Database], emitter: Emitter) -> str:
        emitter.emit("step 1")
        emitter.emit(ImageBlock(media_type="image/png", data="AAAA"))
        return f"{query}@{db.name}#{emitter.call_id}"

    kit = Toolkit(on_progress=seen.append)
    kit.register(report)
    per_call: list[ToolProgress] = []
    context = RuntimeContext.of(Database("prod"))
    result = await kit.call_tool(
        call("report", '{"query": "q"}', id="r1"), context, on_progress=per_call.append
    )
    assert result.content == "q@prod#r1"
    assert [p.chunk for p in seen] == [
        TextBlock("step 1"),
        ImageBlock(media_type="image/png", data="AAAA"),
    ]
    assert seen == per_call
    assert seen[0].call_id == "r1"
    with pytest.raises(InjectionError, match=r"report: parameter 'db' needs Database"):
        await kit.call_tool(call("report", '{"query": "q"}'))


async def test_a_failing_progress_sink_is_logged_not_fatal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(progress: ToolProgress) -> None:
        raise ValueError("sink down")

    @tool
    async def chatty(emitter: Emitter) -> str:
        emitter.emit("hello")
        return "done"

    kit = Toolkit(on_progress=broken)
    kit.register(chatty)
    with caplog.at_level(logging.ERROR, logger="ferrotool"):
        assert (await kit.call_tool(call("chatty"))).content == "done"
    assert "sink" in caplog.text


@dataclasses.dataclass
class Forecast:
    city: str
    temps: list[float]
    color: Color


async def test_return_values_are_converted() -> None:
    @tool
    async def nothing() -> None:
        return None

    @tool
    async def record() -> Forecast:
        return Forecast("Oslo", [1.5, 2.0], Color.RED)

    @tool
    async def mapping() -> dict[str, object]:
        return {"a": [1, 2], "b": None}

    @tool
    async def blocks() -> list[TextBlock]:
        return [TextBlock("one"), TextBlock("two")]

    @tool
    async def explicit() -> ToolResultBlock:
        return ToolResultBlock.error("custom failure")

    @tool(converter=lambda value: ToolResultBlock.success(f"<{value}>"))
    async def converted() -> int:
        return 42

    kit = Toolkit()
    for item in (nothing, record, mapping, blocks, explicit, converted):
        kit.register(item)

    async def run(name: str) -> ToolResultBlock:
        return await kit.call_tool(call(name, id=name))

    assert (await run("nothing")).content == "Done"
    forecast = await run("record")
    assert orjson.loads(forecast.content) == {"city": "Oslo", "temps": [1.5, 2.0], "color": "red"}
    assert forecast.structured == {"city": "Oslo", "temps": [1.5, 2.0], "color": "red"}
    assert (await run("mapping")).structured == {"a": [1, 2], "b": None}
    assert (await run("blocks")).output == (TextBlock("one"), TextBlock("two"))
    failure = await run("explicit")
    assert (failure.state, failure.id, failure.name) == (
        ToolResultState.ERROR,
        "explicit",
        "explicit",
    )
    assert (await run("converted")).content == "<42>"


def test_sync_twin(toolkit: Toolkit) -> None:
    caller = threading.current_thread().name
    assert toolkit.call_tool_sync(call("where")).content == caller  # sync code: inline
    result = toolkit.call_tool_sync(call("order", '{"items": [{"sku": "a", "qty": 2}]}'))
    assert result.structured == {"count": 2, "note": None}
    assert toolkit.call_tool_sync(call("nope")).state is ToolResultState.ERROR
    bad = toolkit.call_tool_sync(call("get_weather", '{"city": 1}'))
    assert bad.state is ToolResultState.ERROR
    assert toolkit.call_tool_sync(call("boom", '{"message": "x"}')).content == (
        "Error: Tool execution failed: x"
    )


async def test_registry_snapshot_calls_like_the_toolkit(toolkit: Toolkit) -> None:
    registry = toolkit.snapshot()
    result = await registry.call_tool(call("get_weather", '{"city": "Rome"}'))
    assert result.content == "Rome:1"
    assert registry.get_tool("get_weather") is toolkit.get_tool("get_weather")


class Minimal:
    """A tool that is not a ToolBase: just the AgentTool protocol."""

    def __init__(self) -> None:
        self._validator = JsonSchemaValidator({"type": "object", "required": ["n"]})

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="minimal", description="Minimal.", parameters_json=b'{"type":"object"}'
        )

    def parse_arguments(self, arguments: str | bytes) -> object:
        return self._validator.validate_json(arguments)

    async def call(self, param: ToolCallParam[Any]) -> str:
        return f"n={param.input['n']}"


async def test_any_agent_tool_can_be_registered() -> None:
    kit = Toolkit()
    kit.register(Minimal())
    assert (await kit.call_tool(call("minimal", '{"n": 3}'))).content == "n=3"
    assert (await kit.call_tool(call("minimal", "{}"))).state is ToolResultState.ERROR


async def test_null_for_an_optional_argument_counts_as_omitted() -> None:
    @tool(inline=True)
    def greet(name: str, greeting: str = "Hello", item: Item | None = None) -> str:
        return f"{greeting}, {name}"

    kit = Toolkit()
    kit.register(greet)
    assert (await kit.call_tool(call("greet", '{"name": "Ann", "greeting": null}'))).content == (
        "Hello, Ann"
    )
    nested = await kit.call_tool(call("greet", '{"name": "A", "item": {"sku": null, "qty": 1}}'))
    assert nested.state is ToolResultState.ERROR
    # sku is required: its null stays an error, said as it is
    assert "item/sku: expected string, found null (wrong_type)" in nested.content
    required = await kit.call_tool(call("greet", '{"name": null}'))
    assert required.state is ToolResultState.ERROR
    assert "name" in required.content


async def test_a_single_call_finalises_a_running_result_as_a_batch_does() -> None:
    """A tool's RUNNING result that does not wait is SUCCESS on every single-call path."""

    @tool
    def threaded() -> ToolResultBlock:
        return ToolResultBlock.text("threaded")

    @tool(inline=True)
    def inline() -> ToolResultBlock:
        return ToolResultBlock.text("inline")

    @tool
    async def awaited() -> ToolResultBlock:
        return ToolResultBlock.text("awaited")

    @tool(timeout=5)  # not a direct call: through the Python pipeline
    async def timed() -> ToolResultBlock:
        return ToolResultBlock.text("timed")

    class Based(ToolBase[dict[str, object]]):
        name = "based"
        input_schema = {"type": "object", "properties": {}}

        async def call(self, param: ToolCallParam[dict[str, object]]) -> ToolResultBlock:
            return ToolResultBlock.text("based")

    @tool
    def waits() -> ToolResultBlock:
        raise SuspendTool("the client runs it")

    @tool
    def explicit_error() -> ToolResultBlock:
        return ToolResultBlock.text("no").with_state(ToolResultState.ERROR)

    kit = Toolkit()
    for item in (threaded, inline, awaited, timed, Based(), waits, explicit_error):
        kit.register(item)
    names = ("threaded", "inline", "awaited", "timed", "based")
    view = kit.snapshot().view()
    for name in names:
        block = call(name, "{}", id=f"id-{name}")
        results = [
            await kit.call_tool(block),
            await view.call_tool(block),
            await kit.snapshot().call_tool(block),
        ]
        if name in ("threaded", "inline"):  # the others need an event loop of their own
            results += [kit.call_tool_sync(block), view.call_tool_sync(block)]
        for result in results:
            assert (result.id, result.state) == (f"id-{name}", ToolResultState.SUCCESS), name
            assert result.content == name
    waiting = await kit.call_tool(call("waits", "{}"))
    assert waiting.state is ToolResultState.RUNNING
    assert waiting.is_suspended
    assert (await kit.call_tool(call("explicit_error", "{}"))).state is ToolResultState.ERROR

    # A middleware's own RUNNING result too, and its waiting result stays RUNNING.
    async def answers(call: ToolUseBlock, context: object, next: Any) -> ToolResultBlock:
        if call.name == "threaded":
            return ToolResultBlock.text("from the middleware")
        if call.name == "inline":
            return ToolResultBlock.suspended(call)
        return await next(call, context)  # type: ignore[no-any-return]

    wrapped = Toolkit(ToolkitConfig(middleware=(answers,)))
    wrapped.register(threaded)
    wrapped.register(inline)
    wrapped.register(awaited)
    short = await wrapped.call_tool(call("threaded", "{}"))
    assert (short.state, short.content) == (ToolResultState.SUCCESS, "from the middleware")
    assert (await wrapped.call_tool(call("inline", "{}"))).is_suspended
    assert (await wrapped.call_tool(call("awaited", "{}"))).state is ToolResultState.SUCCESS
