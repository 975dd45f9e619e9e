"""Laws of request views, the meta tool and session state (hypothesis)."""

from __future__ import annotations

from dataclasses import dataclass

import anyio
from hypothesis import given
from hypothesis import strategies as st

from ferrotool import (
    FunctionTool,
    InMemorySessionStore,
    PendingToolCall,
    PermissionBehavior,
    PermissionContextState,
    PermissionMode,
    PermissionRule,
    Registry,
    RuntimeContext,
    SchemaOnlyTool,
    SessionKey,
    SuspensionKind,
    ToolContextState,
    Toolkit,
    ToolkitConfig,
    ToolMergeMode,
    ToolRequestConfig,
    ToolUseBlock,
    WorkingDirectory,
    tool,
)

GROUPS = tuple(f"g{i}" for i in range(5))


def _make(i: int) -> FunctionTool[[], str]:
    def backend() -> str:
        return f"backend t{i}"

    return tool(backend, name=f"t{i}", inline=True)


BACKEND = tuple(_make(i) for i in range(10))
EXTERNAL = {
    name: SchemaOnlyTool({"name": name, "description": f"client {name}"})
    for name in (*(f"t{i}" for i in range(10)), *(f"x{i}" for i in range(5)))
}


@dataclass(frozen=True)
class World:
    registry: Registry
    groups_of: dict[str, frozenset[str]]
    scopes: dict[str, bool]  # group -> session-scoped


@st.composite
def worlds(draw: st.DrawFn) -> World:
    kit = Toolkit(ToolkitConfig(meta_tool=True))
    scopes = {}
    for group in GROUPS:
        session = draw(st.booleans())
        scopes[group] = session
        kit.create_group(
            group,
            f"group {group}",
            scope="session" if session else "application",  # type: ignore[arg-type]
            active=draw(st.booleans()),
        )
    groups_of = {}
    for backend in draw(st.lists(st.sampled_from(BACKEND), unique=True, max_size=10)):
        groups = draw(st.frozensets(st.sampled_from(GROUPS), max_size=3))
        kit.register(backend, group=groups)
        groups_of[backend.spec.name] = groups
    return World(kit.snapshot(), groups_of, scopes)


states = st.builds(
    lambda flags: ToolContextState().with_groups(flags),
    st.dictionaries(st.sampled_from(GROUPS), st.booleans()),
)
modes = st.sampled_from(ToolMergeMode)
external_lists = st.lists(st.sampled_from(sorted(EXTERNAL)), unique=True, max_size=6)


def config_for(mode: ToolMergeMode, names: list[str]) -> ToolRequestConfig:
    if mode is ToolMergeMode.AGENT_ONLY:
        return ToolRequestConfig([], mode)
    return ToolRequestConfig([EXTERNAL[name] for name in names], mode)


def active(world: World, state: ToolContextState) -> set[str]:
    return {g.name for g in world.registry.groups() if state.is_active(g.name, g.active)}


@given(worlds(), states, modes, external_lists)
def test_building_a_view_changes_neither_registry_nor_session(
    world: World, state: ToolContextState, mode: ToolMergeMode, names: list[str]
) -> None:
    registry = world.registry
    before = (registry.names(), registry.specs(), [registry.group_of(n) for n in registry])
    snapshot = ToolContextState.from_json(state.to_json())
    view = registry.view(state, config_for(mode, names))
    view.names()
    view.schemas_json("openai_chat")
    assert (registry.names(), registry.specs(), [registry.group_of(n) for n in registry]) == before
    assert state == snapshot


@given(worlds(), states, external_lists)
def test_external_only_shows_no_backend_tool(
    world: World, state: ToolContextState, names: list[str]
) -> None:
    view = world.registry.view(state, config_for(ToolMergeMode.EXTERNAL_ONLY, names))
    assert view.names() == tuple(names)
    for name in world.registry:
        if name not in names:
            assert view.get_tool(name) is None


@given(worlds(), states, external_lists)
def test_merge_external_priority_resolution(
    world: World, state: ToolContextState, names: list[str]
) -> None:
    registry = world.registry
    view = registry.view(state, config_for(ToolMergeMode.MERGE_EXTERNAL_PRIORITY, names))
    on = active(world, state)
    for name in names:
        assert view.get_tool(name) is EXTERNAL[name]
    expected_backend = [
        name
        for name in registry
        if name not in names
        and (name == "reset_tools" or not world.groups_of[name] or world.groups_of[name] & on)
    ]
    assert view.names() == (*expected_backend, *names)
    for name in expected_backend:
        assert view.get_tool(name) is registry.get_tool(name)


@given(
    worlds(),
    st.dictionaries(st.sampled_from(GROUPS), st.booleans()),
    st.dictionaries(st.sampled_from(GROUPS), st.booleans()),
)
def test_reset_tools_is_idempotent_and_overwrites(
    world: World, first: dict[str, bool], second: dict[str, bool]
) -> None:
    registry = world.registry
    if "reset_tools" not in registry:
        return  # no session-scoped group: nothing to switch
    session = [g for g, is_session in world.scopes.items() if is_session]
    first = {g: v for g, v in first.items() if g in session}
    second = {g: v for g, v in second.items() if g in session}

    async def run(*calls: dict[str, bool]) -> ToolContextState:
        store = InMemorySessionStore()
        context = RuntimeContext(user_id="u", session_id="s")
        for flags in calls:
            view = await registry.open_view(context, store)
            block = ToolUseBlock.of("c", "reset_tools", flags)
            result = await view.call_tool(block, context)
            assert result.state.value == "success", result.content
        return await store.load(SessionKey("u", "s"))

    once = anyio.run(run, second)
    assert anyio.run(run, second, second) == once  # idempotent
    assert anyio.run(run, first, second) == once  # the last call states everything
    assert {g for g in session if once.is_active(g, False)} == {g for g, v in second.items() if v}


RULES = st.builds(
    PermissionRule,
    tool_name=st.from_regex(r"[A-Za-z0-9_*-]{1,64}", fullmatch=True),  # a name or a pattern
    behavior=st.sampled_from(PermissionBehavior),
    rule_content=st.none() | st.text(),
    source=st.text(),
)


@given(
    st.builds(
        ToolContextState,
        groups=st.dictionaries(st.text(min_size=1), st.booleans()),
        skills=st.frozensets(st.text()),
        pending_calls=st.lists(
            st.builds(
                PendingToolCall,
                call=st.builds(ToolUseBlock, st.text(), st.text(), st.just('{"a": 1}')),
                kind=st.sampled_from(SuspensionKind),
                reply_id=st.text(),
                message=st.text(),
                suggestions=st.lists(RULES, max_size=2).map(tuple),
            )
        ).map(tuple),
        permissions=st.builds(
            PermissionContextState,
            mode=st.sampled_from(PermissionMode),
            working_directories=st.dictionaries(
                st.text(), st.builds(WorkingDirectory, st.text(), st.text()), max_size=2
            ),
        ).flatmap(lambda state: st.lists(RULES, max_size=4).map(state.with_rules)),
    )
)
def test_state_json_round_trips(state: ToolContextState) -> None:
    assert ToolContextState.from_json(state.to_json()) == state
