"""Tool-call arguments as a model streams them: `ArgumentsAccumulator` and `ToolCallStream`.

A streaming model API sends a tool call's JSON arguments in pieces (OpenAI's
``delta.tool_calls[i].function.arguments``, Anthropic's ``input_json_delta``, the Responses API's
``response.function_call_arguments.delta``). An `ArgumentsAccumulator` gathers one call's pieces
and answers, at any point, with the arguments parsed so far (`ArgumentsAccumulator.partial`,
through ``pydantic_core.from_json(..., allow_partial="trailing-strings")``: a UI can show them
as they grow, and a backend can look at them before the call is complete), and at the end with
the call's `ToolUseBlock`.

Every partial value is a prefix of the final one: an object holds a prefix of the final
object's keys, every value but the last one final, the last one itself a prefix; a string is a
prefix of the final string; a number, ``true``, ``false`` or ``null`` appears only once it is
complete. (A number at the very end of the text could still grow, ``12`` becoming ``123``, so
it is held back until a delimiter follows it.)

A `ToolCallStream` keeps the accumulators of one streamed response, by the index the provider
gives each call; each provider module reads its own events into `CallDelta` values
(``openai_chat.deltas``, ``openai_responses.deltas``, ``anthropic.deltas``)::

    calls = ToolCallStream(anthropic.deltas)
    async for event in stream:
        for call in calls.feed(event):
            show(call.name, call.partial())
    blocks = calls.blocks()

Both are builders that one stream's consumer owns and fills (one per streamed response), not
values shared between requests: they change in place, like a `Toolkit`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, final

import pydantic_core

from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.json import JsonValue

_QUOTE_OR_BACKSLASH: Final = re.compile(r'["\\]')
_NUMBER_CHARS: Final = frozenset("0123456789+-.eE")
_NUMBER_START: Final = frozenset("0123456789-")  # not "e": the end of ``true`` and ``false``


@final
@dataclass(frozen=True, slots=True)
class CallDelta:
    """One piece of a streamed tool call, in no provider's shape.

    Attributes:
        index: The call's position in the response (the provider's index).
        id: The call's id, when this piece carries it (usually the first).
        name: The tool's name, when this piece carries it (usually the first).
        arguments: More argument text (possibly empty).
        done: The provider said the call is complete.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    done: bool = False


EVERY_CALL: Final = -1
"""The index of a `CallDelta` that ends every call so far (a response's finish reason)."""

DeltaReader = Callable[[object], Iterable[CallDelta]]
"""Reads one streamed event of a provider into the call pieces it holds (often none)."""


@final
class ArgumentsAccumulator:
    """One tool call's arguments as they stream in.

    Args:
        id: The call's id (it may also arrive later, in a delta).
        name: The tool's name (likewise).

    Attributes:
        id: The call's id so far.
        name: The tool's name so far.
        done: The provider said the call is complete.
    """

    __slots__ = ("_chunks", "_escaped", "_in_string", "_last", "_text", "done", "id", "name")

    def __init__(self, id: str = "", name: str = "") -> None:
        self.id: str = id
        self.name: str = name
        self.done: bool = False
        self._chunks: list[str] = []
        self._text: str | None = ""
        self._in_string = False
        self._escaped = False
        self._last: dict[str, JsonValue] = {}

    def add(self, delta: str) -> None:
        """Append a piece of the arguments' JSON text."""
        if not delta:
            return
        self._chunks.append(delta)
        self._text = None
        self._scan(delta)

    def _scan(self, delta: str) -> None:
        """Track whether the text ends inside a string, looking only at quotes and backslashes."""
        position = 0
        if self._escaped:  # the previous piece ended with a backslash: this first character is
            self._escaped = False  # what it escapes
            position = 1
        in_string = self._in_string
        search = _QUOTE_OR_BACKSLASH.search
        while (match := search(delta, position)) is not None:
            at = match.start()
            if delta[at] == '"':
                in_string = not in_string
                position = at + 1
            elif not in_string:  # a backslash outside a string: invalid JSON, nothing to track
                position = at + 1
            elif at + 1 < len(delta):
                position = at + 2
            else:
                self._escaped = True
                break
        self._in_string = in_string

    @property
    def text(self) -> str:
        """The argument text received so far."""
        text = self._text
        if text is None:
            text = "".join(self._chunks)
            self._chunks = [text]
            self._text = text
        return text

    def partial(self) -> dict[str, JsonValue]:
        """The arguments parsed so far: a prefix of the final arguments (see the module).

        ``{}`` before anything parses; when the text stops parsing (a model that streams
        malformed JSON), the last value that parsed.
        """
        text = self.text
        end = len(text)
        if end and not self._in_string and text[-1] in _NUMBER_CHARS:
            while end and text[end - 1] in _NUMBER_CHARS:
                end -= 1
            if text[end] in _NUMBER_START:  # a number at the very end may still grow
                text = text[:end]
        if not text.strip():
            return self._last
        try:
            value = pydantic_core.from_json(text, allow_partial="trailing-strings")
        except ValueError:
            return self._last
        if isinstance(value, dict):
            self._last = value
        return self._last

    def block(self) -> ToolUseBlock:
        """The call as a `ToolUseBlock`; no argument text at all is ``{}``."""
        return ToolUseBlock(self.id, self.name, self.text or "{}")

    def __repr__(self) -> str:
        state = "done" if self.done else "streaming"
        return f"<ArgumentsAccumulator {self.name!r} id={self.id!r} {state} {self.text!r:.60}>"


@final
class ToolCallStream:
    """Every tool call of one streamed response, by the provider's index.

    Args:
        reader: The provider's event reader: ``openai_chat.deltas``, ``openai_responses.deltas``
            or ``anthropic.deltas``.
    """

    __slots__ = ("_calls", "_reader")

    def __init__(self, reader: DeltaReader) -> None:
        self._reader = reader
        self._calls: dict[int, ArgumentsAccumulator] = {}

    def feed(self, event: object) -> tuple[ArgumentsAccumulator, ...]:
        """Take one streamed event; return the calls it added to (none for most events)."""
        touched: list[ArgumentsAccumulator] = []
        for delta in self._reader(event):
            call = self.add(delta)
            if call is not None and call not in touched:
                touched.append(call)
        return tuple(touched)

    def add(self, delta: CallDelta) -> ArgumentsAccumulator | None:
        """Take one call piece; return its call (``None`` for the end of a call never started)."""
        if delta.index == EVERY_CALL:
            for started in self._calls.values():
                started.done = True
            return None
        call = self._calls.get(delta.index)
        if call is None:
            if delta.done and delta.id is None and not delta.arguments:
                return None  # the end of a block that was no tool call (Anthropic's text)
            call = self._calls[delta.index] = ArgumentsAccumulator()
        if delta.id:
            call.id = delta.id
        if delta.name:
            call.name = delta.name
        call.add(delta.arguments)
        if delta.done:
            call.done = True
        return call

    @property
    def calls(self) -> tuple[ArgumentsAccumulator, ...]:
        """The calls so far, in index order."""
        return tuple(self._calls[index] for index in sorted(self._calls))

    def blocks(self) -> tuple[ToolUseBlock, ...]:
        """The calls as `ToolUseBlock` values, in index order."""
        return tuple(call.block() for call in self.calls)

    def __len__(self) -> int:
        return len(self._calls)


__all__ = ["EVERY_CALL", "ArgumentsAccumulator", "CallDelta", "DeltaReader", "ToolCallStream"]
