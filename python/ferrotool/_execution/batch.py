"""A model turn's calls as one batch, results always in call order.

Concurrency-safe calls run together, the rest alone, and the calls that wait (for approval, for
the client) become one suspension.

The calls are cut into slots: a maximal run of consecutive concurrency-safe calls is one slot
whose calls run together (bounded by the batch's ``max_concurrency`` and the toolkit's
``max_concurrent_calls``); an unsafe call is a slot alone; slots run one after another.
``[S1, S2, U1, S3, U2, U3, S4]`` runs as ``{S1, S2} -> U1 -> S3 -> U2 -> U3 -> S4``; with
``parallel=False`` every call is a slot alone. Each call runs through the one pipeline
(`ferrotool._execution.pipeline`), so its mistakes are results and a failing call never changes
another's.

A call whose permission decision asks, or whose tool runs elsewhere, ends ``RUNNING`` and
marked; the batch gathers those calls into one `Suspension` (stored in the session, with
compare-and-set, when the batch has a store) for `resume` to settle.

Every call is paired with exactly one result: if the batch is cancelled, each call without a
result gets its ``INTERRUPTED`` one (reported as an event) before the cancellation goes on.

A call is contained: whatever one of its steps raises is its own error result, and the other
calls keep theirs. What goes on out of a batch is a cancellation, a programmer's mistake (an
`InjectionError`; a call that is no `ToolUseBlock` or whose arguments are not JSON text, refused
before any call runs) and a `BaseException` that is no `Exception` (a tool's own, a
`KeyboardInterrupt`): the first of those stops the batch's other calls (``INTERRUPTED``) and
goes on as itself, never inside an exception group.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol, cast, final

import anyio

from ferrotool import _core
from ferrotool._execution import outcomes
from ferrotool._execution.events import (
    AllToolsDenied,
    ConfirmationRequired,
    EventSink,
    ExternalExecutionRequired,
    ToolCallFinished,
    ToolCallStarted,
    ToolEvent,
)
from ferrotool._execution.loopback import on_loop, running_loop, running_trio
from ferrotool._execution.middleware import NotJsonText, not_text
from ferrotool._execution.pipeline import CallScope
from ferrotool._execution.runner import Runner
from ferrotool._permissions.decisions import PermissionRule
from ferrotool._session.pending import PendingToolCall, SuspensionKind, apart, placed
from ferrotool._session.state import SessionKey, SessionStore, store_waiting
from ferrotool._values.calls import ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._values.context import ProgressSink, RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool.errors import InjectionError

if TYPE_CHECKING:
    import asyncio


@final
@dataclass(frozen=True, slots=True)
class Suspension:
    """The calls of a batch that wait, under one reply id.

    Attributes:
        reply_id: The id the replies refer to (fresh for each batch that suspends).
        pending: The waiting calls, in call order.
    """

    reply_id: str
    pending: tuple[PendingToolCall, ...]

    @property
    def kind(self) -> SuspensionKind:
        """`CONFIRM` when some call waits for approval, else `EXTERNAL`."""
        if any(p.kind is SuspensionKind.CONFIRM for p in self.pending):
            return SuspensionKind.CONFIRM
        return SuspensionKind.EXTERNAL

    @property
    def confirmations(self) -> tuple[PendingToolCall, ...]:
        """The calls that wait for approval."""
        return tuple(p for p in self.pending if p.kind is SuspensionKind.CONFIRM)

    @property
    def external_calls(self) -> tuple[ToolUseBlock, ...]:
        """The calls the client is to run."""
        return tuple(p.call for p in self.pending if p.kind is SuspensionKind.EXTERNAL)


@final
@dataclass(frozen=True, slots=True)
class ToolBatch:
    """What a batch of calls (or a resume) gave.

    Attributes:
        results: One result per call, in call order, each stamped with its call's id; a call
            that waits has its ``RUNNING`` placeholder here.
        suspension: The calls that wait, or ``None``.
        all_denied: Every call was denied.
        reply_id: The reply id the batch is about: the id of its own suspension (``None`` when
            nothing waits); for a resume, the id of the suspension it settled.
    """

    results: tuple[ToolResultBlock, ...]
    suspension: Suspension | None = None
    all_denied: bool = False
    reply_id: str | None = None


@final
@dataclass(frozen=True, slots=True)
class Confirmation:
    """A person's answer about a call that waits for approval.

    Attributes:
        call_id: The waiting call's id.
        approved: Whether it may run.
        arguments: Arguments to run with instead of the model's, if the person changed them:
            a JSON object the tool's schema accepts (else the reply is refused, and the call
            still waits). The approval answers the question the person was shown; edited
            arguments that raise another are asked about again (see
            `ferrotool._execution.resume`).
        rules: Rules to add to the session's permissions (say, one of the call's suggestions),
            so that similar calls no longer ask.
    """

    call_id: str
    approved: bool
    arguments: dict[str, object] | None = None
    rules: tuple[PermissionRule, ...] = ()


class BatchHost(Protocol):
    """Where a batch runs its calls (a `ToolView`)."""

    @property
    def runner(self) -> Runner:
        """Threads, limits and sinks."""
        ...

    @property
    def session(self) -> tuple[SessionStore, SessionKey] | None:
        """The session store and key suspensions are kept under, if any."""
        ...

    def concurrency_safe(self, name: str) -> bool:
        """Whether a call of ``name`` may overlap other calls (an unknown name: yes)."""
        ...

    def immediate(self, name: str, execution: ExecutionConfig | None) -> _core.DirectCall | None:
        """The direct call that runs a call of ``name`` to its result on the spot, if any.

        An inline tool's Rust direct call with no middleware around it, tried once: such calls
        never yield, so they cannot overlap anything, and a run of them needs no task.
        """
        ...

    def scope(
        self,
        call: ToolUseBlock,
        context: RuntimeContext | None,
        agent: object | None,
        on_progress: ProgressSink | None,
        execution: ExecutionConfig | None,
        approved: bool,
    ) -> CallScope:
        """The scope of one call of the batch."""
        ...

    def runs(self, base: CallScope) -> Callable[[ToolUseBlock], Awaitable[ToolResultBlock]]:
        """How the batch runs each of its calls, all in ``base`` but for the call itself.

        One call through middleware and its route (`ToolView.route`): a plain tool's straight
        to its Rust direct call, with no scope built.
        """
        ...


def slots(
    calls: Sequence[ToolUseBlock], safe: Callable[[str], bool], parallel: bool
) -> Iterator[list[int]]:
    """The indices of the calls, cut into the slots that run one after another."""
    run: list[int] = []
    for index, call in enumerate(calls):
        if parallel and safe(call.name):
            run.append(index)
            continue
        if run:
            yield run
            run = []
        yield [index]
    if run:
        yield run


async def run_batch(
    host: BatchHost,
    calls: Sequence[ToolUseBlock],
    context: RuntimeContext | None,
    *,
    agent: object | None = None,
    config: ExecutionConfig | None = None,
    parallel: bool = True,
    on_event: EventSink | None = None,
    approved: bool = False,
) -> ToolBatch:
    """Run a batch of calls (see the module's docstring).

    Args:
        host: Where the calls resolve and run.
        calls: The model's calls, in order.
        context: The runtime context of every call.
        agent: The calling agent, for tools that ask for it.
        config: The batch's execution settings (after the tools' own, before the toolkit's).
        parallel: Whether consecutive concurrency-safe calls may run together.
        on_event: Receives every event as it happens.
        approved: The calls were approved by a person (a resume): the gate does not ask.
    """
    calls = check_calls(calls)
    if not calls:
        return _EMPTY
    runner = host.runner
    progress = _progress_sink(on_event) if on_event is not None else None
    base = host.scope(calls[0], context, agent, progress, config, approved)
    batch = _Batch(calls, host.runs(base), on_event, runner.calls)
    width = runner.execution if config is None else config.over(runner.execution)
    planned = _plan(host, calls, config, parallel)
    try:
        for slot, direct in planned:
            if direct is not None:
                await batch.at_once(slot, direct)
            elif len(slot) == 1:
                await batch.alone(slot[0])
            else:
                await batch.together(slot, min(len(slot), width.max_concurrency or 1))
    except BaseException:
        batch.interrupt()
        raise
    done = cast("tuple[ToolResultBlock, ...]", tuple(batch.results))
    suspension: Suspension | None = None
    if batch.waits:
        suspension = await _suspend(host, calls, done, on_event or _ignore)
        done = placed(done, suspension.pending)
    all_denied = all(r.state is ToolResultState.DENIED for r in done)
    if all_denied and on_event is not None:
        on_event(AllToolsDenied(done))
    return ToolBatch(
        done, suspension, all_denied, None if suspension is None else suspension.reply_id
    )


_EMPTY: Final = ToolBatch(())


@final
class _Batch:
    """The calls of one batch, their results so far, and how each runs.

    A slot of calls that may overlap runs on ``width`` worker tasks that take its calls in
    order, one after another, rather than on a task per call: a task costs more than a trivial
    tool's whole call. Each worker holds one of the toolkit's call slots (`Runner.calls`) while
    it works, so the calls of all batches running at once stay within ``max_concurrent_calls``.
    A call alone runs in the batch's own task, and so does a slot whose calls never yield
    (`BatchHost.immediate`): each is its Rust direct call, run to its result on the spot.
    """

    __slots__ = ("calls", "emit", "limiter", "results", "run", "stopped", "waits")

    def __init__(
        self,
        calls: tuple[ToolUseBlock, ...],
        run: Callable[[ToolUseBlock], Awaitable[ToolResultBlock]],
        emit: EventSink | None,
        limiter: anyio.CapacityLimiter,
    ) -> None:
        self.calls = calls
        self.run = run
        self.emit = emit
        self.limiter = limiter
        self.results: list[ToolResultBlock | None] = [None] * len(calls)
        self.stopped: list[BaseException] = []
        self.waits = False  # some result waits (for approval, for the client)

    async def one(self, index: int) -> None:
        """Run one call to its result; a step its own containment missed is its error."""
        call = self.calls[index]
        if self.emit is not None:
            self.emit(ToolCallStarted(call))
        try:
            result = await self.run(call)
        except (InjectionError, NotJsonText):
            raise
        except Exception as exc:  # a step the call's own containment missed
            result = outcomes.step_failed(call, "call", exc)
        self._record(index, call, result)

    def _record(self, index: int, call: ToolUseBlock, result: ToolResultBlock) -> None:
        """Keep a call's result, settled (`outcomes.settled`), and report it."""
        if result.id != call.id or result.name != call.name or result.state is _RUNNING:
            result = outcomes.settled(result, call)
        if result.metadata and (result.needs_approval or result.is_suspended):
            self.waits = True
        self.results[index] = result
        if self.emit is not None:
            self.emit(ToolCallFinished(result))

    async def alone(self, index: int) -> None:
        """Run one call in this task, under one call slot."""
        async with _held(self.limiter):
            await self.one(index)

    async def at_once(self, slot: list[int], direct: list[_core.DirectCall]) -> None:
        """Run the calls of ``slot``, none of which yields, by their direct calls, in turn.

        The calls run in Rust (`ferrotool._core.run_on_the_spot`), which keeps each final
        result and hands back here a call that raised, one still ``RUNNING``, and, while
        someone listens, each call (its events are sent here).
        """
        calls, emit = self.calls, self.emit
        position, count = 0, len(slot)
        async with _held(self.limiter):
            while position < count:
                if emit is not None:
                    emit(ToolCallStarted(calls[slot[position]]))
                position, outcome = _core.run_on_the_spot(
                    calls,
                    slot,
                    direct,
                    self.results,
                    position,
                    running=_RUNNING,
                    one=emit is not None,
                )
                if outcome is None:
                    return
                index = slot[position]
                call = calls[index]
                if isinstance(outcome, (InjectionError, NotJsonText)):
                    raise outcome
                if isinstance(outcome, Exception):
                    outcome = outcomes.step_failed(call, "call", outcome)
                self._record(index, call, outcome)
                position += 1

    async def together(self, slot: list[int], width: int) -> None:
        """Run the calls of ``slot`` on ``width`` workers.

        What goes on out of a call (a programmer's mistake, a `BaseException` that is no
        `Exception`) stops the slot's other calls and goes on unwrapped.
        """
        queue = iter(slot)
        if running_trio() is not None:
            async with anyio.create_task_group() as group:
                for _ in range(width):
                    group.start_soon(self._worker, queue, group.cancel_scope.cancel)
        else:
            await self._on_asyncio(queue, width)
        if self.stopped:
            raise self.stopped[0]

    async def _on_asyncio(self, queue: Iterator[int], width: int) -> None:
        """The workers as asyncio's own tasks (made in C, a fraction of an anyio task's cost).

        They are the batch's: if it is cancelled, they are, and it waits for them (shielded)
        before the cancellation goes on; a worker that stops the slot cancels the others.
        """
        aio = sys.modules["asyncio"]  # loaded: an asyncio loop runs this
        loop = running_loop()
        workers: list[asyncio.Task[None]] = []

        def stop() -> None:
            current = aio.current_task()
            for worker in workers:
                if worker is not current:
                    worker.cancel()

        workers.extend(loop.create_task(self._worker(queue, stop)) for _ in range(width))
        try:
            await aio.wait(workers)
        except BaseException:
            stop()
            with anyio.CancelScope(shield=True):
                await aio.wait(workers)
            raise

    async def _worker(self, queue: Iterator[int], stop: Callable[[], object]) -> None:
        try:
            async with _held(self.limiter):
                for index in queue:
                    await self.one(index)
        except anyio.get_cancelled_exc_class():
            raise
        except BaseException as exc:
            self.stopped.append(exc)
            stop()

    def interrupt(self) -> None:
        """Give each call without a result its ``INTERRUPTED`` one (reported as an event)."""
        for index, result in enumerate(self.results):
            if result is None:
                self.results[index] = interrupted = outcomes.interrupted(self.calls[index])
                if self.emit is not None:
                    self.emit(ToolCallFinished(interrupted))


_RUNNING: Final = ToolResultState.RUNNING


def check_calls(calls: Iterable[ToolUseBlock]) -> tuple[ToolUseBlock, ...]:
    """Refuse a batch holding a programmer's mistake before any of its calls runs.

    A batch is a sequence of calls (a model turn's): one `ToolUseBlock` alone, a tool's name
    or a mapping is not. A call's id must be a string: a call of a batch may wait for a
    reply, and a reply names its call by a string id (the provider adapters refuse a model's
    call without one).

    Returns:
        The calls, as a tuple.

    Raises:
        TypeError: The calls are one call, a string or a mapping rather than a sequence of
            calls; or a call is no `ToolUseBlock`, its id is no string, or its arguments are
            not JSON text.
    """
    if isinstance(calls, ToolUseBlock):
        raise TypeError(
            f"call_tools takes a sequence of calls (a model turn's), not one ToolUseBlock: "
            f"pass [call] (or run it alone with call_tool(call)); got {calls!r:.80}"
        )
    if isinstance(calls, (str, bytes, Mapping)):
        raise TypeError(
            "call_tools takes a sequence of ToolUseBlock calls, e.g. "
            "[ToolUseBlock(id='call_1', name='add', arguments='{\"a\": 1}')]; "
            f"got {type(calls).__name__} {calls!r:.40}"
        )
    calls = tuple(calls)
    for call in calls:
        if type(call) is not ToolUseBlock or type(call.id) is not str:
            break
        if type(call.arguments) is not str:
            break
    else:  # every call a plain `ToolUseBlock` with a string id and JSON text: the usual case
        return calls
    for index, call in enumerate(calls):
        if not isinstance(call, ToolUseBlock):
            raise TypeError(
                f"call_tools takes ToolUseBlock calls; the one at index {index} is a "
                f"{type(call).__name__} ({call!r:.40})"
            )
        if not isinstance(call.id, str):
            raise TypeError(
                f"the call to {call.name!r} has an id of type {type(call.id).__name__} "
                f"({call.id!r:.40}): "
                "a call's id is a string, the one its replies and results name"
            )
        if not isinstance(call.arguments, (str, bytes)):
            raise not_text(call)
    return calls


@contextlib.asynccontextmanager
async def _held(limiter: anyio.CapacityLimiter) -> AsyncIterator[None]:
    """A token of ``limiter`` for a worker (or a run of calls in the batch's task).

    The worker borrows it, not the task: a tool that runs a batch of its own, in its
    caller's task, takes tokens of its own. A free token is taken without a checkpoint.
    """
    borrower = object()
    try:
        limiter.acquire_on_behalf_of_nowait(borrower)
    except anyio.WouldBlock:
        await limiter.acquire_on_behalf_of(borrower)
    try:
        yield
    finally:
        limiter.release_on_behalf_of(borrower)


def _plan(
    host: BatchHost,
    calls: tuple[ToolUseBlock, ...],
    config: ExecutionConfig | None,
    parallel: bool,
) -> list[tuple[list[int], list[_core.DirectCall] | None]]:
    """The slots of the batch, each with the on-the-spot direct calls of its calls, if any.

    Consecutive concurrency-safe calls share a slot (with ``parallel``), every other call has
    one of its own; a slot of two or more calls that all have a direct call that never yields
    (`BatchHost.immediate`) carries them, any other slot ``None``. One pass in Rust
    (`ferrotool._core.plan_batch`), asking the host once per name of the batch (most batches
    call few tools).
    """

    def kind(name: str) -> tuple[bool, _core.DirectCall | None]:
        return host.concurrency_safe(name), host.immediate(name, config)

    return _core.plan_batch(calls, kind, parallel)


def _ignore(event: ToolEvent) -> None:
    del event


def _progress_sink(emit: EventSink) -> ProgressSink:
    """The batch's progress sink, handing chunks to ``emit`` on the event loop's thread.

    A chunk a sync tool emits on its worker thread reaches ``emit`` in order, and before its
    call's `ToolCallFinished`.
    """
    return on_loop(emit)


def waiting(result: ToolResultBlock, call: ToolUseBlock, reply_id: str) -> PendingToolCall | None:
    """The pending call a result stands for, if it waits."""
    if result.needs_approval:
        permission = result.metadata.get("permission")
        message = ""
        suggestions: tuple[PermissionRule, ...] = ()
        if isinstance(permission, dict):
            message = str(permission.get("message", ""))
            raw = permission.get("suggested_rules", [])
            if isinstance(raw, list):
                suggestions = tuple(PermissionRule.from_dict(rule) for rule in raw)
        return PendingToolCall(
            call=call,
            kind=SuspensionKind.CONFIRM,
            reply_id=reply_id,
            message=message,
            suggestions=suggestions,
        )
    if result.is_suspended:
        return PendingToolCall(call=call, kind=SuspensionKind.EXTERNAL, reply_id=reply_id)
    return None


async def _suspend(
    host: BatchHost,
    calls: tuple[ToolUseBlock, ...],
    results: tuple[ToolResultBlock, ...],
    emit: EventSink,
    reply_id: str | None = None,
) -> Suspension:
    """Gather the calls that wait into a suspension, stored in the session if there is one.

    Called only when some call waits: most batches suspend nothing, and make no reply id.
    ``reply_id``, when given, is the suspension's (a durable batch records one, so that a
    suspension made again after a crash replaces the one an interrupted run stored).
    """
    waits = [
        (call, result)
        for call, result in zip(calls, results, strict=True)
        if result.needs_approval or result.is_suspended
    ]
    replacing = reply_id
    if reply_id is None:
        import uuid  # here: only a batch that waits needs one, and `import ferrotool` loads none

        reply_id = uuid.uuid4().hex
    pending = tuple(
        waiting_call
        for call, result in waits
        if (waiting_call := waiting(result, call, reply_id)) is not None
    )
    placeholders = [result for _, result in waits]
    session = host.session
    if session is None:
        pending = apart(pending, placeholders, calls, ())
    else:
        pending = await store_waiting(*session, pending, placeholders, calls, replacing)
    suspension = Suspension(reply_id, pending)
    if suspension.confirmations:
        emit(ConfirmationRequired(reply_id, suspension.confirmations))
    if suspension.external_calls:
        emit(ExternalExecutionRequired(reply_id, suspension.external_calls))
    return suspension


__all__ = [
    "BatchHost",
    "Confirmation",
    "Suspension",
    "ToolBatch",
    "check_calls",
    "run_batch",
    "slots",
    "waiting",
]
