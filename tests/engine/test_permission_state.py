"""A call's permission state travels on its result, where a transcript reads it.

The pipeline records what the permission step decided (`PermissionState`: asking, allowed,
denied) in the result's metadata under `PERMISSION_STATE_KEY`, read back typed through
`ToolResultBlock.permission_state`; a call no permission step decided has none.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from ferrotool import (
    PERMISSION_STATE_KEY,
    Confirmation,
    InMemorySessionStore,
    JsonValue,
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
    PermissionState,
    RuntimeContext,
    SchemaOnlyTool,
    ToolBase,
    ToolCallParam,
    ToolContextState,
    Toolkit,
    ToolRequestConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.providers import anthropic, openai_chat


class Gated(ToolBase[dict[str, Any]]):
    """Decides by its input: ``allow``, ``ask`` or ``deny``."""

    name = "gated"
    input_schema = {"type": "object", "properties": {"say": {"type": "string"}}}

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        say = tool_input["say"]
        if say == "deny":
            return PermissionDecision.deny("no")
        if say == "ask":
            return PermissionDecision.ask("May I?")
        return PermissionDecision.allow("yes")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        return f"ran {param.input['say']}"


@tool
def plain(n: int) -> int:
    """A tool no permission step decides in a trivial session."""
    return n


@tool
def fails() -> str:
    """Raises after it was allowed."""
    raise RuntimeError("boom")


GEO = SchemaOnlyTool({"name": "geolocate", "parameters": {"type": "object"}})
CONTEXT = RuntimeContext(user_id="ann", session_id="s1").with_value(ToolRequestConfig([GEO]))


def _kit() -> Toolkit:
    kit = Toolkit()
    kit.register(Gated())
    kit.register(plain)
    kit.register(fails)
    return kit


def _call(id: str, name: str, arguments: str = "{}") -> ToolUseBlock:
    return ToolUseBlock(id, name, arguments)


async def test_the_gates_decision_is_on_the_result() -> None:
    kit = _kit()
    results = {
        say: await kit.call_tool(_call(say, "gated", f'{{"say": "{say}"}}'))
        for say in ("allow", "ask", "deny")
    }
    allowed, asking, denied = results["allow"], results["ask"], results["deny"]
    assert (allowed.state, allowed.permission_state) == (
        ToolResultState.SUCCESS,
        PermissionState.ALLOWED,
    )
    assert asking.needs_approval
    assert asking.permission_state is PermissionState.ASKING
    assert (denied.state, denied.permission_state) == (
        ToolResultState.DENIED,
        PermissionState.DENIED,
    )
    assert denied.metadata[PERMISSION_STATE_KEY] == "denied"  # plain JSON in the metadata
    # No permission step decided a plain tool's call in a trivial session: no state.
    assert (await kit.call_tool(_call("p", "plain", '{"n": 1}'))).permission_state is None
    assert kit.call_tool_sync(_call("p", "plain", '{"n": 1}')).permission_state is None


async def test_a_session_with_rules_decides_every_call() -> None:
    kit = _kit()
    rules = [
        PermissionRule(tool_name="plain", behavior=PermissionBehavior.ALLOW, source="test"),
        PermissionRule(tool_name="fails", behavior=PermissionBehavior.ALLOW, source="test"),
    ]
    state = ToolContextState(permissions=PermissionContextState().with_rules(rules))
    view = kit.snapshot().view(state, ToolRequestConfig([GEO]))
    batch = await view.call_tools(
        [
            _call("a", "plain", '{"n": 2}'),
            _call("b", "fails"),  # allowed, then failed: the two are apart
            _call("c", "plain", '{"n": "x"}'),  # invalid: no permission step ran
            _call("d", "geolocate"),  # allowed by the mode's default? it asks
        ],
        CONTEXT,
    )
    a, b, c, d = batch.results
    assert (a.state, a.permission_state) == (ToolResultState.SUCCESS, PermissionState.ALLOWED)
    assert (b.state, b.permission_state) == (ToolResultState.ERROR, PermissionState.ALLOWED)
    assert (c.state, c.permission_state) == (ToolResultState.ERROR, None)
    assert d.needs_approval
    assert d.permission_state is PermissionState.ASKING


async def test_an_external_call_allowed_waits_allowed() -> None:
    kit = _kit()
    bypass = PermissionContextState(mode=PermissionMode.BYPASS)
    view = kit.snapshot().view(ToolContextState(permissions=bypass), ToolRequestConfig([GEO]))
    result = await view.call_tool(_call("g", "geolocate"), CONTEXT)
    assert result.is_suspended
    assert result.permission_state is PermissionState.ALLOWED


async def test_a_resume_records_the_persons_answer() -> None:
    kit = _kit()
    store = InMemorySessionStore()
    registry = kit.snapshot()
    view = await registry.open_view(CONTEXT, store)
    first = await view.call_tools(
        [_call("c1", "gated", '{"say": "ask"}'), _call("c2", "gated", '{"say": "ask"}')], CONTEXT
    )
    assert [r.permission_state for r in first.results] == [PermissionState.ASKING] * 2
    done = await registry.resume(
        CONTEXT, store, [Confirmation("c1", True), Confirmation("c2", False)]
    )
    approved, rejected = done.results
    assert (approved.content, approved.permission_state) == ("ran ask", PermissionState.ALLOWED)
    assert (rejected.state, rejected.permission_state) == (
        ToolResultState.DENIED,
        PermissionState.DENIED,
    )


def test_the_state_round_trips_and_an_unknown_one_reads_as_none() -> None:
    result = ToolResultBlock.success(
        "x", id="c1", name="t", metadata={PERMISSION_STATE_KEY: "allowed"}
    )
    back = ToolResultBlock.from_json(result.to_json())
    assert back == result
    assert back.permission_state is PermissionState.ALLOWED
    assert orjson.loads(result.to_json())["metadata"] == {"permission_state": "allowed"}
    odds: list[JsonValue] = ["ALLOWED", "pending", 1, None, ["allowed"]]
    for odd in odds:
        block = ToolResultBlock.success("x", metadata={PERMISSION_STATE_KEY: odd})
        assert block.permission_state is None, odd
    assert ToolResultBlock.success("x").permission_state is None


@pytest.mark.parametrize("state", list(PermissionState))
def test_provider_messages_do_not_change_with_the_state(state: PermissionState) -> None:
    bare = ToolResultBlock.success("x", id="c1", name="t")
    marked = bare._replace(metadata={PERMISSION_STATE_KEY: state.value})
    assert openai_chat.result_messages([marked]) == openai_chat.result_messages([bare])
    assert anthropic.result_messages([marked]) == anthropic.result_messages([bare])
