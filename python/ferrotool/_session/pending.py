"""Calls that wait in a session: for a person's approval, or for the client to run them."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import final

from ferrotool._permissions.decisions import PermissionRule
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.json import JsonValue


class SuspensionKind(enum.StrEnum):
    """Why a call waits."""

    CONFIRM = "confirm"
    """A person must approve (or reject) the call before it runs."""
    EXTERNAL = "external"
    """The call runs elsewhere (on the client); its result is delivered later."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PendingToolCall:
    """A call that waits, stored in its session until it is resumed.

    Attributes:
        call: The call as the model sent it.
        kind: Why it waits.
        reply_id: The id of the suspension it belongs to (one per batch that suspended).
        message: Why it waits, in words a person can read (an approval's question).
        suggestions: Rules a person approving the call could add so as not to be asked again.
    """

    call: ToolUseBlock
    kind: SuspensionKind
    reply_id: str
    message: str = ""
    suggestions: tuple[PermissionRule, ...] = ()

    @property
    def id(self) -> str:
        """The call's id."""
        return self.call.id

    def to_dict(self) -> dict[str, JsonValue]:
        """The JSON form."""
        return {
            "id": self.call.id,
            "name": self.call.name,
            "arguments": self.call.arguments,
            "kind": self.kind.value,
            "reply_id": self.reply_id,
            "message": self.message,
            "suggestions": [rule.to_dict() for rule in self.suggestions],
        }

    @classmethod
    def from_dict(cls, raw: object) -> PendingToolCall:
        """Read the JSON form.

        Raises:
            ValueError: ``raw`` is not a pending call.
        """
        if not isinstance(raw, dict):
            raise ValueError("a pending call is a JSON object")
        fields = (raw.get("id"), raw.get("name"), raw.get("arguments", "{}"), raw.get("reply_id"))
        if not all(isinstance(value, str) for value in fields):
            raise ValueError("a pending call needs string id, name, arguments and reply_id")
        suggestions = raw.get("suggestions", [])
        if not isinstance(suggestions, list):
            raise ValueError("a pending call's suggestions are a list")
        call_id, name, arguments, reply_id = (str(value) for value in fields)
        return cls(
            call=ToolUseBlock(call_id, name, arguments),
            kind=SuspensionKind(raw.get("kind", "external")),
            reply_id=reply_id,
            message=str(raw.get("message", "")),
            suggestions=tuple(PermissionRule.from_dict(rule) for rule in suggestions),
        )


__all__ = ["PendingToolCall", "SuspensionKind"]
