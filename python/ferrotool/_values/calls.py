"""The two message-level values of a tool call: `ToolUseBlock` in, `ToolResultBlock` out."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Final, NamedTuple, TypeAlias

import orjson

from ferrotool._values.content import (
    CONTENT_TYPES,
    ContentBlock,
    TextBlock,
    content_from_json,
    content_to_json,
)
from ferrotool._values.json import JsonValue

_EMPTY: Final[Mapping[str, JsonValue]] = MappingProxyType({})
_RESULT_VERSION: Final = 1

SUSPENDED_KEY: Final = "suspended"
"""Metadata key marking a result whose tool runs elsewhere (``True``)."""
APPROVAL_KEY: Final = "approval_required"
"""Metadata key marking a result that waits for a user's approval (``True``)."""
MODEL_ID_KEY: Final = "model_call_id"
"""Metadata key of a result whose call waits (or waited) under an id of ferrotool's: the id the
model gave the call, which the provider adapters answer with."""
REPLACES_KEY: Final = "replaces"
"""Metadata key of a call asked again after an approval: the id it waited under before (a
call asked again waits under a new id, so that the first approval cannot answer it)."""
PERMISSION_STATE_KEY: Final = "permission_state"
"""Metadata key of the call's `PermissionState`, as its JSON string: set by the pipeline when a
permission step decided the call; read it typed with `ToolResultBlock.permission_state`."""
AWAITING_EXTERNAL: Final = "[Awaiting external execution]"


class ToolResultState(enum.StrEnum):
    """How a tool call ended, stated explicitly (never guessed from the text)."""

    SUCCESS = "success"
    """The tool ran and succeeded."""
    ERROR = "error"
    """The call failed: unknown tool, bad arguments, the tool raised or timed out."""
    RUNNING = "running"
    """Not final: a progress text, a suspended call, or one that waits for approval."""
    INTERRUPTED = "interrupted"
    """The call was cancelled before the tool finished."""
    DENIED = "denied"
    """A permission check refused the call."""


class PermissionState(enum.StrEnum):
    """Where a call stands with its permission decision (the chapter's call states).

    A result carries it in its metadata (`PERMISSION_STATE_KEY`) when a permission step decided
    the call: the gate (a session with rules or a mode, or a tool with its own
    ``check_permissions``) or a person answering through a resume. A call no step decided (a
    plain tool in a session without rules: allowed without a decision) has none.
    """

    ASKING = "asking"
    """The call waits for a person's approval (its result ``RUNNING``, `needs_approval`)."""
    ALLOWED = "allowed"
    """The call was allowed (by the rules, the mode, the tool or a person) and ran, or waits
    for the client to run it; its result's state says how it ended."""
    DENIED = "denied"
    """The call was refused (by a rule, the mode, the tool or a person): its result is
    ``DENIED``."""


_PERMISSION_STATES: Final = {state.value: state for state in PermissionState}


class ToolUseBlock(NamedTuple):
    """A tool call as the model sent it.

    Immutable (a named tuple, for speed: the call path reads its fields per call); equal only to
    an equal `ToolUseBlock`, and hashable.

    Attributes:
        id: The call's id, chosen by the model API; the result carries it back.
        name: The tool's name.
        arguments: The raw JSON arguments, as the model wrote them. This is what is validated;
            an empty string counts as ``{}``.
    """

    id: str
    name: str
    arguments: str = "{}"

    def __eq__(self, other: object) -> bool:
        return type(other) is ToolUseBlock and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((ToolUseBlock, *self))

    @classmethod
    def of(cls, id: str, name: str, input: Mapping[str, JsonValue]) -> ToolUseBlock:
        """Build a call from already parsed arguments."""
        return cls(id, name, orjson.dumps(input).decode())

    @property
    def input(self) -> dict[str, JsonValue]:
        """The arguments parsed (a fresh dict each time); ``{}`` when they are not a JSON object."""
        try:
            value = orjson.loads(self.arguments or "{}")
        except orjson.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}

    def to_json(self) -> bytes:
        """Serialize to JSON: ``{"id", "name", "arguments"}``."""
        return orjson.dumps({"id": self.id, "name": self.name, "arguments": self.arguments})

    @classmethod
    def from_json(cls, data: str | bytes) -> ToolUseBlock:
        """Read a call written by `to_json`.

        Raises:
            ValueError: The JSON is not a tool call.
        """
        raw = orjson.loads(data)
        if (
            not isinstance(raw, dict)
            or not isinstance(raw.get("id"), str)
            or not isinstance(raw.get("name"), str)
            or not isinstance(raw.get("arguments", "{}"), str)
        ):
            raise ValueError("not a tool call: expected {'id': str, 'name': str, 'arguments': str}")
        return cls(raw["id"], raw["name"], raw.get("arguments", "{}"))


_NO_ARGUMENTS: Final = "{}"
_tuple_new: Final = tuple.__new__


