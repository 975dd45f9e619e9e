"""Tool groups, the reset_tools meta tool, request configs and views."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from ferrotool import (
    EMPTY_STATE,
    InMemorySessionStore,
    RegistrationError,
    RuntimeContext,
    SchemaOnlyTool,
    SessionKey,
    ToolContextState,
    ToolGroup,
    ToolGroupScope,
    Toolkit,
    ToolkitConfig,
    ToolMergeMode,
    ToolRequestConfig,
    ToolResultState,
    ToolSpec,
    ToolUseBlock,
    tool,
)


@tool(inline=True)
def search(query: str) -> str:
    """Search."""
    return f"search:{query}"


@tool(inline=True)
def db_query(sql: str) -> str:
    """Query."""
    return f"db:{sql}"


@tool(inline=True)
def deploy(service: str) -> str:
    """Deploy."""
    return f"deploy:{service}"


@tool(inline=True)
def audit() -> str:
    """Audit."""
    return "audit"


def make_toolkit(meta: bool = True) -> Toolkit:
    kit = Toolkit(ToolkitConfig(meta_tool=meta))
    kit.register(search)
    kit.create_group("database", "Tools for database operations.", instructions="Read only.")
    kit.create_group("deployment", "Tools for deploying services.")
    kit.create_group("admin", "Admin tools.", scope=ToolGroupScope.APPLICATION)
    kit.register(db_query, group="database")
    kit.register(deploy, group="deployment")
    kit.register(audit, group=("deployment", "admin"))
    return kit


def external(name: str, properties: dict[str, object] | None = None) -> SchemaOnlyTool:
    return SchemaOnlyTool(
        {
            "name": name,
            "description": f"Client tool {name}.",
            "parameters": {"type": "object", "properties": properties or {}},
        }
    )


def call(name: str, arguments: str = "{}", id: str = "c") -> ToolUseBlock:
    return ToolUseBlock(id, name, arguments)


def test_groups_and_basic() -> None:
    kit = make_toolkit()
    assert kit.group_of("search") == {"basic"}
    assert kit.group_of("audit") == {"deployment", "admin"}
    assert [g.name for g in kit.groups()] == ["database", "deployment", "admin"]
    with pytest.raises(ValueError, match="reserved"):
        ToolGroup(name="basic")
    with pytest.raises(ValueError, match="invalid tool group name"):
        ToolGroup(name="has space")
    with pytest.raises(RegistrationError, match="already exists"):
        kit.create_group("database")

    def orphan(x: int) -> int:
        return x

    with pytest.raises(RegistrationError, match="Tool group 'nope' does not exist"):
        kit.register(orphan, group="nope")
    assert "orphan" not in kit  # nothing registered


def test_meta_tool_follows_the_groups() -> None:
    kit = Toolkit(ToolkitConfig(meta_tool=True))
    kit.register(search)
    assert "reset_tools" not in kit  # no session-scoped group yet
    kit.create_group("admin", scope=ToolGroupScope.APPLICATION)
    assert "reset_tools" not in kit
    kit.create_group("database", "Tools for database operations.")
    schema = orjson.loads(kit.get_spec("reset_tools").parameters_json)  # type: ignore[union-attr]
    assert schema == {
        "type": "object",
        "properties": {
            "database": {"type": "boolean", "description": "Tools for database operations."}
        },
        "additionalProperties": False,
    }
    kit.create_group("deployment", "Deploying.")
    schema = orjson.loads(kit.get_spec("reset_tools").parameters_json)  # type: ignore[union-attr]
    assert list(schema["properties"]) == ["database", "deployment"]
    assert kit.names() == ("search", "reset_tools")
    assert "reset_tools" not in make_toolkit(meta=False)


def test_views_show_basic_and_active_groups_only() -> None:
    registry = make_toolkit().snapshot()
    view = registry.view()
    assert view.names() == ("search", "reset_tools")
    on = registry.view(EMPTY_STATE.with_groups({"deployment": True}))
    assert on.names() == ("search", "reset_tools", "deploy", "audit")
    admin = registry.view(EMPTY_STATE.with_groups({"admin": True}))
    assert admin.names() == ("search", "reset_tools", "audit")  # in any active group
    assert registry.names() == ("search", "reset_tools", "db_query", "deploy", "audit")


def test_switching_groups_refuses_unknown_names_and_can_set_exactly() -> None:
    registry = make_toolkit().snapshot()
    on = registry.switch_groups(EMPTY_STATE, {"deployment": True})
    assert registry.view(on).names() == ("search", "reset_tools", "deploy", "audit")
    with pytest.raises(RegistrationError, match=r"Tool group 'nonexistent' does not exist"):
        registry.switch_groups(on, {"nonexistent": True, "database": True})
    with pytest.raises(RegistrationError, match=r"'nope', 'nowhere' does not exist"):
        registry.switch_groups(on, {"nowhere": False, "nope": True}, exact=True)
    # Set exactly: the named groups as given, every other group of the registry off.
    exactly = registry.switch_groups(on, {"database": True}, exact=True)
    assert registry.view(exactly).names() == ("search", "reset_tools", "db_query")
    assert {name for name, active in exactly.groups.items() if active} == {"database"}
    assert on.groups["deployment"] is True  # the state switched from is a value: unchanged


def test_initially_active_groups() -> None:
    kit = Toolkit()
    kit.create_group("always", active=True)
    kit.register(audit, group="always")
    assert kit.view().names() == ("audit",)
    assert kit.view(EMPTY_STATE.with_groups({"always": False})).names() == ()


async def test_reset_tools_changes_only_its_session() -> None:
    registry = make_toolkit().snapshot()
    store = InMemorySessionStore()
    ann = RuntimeContext(user_id="ann", session_id="s1")
    bob = RuntimeContext(user_id="bob", session_id="s1")
    view = await registry.open_view(ann, store)
    result = await view.call_tool(call("reset_tools", '{"database": true}'), ann)
    assert result.state is ToolResultState.SUCCESS
    assert result.content == (
        "The currently activated tool group(s): database.\n"
        "<tool-instructions>\n"
        '<group name="database">Tools for database operations.\nRead only.</group>\n'
        "</tool-instructions>"
    )
    assert result.structured == {"active_groups": ["database"]}
    assert (await registry.open_view(ann, store)).names() == (
        "search",
        "reset_tools",
        "db_query",
    )
    assert (await registry.open_view(bob, store)).names() == ("search", "reset_tools")
    assert registry.names() == ("search", "reset_tools", "db_query", "deploy", "audit")
    # the view it ran in is a value: unchanged
    assert view.names() == ("search", "reset_tools")


async def test_reset_tools_overwrites_and_keeps_application_groups() -> None:
    registry = make_toolkit().snapshot()
    store = InMemorySessionStore()
    key = SessionKey("u", "s")
    await store.compare_and_set(key, 0, EMPTY_STATE.with_groups({"admin": True}))
    context = RuntimeContext(user_id="u", session_id="s")
    view = await registry.open_view(context, store)
    await view.call_tool(call("reset_tools", '{"database": true, "deployment": true}'), context)
    view = await registry.open_view(context, store)
    result = await view.call_tool(call("reset_tools", '{"deployment": true}'), context)
    assert result.structured == {"active_groups": ["deployment", "admin"]}
    state = await store.load(key)
    assert dict(state.groups) == {"admin": True, "database": False, "deployment": True}
    empty = await view.call_tool(call("reset_tools", "{}"), context)
    assert empty.structured == {"active_groups": ["admin"]}
    assert "admin" in empty.content


async def test_reset_tools_rejects_unknown_and_non_boolean_fields() -> None:
    registry = make_toolkit().snapshot()
    context = RuntimeContext(user_id="u", session_id="s")
    view = await registry.open_view(context, InMemorySessionStore())
    unknown = await view.call_tool(call("reset_tools", '{"databse": true}'), context)
    assert unknown.state is ToolResultState.ERROR
    assert "databse" in unknown.content
    wrong = await view.call_tool(call("reset_tools", '{"database": "yes"}'), context)
    assert wrong.state is ToolResultState.ERROR
    application = await view.call_tool(call("reset_tools", '{"admin": true}'), context)
    assert application.state is ToolResultState.ERROR  # not the model's to switch


async def test_reset_tools_without_a_store_is_an_error_result() -> None:
    registry = make_toolkit().snapshot()
    result = await registry.view().call_tool(call("reset_tools", '{"database": true}'))
    assert result.state is ToolResultState.ERROR
    assert "needs a session" in result.content


async def test_inactive_tools_are_not_available_rather_than_unknown() -> None:
    view = make_toolkit().snapshot().view()
    inactive = await view.call_tool(call("deploy", '{"service": "api"}'))
    assert inactive.state is ToolResultState.ERROR
    assert inactive.content == (
        "Error: Tool 'deploy' is not available now: its tool group(s) deployment are not "
        "active in this session; activate one with reset_tools first."
    )
    unknown = await view.call_tool(call("deplyo"))
    assert "Tool not found: deplyo" in unknown.content


async def test_merge_modes() -> None:
    registry = make_toolkit().snapshot()
    client_search = external("search", {"q": {"type": "string"}})
    geo = external("geolocate")
    merged = registry.view(config=ToolRequestConfig([client_search, geo]))
    assert merged.names() == ("reset_tools", "search", "geolocate")
    assert merged.get_tool("search") is client_search
    suspended = await merged.call_tool(call("search", '{"q": "x"}', id="e1"))
    assert suspended.is_suspended
    assert suspended.id == "e1"
    invalid = await merged.call_tool(call("search", '{"q": 1}'))
    assert invalid.state is ToolResultState.ERROR
    assert not invalid.is_suspended

    backend_first = registry.view(
        config=ToolRequestConfig([client_search, geo], ToolMergeMode.MERGE_BACKEND_PRIORITY)
    )
    assert backend_first.names() == ("search", "reset_tools", "geolocate")
    assert (await backend_first.call_tool(call("search", '{"query": "x"}'))).content == "search:x"

    only = registry.view(config=ToolRequestConfig([geo], ToolMergeMode.EXTERNAL_ONLY))
    assert only.names() == ("geolocate",)
    hidden = await only.call_tool(call("search", '{"query": "x"}'))
    assert "not available now: this request uses only its own tools" in hidden.content
    nothing = registry.view(config=ToolRequestConfig([], ToolMergeMode.EXTERNAL_ONLY))
    assert nothing.names() == ()
    assert nothing.schemas() == []

    agent = registry.view(config=ToolRequestConfig(mode=ToolMergeMode.AGENT_ONLY))
    assert agent.names() == ("search", "reset_tools")
    with pytest.raises(ValueError, match="AGENT_ONLY cannot include external tools"):
        ToolRequestConfig([geo], ToolMergeMode.AGENT_ONLY)


async def test_external_tool_shadowing_an_inactive_backend_tool_is_callable() -> None:
    registry = make_toolkit().snapshot()
    view = registry.view(config=ToolRequestConfig([external("deploy")]))
    result = await view.call_tool(call("deploy", "{}"))
    assert result.is_suspended


def test_get_tool_reads_registry_or_view() -> None:
    kit = make_toolkit()
    geo = external("search")
    config = ToolRequestConfig([geo])
    assert kit.get_tool("search") is search
    assert kit.get_tool("search", config) is geo
    assert kit.get_tool("db_query", ToolRequestConfig([], ToolMergeMode.EXTERNAL_ONLY)) is None


def test_request_config_checks() -> None:
    geo = external("geolocate")
    with pytest.raises(ValueError, match="key must match"):
        ToolRequestConfig({"other": geo})
    with pytest.raises(ValueError, match="not external"):
        ToolRequestConfig([search])
    with pytest.raises(ValueError, match="two external tools"):
        ToolRequestConfig([geo, external("geolocate")])
    assert list(ToolRequestConfig({"geolocate": geo}).tools) == ["geolocate"]


def test_schema_only_tool_reads_every_definition_shape() -> None:
    parameters = {"type": "object", "properties": {"a": {"type": "integer"}}}
    shapes = [
        {"name": "t", "description": "D.", "parameters": parameters},
        {
            "type": "function",
            "function": {"name": "t", "description": "D.", "parameters": parameters},
        },
        {"type": "function", "name": "t", "description": "D.", "parameters": parameters},
        {"name": "t", "description": "D.", "input_schema": parameters},
        {"name": "t", "description": "D.", "inputSchema": parameters},
    ]
    for shape in shapes:
        tool_ = SchemaOnlyTool(shape)
        assert tool_.spec.name == "t"
        assert tool_.spec.external
        assert orjson.loads(tool_.spec.parameters_json) == parameters
    spec = ToolSpec(
        name="s", description="S.", parameters_json=orjson.dumps(parameters), strict=True
    )
    assert SchemaOnlyTool(spec).spec.strict is True
    assert SchemaOnlyTool({"name": "bare"}).spec.parameters_schema() == {
        "type": "object",
        "properties": {},
    }
    with pytest.raises(ValueError, match="name"):
        SchemaOnlyTool({"description": "no name"})


def test_view_schemas_are_stable_and_cached() -> None:
    registry = make_toolkit().snapshot()
    state = ToolContextState().with_groups({"database": True})
    config = ToolRequestConfig([external("geolocate")])
    first = registry.view(state, config).schemas_json("openai_chat")
    second = registry.view(state, config).schemas_json("openai_chat")
    assert first == second
    names = [tool_["function"]["name"] for tool_ in orjson.loads(first)]
    assert names == ["search", "reset_tools", "db_query", "geolocate"]


def test_removing_groups() -> None:
    kit = make_toolkit()
    assert kit.remove_group("deployment") == ("deploy",)
    assert "audit" in kit  # still in admin
    assert kit.group_of("audit") == {"admin"}
    schema = orjson.loads(kit.get_spec("reset_tools").parameters_json)  # type: ignore[union-attr]
    assert list(schema["properties"]) == ["database"]
    locked = Toolkit(ToolkitConfig(allow_removal=False))
    locked.create_group("g")
    assert locked.remove_group("g") == ()  # a no-op
    assert [group.name for group in locked.groups()] == ["g"]


class CountingStore:
    """An in-memory store that counts its round trips."""

    def __init__(self) -> None:
        self.inner = InMemorySessionStore()
        self.loads = 0
        self.writes = 0

    async def load(self, key: SessionKey) -> ToolContextState:
        self.loads += 1
        return await self.inner.load(key)

    async def compare_and_set(
        self, key: SessionKey, expected_revision: int, state: ToolContextState
    ) -> ToolContextState | None:
        self.writes += 1
        return await self.inner.compare_and_set(key, expected_revision, state)


async def test_reset_tools_is_one_write_when_nobody_else_wrote() -> None:
    registry = make_toolkit().snapshot()
    store = CountingStore()
    context = RuntimeContext(user_id="u", session_id="s")
    view = await registry.open_view(context, store)
    await view.call_tool(call("reset_tools", '{"database": true}'), context)
    assert (store.loads, store.writes) == (1, 1)
    # a stale view: its revision lost, so the change is re-read and re-applied
    await view.call_tool(call("reset_tools", '{"deployment": true}'), context)
    assert (store.loads, store.writes) == (2, 3)
    state = await store.inner.load(SessionKey("u", "s"))
    assert state.revision == 2
    assert dict(state.groups) == {"database": False, "deployment": True}


def test_view_schemas_follow_shadowing_and_groups() -> None:
    registry = make_toolkit().snapshot()
    config = ToolRequestConfig([external("search"), external("geolocate")])
    on = EMPTY_STATE.with_groups({"database": True})
    for _ in range(2):  # the second time from the caches
        listed: list[Any] = orjson.loads(registry.view(on, config).schemas_json())
        names = [t["function"]["name"] for t in listed]
        assert names == ["reset_tools", "db_query", "search", "geolocate"]
        listed = orjson.loads(registry.view().schemas_json())
        assert [t["function"]["name"] for t in listed] == ["search", "reset_tools"]


async def test_client_tool_schema_keeps_its_draft() -> None:
    # A draft 7 schema (as zod-to-json-schema emits): `dependencies` is honoured, not ignored.
    payment = SchemaOnlyTool(
        {
            "name": "pay",
            "description": "Pay.",
            "parameters": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"card": {"type": "string"}, "billing": {"type": "string"}},
                "dependencies": {"card": ["billing"]},
            },
        }
    )
    view = make_toolkit().snapshot().view(config=ToolRequestConfig([payment]))
    suspended = await view.call_tool(call("pay", '{"card": "4242", "billing": "Paris"}'))
    assert suspended.is_suspended
    invalid = await view.call_tool(call("pay", '{"card": "4242"}'))
    assert invalid.state is ToolResultState.ERROR
    assert not invalid.is_suspended
    assert "billing" in invalid.content
