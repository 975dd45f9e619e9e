"""A resume reports what a batch reports: its calls' events and its end events, by reply id.

A streaming client that opened a request on a batch's `ConfirmationRequired` or
`ExternalExecutionRequired` closes it on the resume's `ConfirmationResult` or
`ExternalExecutionResult` (same reply id), then reads the settled calls' `ToolCallFinished`
and the same end events a batch gives: what still waits, and `AllToolsDenied`.
"""

from __future__ import annotations

from typing import Any

import pytest

from ferrotool import (
    AllToolsDenied,
    Confirmation,
    ConfirmationRequired,
    ConfirmationResult,
    ExternalExecutionRequired,
    ExternalExecutionResult,
    InMemorySessionStore,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
    ResumeError,
    RuntimeContext,
    SchemaOnlyTool,
    SessionKey,
    ToolBase,
    ToolCallFinished,
    ToolCallParam,
    ToolCallStarted,
    ToolEvent,
    Toolkit,
    ToolRequestConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    ToolView,
)

CONTEXT = RuntimeContext(user_id="ann", session_id="s1").with_value(
    ToolRequestConfig(
        [
            SchemaOnlyTool(
                {
                    "name": "geolocate",
                    "description": "Where the user is (the client runs it).",
                    "parameters": {"type": "object", "properties": {}},
                }
            )
        ]
    )
)
KEY = SessionKey("ann", "s1")


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys a service: asks first."""

    name = "deploy"
    concurrency_safe = False
    input_schema = {
        "type": "object",
        "properties": {"env": {"type": "string"}},
        "required": ["env"],
    }

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask(f"Deploy to {tool_input['env']}?")

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        return bool(rule_content == tool_input["env"])

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        return f"deployed to {param.input['env']}"


DEPLOY = ToolUseBlock("c1", "deploy", '{"env": "prod"}')
GEO_1 = ToolUseBlock("c2", "geolocate", "{}")
GEO_2 = ToolUseBlock("c3", "geolocate", "{}")


async def _suspended(calls: list[ToolUseBlock]) -> tuple[Toolkit, InMemorySessionStore, str]:
    kit = Toolkit()
    kit.register(Deploy())
    store = InMemorySessionStore()
    view = await kit.snapshot().open_view(CONTEXT, store)
    batch = await view.call_tools(calls, CONTEXT)
    assert batch.suspension is not None
    return kit, store, batch.suspension.reply_id


async def _view(kit: Toolkit, store: InMemorySessionStore) -> ToolView:
    return await kit.snapshot().open_view(CONTEXT, store)


async def _streamed(view: ToolView, replies: list[Any]) -> list[ToolEvent]:
    async with view.stream_resume(replies, CONTEXT) as stream:
        return [event async for event in stream]


def _kinds(events: list[ToolEvent]) -> list[type]:
    return [type(event) for event in events]


async def test_a_resume_streams_its_result_events_under_the_reply_id() -> None:
    kit, store, reply_id = await _suspended([DEPLOY, GEO_1, GEO_2])
    client = ToolResultBlock.success("48.85N", id="c2")
    events = await _streamed(await _view(kit, store), [Confirmation("c1", True), client])
    assert _kinds(events) == [
        ConfirmationResult,
        ExternalExecutionResult,
        ToolCallFinished,  # the client's result
        ToolCallStarted,  # the approved call runs, as in a batch
        ToolCallFinished,
        ExternalExecutionRequired,  # c3 still waits, under the same reply id
    ]
    confirmed, external, client_done, _, deployed, waiting = events
    assert isinstance(confirmed, ConfirmationResult)
    assert (confirmed.reply_id, confirmed.approved, confirmed.rejected) == (reply_id, (DEPLOY,), ())
    assert isinstance(external, ExternalExecutionResult)
    assert external.reply_id == reply_id
    assert [(r.id, r.name, r.state) for r in external.results] == [
        ("c2", "geolocate", ToolResultState.SUCCESS)
    ]
    assert isinstance(client_done, ToolCallFinished)
    assert client_done.result == external.results[0]
    assert isinstance(deployed, ToolCallFinished)
    assert deployed.result.content == "deployed to prod"
    assert isinstance(waiting, ExternalExecutionRequired)
    assert (waiting.reply_id, waiting.calls) == (reply_id, (GEO_2,))

    # The last call settled: its result event, and nothing waits any more.
    last = ToolResultBlock.success("2.35E", id="c3")
    events = await _streamed(await _view(kit, store), [last])
    assert _kinds(events) == [ExternalExecutionResult, ToolCallFinished]
    assert isinstance(events[0], ExternalExecutionResult)
    assert events[0].reply_id == reply_id
    assert (await store.load(KEY)).pending_calls == ()


async def test_the_events_are_the_same_through_on_event_and_the_returned_batch_agrees() -> None:
    kit, store, reply_id = await _suspended([DEPLOY, GEO_1])
    seen: list[ToolEvent] = []
    view = await _view(kit, store)
    batch = await view.resume([Confirmation("c1", False)], CONTEXT, on_event=seen.append)
    assert batch.reply_id == reply_id
    assert _kinds(seen) == [
        ConfirmationResult,
        ToolCallFinished,
        ExternalExecutionRequired,
        AllToolsDenied,  # every call this resume settled was denied, as `batch.all_denied` says
    ]
    confirmed = seen[0]
    assert isinstance(confirmed, ConfirmationResult)
    assert (confirmed.approved, confirmed.rejected) == ((), (DEPLOY,))
    end = seen[2]
    assert isinstance(end, ExternalExecutionRequired)
    assert batch.suspension is not None
    assert (end.reply_id, end.calls) == (batch.suspension.reply_id, batch.suspension.external_calls)
    assert batch.all_denied
    assert seen[3] == AllToolsDenied(batch.results)


async def test_a_resume_whose_every_result_is_denied_says_so_once() -> None:
    kit, store, _ = await _suspended([DEPLOY])
    events = await _streamed(await _view(kit, store), [Confirmation("c1", False)])
    assert _kinds(events) == [ConfirmationResult, ToolCallFinished, AllToolsDenied]
    denied = events[-1]
    assert isinstance(denied, AllToolsDenied)
    assert [(r.id, r.state) for r in denied.results] == [("c1", ToolResultState.DENIED)]


async def test_an_approved_call_denied_again_is_not_every_result_denied() -> None:
    """The approved calls run as a batch of their own: its end events are not the resume's."""
    kit, store, _ = await _suspended([DEPLOY, GEO_1])
    deny = PermissionRule(
        tool_name="deploy", rule_content="prod", behavior=PermissionBehavior.DENY, source="test"
    )
    client = ToolResultBlock.success("48.85N", id="c2")
    replies = [Confirmation("c1", True, rules=(deny,)), client]
    events = await _streamed(await _view(kit, store), replies)
    finished = [e.result for e in events if isinstance(e, ToolCallFinished)]
    assert sorted((r.id, r.state) for r in finished) == [
        ("c1", ToolResultState.DENIED),
        ("c2", ToolResultState.SUCCESS),
    ]
    assert AllToolsDenied not in _kinds(events)
    assert _kinds(events)[-1] is ToolCallFinished  # nothing waits


