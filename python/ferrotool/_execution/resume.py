"""Settling a suspension: a person's confirmations and the client's results, each accepted once.

`resume` takes replies for the calls a batch left waiting: a `Confirmation` for a call that
waits for approval, a `ToolResultBlock` for a call the client ran, and text (a message of the
person's, which only a complete set of results may come with). Accepting replies and removing
their calls from the session's waiting set is one compare-and-set: delivered twice, or to two
processes at once, a reply is accepted once and the other delivery is refused, with the
message that says why. Approved calls then run (with the arguments the person gave, validated
again, and without asking again), rejected ones end ``DENIED``, and the client's results come
back stamped with their calls, all under the suspension's reply id. A reply set that leaves
calls waiting is fine: they stay pending.

Exactly once means never twice: the compare-and-set that accepts an approval happens before the
call runs, so a process that dies in between loses that call (at most once, never a second run).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TypeAlias

import orjson

from ferrotool._execution.batch import BatchHost, Confirmation, Suspension, ToolBatch, run_batch
from ferrotool._execution.events import EventSink, ToolCallFinished
from ferrotool._session.pending import PendingToolCall, SuspensionKind
from ferrotool._session.state import ToolContextState, update_session
from ferrotool._values.calls import ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._values.context import RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool.errors import ResumeError

Reply: TypeAlias = Confirmation | ToolResultBlock | str
"""What a resume takes: a confirmation, a client's result, or a person's text."""

DENIED_BY_USER = "Permission denied by user"


def _listed(ids: Iterable[str]) -> str:
    return "[" + ", ".join(ids) + "]"


def _check_shape(replies: Sequence[Reply]) -> None:
    """The refusals that need no session state: malformed and duplicate replies."""
    results: list[str] = []
    confirmed: list[str] = []
    for reply in replies:
        if isinstance(reply, Confirmation):
            if not reply.call_id:
                raise ResumeError("ConfirmResult.toolCall.id must not be empty.")
            confirmed.append(reply.call_id)
        elif isinstance(reply, ToolResultBlock):
            if not reply.id:
                raise ResumeError("A tool result needs the id of the call it answers.")
            results.append(reply.id)
        elif not isinstance(reply, str):
            raise TypeError(
                f"a reply is a Confirmation, a ToolResultBlock or text, not {type(reply).__name__}"
            )
    for call_id, count in Counter(results).items():
        if count > 1:
            raise ResumeError(f"Duplicate tool result ID: {call_id}")
    for call_id, count in Counter(confirmed).items():
        if count > 1:
            raise ResumeError(f"Duplicate ConfirmResult for tool call ID: {call_id}")


def accept(
    state: ToolContextState, replies: Sequence[Reply]
) -> tuple[ToolContextState, tuple[PendingToolCall, ...]]:
    """The session state once ``replies`` are accepted, and the calls they settle.

    Raises:
        ResumeError: A reply refers to no waiting call (unknown, or already settled), or text
            comes with a partial set of results; the messages are AgentScope's.
    """
    waiting = state.pending_calls
    external = [p.id for p in waiting if p.kind is SuspensionKind.EXTERNAL]
    asking = [p.id for p in waiting if p.kind is SuspensionKind.CONFIRM]
    results = [reply.id or "" for reply in replies if isinstance(reply, ToolResultBlock)]
    confirmations = [reply for reply in replies if isinstance(reply, Confirmation)]
    has_text = any(isinstance(reply, str) for reply in replies)
    if not results and not confirmations:
        raise ResumeError(
            "Cannot add messages without tool results when pending tool calls exist. "
            f"Pending IDs: {_listed(p.id for p in waiting)}"
        )
    unknown = [call_id for call_id in results if call_id not in external]
    if unknown:
        raise ResumeError(
            f"Invalid tool result IDs: {_listed(unknown)}. Expected: {_listed(external)}"
        )
    for confirmation in confirmations:
        if confirmation.call_id not in asking:
            raise ResumeError(
                "ConfirmResult references non-ASKING tool call ID: "
                f"{confirmation.call_id}. Expected: {_listed(asking)}"
            )
    if has_text and results and set(results) != set(external):
        raise ResumeError(
            "Cannot include text content when providing partial tool results. "
            f"Provided: {_listed(results)}, Pending: {_listed(external)}"
        )
    settled = {*results, *(c.call_id for c in confirmations)}
    accepted = tuple(p for p in waiting if p.id in settled)
    changed = state.without_pending(settled)
    rules = [rule for c in confirmations if c.approved for rule in c.rules]
    if rules:
        changed = changed.with_permissions(changed.permissions.with_rules(rules))
    return changed, accepted


async def resume(
    host: BatchHost,
    state: ToolContextState | None,
    replies: Sequence[Reply],
    context: RuntimeContext | None,
    *,
    agent: object | None = None,
    config: ExecutionConfig | None = None,
    parallel: bool = True,
    on_event: EventSink | None = None,
) -> ToolBatch:
    """Settle waiting calls of the host's session (see the module's docstring).

    Args:
        host: Where approved calls run; its session holds the waiting calls.
        state: The session's state as the caller read it (tried first), if any.
        replies: Confirmations, client results and text.
        context: The runtime context approved calls run with.
        agent: The calling agent, for tools that ask for it.
        config: The execution settings of the approved calls.
        parallel: Whether approved concurrency-safe calls may run together.
        on_event: Receives the events of the approved calls and of every settled call.

    Raises:
        ResumeError: A reply was refused (nothing was accepted then).
        ValueError: The host has no session store.
    """
    session = host.session
    if session is None:
        raise ValueError("resume needs a session: open the view with a store (open_view)")
    store, key = session
    replies = tuple(replies)
    _check_shape(replies)
    accepted: tuple[PendingToolCall, ...] = ()

    def settle(current: ToolContextState) -> ToolContextState:
        nonlocal accepted
        changed, accepted = accept(current, replies)
        return changed

    stored = await update_session(store, key, settle, current=state)
    by_id = {reply.call_id: reply for reply in replies if isinstance(reply, Confirmation)}
    given = {reply.id or "": reply for reply in replies if isinstance(reply, ToolResultBlock)}
    approved: list[ToolUseBlock] = []
    settled: dict[str, ToolResultBlock] = {}
    for pending in accepted:
        call = pending.call
        if pending.kind is SuspensionKind.EXTERNAL:
            result = given[call.id].with_call(call.id, call.name)
            if result.state is ToolResultState.RUNNING:
                result = result.with_state(ToolResultState.SUCCESS)
            settled[call.id] = result
            continue
        confirmation = by_id[call.id]
        if not confirmation.approved:
            settled[call.id] = ToolResultBlock.denied(call, DENIED_BY_USER)
        elif confirmation.arguments is not None:
            approved.append(call._replace(arguments=orjson.dumps(confirmation.arguments).decode()))
        else:
            approved.append(call)
    if on_event is not None:
        for result in settled.values():
            on_event(ToolCallFinished(result))
    ran = await run_batch(
        host,
        approved,
        context,
        agent=agent,
        config=config,
        parallel=parallel,
        on_event=on_event,
        approved=True,
    )
    settled.update((result.id or "", result) for result in ran.results)
    reply_id = accepted[0].reply_id if accepted else None
    results = tuple(settled[pending.id] for pending in accepted)
    suspension = ran.suspension
    if suspension is None and reply_id is not None:
        left = tuple(p for p in stored.pending_calls if p.reply_id == reply_id)
        suspension = Suspension(reply_id, left) if left else None
    all_denied = bool(results) and all(r.state is ToolResultState.DENIED for r in results)
    return ToolBatch(results, suspension, all_denied, reply_id)


__all__ = ["DENIED_BY_USER", "Reply", "accept", "resume"]
