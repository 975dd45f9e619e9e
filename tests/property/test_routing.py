"""One routing decision, and the laws around it.

`ToolView.route` decides whether a call runs as its tool's Rust direct call or through the
pipeline; every Python entry uses it. `Toolkit.call_tool` is a method of the Rust base class
`ToolCaller`, which runs the default view's direct calls itself, without a Python frame (and so
does `Toolkit.call_tool_sync`, for a sync caller's direct calls). Here:

* the Rust shortcut is taken exactly when the Python decision says so (no middleware, no result
  sink, no request config in the context, and the default view routes the call to a direct
  call), and both give the same result, for generated toolkits, contexts and calls; the same
  for the sync entry, `call_tool_sync`, and the sync route;
* a one-call batch gives the same result as `call_tool`;
* a middleware that passes every call on changes no result, on every entry.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, cast
from unittest.mock import patch

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrotool import (
    EMPTY_PERMISSIONS,
    AgentTool,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
    RuntimeContext,
    ToolBase,
    ToolCallParam,
    ToolContextState,
    Toolkit,
    ToolkitConfig,
    ToolRequestConfig,
    ToolResultBlock,
    ToolUseBlock,
    tool,
)
from ferrotool._core import DirectCall, PendingCall
from ferrotool._registry.registry import ToolSet
from ferrotool._registry.view import ToolView
from ferrotool._values.context import ProgressSink
from ferrotool.testing import invalid_arguments, valid_arguments


@tool(inline=True)
def plain(word: str, times: int = 1) -> str:
    """A plain sync tool: direct for both callers."""
    if times > 90:
        raise ValueError("too many")
    return word * times


@tool
async def plain_async(word: str) -> str:
    """A plain async tool: direct for an async caller only."""
    return word.upper()


@tool
def threaded(n: int) -> int:
    """A sync tool on a worker thread: direct for a sync caller only."""
    return n + 1


@tool(timeout=5)
async def timed(n: int) -> int:
    """A tool with a timeout: never direct (the pipeline enforces it)."""
    return n * 2


@tool(inline=True)
def preset(word: str, suffix: str) -> str:
    """Registered with a preset: never direct."""
    return word + suffix


@tool(inline=True)
def grouped(n: int) -> int:
    """A plain tool in a group."""
    return -n


class Checked(ToolBase[dict[str, Any]]):
    """A tool that checks its permissions: never direct."""

    name = "checked"
    input_schema = {
        "type": "object",
        "properties": {"q": {"type": "string", "maxLength": 8}},
        "required": ["q"],
    }

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        if tool_input["q"] == "no":
            return PermissionDecision.deny("not this one")
        if tool_input["q"] == "ask":
            return PermissionDecision.ask("may I?")
        return PermissionDecision.allow()

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        return f"checked {param.input['q']}"


class Outside(ToolBase[dict[str, Any]]):
    """A request's own tool, run by the client."""

    name = "outside"
    description = "Runs where the client is."
    input_schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    external = True

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        raise AssertionError("an external tool never runs here")


CHECKED = Checked()
OUTSIDE = Outside()
SCHEMAS: dict[str, AgentTool] = {
    "plain": plain,
    "plain_async": plain_async,
    "threaded": threaded,
    "timed": timed,
    "preset": preset,
    "grouped": grouped,
    "checked": CHECKED,
}
NAMES = [*SCHEMAS, "outside", "missing"]


async def passthrough(call: ToolUseBlock, context: RuntimeContext, next: Any) -> ToolResultBlock:
    result: ToolResultBlock = await next(call, context)
    return result


@dataclass(frozen=True)
class Setup:
    middleware: bool
    group_active: bool

    def toolkit(self, *, middleware: bool | None = None) -> Toolkit:
        layers = (passthrough,) if (self.middleware if middleware is None else middleware) else ()
        toolkit = Toolkit(ToolkitConfig(middleware=layers))
        toolkit.create_group("g", "Grouped tools", active=self.group_active)
        for item in (plain, plain_async, threaded, timed, CHECKED):
            toolkit.register(item)
        toolkit.register(preset, presets={"suffix": "!"})
        toolkit.register(grouped, group="g")
        return toolkit


setups = st.builds(Setup, st.booleans(), st.booleans())


def arguments_for(name: str) -> st.SearchStrategy[str]:
    source = SCHEMAS.get(name)
    if source is None:
        return st.sampled_from(["{}", '{"n": 1}'])
    bad = invalid_arguments(source).map(lambda invalid: invalid.arguments)
    return st.one_of(valid_arguments(source), bad)


calls = st.sampled_from(NAMES).flatmap(
    lambda name: arguments_for(name).map(lambda arguments: ToolUseBlock("c1", name, arguments))
)
REQUEST = ToolRequestConfig(tools={"outside": OUTSIDE})
contexts = st.sampled_from(
    [
        None,
        RuntimeContext(user_id="ann"),
        RuntimeContext.of(REQUEST, user_id="ann"),
    ]
)


def _sink(result: ToolResultBlock) -> None:
    del result


async def _finish(running: Awaitable[ToolResultBlock]) -> ToolResultBlock:
    return await running


