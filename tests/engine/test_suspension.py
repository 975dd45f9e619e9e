"""Approval and external execution: a batch suspends, `resume` settles it exactly once.

Calls that need a person's approval do not run: their siblings' results come back with a
``confirm`` suspension; external calls give an ``external`` one; both are stored in the session
and settled by `resume` with AgentScope's exact refusals.
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest

from ferrotool import (
    AllToolsDenied,
    Confirmation,
    ConfirmationRequired,
    ExternalExecutionRequired,
    InMemorySessionStore,
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
    Reply,
    ResumeError,
    RuntimeContext,
    SchemaOnlyTool,
    SessionKey,
    SuspensionKind,
    ToolBase,
    ToolCallParam,
    ToolContextState,
    ToolEvent,
    Toolkit,
    ToolRequestConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    tool,
)

CONTEXT = RuntimeContext(user_id="ann", session_id="s1")
KEY = SessionKey("ann", "s1")
GEO = SchemaOnlyTool(
    {
        "name": "geolocate",
        "description": "Where the user is (the client runs it).",
        "parameters": {
            "type": "object",
            "properties": {"precise": {"type": "boolean"}},
            "additionalProperties": False,
        },
    }
)


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys a service: asks first."""

    name = "deploy"
    concurrency_safe = False
    input_schema = {
        "type": "object",
        "properties": {"env": {"type": "string", "enum": ["staging", "prod"]}},
        "required": ["env"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[str] = []

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask(f"Deploy to {tool_input['env']}?")

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        return bool(rule_content == tool_input["env"])

    def generate_suggestions(self, tool_input: dict[str, Any]) -> tuple[PermissionRule, ...]:
        return (
            PermissionRule(
                tool_name="deploy",
                rule_content=tool_input["env"],
                behavior=PermissionBehavior.ALLOW,
                source="suggested",
            ),
        )

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        self.runs.append(param.input["env"])
        return f"deployed to {param.input['env']}"


class Delete(ToolBase[dict[str, Any]]):
    """Always denied."""

    name = "delete"
    input_schema = {"type": "object", "properties": {}}

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.deny("deleting is never allowed here")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        raise AssertionError("never runs")


@tool
async def search(query: str) -> str:
    """Search."""
    return f"results for {query}"


def _setup() -> tuple[Toolkit, Deploy]:
    deploy = Deploy()
    kit = Toolkit()
    kit.register(search)
    kit.register(deploy)
    kit.register(Delete())
    return kit, deploy


def _context() -> RuntimeContext:
    return CONTEXT.with_value(ToolRequestConfig([GEO]))


async def test_approval_and_external_calls_wait_while_their_siblings_run() -> None:
    kit, deploy = _setup()
    store = InMemorySessionStore()
    registry = kit.snapshot()
    view = await registry.open_view(_context(), store)
    events: list[ToolEvent] = []
    calls = [
        ToolUseBlock("c1", "search", '{"query": "weather"}'),
        ToolUseBlock("c2", "deploy", '{"env": "prod"}'),
        ToolUseBlock("c3", "geolocate", '{"precise": true}'),
        ToolUseBlock("c4", "search", '{"query": "news"}'),
    ]
    batch = await view.call_tools(calls, _context(), on_event=events.append)
    assert [r.state for r in batch.results] == [
        ToolResultState.SUCCESS,
        ToolResultState.RUNNING,
        ToolResultState.RUNNING,
        ToolResultState.SUCCESS,
    ]
    assert batch.results[1].needs_approval
    assert batch.results[2].is_suspended
    assert deploy.runs == []
    suspension = batch.suspension
    assert suspension is not None
    assert suspension.kind is SuspensionKind.CONFIRM
    assert [p.id for p in suspension.pending] == ["c2", "c3"]
    (asking,) = suspension.confirmations
    assert asking.message == "Deploy to prod?"
    assert asking.suggestions[0].rule_content == "prod"
    assert suspension.external_calls == (calls[2],)
    stored = await store.load(KEY)
    assert [(p.id, p.kind, p.reply_id) for p in stored.pending_calls] == [
        ("c2", SuspensionKind.CONFIRM, suspension.reply_id),
        ("c3", SuspensionKind.EXTERNAL, suspension.reply_id),
    ]
    tail = [
        event
        for event in events
        if isinstance(event, ConfirmationRequired | ExternalExecutionRequired)
    ]
    assert [type(event) for event in tail] == [ConfirmationRequired, ExternalExecutionRequired]
    assert {event.reply_id for event in tail} == {suspension.reply_id}

    # Partial results are accepted; the rest stays pending under the same reply id.
    client_result = ToolResultBlock.success('{"lat": 48.8}', id="c3")
    partial = await registry.resume(_context(), store, [client_result])
    assert partial.reply_id == suspension.reply_id
    assert [(r.id, r.name, r.state) for r in partial.results] == [
        ("c3", "geolocate", ToolResultState.SUCCESS)
    ]
    assert partial.suspension is not None
    assert [p.id for p in partial.suspension.pending] == ["c2"]

    # An approval whose edited arguments ask another question asks again, under a new id; its
    # rules join the session. The new question, approved, runs once.
    rule = asking.suggestions[0]
    again = await registry.resume(
        _context(), store, [Confirmation("c2", True, arguments={"env": "staging"}, rules=(rule,))]
    )
    (placeholder,) = again.results
    assert placeholder.needs_approval
    assert placeholder.metadata["replaces"] == "c2"
    assert again.suspension is not None
    (asked,) = again.suspension.pending
    assert asked.id == placeholder.id != "c2"
    assert asked.call.input == {"env": "staging"}
    assert deploy.runs == []
    approved = await registry.resume(_context(), store, [Confirmation(asked.id, True)])
    assert [(r.id, r.state, r.content) for r in approved.results] == [
        (asked.id, ToolResultState.SUCCESS, "deployed to staging")
    ]
    assert approved.suspension is None
    assert deploy.runs == ["staging"]
    state = await store.load(KEY)
    assert state.pending_calls == ()
    assert state.permissions.allow_rules["deploy"] == (rule,)


async def test_a_rule_a_person_added_stops_the_asking() -> None:
    kit, deploy = _setup()
    store = InMemorySessionStore()
    registry = kit.snapshot()
    view = await registry.open_view(CONTEXT, store)
    first = await view.call_tools([ToolUseBlock("c1", "deploy", '{"env": "prod"}')], CONTEXT)
    assert first.suspension is not None
    (asking,) = first.suspension.confirmations
    await registry.resume(CONTEXT, store, [Confirmation("c1", True, rules=asking.suggestions)])
    view = await registry.open_view(CONTEXT, store)
    again = await view.call_tools(
        [
            ToolUseBlock("c2", "deploy", '{"env": "prod"}'),
            ToolUseBlock("c3", "deploy", '{"env": "staging"}'),
        ],
        CONTEXT,
    )
    assert again.results[0].content == "deployed to prod"  # the rule's content matches
    assert again.results[1].needs_approval  # another environment still asks
    assert deploy.runs == ["prod", "prod"]


async def test_a_rejected_call_is_denied_by_the_user() -> None:
    kit, deploy = _setup()
    store = InMemorySessionStore()
    registry = kit.snapshot()
    view = await registry.open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock("c1", "deploy", '{"env": "prod"}')], CONTEXT)
    rejected = await registry.resume(CONTEXT, store, [Confirmation("c1", False)])
    (result,) = rejected.results
    assert (result.id, result.state, result.content) == (
        "c1",
        ToolResultState.DENIED,
        "Permission denied by user",
    )
    assert rejected.all_denied
    assert deploy.runs == []


