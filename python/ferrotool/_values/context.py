"""What a tool receives besides its arguments: the runtime context, the emitter, the agent."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Protocol, TypeVar, final, runtime_checkable

from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.content import ContentBlock, TextBlock

T = TypeVar("T")

_log = logging.getLogger("ferrotool")


@runtime_checkable
class CallingAgent(Protocol):
    """The agent on whose behalf a tool runs; any object with a ``name`` qualifies."""

    @property
    def name(self) -> str:
        """The agent's name."""
        ...


class AgentState:
    """Base class of an agent's state, handed to tools declared ``state_injected``.

    Subclass it for your agent's state. A tool parameter annotated with `AgentState` (or a
    subclass) receives `RuntimeContext.agent_state`, or else the agent's ``state`` attribute.
    """


@final
@dataclass(frozen=True, slots=True, eq=False)
class RuntimeContext:
    """Per-call context: who is calling, and the values tools may ask for by type. Immutable.

    Middleware builds a new context (``with_value``, ``with_scratch``) before the call; a tool
    reads it. Typed values reach a tool parameter annotated with their type (or a base class)
    without appearing in the tool's schema.

    Attributes:
        user_id: The user the call is for.
        session_id: The session the call belongs to.
        agent_state: The calling agent's state for this call, if any.
        values: The typed layer: each value by its type (read with `get`).
        scratch: String-keyed values for messages from middleware to tools.
    """

    user_id: str | None = None
    session_id: str | None = None
    agent_state: AgentState | None = None
    values: Mapping[type, object] = field(default_factory=lambda: MappingProxyType({}))
    scratch: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def of(
        cls,
        *values: object,
        user_id: str | None = None,
        session_id: str | None = None,
        agent_state: AgentState | None = None,
        scratch: Mapping[str, object] | None = None,
    ) -> RuntimeContext:
        """A context holding ``values``, each under its own type."""
        return cls(
            user_id=user_id,
            session_id=session_id,
            agent_state=agent_state,
            values=MappingProxyType({type(value): value for value in values}),
            scratch=MappingProxyType(dict(scratch or {})),
        )

    def get(self, tp: type[T]) -> T | None:
        """The value of type ``tp``: an exact match, else the most specific stored subtype.

        `RuntimeContext` itself returns this context.
        """
        if tp is RuntimeContext:
            return self  # type: ignore[return-value]  # T is RuntimeContext here
        exact = self.values.get(tp)
        if exact is not None:
            return exact  # type: ignore[return-value]  # stored under its own type
        best: type | None = None
        for stored in self.values:
            if issubclass(stored, tp) and (best is None or issubclass(stored, best)):
                best = stored
        return None if best is None else self.values[best]  # type: ignore[return-value]

    def require(self, tp: type[T]) -> T:
        """Like `get`, but a missing value raises `LookupError` naming the type."""
        value = self.get(tp)
        if value is None:
            raise LookupError(f"no {tp.__qualname__} in the runtime context")
        return value

    def with_value(self, value: object, *, as_type: type | None = None) -> RuntimeContext:
        """A copy that also holds ``value`` (under ``as_type``, or its own type)."""
        values = dict(self.values)
        values[as_type or type(value)] = value
        return self._copy(values=MappingProxyType(values))

    def with_scratch(self, key: str, value: object | None) -> RuntimeContext:
        """A copy with a scratch entry set (``None`` removes it)."""
        scratch = dict(self.scratch)
        if value is None:
            scratch.pop(key, None)
        else:
            scratch[key] = value
        return self._copy(scratch=MappingProxyType(scratch))

    def with_ids(
        self, *, user_id: str | None = None, session_id: str | None = None
    ) -> RuntimeContext:
        """A copy for another user or session (``None`` keeps the current one)."""
        return self._copy(
            user_id=self.user_id if user_id is None else user_id,
            session_id=self.session_id if session_id is None else session_id,
        )

    def with_agent_state(self, state: AgentState | None) -> RuntimeContext:
        """A copy carrying the calling agent's state."""
        return self._copy(agent_state=state)

    def _copy(self, **changes: object) -> RuntimeContext:
        fields: dict[str, object] = {
            "user_id": self.user_id,
            "session_id": self.session_id,
            "agent_state": self.agent_state,
            "values": self.values,
            "scratch": self.scratch,
        }
        fields.update(changes)
        return RuntimeContext(**fields)  # type: ignore[arg-type]  # the fields above


