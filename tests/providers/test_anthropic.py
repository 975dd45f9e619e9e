"""The Anthropic Messages adapter, through the anthropic SDK against a local server."""

from __future__ import annotations

import pytest
from anthropic import AsyncAnthropic
from anthropic.types import Message, MessageParam, ToolResultBlockParam
from pydantic import TypeAdapter

from ferrotool import ProviderShapeError, ToolUseBlock
from ferrotool.providers import ToolCallStream, anthropic
from providers.common import ERRORS, PNG, TEXTS, results_of_every_state, toolkit
from providers.payloads import json_delta, message, sse, tool_use
from providers.wire import Events, ModelServer, Reply

BLOCKS = TypeAdapter(list[ToolResultBlockParam])
MESSAGES = TypeAdapter(list[MessageParam])


TWO_CALLS = message(
    {"type": "text", "text": "Let me look."},
    tool_use("toolu_1", "get_weather", {"city": "Paris", "days": 3}),
    tool_use("toolu_2", "chart", {"title": "rain"}),
)
EXPECTED = (
    ToolUseBlock("toolu_1", "get_weather", '{"city":"Paris","days":3}'),
    ToolUseBlock("toolu_2", "chart", '{"title":"rain"}'),
)


def test_calls_read_alike_from_the_sdk_object_and_the_wire_dict() -> None:
    sdk = Message.model_validate(TWO_CALLS)
    assert anthropic.tool_calls(sdk) == EXPECTED
    assert anthropic.tool_calls(sdk.content) == EXPECTED
    assert anthropic.tool_calls(TWO_CALLS) == EXPECTED
    assert anthropic.tool_calls(message({"type": "text", "text": "hi"})) == ()


async def test_a_round_trip_through_the_sdk() -> None:
    kit = toolkit()
    answer = message({"type": "text", "text": "Sunny, and here is the chart."})
    with ModelServer([Reply(TWO_CALLS), Reply(answer)]) as server:
        async with AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as client:
            messages: list[MessageParam] = [{"role": "user", "content": "Weather and a chart?"}]
            tools = anthropic.tools(kit, strict=True)
            first = await client.messages.create(
                model="claude-test", max_tokens=100, messages=messages, tools=tools
            )
            batch = await kit.call_tools(anthropic.tool_calls(first))
            messages += [
                {"role": "assistant", "content": first.content},
                anthropic.user_turn(batch),
            ]
            await client.messages.create(
                model="claude-test", max_tokens=100, messages=messages, tools=tools
            )
    sent = server.bodies()[1]["messages"]
    assert sent[1]["content"][1:] == [
        tool_use("toolu_1", "get_weather", {"city": "Paris", "days": 3}),
        tool_use("toolu_2", "chart", {"title": "rain"}),
    ]
    assert sent[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "is_error": False,
                "content": "Paris: sunny for 3 day(s)",
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "is_error": False,
                "content": [
                    {"type": "text", "text": "chart rain"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                    },
                ],
            },
        ],
    }
    assert server.bodies()[0]["tools"][0]["strict"] is True


async def test_errors_are_flagged_and_every_state_keeps_its_text() -> None:
    results = results_of_every_state()
    blocks = anthropic.result_messages(results)
    BLOCKS.validate_python(blocks)
    turn = anthropic.user_turn(results)
    MESSAGES.validate_python([turn])
    assert [b["tool_use_id"] for b in blocks] == [r.id for r in results]
    for block in blocks:
        call_id = block["tool_use_id"]
        assert block["is_error"] is (call_id in ERRORS)
        if call_id not in ("r8", "r9"):
            assert block["content"] == TEXTS[call_id]
    assert blocks[8]["content"] == [
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    ]
    answer = message({"type": "text", "text": "ok"})
    with ModelServer([Reply(answer)]) as server:
        async with AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as client:
            await client.messages.create(
                model="claude-test",
                max_tokens=10,
                messages=[
                    {"role": "user", "content": "go"},
                    anthropic.assistant(
                        "", [ToolUseBlock(r.id or "", r.name or "", "{}") for r in results]
                    ),
                    turn,
                ],
            )
    assert server.bodies()[0]["messages"][2] == turn


async def test_streamed_arguments_gather_into_the_same_calls() -> None:
    start = message() | {"stop_reason": None}
    events = [
        sse("message_start", message=start),
        sse("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        sse("content_block_delta", index=0, delta={"type": "text_delta", "text": "Let me look."}),
        sse("content_block_stop", index=0),
        sse("content_block_start", index=1, content_block=tool_use("toolu_1", "get_weather", {})),
        json_delta(1, '{"city": "Par'),
        json_delta(1, 'is", "days": 3}'),
        sse("content_block_stop", index=1),
        sse("content_block_start", index=2, content_block=tool_use("toolu_2", "chart", {})),
        json_delta(2, '{"title": "rain"}'),
        sse("content_block_stop", index=2),
        sse("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 5}),
        sse("message_stop"),
    ]
    calls = ToolCallStream(anthropic.deltas)
    done_before_the_end = []
    with ModelServer([Events(events)]) as server:
        async with AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as client:
            stream = await client.messages.create(
                model="claude-test",
                max_tokens=100,
                messages=[{"role": "user", "content": "go"}],
                stream=True,
            )
            async for event in stream:
                done_before_the_end += [call.name for call in calls.feed(event) if call.done]
    assert calls.blocks() == (
        ToolUseBlock("toolu_1", "get_weather", '{"city": "Paris", "days": 3}'),
        ToolUseBlock("toolu_2", "chart", '{"title": "rain"}'),
    )
    assert done_before_the_end == ["get_weather", "chart"]  # each as soon as its block ends


def test_a_tool_use_without_an_id_is_refused() -> None:
    with pytest.raises(ProviderShapeError, match="needs a string id and name"):
        anthropic.tool_calls([{"type": "tool_use", "name": "f", "input": {}}])
    with pytest.raises(ProviderShapeError, match="not a list"):
        anthropic.tool_calls({"content": "text"})
