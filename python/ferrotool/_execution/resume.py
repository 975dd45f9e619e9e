"""Settling a suspension: a person's confirmations and the client's results, each accepted once.

`resume` takes replies for the calls a batch left waiting: a `Confirmation` for a call that
waits for approval, a `ToolResultBlock` for a call the client ran, and text (a message of the
person's, which only a complete set of results may come with). Accepting replies and removing
their calls from the session's waiting set is one compare-and-set: delivered twice, or to two
processes at once, a reply is accepted once and the other delivery is refused, with the
message that says why. A reply set that leaves calls waiting is fine: they stay pending.

Every reply is checked completely before the compare-and-set: its shape (an id that is a
non-empty string, ``approved`` a bool, rules that are `PermissionRule` values), the call it
names (waiting, and for the right kind of reply), and edited arguments, which must be a JSON
object (no integer past 64 bits, no NaN or infinity, no set, no lone surrogate) that the
tool's schema accepts. A bad reply raises `ResumeError` naming the call; nothing is consumed
then, and a corrected reply is accepted later.

An approval answers the question it was shown, and nothing more. An approved call is decided
again, with the session's permissions as they are once the replies are accepted (the rules the
replies add included):

- a decision that asks the very question the person approved (same message and reason) is
  answered: the call runs. Edited arguments count only when they differ from the model's;
  edited arguments that raise a safety question are never answered by an approval of other
  arguments;
- any other decision is the gate's, as for a fresh call: a deny rule (one added while the call
  waited included), the tool's denial or the mode's deny ends the call ``DENIED``; an allow
  runs it; another question asks again: the call waits anew, in a suspension of its own, under
  a new id (``<the model's id>#<tag>``, so that the first approval, delivered again, cannot
  answer it), and its placeholder names the id it replaces (`REPLACES_KEY`).

Rejected calls end ``DENIED``, and the client's results come back stamped with their calls,
all under the suspension's reply id. The resume's suspension lists what still waits: the
settled suspension's other calls, then the calls that wait anew (under the new suspension's
reply id, which each waiting call also carries). Results of a call that waited under an id
of ferrotool's carry the model's id (`MODEL_ID_KEY`) for the provider adapters.

A resume reports events as a batch does (`ferrotool._execution.events`), so that a client
streaming it (`ToolView.stream_resume`) sees what it sees from a batch: `ConfirmationResult`
and `ExternalExecutionResult` with the settled suspension's reply id, the settled calls'
events, then what still waits (`ConfirmationRequired`, `ExternalExecutionRequired`) and
`AllToolsDenied` when every settled call was denied. The approved calls run as a batch of their
own; its end events are replaced by the resume's, which cover every settled call.

Exactly once means never twice: the compare-and-set that accepts an approval happens before the
call runs, so a process that dies in between loses that call (at most once, never a second run).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol, TypeAlias

import orjson

from ferrotool import _core
from ferrotool._execution import outcomes, pipeline
from ferrotool._execution.batch import BatchHost, Confirmation, Suspension, ToolBatch, run_batch
from ferrotool._execution.compiled import CompiledTool
from ferrotool._execution.events import (
    AllToolsDenied,
    ConfirmationRequired,
    ConfirmationResult,
    EventSink,
    ExternalExecutionRequired,
    ExternalExecutionResult,
    ToolCallFinished,
    ToolEvent,
)
from ferrotool._execution.pipeline import CallScope
from ferrotool._execution.runner import Runner
from ferrotool._permissions.decisions import PermissionBehavior, PermissionRule
from ferrotool._permissions.engine import _is_safety, decide_known
from ferrotool._permissions.state import PermissionContext, PermissionContextState
from ferrotool._session.pending import PendingToolCall, SuspensionKind, answering
from ferrotool._session.state import (
    SessionKey,
    SessionStore,
    ToolContextState,
    update_session,
)
from ferrotool._values.calls import (
    MODEL_ID_KEY,
    REPLACES_KEY,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool._values.context import EMPTY_CONTEXT, ProgressSink, RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool.errors import ResumeError

Reply: TypeAlias = Confirmation | ToolResultBlock | str
"""What a resume takes: a confirmation, a client's result, or a person's text."""

DENIED_BY_USER = "Permission denied by user"

Validate: TypeAlias = Callable[[PendingToolCall, str], str | None]
"""Checks edited arguments (JSON text) against a waiting call's tool: the problem, or ``None``."""