def _use_block_new(
    cls: type[ToolUseBlock], id: str, name: str, arguments: str = _NO_ARGUMENTS
) -> ToolUseBlock:
    """`ToolUseBlock`'s constructor: the named tuple's, refusing a call built without its id.

    Only a call whose arguments were left out is looked at, so a call built whole costs one
    comparison more than the named tuple's own constructor. Its name holding a ``{`` (which no
    tool's name does) reads as JSON arguments where the name goes.
    """
    if arguments is _NO_ARGUMENTS and type(name) is str and "{" in name:
        raise _missing_id(id, name)
    return _tuple_new(cls, (id, name, arguments))


def _missing_id(id: object, name: str) -> TypeError:
    return TypeError(
        f"ToolUseBlock({id!r:.40}, {name!r:.40}) reads as a call with no id: its fields are "
        f"(id, name, arguments), and {name!r:.40} is JSON arguments, not a tool's name; "
        f"pass ToolUseBlock(id='call_1', name={id!r:.40}, arguments={name!r:.40}), or "
        f"ToolUseBlock.of('call_1', {id!r:.40}, {{...}}) with parsed arguments"
    )


# A named tuple may not define `__new__` in its body: the check is set on the class after.
type.__setattr__(ToolUseBlock, "__new__", staticmethod(_use_block_new))


def not_a_call(entry: str, value: object) -> TypeError:
    """The error for ``value`` passed to ``entry`` (``call_tool``...) where a call belongs.

    It names what was passed and how to build the call, with the tool's name when ``value``
    is one (a name where the call goes, as in ``call_tool("add", {"a": 1})``).
    """
    name = value if isinstance(value, str) and value else "add"
    return TypeError(
        f"{entry} takes a ToolUseBlock, e.g. ToolUseBlock(id='call_1', name={name!r:.40}, "
        f"arguments='{{\"a\": 1}}') or ToolUseBlock.of('call_1', {name!r:.40}, {{'a': 1}}); "
        f"got {type(value).__name__} {value!r:.40}"
    )


def misused(entry: str, value: object) -> TypeError | None:
    """`not_a_call` for a ``value`` that cannot be read as a call; ``None`` for one that can.

    A call is a `ToolUseBlock`, or any object with its three fields.
    """
    if isinstance(value, ToolUseBlock) or all(hasattr(value, f) for f in ToolUseBlock._fields):
        return None
    return not_a_call(entry, value)


def _output(output: str | ContentBlock | Iterable[ContentBlock]) -> tuple[ContentBlock, ...]:
    if isinstance(output, str):
        return (TextBlock(output),)
    if isinstance(output, CONTENT_TYPES):
        return (output,)
    blocks = tuple(output)
    for block in blocks:
        if not isinstance(block, CONTENT_TYPES):
            raise TypeError(f"a result's output holds content blocks, got {type(block).__name__}")
    return blocks


def _metadata(metadata: Mapping[str, JsonValue] | None) -> Mapping[str, JsonValue]:
    return _EMPTY if not metadata else MappingProxyType(dict(metadata))