async def test_a_call_that_asks_again_ends_the_stream_with_its_new_question() -> None:
    kit, store, reply_id = await _suspended([DEPLOY])
    edited = Confirmation("c1", True, arguments={"env": "staging"})
    events = await _streamed(await _view(kit, store), [edited])
    assert _kinds(events) == [
        ConfirmationResult,
        ToolCallStarted,
        ToolCallFinished,
        ConfirmationRequired,
    ]
    confirmed, _, _, asked = events
    assert isinstance(confirmed, ConfirmationResult)
    assert confirmed.approved[0].input == {"env": "staging"}  # the call as it runs
    assert isinstance(asked, ConfirmationRequired)
    assert asked.reply_id != reply_id
    (pending,) = asked.pending
    assert pending.message == "Deploy to staging?"
    # Exactly one question: the inner batch's own end event is not repeated.
    assert _kinds(events).count(ConfirmationRequired) == 1


async def test_a_refused_resume_streams_nothing_and_raises() -> None:
    kit, store, _ = await _suspended([DEPLOY])
    seen: list[ToolEvent] = []
    view = await _view(kit, store)
    stream = view.stream_resume(
        [ToolResultBlock.success("x", id="nope")], CONTEXT, on_event=seen.append
    )
    with pytest.raises(ResumeError, match="Invalid tool result IDs"):
        await anext(stream)
    await stream.aclose()
    assert seen == []
    assert [p.id for p in (await store.load(KEY)).pending_calls] == ["c1"]


async def test_the_registry_streams_a_resume_of_a_session() -> None:
    kit, store, reply_id = await _suspended([GEO_1])
    client = ToolResultBlock.success("48.85N", id="c2")
    async with kit.snapshot().stream_resume(CONTEXT, store, [client]) as stream:
        events = [event async for event in stream]
    assert _kinds(events) == [ExternalExecutionResult, ToolCallFinished]
    assert isinstance(events[0], ExternalExecutionResult)
    assert events[0].reply_id == reply_id
