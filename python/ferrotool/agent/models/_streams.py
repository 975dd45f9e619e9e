"""What the streaming adapters share: reporting a stream's tool calls as they grow."""

from __future__ import annotations

from ferrotool.agent.messages import ArgumentsDelta, DeltaSink
from ferrotool.providers.streaming import ToolCallStream


def report_calls(calls: ToolCallStream, event: object, on_delta: DeltaSink | None) -> None:
    """Feed one streamed event to ``calls``; report each call it added to as an `ArgumentsDelta`."""
    if on_delta is None:
        calls.feed(event)
        return
    for call in calls.feed(event):
        on_delta(ArgumentsDelta(call.id, call.name, call.partial()))