async def test_edited_arguments_are_validated_before_anything_is_accepted() -> None:
    kit, deploy = _setup()
    store = InMemorySessionStore()
    registry = kit.snapshot()
    view = await registry.open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock("c1", "deploy", '{"env": "prod"}')], CONTEXT)
    with pytest.raises(ResumeError, match="c1: the edited arguments are invalid") as refused:
        await registry.resume(CONTEXT, store, [Confirmation("c1", True, arguments={"env": "moon"})])
    assert "env" in str(refused.value)
    assert [p.id for p in (await store.load(KEY)).pending_calls] == ["c1"]
    assert deploy.runs == []


async def test_a_batch_whose_every_call_is_denied_says_so() -> None:
    kit, _ = _setup()
    events: list[ToolEvent] = []
    batch = await kit.call_tools(
        [ToolUseBlock("c1", "delete", "{}"), ToolUseBlock("c2", "delete", "{}")],
        on_event=events.append,
    )
    assert batch.all_denied
    assert isinstance(events[-1], AllToolsDenied)
    assert [r.state for r in events[-1].results] == [ToolResultState.DENIED] * 2


async def _suspended(store: InMemorySessionStore) -> Toolkit:
    kit, _ = _setup()
    view = await kit.snapshot().open_view(_context(), store)
    await view.call_tools(
        [
            ToolUseBlock("c1", "deploy", '{"env": "prod"}'),
            ToolUseBlock("c2", "geolocate", "{}"),
            ToolUseBlock("c3", "geolocate", '{"precise": false}'),
        ],
        _context(),
    )
    return kit


