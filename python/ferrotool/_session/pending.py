"""Calls that wait in a session: for a person's approval, or for the client to run them.

A reply names the call it answers by id, so two calls that wait in one session never share an
id. Providers that number calls per response (Gemini's ``gemini-call-0`` in every turn) and
models that repeat an id would make them: such a call waits under a new id,
``<the model's id>#<8 hex digits>`` (random, and unlike any id waiting in the session or used by
the batch), chosen in the same compare-and-set that stores it. It keeps the model's id
(`PendingToolCall.model_id`); its results carry it too (`MODEL_ID_KEY`), and the provider
adapters answer the model with it. A call asked again after an approval (`REPLACES_KEY`) waits
under a new id as well, so that the approval, delivered again, cannot answer the new question.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from collections import Counter
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, final

from ferrotool._permissions.decisions import PermissionRule
from ferrotool._values.calls import MODEL_ID_KEY, REPLACES_KEY, ToolResultBlock, ToolUseBlock
from ferrotool._values.json import JsonValue

ID_MARK: Final = "#"
"""What separates the model's id from the tag of an id ferrotool gave a waiting call."""


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
        reason: The machine-oriented reason of the question (``"Mode: default"``, ``"safety:
            ..."``); ``None`` when unknown (a call stored by an older version).
        model_id: The id the model gave the call, when it waits under another (see the
            module); ``""`` when it waits under the model's own.
    """

    call: ToolUseBlock
    kind: SuspensionKind
    reply_id: str
    message: str = ""
    suggestions: tuple[PermissionRule, ...] = ()
    reason: str | None = None
    model_id: str = ""

    @property
    def id(self) -> str:
        """The call's id."""
        return self.call.id

    @property
    def answers(self) -> str:
        """The id the model's API knows the call by."""
        return self.model_id or self.call.id

    def to_dict(self) -> dict[str, JsonValue]:
        """The JSON form."""
        out: dict[str, JsonValue] = {
            "id": self.call.id,
            "name": self.call.name,
            "arguments": self.call.arguments,
            "kind": self.kind.value,
            "reply_id": self.reply_id,
            "message": self.message,
            "suggestions": [rule.to_dict() for rule in self.suggestions],
        }
        if self.reason is not None:
            out["reason"] = self.reason
        if self.model_id:
            out["model_id"] = self.model_id
        return out

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
        reason, model_id = raw.get("reason"), raw.get("model_id", "")
        if (reason is not None and not isinstance(reason, str)) or not isinstance(model_id, str):
            raise ValueError("a pending call's reason and model_id are strings")
        call_id, name, arguments, reply_id = (str(value) for value in fields)
        return cls(
            call=ToolUseBlock(call_id, name, arguments),
            kind=SuspensionKind(raw.get("kind", "external")),
            reply_id=reply_id,
            message=str(raw.get("message", "")),
            suggestions=tuple(PermissionRule.from_dict(rule) for rule in suggestions),
            reason=reason,
            model_id=model_id,
        )


def fresh_id(base: str, taken: Container[str]) -> str:
    """``<base>#<8 random hex digits>``, an id not in ``taken``."""
    while True:
        candidate = f"{base}{ID_MARK}{os.urandom(4).hex()}"
        if candidate not in taken:
            return candidate


def apart(
    asked: Sequence[PendingToolCall],
    placeholders: Sequence[ToolResultBlock],
    calls: Iterable[ToolUseBlock],
    waiting: Iterable[PendingToolCall],
) -> tuple[PendingToolCall, ...]:
    """A batch's waiting calls as they are stored: completed, with ids no other call shares.

    A waiting call keeps its id unless a call already waiting in the session has it, a call of
    the batch that does not wait has it, an earlier waiting call of the batch kept it, or it is
    asked again (its placeholder carries `REPLACES_KEY`): then it gets a `fresh_id`, based on
    the model's id. The question's reason and the model's id are read from the placeholders.

    Args:
        asked: The waiting calls, in call order.
        placeholders: The result of each, in the same order.
        calls: Every call of the batch.
        waiting: The calls already waiting in the session.
    """
    batch = [call.id for call in calls]
    used = {pending.id for pending in waiting}
    kept = used | set(Counter(batch) - Counter(pending.id for pending in asked))
    taken = used | set(batch)
    stored: list[PendingToolCall] = []
    for pending, placeholder in zip(asked, placeholders, strict=True):
        metadata = placeholder.metadata
        model_id = metadata.get(MODEL_ID_KEY, pending.model_id)
        model_id = model_id if isinstance(model_id, str) else ""
        call = pending.call
        if REPLACES_KEY in metadata or call.id in kept:
            model_id = model_id or call.id
            call = call._replace(id=fresh_id(model_id, taken))
            taken.add(call.id)
        kept.add(call.id)
        stored.append(
            dataclasses.replace(
                pending,
                call=call,
                model_id="" if model_id == call.id else model_id,
                reason=_reason(placeholder) if pending.reason is None else pending.reason,
            )
        )
    return tuple(stored)


def _reason(placeholder: ToolResultBlock) -> str | None:
    permission = placeholder.metadata.get("permission")
    if not isinstance(permission, dict) or not placeholder.needs_approval:
        return None
    reason = permission.get("decision_reason")
    return reason if isinstance(reason, str) else ""


def answering(result: ToolResultBlock, pending: PendingToolCall) -> ToolResultBlock:
    """``result`` stamped as the answer to ``pending``: its id, and the model's if another."""
    if result.id != pending.id or result.name != pending.call.name:
        result = result.with_call(pending.id, pending.call.name)
    if pending.model_id and result.metadata.get(MODEL_ID_KEY) != pending.model_id:
        metadata = {**result.metadata, MODEL_ID_KEY: pending.model_id}
        result = result._replace(metadata=MappingProxyType(metadata))
    return result


def placed(
    results: tuple[ToolResultBlock, ...], stored: Sequence[PendingToolCall]
) -> tuple[ToolResultBlock, ...]:
    """A batch's results, each placeholder stamped as the answer to its stored waiting call.

    ``stored`` holds the batch's waiting calls (`apart`), in call order: the placeholders are
    the results that wait, in the same order.
    """
    if not stored:
        return results
    waits = iter(stored)
    return tuple(
        answering(result, next(waits)) if result.needs_approval or result.is_suspended else result
        for result in results
    )


__all__ = [
    "ID_MARK",
    "PendingToolCall",
    "SuspensionKind",
    "answering",
    "apart",
    "fresh_id",
    "placed",
]