class ResumeHost(BatchHost, Protocol):
    """Where a resume runs approved calls (a `ToolView`)."""

    def resolve(self, name: str) -> CompiledTool | None:
        """The compiled tool ``name`` resolves to, or ``None``."""
        ...

    def run_one(self, scope: CallScope) -> Awaitable[ToolResultBlock]:
        """One call through middleware and its route."""
        ...

    def reload(self) -> Awaitable[ResumeHost]:
        """The same host, its session's state read anew."""
        ...


def _listed(ids: Iterable[str]) -> str:
    return "[" + ", ".join(ids) + "]"


def _check_shape(replies: Sequence[Reply]) -> dict[str, str]:
    """The refusals that need no session state: malformed and duplicate replies.

    Returns:
        The edited arguments of each confirmation that has them, as JSON text, by call id.
    """
    results: list[str] = []
    confirmed: list[str] = []
    edits: dict[str, str] = {}
    for reply in replies:
        if isinstance(reply, Confirmation):
            call_id = reply.call_id
            if not isinstance(call_id, str):
                raise ResumeError(
                    f"ConfirmResult.toolCall.id must be a string, not {type(call_id).__name__}."
                )
            if not call_id:
                raise ResumeError("ConfirmResult.toolCall.id must not be empty.")
            if not isinstance(reply.approved, bool):
                raise ResumeError(
                    f"ConfirmResult for tool call ID {call_id}: approved must be True or False, "
                    f"not {reply.approved!r}."
                )
            rules: object = reply.rules
            if not isinstance(rules, (tuple, list)) or not all(
                isinstance(rule, PermissionRule) for rule in rules
            ):
                raise ResumeError(
                    f"ConfirmResult for tool call ID {call_id}: rules must be a tuple of "
                    f"PermissionRule values, not {rules!r:.80}."
                )
            if reply.arguments is not None:
                edits[call_id] = _json_object(call_id, reply.arguments)
            confirmed.append(call_id)
        elif isinstance(reply, ToolResultBlock):
            if reply.id is not None and not isinstance(reply.id, str):
                raise ResumeError(
                    f"A tool result's id must be a string, not {type(reply.id).__name__}."
                )
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
    return edits


def _json_object(call_id: str, arguments: object) -> str:
    """Edited arguments as JSON text, or the refusal that says why they cannot be.

    The text is made once, here: what runs is what was checked, whatever happens to the
    caller's dict afterwards.
    """
    if not isinstance(arguments, dict):
        raise ResumeError(
            f"ConfirmResult for tool call ID {call_id}: the edited arguments are a "
            f"{type(arguments).__name__}, not a JSON object (a dict)."
        )
    try:
        text = orjson.dumps(arguments)
    except TypeError as error:  # orjson.JSONEncodeError included
        raise ResumeError(
            f"ConfirmResult for tool call ID {call_id}: the edited arguments cannot be written "
            f"as JSON: {error}."
        ) from None
    if not _finite(arguments):
        raise ResumeError(
            f"ConfirmResult for tool call ID {call_id}: the edited arguments cannot be written "
            "as JSON: NaN and infinity are not JSON numbers."
        )
    return text.decode()