@pytest.mark.parametrize(
    ("replies", "message"),
    [
        (
            [],
            "Cannot add messages without tool results when pending tool calls exist. "
            "Pending IDs: [c1, c2, c3]",
        ),
        (
            ["just text"],
            "Cannot add messages without tool results when pending tool calls "
            "exist. Pending IDs: [c1, c2, c3]",
        ),
        (
            [ToolResultBlock.success("x", id="c9")],
            "Invalid tool result IDs: [c9]. Expected: [c2, c3]",
        ),
        (
            [ToolResultBlock.success("x", id="c1")],
            "Invalid tool result IDs: [c1]. Expected: [c2, c3]",
        ),
        (
            [ToolResultBlock.success("x", id="c2"), ToolResultBlock.success("y", id="c2")],
            "Duplicate tool result ID: c2",
        ),
        (
            [Confirmation("c2", True)],
            "ConfirmResult references non-ASKING tool call ID: c2. Expected: [c1]",
        ),
        (
            [Confirmation("c1", True), Confirmation("c1", False)],
            "Duplicate ConfirmResult for tool call ID: c1",
        ),
        ([Confirmation("", True)], "ConfirmResult.toolCall.id must not be empty."),
        (
            [ToolResultBlock.success("x", id="c2"), "and some text"],
            "Cannot include text content when providing partial tool results. "
            "Provided: [c2], Pending: [c2, c3]",
        ),
    ],
)
async def test_refusals_have_the_studys_messages_and_accept_nothing(
    replies: list[Any], message: str
) -> None:
    store = InMemorySessionStore()
    kit = await _suspended(store)
    before = await store.load(KEY)
    with pytest.raises(ResumeError) as refused:
        await kit.snapshot().resume(_context(), store, replies)
    assert str(refused.value) == message
    after = await store.load(KEY)
    assert after == before
    assert after.revision == before.revision


async def test_text_with_a_complete_set_of_results_is_accepted() -> None:
    store = InMemorySessionStore()
    kit = await _suspended(store)
    replies: list[Reply] = [
        ToolResultBlock.success("here", id="c2"),
        ToolResultBlock.success("there", id="c3"),
        "the user also says hi",
    ]
    settled = await kit.snapshot().resume(_context(), store, replies)
    assert [r.id for r in settled.results] == ["c2", "c3"]


async def test_a_reply_delivered_twice_is_accepted_once() -> None:
    store = InMemorySessionStore()
    kit, deploy = _setup()
    registry = kit.snapshot()
    view = await registry.open_view(CONTEXT, store)
    await view.call_tools([ToolUseBlock("c1", "deploy", '{"env": "prod"}')], CONTEXT)
    outcomes: list[str] = []

    async def deliver() -> None:
        try:
            await registry.resume(CONTEXT, store, [Confirmation("c1", True)])
            outcomes.append("ran")
        except ResumeError as refused:
            outcomes.append(str(refused))

    async with anyio.create_task_group() as group:
        for _ in range(8):
            group.start_soon(deliver)
    assert outcomes.count("ran") == 1
    assert deploy.runs == ["prod"]
    refusals = [text for text in outcomes if text != "ran"]
    assert refusals == ["ConfirmResult references non-ASKING tool call ID: c1. Expected: []"] * 7


async def test_resume_needs_a_session_store() -> None:
    kit, _ = _setup()
    with pytest.raises(ValueError, match="needs a session"):
        await kit.snapshot().view().resume([Confirmation("c1", True)])


async def test_a_deny_rule_stops_an_external_call_before_it_suspends() -> None:
    kit, _ = _setup()
    rule = PermissionRule(
        tool_name="geolocate", rule_content=None, behavior=PermissionBehavior.DENY, source="user"
    )
    # Even in BYPASS mode (everything else runs without asking), the deny rule comes first.
    bypass = PermissionContextState(mode=PermissionMode.BYPASS)
    state = ToolContextState(permissions=bypass.with_rules([rule]))
    view = kit.snapshot().view(state, ToolRequestConfig([GEO]))
    batch = await view.call_tools(
        [ToolUseBlock("c1", "geolocate", "{}"), ToolUseBlock("c2", "search", '{"query": "x"}')],
        CONTEXT,
    )
    denied, found = batch.results
    assert denied.state is ToolResultState.DENIED
    assert not denied.is_suspended
    assert found.content == "results for x"
    assert batch.suspension is None


async def test_a_reply_id_is_made_only_for_a_batch_that_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []
    make = uuid.uuid4

    def counted() -> uuid.UUID:
        fresh = make()
        made.append(fresh.hex)
        return fresh

    monkeypatch.setattr(uuid, "uuid4", counted)
    kit, _ = _setup()
    view = await kit.snapshot().open_view(CONTEXT, InMemorySessionStore())
    ran = await view.call_tools([ToolUseBlock("c1", "search", '{"query": "a"}')], CONTEXT)
    denied = await view.call_tools([ToolUseBlock("c2", "delete", "{}")], CONTEXT)
    assert (ran.suspension, ran.reply_id, denied.suspension, denied.reply_id) == (None,) * 4
    assert made == []
    waits = await view.call_tools([ToolUseBlock("c3", "deploy", '{"env": "prod"}')], CONTEXT)
    assert waits.suspension is not None
    assert made == [waits.suspension.reply_id] == [waits.reply_id]
