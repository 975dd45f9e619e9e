"""Progress of sync tools on worker threads reaches a batch's events on the event loop's thread.

A sync tool runs on a worker thread and emits its progress there; the batch's event sink and an
`EventStream` belong to the event loop. Every chunk must arrive, in order, before its call's
`ToolCallFinished`, and on the loop's thread, on asyncio and on trio.
"""

from __future__ import annotations

import logging
import threading

import anyio
import pytest

from ferrotool import (
    Emitter,
    ToolCallFinished,
    ToolCallStarted,
    ToolEvent,
    Toolkit,
    ToolProgress,
    ToolResultState,
    ToolUseBlock,
    tool,
)

CHUNKS = 2000


def _toolkit() -> Toolkit:
    @tool
    def chatty(count: int, emitter: Emitter) -> int:
        """Emits ``count`` numbered chunks from its worker thread."""
        for index in range(count):
            emitter.emit(str(index))
        return count

    kit = Toolkit()
    kit.register(chatty)
    return kit


def _chunks(events: list[ToolEvent], call_id: str) -> list[str]:
    return [
        event.chunk.text  # type: ignore[union-attr]
        for event in events
        if isinstance(event, ToolProgress) and event.call_id == call_id
    ]


def _check_order(events: list[ToolEvent], call_ids: list[str]) -> None:
    for call_id in call_ids:
        own = [
            event
            for event in events
            if getattr(event, "call_id", None) == call_id
            or (isinstance(event, ToolCallStarted) and event.call.id == call_id)
            or (isinstance(event, ToolCallFinished) and event.result.id == call_id)
        ]
        assert isinstance(own[0], ToolCallStarted)
        assert isinstance(own[-1], ToolCallFinished)
        assert _chunks(own[1:-1], call_id) == [str(i) for i in range(CHUNKS)]
        assert len(own) == CHUNKS + 2


async def test_a_stream_gets_every_chunk_of_a_worker_thread_in_order_on_the_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    kit = _toolkit()
    loop_thread = threading.get_ident()
    threads: set[int] = set()
    seen: list[ToolEvent] = []

    def on_event(event: ToolEvent) -> None:
        threads.add(threading.get_ident())

    calls = [ToolUseBlock(f"c{i}", "chatty", f'{{"count": {CHUNKS}}}') for i in range(3)]
    with caplog.at_level(logging.ERROR), anyio.fail_after(20):
        async with kit.stream_tools(calls, on_event=on_event) as events:
            async for event in events:
                threads.add(threading.get_ident())
                seen.append(event)
                if len(seen) % 97 == 0:
                    await anyio.sleep(0)  # the consumer lags now and then: chunks queue up
    assert threads == {loop_thread}
    _check_order(seen, [call.id for call in calls])
    assert not caplog.records


async def test_a_batch_sink_gets_worker_thread_chunks_on_the_loop_in_order() -> None:
    kit = _toolkit()
    loop_thread = threading.get_ident()
    threads: set[int] = set()
    seen: list[ToolEvent] = []

    def on_event(event: ToolEvent) -> None:
        threads.add(threading.get_ident())
        seen.append(event)

    calls = [ToolUseBlock(f"c{i}", "chatty", f'{{"count": {CHUNKS}}}') for i in range(2)]
    with anyio.fail_after(20):
        batch = await kit.call_tools(calls, on_event=on_event)
    assert [r.state for r in batch.results] == [ToolResultState.SUCCESS] * 2
    assert threads == {loop_thread}
    _check_order(seen, [call.id for call in calls])


async def test_a_failing_sink_on_the_loop_is_logged_and_the_batch_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    kit = _toolkit()
    finished: list[ToolCallFinished] = []

    def on_event(event: ToolEvent) -> None:
        if isinstance(event, ToolProgress):
            raise RuntimeError("sink broke")
        if isinstance(event, ToolCallFinished):
            finished.append(event)

    with caplog.at_level(logging.ERROR, logger="ferrotool"), anyio.fail_after(20):
        await kit.call_tools([ToolUseBlock("c1", "chatty", '{"count": 3}')], on_event=on_event)
    assert [event.result.id for event in finished] == ["c1"]
    assert len([r for r in caplog.records if "sink" in r.getMessage()]) == 3
