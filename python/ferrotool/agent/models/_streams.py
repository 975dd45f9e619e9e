"""What the SDK adapters share: their settings, and reporting a stream's tool calls as they grow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, TypeVar

from ferrotool._values.json import JsonValue
from ferrotool.agent.messages import ArgumentsDelta, DeltaSink
from ferrotool.providers.streaming import ToolCallStream

ClientT = TypeVar("ClientT")


class SdkModel(Generic[ClientT]):
    """The settings of a `ChatModel` over a provider SDK's async client (see each subclass)."""

    __slots__ = ("client", "model", "settings", "stream", "strict")

    client: ClientT
    model: str
    strict: bool
    stream: bool
    settings: dict[str, JsonValue]

    def __init__(
        self,
        client: ClientT,
        model: str,
        *,
        strict: bool = False,
        stream: bool = False,
        settings: Mapping[str, JsonValue] | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.strict = strict
        self.stream = stream
        self.settings = dict(settings or {})


def report_calls(calls: ToolCallStream, event: object, on_delta: DeltaSink | None) -> None:
    """Feed one streamed event to ``calls``; report each call it added to as an `ArgumentsDelta`."""
    if on_delta is None:
        calls.feed(event)
        return
    for call in calls.feed(event):
        on_delta(ArgumentsDelta(call.id, call.name, call.partial()))