def _finite(value: object) -> bool:
    """Whether no float in a JSON value is NaN or infinite (orjson writes those as null)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return True


def accept(
    state: ToolContextState,
    replies: Sequence[Reply],
    edits: Mapping[str, str] | None = None,
    validate: Validate | None = None,
) -> tuple[ToolContextState, tuple[PendingToolCall, ...]]:
    """The session state once ``replies`` are accepted, and the calls they settle.

    Args:
        state: The session's state.
        replies: The replies, their shape checked (`_check_shape`).
        edits: The edited arguments of approvals, as JSON text, by call id.
        validate: Checks edited arguments against the waiting call's tool.

    Raises:
        ResumeError: A reply refers to no waiting call (unknown, or already settled), text
            comes with a partial set of results (the messages are AgentScope's), or an
            approval's edited arguments are invalid.
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
    if edits and validate is not None:
        for confirmation in confirmations:
            text = edits.get(confirmation.call_id)
            pending = state.pending(confirmation.call_id)
            if confirmation.approved and text is not None and pending is not None:
                problem = validate(pending, text)
                if problem is not None:
                    raise ResumeError(
                        f"ConfirmResult for tool call ID {confirmation.call_id}: the edited "
                        f"arguments are invalid: {problem}"
                    )
    settled = {*results, *(c.call_id for c in confirmations)}
    accepted = tuple(p for p in waiting if p.id in settled)
    changed = state.without_pending(settled)
    rules = [rule for c in confirmations if c.approved for rule in c.rules]
    if rules:
        changed = changed.with_permissions(changed.permissions.with_rules(rules))
    return changed, accepted


def _validator(host: ResumeHost) -> Validate:
    """Edited arguments are checked as a fresh call's are: the tool's schema, in one pass."""

    def validate(pending: PendingToolCall, text: str) -> str | None:
        tool = host.resolve(pending.call.name)
        if tool is None:  # the run reports the tool as gone
            return None
        try:
            parsed = pipeline.parse(tool, pending.call._replace(arguments=text))
        except Exception as error:
            return f"{type(error).__name__}: {error}"
        if type(parsed) is not ToolResultBlock:
            return None
        text = parsed.content  # the model's wording: "Error: ...", a "- " line per problem
        problems = [line for line in text.splitlines() if line.startswith("- ")]
        return "\n" + "\n".join(problems) if problems else text

    return validate


def _edited(call: ToolUseBlock, text: str | None) -> ToolUseBlock | None:
    """The call with the edited arguments, or ``None`` if they are the model's own."""
    if text is None:
        return None
    try:
        if _canonical(text) == _canonical(call.arguments or "{}"):
            return None
    except orjson.JSONDecodeError:  # the model's arguments were not JSON
        pass
    return call._replace(arguments=text)


def _canonical(text: str | bytes) -> bytes:
    """JSON text written one way: keys sorted, ``1``, ``1.0`` and ``true`` kept apart."""
    return orjson.dumps(orjson.loads(text), option=orjson.OPT_SORT_KEYS)


async def _answered(
    host: ResumeHost,
    pending: PendingToolCall,
    call: ToolUseBlock,
    edited: bool,
    permissions: PermissionContextState,
    context: RuntimeContext | None,
) -> bool:
    """Whether the person's approval answers the call's decision now (see the module).

    Anything unexpected (the tool gone, arguments now invalid, a check that raises) is no
    answer: the call then goes through the gate, which reports it.
    """
    tool = host.resolve(call.name)
    if tool is None:
        return False
    try:
        parsed = pipeline.parse(tool, call)
        if type(parsed) is ToolResultBlock:
            return False
        decision = await decide_known(
            tool.tool,
            tool.checked,
            parsed,
            PermissionContext(state=permissions, runtime=context or EMPTY_CONTEXT),
            own_check=tool.checks_permissions,
        )
    except Exception:
        return False
    if decision.behavior is not PermissionBehavior.ASK or (edited and _is_safety(decision)):
        return False
    if decision.message != pending.message:
        return False
    return pending.reason is None or (decision.reason or "") == pending.reason


class _Approvals:
    """The host the approved calls run on: the answered ones without asking, the rest gated.

    Their results carry the model's id where the call waited under another, and a result that
    waits again names the call it replaces, for `ferrotool._session.pending.apart`.
    """

    __slots__ = ("_answered", "_host", "_pending")

    def __init__(
        self, host: ResumeHost, pending: Mapping[str, PendingToolCall], answered: set[str]
    ) -> None:
        self._host = host
        self._pending = pending
        self._answered = answered

    @property
    def runner(self) -> Runner:
        return self._host.runner

    @property
    def session(self) -> tuple[SessionStore, SessionKey] | None:
        return self._host.session

    def concurrency_safe(self, name: str) -> bool:
        return self._host.concurrency_safe(name)

    def scope(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
        execution: ExecutionConfig | None,
        approved: bool,
    ) -> CallScope:
        return self._host.scope(call, context, agent, on_progress, execution, approved)

    def immediate(self, name: str, execution: ExecutionConfig | None) -> _core.DirectCall | None:
        """None: every call of a resume goes through its gate and is stamped here."""
        del name, execution
        return None

    def runs(self, base: CallScope) -> Callable[[ToolUseBlock], Awaitable[ToolResultBlock]]:
        run_one = self.run_one
        return lambda call: run_one(base.with_call(call))

    async def run_one(self, scope: CallScope) -> ToolResultBlock:
        call = scope.call
        answered = call.id in self._answered
        result = await self._host.run_one(scope.approve() if answered else scope)
        pending = self._pending[call.id]
        metadata = dict(result.metadata)
        if pending.model_id:
            metadata[MODEL_ID_KEY] = pending.model_id
        if not answered and (result.needs_approval or result.is_suspended):
            metadata[MODEL_ID_KEY] = pending.answers
            metadata[REPLACES_KEY] = pending.id
        if metadata != result.metadata:
            result = result._replace(metadata=MappingProxyType(metadata))
        return result


@dataclass(frozen=True, slots=True)
class Settlement:
    """What a resume's compare-and-set accepted, before any approved call runs.

    `resume` settles and runs the approved calls at once; a durable turn (`ferrotool.durable`)
    records the settlement first, then runs each approved call as a step of its own.

    Attributes:
        accepted: The waiting calls the replies settle, in the order they were suspended.
        settled: The results of the settled calls that do not run: rejections and the
            client's results, by call id.
        approved: The approved calls as they run (with their edited arguments), in order.
        answered: The ids of the approved calls whose approval answers their decision now.
        left: The settled suspension's calls that still wait.
    """

    accepted: tuple[PendingToolCall, ...]
    settled: Mapping[str, ToolResultBlock]
    approved: tuple[ToolUseBlock, ...]
    answered: frozenset[str]
    left: tuple[PendingToolCall, ...]

    def approvals(self, host: ResumeHost) -> _Approvals:
        """The host the approved calls run on (``host`` read anew after the settlement)."""
        return _Approvals(host, {p.id: p for p in self.accepted}, set(self.answered))

    def report(self, emit: EventSink) -> None:
        """The events of what was accepted (see `resume`), before the approved calls run."""
        _report_accepted(emit, self.accepted, self.settled, {c.id: c for c in self.approved})

    def finish(
        self, ran: Sequence[ToolResultBlock], waiting: Suspension | None = None
    ) -> ToolBatch:
        """The resume's batch, given the approved calls' results and what of them waits."""
        settled = {**self.settled, **dict(zip((c.id for c in self.approved), ran, strict=True))}
        reply_id = self.accepted[0].reply_id if self.accepted else None
        results = tuple(settled[pending.id] for pending in self.accepted)
        suspension = waiting
        if reply_id is not None and self.left:
            # calls asked again join the settled suspension's calls that still wait
            suspension = (
                Suspension(reply_id, self.left)
                if waiting is None
                else Suspension(waiting.reply_id, (*self.left, *waiting.pending))
            )
        all_denied = bool(results) and all(r.state is ToolResultState.DENIED for r in results)
        return ToolBatch(results, suspension, all_denied, reply_id)

    def to_json(self) -> bytes:
        """The JSON form, for a durable turn's record."""
        return orjson.dumps(
            {
                "accepted": [pending.to_dict() for pending in self.accepted],
                "settled": {key: result.to_dict() for key, result in self.settled.items()},
                "approved": [call.to_json().decode() for call in self.approved],
                "answered": sorted(self.answered),
                "left": [pending.to_dict() for pending in self.left],
            }
        )

    @classmethod
    def from_json(cls, data: str | bytes) -> Settlement:
        """Read what `to_json` wrote."""
        raw = orjson.loads(data)
        return cls(
            tuple(PendingToolCall.from_dict(p) for p in raw["accepted"]),
            {
                key: ToolResultBlock.from_json(orjson.dumps(result))
                for key, result in raw["settled"].items()
            },
            tuple(ToolUseBlock.from_json(call) for call in raw["approved"]),
            frozenset(raw["answered"]),
            tuple(PendingToolCall.from_dict(p) for p in raw["left"]),
        )


async def settle(
    host: ResumeHost,
    state: ToolContextState | None,
    replies: Sequence[Reply],
    context: RuntimeContext | None,
) -> Settlement:
    """Accept ``replies`` in the host's session, and decide how each approved call runs.

    Raises:
        ResumeError: A reply was refused (nothing was accepted then).
        ValueError: The host has no session store.
    """
    session = host.session
    if session is None:
        raise ValueError("resume needs a session: open the view with a store (open_view)")
    store, key = session
    replies = tuple(replies)
    edits = _check_shape(replies)
    validate = _validator(host)
    accepted: tuple[PendingToolCall, ...] = ()

    def take(current: ToolContextState) -> ToolContextState:
        nonlocal accepted
        changed, accepted = accept(current, replies, edits, validate)
        return changed

    stored = await update_session(store, key, take, current=state)
    by_id = {reply.call_id: reply for reply in replies if isinstance(reply, Confirmation)}
    given = {reply.id or "": reply for reply in replies if isinstance(reply, ToolResultBlock)}
    approved: list[ToolUseBlock] = []
    answered: set[str] = set()
    settled: dict[str, ToolResultBlock] = {}
    for pending in accepted:
        call = pending.call
        if pending.kind is SuspensionKind.EXTERNAL:
            result = answering(given[call.id], pending)
            if result.state is ToolResultState.RUNNING:
                result = result.with_state(ToolResultState.SUCCESS)
            settled[call.id] = result
            continue
        if not by_id[call.id].approved:
            settled[call.id] = answering(outcomes.rejected(call, DENIED_BY_USER), pending)
            continue
        edited = _edited(call, edits.get(call.id))
        run = call if edited is None else edited
        if await _answered(host, pending, run, edited is not None, stored.permissions, context):
            answered.add(call.id)
        approved.append(run)
    reply_id = accepted[0].reply_id if accepted else None
    left = tuple(p for p in stored.pending_calls if p.reply_id == reply_id)
    return Settlement(accepted, settled, tuple(approved), frozenset(answered), left)


async def resume(
    host: ResumeHost,
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
        on_event: Receives the resume's events, as a batch's (see
            `ferrotool._execution.events`): `ConfirmationResult` and
            `ExternalExecutionResult` under the settled suspension's reply id, each settled
            call's events, then what still waits and `AllToolsDenied`.

    Raises:
        ResumeError: A reply was refused (nothing was accepted then).
        ValueError: The host has no session store.
    """
    settlement = await settle(host, state, replies, context)
    if on_event is not None:
        settlement.report(on_event)
    batch: ToolBatch
    if settlement.approved:
        ran = await run_batch(
            settlement.approvals(await host.reload()),
            settlement.approved,
            context,
            agent=agent,
            config=config,
            parallel=parallel,
            on_event=None if on_event is None else _calls_only(on_event),
        )
        batch = settlement.finish(ran.results, ran.suspension)
    else:
        batch = settlement.finish(())
    if on_event is not None:
        _report_end(on_event, batch.suspension, batch.results if batch.all_denied else None)
    return batch


def _report_accepted(
    emit: EventSink,
    accepted: Sequence[PendingToolCall],
    settled: Mapping[str, ToolResultBlock],
    runs_of: Mapping[str, ToolUseBlock],
) -> None:
    """What the resume accepted, by reply id, then the calls it settled without running them.

    `ConfirmationResult` and `ExternalExecutionResult` close what a batch's
    `ConfirmationRequired` and `ExternalExecutionRequired` opened (one of each per reply id
    the replies settle calls of), then each rejected call and client result has its
    `ToolCallFinished`, as a batch's call does.
    """
    for reply_id in dict.fromkeys(p.reply_id for p in accepted):
        group = [p for p in accepted if p.reply_id == reply_id]
        confirmed = [p for p in group if p.kind is SuspensionKind.CONFIRM]
        if confirmed:
            emit(
                ConfirmationResult(
                    reply_id,
                    tuple(runs_of[p.id] for p in confirmed if p.id in runs_of),
                    tuple(p.call for p in confirmed if p.id not in runs_of),
                )
            )
        results = tuple(settled[p.id] for p in group if p.kind is SuspensionKind.EXTERNAL)
        if results:
            emit(ExternalExecutionResult(reply_id, results))
    for result in settled.values():
        emit(ToolCallFinished(result))


_BATCH_END = (ConfirmationRequired, ExternalExecutionRequired, AllToolsDenied)


def _calls_only(emit: EventSink) -> EventSink:
    """The approved calls' events without their batch's end events.

    The approved calls run as a batch of their own, but what waits at the end, and whether
    every result was denied, are the resume's to say (`_report_end`).
    """

    def calls(event: ToolEvent) -> None:
        if not isinstance(event, _BATCH_END):
            emit(event)

    return calls


def _report_end(
    emit: EventSink, suspension: Suspension | None, denied: tuple[ToolResultBlock, ...] | None
) -> None:
    """The resume's end events, as a batch's: what still waits, then every result denied."""
    if suspension is not None:
        if suspension.confirmations:
            emit(ConfirmationRequired(suspension.reply_id, suspension.confirmations))
        if suspension.external_calls:
            emit(ExternalExecutionRequired(suspension.reply_id, suspension.external_calls))
    if denied is not None:
        emit(AllToolsDenied(denied))


__all__ = ["DENIED_BY_USER", "Reply", "ResumeHost", "Settlement", "accept", "resume", "settle"]
