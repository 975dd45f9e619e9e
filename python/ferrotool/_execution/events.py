"""What a batch of calls reports as it runs: typed, immutable events.

Every call of a batch gets a `ToolCallFinished` with its one result (a call that never started,
because the batch was cancelled, gets its ``INTERRUPTED`` result too); a call that starts gets a
`ToolCallStarted` first, and the `ToolProgress` chunks its tool emits in between. At the end a
batch that suspends says why (`ConfirmationRequired`, `ExternalExecutionRequired`, both with the
suspension's reply id), and a batch whose every call was denied says so (`AllToolsDenied`).
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
    | AllToolsDenied
)
"""Every event a batch reports."""

EventSink: TypeAlias = Callable[[ToolEvent], object]
"""Receives a batch's events as they happen (on the thread of a tool's progress, too)."""


__all__ = [
    "AllToolsDenied",
    "ConfirmationRequired",
    "EventSink",
    "ExternalExecutionRequired",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolEvent",
]
