"""What a batch of calls reports as it runs: typed, immutable events.

Every call of a batch gets a `ToolCallFinished` with its one result (a call that never started,
because the batch was cancelled, gets its ``INTERRUPTED`` result too); a call that starts gets a
`ToolCallStarted` first, and the `ToolProgress` chunks its tool emits in between. At the end a
batch that suspends says why (`ConfirmationRequired`, `ExternalExecutionRequired`, both with the
suspension's reply id), and a batch whose every call was denied says so (`AllToolsDenied`).

A resume (`ferrotool._execution.resume`) reports the same way, so that a client streaming it
sees what it sees from a batch: first what it accepted, under the settled suspension's reply id
(`ConfirmationResult` for a person's answers, `ExternalExecutionResult` for the client's
results), then a `ToolCallFinished` for each settled call (the approved calls' `ToolCallStarted`
and progress first), then the end events of the resume as a whole: what still waits, and
`AllToolsDenied` when every settled call was denied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias, final

from ferrotool._session.pending import PendingToolCall
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.context import ToolProgress


@final
@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """A call began to run.

    Attributes:
        call: The call.
    """

    call: ToolUseBlock


@final
@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """A call ended with its result.

    A call that waits ends too: its result is then ``RUNNING``, marked as waiting for approval
    or for external execution.

    Attributes:
        result: The call's result, stamped with its id and tool name.
    """

    result: ToolResultBlock


@final
@dataclass(frozen=True, slots=True)
class ConfirmationRequired:
    """Calls of the batch wait for a person's approval.

    Attributes:
        reply_id: The suspension's id.
        pending: The calls, each with the question and the rules a person could add.
    """

    reply_id: str
    pending: tuple[PendingToolCall, ...]


@final
@dataclass(frozen=True, slots=True)
class ExternalExecutionRequired:
    """Calls of the batch wait for the client to run them.

    Attributes:
        reply_id: The suspension's id.
        calls: The calls to run.
    """

    reply_id: str
    calls: tuple[ToolUseBlock, ...]


@final
@dataclass(frozen=True, slots=True)
class ConfirmationResult:
    """A resume accepted a person's answers about calls that waited for approval.

    Emitted once per resume that accepts any, before the approved calls run.

    Attributes:
        reply_id: The id of the suspension the calls waited under (the one
            `ConfirmationRequired` carried).
        approved: The approved calls, as they run (with the person's edited arguments, if
            any), in the order they were suspended.
        rejected: The rejected calls (they end ``DENIED``), in the order they were suspended.
    """

    reply_id: str
    approved: tuple[ToolUseBlock, ...]
    rejected: tuple[ToolUseBlock, ...]


@final
@dataclass(frozen=True, slots=True)
class ExternalExecutionResult:
    """A resume accepted the client's results for calls it was asked to run.

    Emitted once per resume that accepts any, before the approved calls run.

    Attributes:
        reply_id: The id of the suspension the calls waited under (the one
            `ExternalExecutionRequired` carried).
        results: The results as the resume returns them (stamped with their calls, in their
            final state), in the order the calls were suspended.
    """

    reply_id: str
    results: tuple[ToolResultBlock, ...]


@final
@dataclass(frozen=True, slots=True)
class AllToolsDenied:
    """Every call of the batch was denied.

    Attributes:
        results: The ``DENIED`` results, in call order.
    """

    results: tuple[ToolResultBlock, ...]


ToolEvent: TypeAlias = (
    ToolCallStarted
    | ToolProgress
    | ToolCallFinished
    | ConfirmationRequired
    | ExternalExecutionRequired
    | ConfirmationResult
    | ExternalExecutionResult
    | AllToolsDenied
)
"""Every event a batch or a resume reports."""

EventSink: TypeAlias = Callable[[ToolEvent], object]
"""Receives a batch's events as they happen (on the thread of a tool's progress, too)."""


__all__ = [
    "AllToolsDenied",
    "ConfirmationRequired",
    "ConfirmationResult",
    "EventSink",
    "ExternalExecutionRequired",
    "ExternalExecutionResult",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolEvent",
]