@settings(max_examples=300, deadline=None)
@given(setups, calls, contexts, st.booleans())
def test_the_rust_shortcut_is_taken_exactly_when_the_route_is_direct(
    setup: Setup, call: ToolUseBlock, context: RuntimeContext | None, with_sink: bool
) -> None:
    toolkit = setup.toolkit()
    on_result = _sink if with_sink else None
    running = toolkit.call_tool(call, context, on_result=on_result)
    shortcut = isinstance(cast("object", running), PendingCall)
    carries_config = context is not None and ToolRequestConfig in context.values
    routed = toolkit.view().route(call)
    expected = (
        not setup.middleware
        and on_result is None
        and not carries_config
        and type(routed) is DirectCall
    )
    assert shortcut == expected
    result = anyio.run(_finish, running)
    config = REQUEST if carries_config else None
    assert result == anyio.run(_finish, toolkit.view(config=config).call_tool(call, context))


@settings(max_examples=300, deadline=None)
@given(setups, calls, contexts)
def test_the_sync_shortcut_is_taken_exactly_when_the_sync_route_is_direct(
    setup: Setup, call: ToolUseBlock, context: RuntimeContext | None
) -> None:
    piped: list[ToolUseBlock] = []
    through_pipeline = ToolSet._call_slow_sync

    def counted(
        toolset: ToolSet,
        call: ToolUseBlock,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
    ) -> ToolResultBlock:
        piped.append(call)
        return through_pipeline(toolset, call, context, agent, on_progress)

    with patch.object(ToolSet, "_call_slow_sync", counted):  # bound when the table is
        toolkit = setup.toolkit()
    result = toolkit.call_tool_sync(call, context)
    carries_config = context is not None and ToolRequestConfig in context.values
    routed = toolkit.view().route(call, sync=True)
    expected = not setup.middleware and not carries_config and type(routed) is DirectCall
    assert (not piped) == expected
    config = REQUEST if carries_config else None
    assert result == toolkit.view(config=config).call_tool_sync(call, context)
    assert result == toolkit.snapshot().call_tool_sync(call, context)


def _ruled(*rules: PermissionRule) -> ToolContextState:
    return ToolContextState().with_permissions(EMPTY_PERMISSIONS.with_rules(rules))


def _views(setup: Setup, rules: bool) -> tuple[ToolView, ToolView]:
    state = ToolContextState()
    if rules:
        state = _ruled(
            PermissionRule(tool_name="plain", behavior=PermissionBehavior.ASK),
            PermissionRule(tool_name="threaded", behavior=PermissionBehavior.DENY),
        )
    plain_view = setup.toolkit(middleware=False).view(state, REQUEST)
    layered = setup.toolkit(middleware=True).view(state, REQUEST)
    return plain_view, layered


@settings(max_examples=200, deadline=None)
@given(setups, calls, st.booleans())
def test_a_one_call_batch_gives_the_result_of_call_tool(
    setup: Setup, call: ToolUseBlock, rules: bool
) -> None:
    for view in _views(setup, rules):

        async def both(view: ToolView = view) -> tuple[ToolResultBlock, ToolResultBlock]:
            single = await view.call_tool(call, RuntimeContext(user_id="ann"))
            batch = await view.call_tools([call], RuntimeContext(user_id="ann"))
            return single, batch.results[0]

        single, batched = anyio.run(both)
        assert batched == single


@settings(max_examples=200, deadline=None)
@given(setups, st.lists(calls, min_size=1, max_size=4), st.booleans())
def test_a_passthrough_middleware_changes_no_result(
    setup: Setup, batch: list[ToolUseBlock], rules: bool
) -> None:
    batch = [call._replace(id=f"c{index}") for index, call in enumerate(batch)]
    bare, layered = _views(setup, rules)
    context = RuntimeContext(user_id="ann")

    async def results(view: ToolView) -> tuple[object, ...]:
        singles = [await view.call_tool(call, context) for call in batch]
        batched = await view.call_tools(batch, context)
        return (*singles, batched.results)

    assert anyio.run(results, layered) == anyio.run(results, bare)
    for call in batch:
        if call.name != "outside":
            assert layered.call_tool_sync(call, context) == bare.call_tool_sync(call, context)


def test_the_route_names_each_kind() -> None:
    toolkit = Setup(middleware=False, group_active=False).toolkit()
    view = toolkit.view()
    route = {name: view.route(ToolUseBlock("c", name, "{}")) for name in NAMES}
    sync = {name: view.route(ToolUseBlock("c", name, "{}"), sync=True) for name in NAMES}
    assert type(route["plain"]) is DirectCall
    assert type(sync["plain"]) is DirectCall
    assert type(route["plain_async"]) is DirectCall
    assert type(sync["plain_async"]) is not DirectCall
    assert type(route["threaded"]) is not DirectCall
    assert type(sync["threaded"]) is DirectCall
    for name in ("preset", "checked", "timed"):
        assert type(route[name]) is not DirectCall, name
    for name in ("grouped", "outside", "missing"):  # inactive group, not a tool here, unknown
        assert type(route[name]) is ToolResultBlock, name
    asking = toolkit.view(
        _ruled(PermissionRule(tool_name="plain", behavior=PermissionBehavior.ASK))
    )
    assert type(asking.route(ToolUseBlock("c", "plain", "{}"))) is not DirectCall
    with_request = toolkit.view(config=REQUEST)
    assert type(with_request.route(ToolUseBlock("c", "plain", "{}"))) is not DirectCall
