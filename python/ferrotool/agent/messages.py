"""The agent loop's values: the transcript, a model's request and reply, the model protocol.

The transcript is provider-neutral: `UserMessage`, `ModelReply` (the model's text and tool
calls) and `ToolResultBlock` (one per call, in call order), so one loop drives any model; each
`ChatModel` adapter writes it in its provider's shape with the adapters of
`ferrotool.providers`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeAlias, final

import orjson

from ferrotool._execution.batch import Suspension
from ferrotool._session.pending import PendingToolCall
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.json import JsonValue

if TYPE_CHECKING:
    from ferrotool._registry.listing import ToolLists


@final
@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the person said.

    Attributes:
        text: The text.
    """

    text: str


@final
@dataclass(frozen=True, slots=True)
class ModelReply:
    """What the model said in one turn: text, and the tools it calls.

    Attributes:
        text: The text (empty when the model only called tools).
        calls: The tool calls, in the model's order.
        native: The provider's own reply object, for adapters that send it back as it was
            (Anthropic's thinking blocks must be); not compared, not serialized.
    """

    text: str = ""
    calls: tuple[ToolUseBlock, ...] = ()
    native: object = field(default=None, compare=False, repr=False)


Message: TypeAlias = UserMessage | ModelReply | ToolResultBlock
"""One entry of the transcript."""


@final
@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What the loop asks the model, each turn.

    Attributes:
        messages: The transcript so far.
        tools: The tools the model may call: the request's view, as it is this turn (its
            ``schemas(format)`` is the provider's tool list, from the cache).
        system: The system prompt: the loop's own, then the fragments the view gives
            (see `run_agent`'s ``instructions``).
    """

    messages: tuple[Message, ...]
    tools: ToolLists
    system: str = ""


@final
@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's text, as a streaming model sends it.

    Attributes:
        text: The piece.
    """

    text: str


@final
@dataclass(frozen=True, slots=True)
class ArgumentsDelta:
    """A streamed tool call grew: its arguments parsed so far.

    Attributes:
        id: The call's id (empty until the provider sends it).
        name: The tool's name (likewise).
        partial: The arguments parsed so far, a prefix of the final ones
            (`ferrotool.ArgumentsAccumulator.partial`).
    """

    id: str
    name: str
    partial: dict[str, JsonValue]


ModelDelta: TypeAlias = TextDelta | ArgumentsDelta
"""What a streaming model reports before its reply is complete."""

DeltaSink: TypeAlias = Callable[[ModelDelta], object]
"""Receives a streaming model's deltas."""


class ChatModel(Protocol):
    """A model the loop can talk to: one async method.

    Adapters: `OpenAIChatModel`, `AnthropicModel`, and `ScriptedModel` for tests. Any object with
    this method will do.
    """

    async def respond(self, request: ModelRequest, on_delta: DeltaSink | None = None) -> ModelReply:
        """Answer one turn: text and tool calls.

        Args:
            request: The transcript, the tools and the system prompt.
            on_delta: Where a streaming model reports its text and arguments as they come
                (a model that does not stream never calls it).
        """
        ...


@final
@dataclass(frozen=True, slots=True)
class PausedRun:
    """A run stopped at a suspension: what `resume_agent` needs to go on.

    The waiting calls themselves are in the session's state (where `ToolView.resume` settles
    them exactly once); this is the transcript's side, serializable with `to_json` so another
    process can resume.

    Attributes:
        messages: The transcript up to the model's reply whose calls wait.
        results: That reply's results, in call order; a waiting call has its ``RUNNING``
            placeholder.
        suspension: The waiting calls and their reply id.
        turns: The model turns taken so far.
    """

    messages: tuple[Message, ...]
    results: tuple[ToolResultBlock, ...]
    suspension: Suspension
    turns: int

    def to_json(self) -> bytes:
        """The JSON form (a `ModelReply`'s ``native`` object is left out)."""
        return orjson.dumps(
            {
                "messages": [message_to_dict(message) for message in self.messages],
                "results": [result.to_dict() for result in self.results],
                "reply_id": self.suspension.reply_id,
                "pending": [pending.to_dict() for pending in self.suspension.pending],
                "turns": self.turns,
            }
        )

    @classmethod
    def from_json(cls, data: str | bytes) -> PausedRun:
        """Read what `to_json` wrote.

        Raises:
            ValueError: The JSON is not a paused run.
        """
        raw = orjson.loads(data)
        if not isinstance(raw, dict):
            raise ValueError("a paused run is a JSON object")
        try:
            messages = tuple(message_from_dict(item) for item in raw["messages"])
            results = tuple(ToolResultBlock.from_json(orjson.dumps(r)) for r in raw["results"])
            pending = tuple(PendingToolCall.from_dict(p) for p in raw["pending"])
            suspension = Suspension(str(raw["reply_id"]), pending)
            turns = int(raw["turns"])
        except (KeyError, TypeError) as error:
            raise ValueError(f"not a paused run: {error}") from None
        return cls(messages, results, suspension, turns)


def message_to_dict(message: Message) -> dict[str, JsonValue]:
    """A transcript entry's JSON form (a `ModelReply`'s ``native`` object is left out)."""
    if isinstance(message, UserMessage):
        return {"user": message.text}
    if isinstance(message, ModelReply):
        calls: list[JsonValue] = [
            {"id": call.id, "name": call.name, "arguments": call.arguments}
            for call in message.calls
        ]
        return {"model": message.text, "calls": calls}
    return {"result": message.to_dict()}


def message_from_dict(raw: object) -> Message:
    """Read what `message_to_dict` wrote.

    Raises:
        TypeError: ``raw`` is not a JSON object.
        KeyError: A field is missing.
    """
    if not isinstance(raw, dict):
        raise TypeError(f"a message is a JSON object, got {raw!r:.80}")
    if "user" in raw:
        return UserMessage(str(raw["user"]))
    if "model" in raw:
        calls = tuple(
            ToolUseBlock(str(c["id"]), str(c["name"]), str(c["arguments"])) for c in raw["calls"]
        )
        return ModelReply(str(raw["model"]), calls)
    return ToolResultBlock.from_json(orjson.dumps(raw["result"]))


def transcript_groups(
    messages: Sequence[Message],
) -> list[UserMessage | ModelReply | tuple[ToolResultBlock, ...]]:
    """The transcript with each run of consecutive results gathered into one tuple.

    Providers answer a turn's calls together (one ``user`` message for Anthropic and Gemini,
    consecutive ``tool`` messages for OpenAI): the adapters write each run in one piece.
    """
    grouped: list[UserMessage | ModelReply | tuple[ToolResultBlock, ...]] = []
    run: list[ToolResultBlock] = []
    for message in messages:
        if isinstance(message, ToolResultBlock):
            run.append(message)
            continue
        if run:
            grouped.append(tuple(run))
            run = []
        grouped.append(message)
    if run:
        grouped.append(tuple(run))
    return grouped


__all__ = [
    "ArgumentsDelta",
    "ChatModel",
    "DeltaSink",
    "Message",
    "ModelDelta",
    "ModelReply",
    "ModelRequest",
    "PausedRun",
    "TextDelta",
    "UserMessage",
    "message_from_dict",
    "message_to_dict",
    "transcript_groups",
]