EMPTY_CONTEXT: Final = RuntimeContext()
"""The context used when a call is given none."""


@final
@dataclass(frozen=True, slots=True)
class ToolProgress:
    """A progress chunk a running tool emitted. It never becomes part of the result.

    Attributes:
        call_id: The id of the call that emitted it.
        tool_name: The tool's name.
        chunk: The content (for progress with numbers, its message as text, ``""`` without one).
        progress: How far the call is, for progress with numbers (`Emitter.progress`); it
            grows with each report of one call. ``None`` for a plain chunk.
        total: What ``progress`` counts up to, when known.
    """

    call_id: str
    tool_name: str
    chunk: ContentBlock
    progress: float | None = None
    total: float | None = None


ProgressSink = Callable[[ToolProgress], None]
"""Receives progress chunks; called on the thread of the emitting tool. Errors are logged."""


@final
class Emitter:
    """Handed to a tool that asks for it: the current call, and a way to stream progress.

    `emit` sends a chunk (text or any content block); `progress` sends numbers (done, out of
    how many) with a message. Chunks go to the progress sinks of the toolkit and of the call,
    never into the result the model sees; a failing sink is logged and does not stop the
    others or the tool.
    """

    __slots__ = ("_sinks", "call")

    def __init__(self, call: ToolUseBlock, sinks: Iterable[ProgressSink] = ()) -> None:
        self.call: Final = call
        self._sinks = tuple(sinks)

    @property
    def call_id(self) -> str:
        """The id of the current tool call."""
        return self.call.id

    def emit(self, chunk: str | ContentBlock) -> None:
        """Send a progress chunk (text, or any content block)."""
        if not self._sinks:
            return
        block = TextBlock(chunk) if isinstance(chunk, str) else chunk
        self._send(ToolProgress(self.call.id, self.call.name, block))

    def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress with numbers: ``progress`` of ``total`` (when known), and a message.

        Served over MCP, each report is a ``notifications/progress`` with these numbers;
        ``progress`` should grow with each report of a call, as MCP asks.

        Args:
            progress: How far the call is (say, items done).
            total: What ``progress`` counts up to, if known.
            message: A short text for a person; it is the chunk's text.

        Raises:
            TypeError: ``progress`` or ``total`` is not a number.
        """
        done = _number("progress", progress)
        of = None if total is None else _number("total", total)
        if not self._sinks:
            return
        text = TextBlock("" if message is None else message)
        self._send(ToolProgress(self.call.id, self.call.name, text, done, of))

    def _send(self, progress: ToolProgress) -> None:
        for sink in self._sinks:
            try:
                sink(progress)
            except Exception:
                _log.exception("progress sink %r failed for call %s", sink, self.call.id)


def _number(label: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{label} must be a number, not {type(value).__name__}")
    return float(value)


def misused_context(entry: str, value: object) -> TypeError | None:
    """The error for ``value`` passed to ``entry`` (``call_tool``...) where a context belongs.

    ``None`` for ``None`` and a `RuntimeContext`; else a `TypeError` that shows how to build
    one (a dict of its fields, as in ``call_tool(call, {"user_id": "u1"})``, is a common slip).
    """
    if value is None or isinstance(value, RuntimeContext):
        return None
    example = "RuntimeContext(user_id='u1', session_id='s1')"
    if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
        fields = ", ".join(f"{key}={item!r:.20}" for key, item in list(value.items())[:3])
        example = f"RuntimeContext({fields})"
    return TypeError(
        f"{entry} takes a RuntimeContext as its context, e.g. {example}; "
        f"got {type(value).__name__} {value!r:.40}"
    )


__all__ = [
    "EMPTY_CONTEXT",
    "AgentState",
    "CallingAgent",
    "Emitter",
    "ProgressSink",
    "RuntimeContext",
    "ToolProgress",
    "misused_context",
]