class ToolResultBlock(NamedTuple):
    """The result of one tool call, with an explicit state.

    Build results with the factories (`success`, `error`, `text`, `suspended`, ...) or with
    keyword arguments. Results are immutable values (a named tuple, because one is built per
    call): `with_state` and `with_call` return new ones. They compare by value but are not
    hashable (their metadata is a mapping); the blocks and `ToolUseBlock` are.

    Attributes:
        id: The id of the call this answers (``None`` until stamped by the toolkit).
        name: The tool's name (``None`` until stamped).
        output: What the model sees: text, image and JSON content blocks.
        state: How the call ended.
        metadata: Data for the application, not the model (read-only).
        structured: The structured value behind a JSON text output (a tool that returned a
            record, dict or list), as JSON; ``None`` otherwise.
    """

    id: str | None = None
    name: str | None = None
    output: tuple[ContentBlock, ...] = ()
    state: ToolResultState = ToolResultState.RUNNING
    metadata: Mapping[str, JsonValue] = _EMPTY
    structured: JsonValue = None

    def __eq__(self, other: object) -> bool:
        return type(other) is ToolResultBlock and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    @classmethod
    def success(
        cls,
        output: str | ContentBlock | Iterable[ContentBlock],
        *,
        id: str | None = None,
        name: str | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
        structured: JsonValue = None,
    ) -> ToolResultBlock:
        """A successful result."""
        return cls(
            id=id,
            name=name,
            output=_output(output),
            state=ToolResultState.SUCCESS,
            metadata=_metadata(metadata),
            structured=structured,
        )

    @classmethod
    def error(
        cls,
        message: str,
        *,
        id: str | None = None,
        name: str | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
    ) -> ToolResultBlock:
        """A failed call: the text is ``Error: <message>``."""
        return cls(
            id=id,
            name=name,
            output=(TextBlock(f"Error: {message}"),),
            state=ToolResultState.ERROR,
            metadata=_metadata(metadata),
        )

    @classmethod
    def text(
        cls,
        text: str,
        *,
        id: str | None = None,
        name: str | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
    ) -> ToolResultBlock:
        """A text in state `RUNNING` (progress, or a result whose state is set later)."""
        return cls(id=id, name=name, output=(TextBlock(text),), metadata=_metadata(metadata))

    @classmethod
    def suspended(cls, call: ToolUseBlock, reason: str | None = None) -> ToolResultBlock:
        """The answer for a call that runs elsewhere: `RUNNING`, marked suspended.

        The caller executes the tool and later supplies the real result for ``call.id``.
        """
        return cls(
            id=call.id,
            name=call.name,
            output=(TextBlock(reason or AWAITING_EXTERNAL),),
            metadata=MappingProxyType({SUSPENDED_KEY: True}),
        )

    @classmethod
    def interrupted(cls, call: ToolUseBlock, reason: str | None = None) -> ToolResultBlock:
        """The answer for a call cancelled before its tool finished."""
        return cls(
            id=call.id,
            name=call.name,
            output=(TextBlock(reason or "The tool call was interrupted before it finished."),),
            state=ToolResultState.INTERRUPTED,
        )

    @classmethod
    def denied(
        cls,
        call: ToolUseBlock,
        message: str,
        *,
        metadata: Mapping[str, JsonValue] | None = None,
    ) -> ToolResultBlock:
        """The answer for a call a permission check refused."""
        return cls(
            id=call.id,
            name=call.name,
            output=(TextBlock(message),),
            state=ToolResultState.DENIED,
            metadata=_metadata(metadata),
        )

    @property
    def is_suspended(self) -> bool:
        """Whether the call waits for external execution."""
        return self.metadata.get(SUSPENDED_KEY) is True

    @property
    def needs_approval(self) -> bool:
        """Whether the call waits for a user's approval."""
        return self.metadata.get(APPROVAL_KEY) is True

    @property
    def permission_state(self) -> PermissionState | None:
        """The call's permission state, if a permission step decided it (see `PermissionState`).

        Read from the metadata (`PERMISSION_STATE_KEY`); a value that is not one of the
        states' JSON strings reads as ``None``.
        """
        value = self.metadata.get(PERMISSION_STATE_KEY)
        return _PERMISSION_STATES.get(value) if isinstance(value, str) else None

    @property
    def content(self) -> str:
        """The text blocks of the output, joined by newlines."""
        return "\n".join(block.text for block in self.output if isinstance(block, TextBlock))

    def with_state(self, state: ToolResultState) -> ToolResultBlock:
        """A copy in another state."""
        return self._replace(state=state)

    def with_call(self, id: str | None, name: str | None) -> ToolResultBlock:
        """A copy answering the given call id and tool name (state and metadata kept)."""
        return self._replace(id=id, name=name)

    def to_dict(self) -> dict[str, JsonValue]:
        """The JSON form as Python values."""
        return {
            "version": _RESULT_VERSION,
            "id": self.id,
            "name": self.name,
            "output": [content_to_json(block) for block in self.output],
            "state": self.state.value,
            "metadata": dict(self.metadata),
            "structured": self.structured,
        }

    def to_json(self) -> bytes:
        """Serialize to JSON (orjson); `from_json` reads it back."""
        return orjson.dumps(self.to_dict())

    @classmethod
    def from_json(cls, data: str | bytes) -> ToolResultBlock:
        """Read a result written by `to_json`.

        Raises:
            ValueError: The JSON is not a tool result of a known version.
        """
        raw = orjson.loads(data)
        if not isinstance(raw, dict) or raw.get("version") != _RESULT_VERSION:
            raise ValueError(f"not a version {_RESULT_VERSION} tool result")
        output, metadata = raw.get("output", []), raw.get("metadata", {})
        if not isinstance(output, list) or not isinstance(metadata, dict):
            raise ValueError("a tool result's output is a list and its metadata an object")
        for key in ("id", "name"):
            if raw.get(key) is not None and not isinstance(raw[key], str):
                raise ValueError(f"a tool result's {key} is a string or null")
        return cls(
            id=raw.get("id"),
            name=raw.get("name"),
            output=tuple(content_from_json(block) for block in output),
            state=ToolResultState(raw.get("state", "running")),
            metadata=_metadata(metadata),
            structured=raw.get("structured"),
        )


ResultSink: TypeAlias = Callable[[ToolResultBlock], object]
"""Receives the one result of a call, also when its caller was cancelled (then the result is
``INTERRUPTED``, delivered before the cancellation goes on)."""


__all__ = [
    "APPROVAL_KEY",
    "MODEL_ID_KEY",
    "PERMISSION_STATE_KEY",
    "REPLACES_KEY",
    "SUSPENDED_KEY",
    "PermissionState",
    "ResultSink",
    "ToolResultBlock",
    "ToolResultState",
    "ToolUseBlock",
    "misused",
    "not_a_call",
]
