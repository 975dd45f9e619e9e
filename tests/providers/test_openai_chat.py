"""The OpenAI Chat Completions adapter, through the openai SDK against a local server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from pydantic import TypeAdapter

from ferrotool import ProviderShapeError, ToolResultBlock, ToolUseBlock
from ferrotool.providers import ToolCallStream, openai_chat
from providers.common import PNG, TEXTS, results_of_every_state, toolkit
from providers.payloads import chunk, completion, piece
from providers.wire import Events, ModelServer, Reply

MESSAGES = TypeAdapter(list[ChatCompletionMessageParam])


TWO_CALLS = completion(
    ("call_1", "get_weather", '{"city": "Paris", "days": 3}'),
    ("call_2", "get_weather", '{"city": "Oslo", "days": 30}'),
)


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer([Reply(TWO_CALLS), Reply(completion(text="Paris is sunny."))]) as running:
        yield running


def client(server: ModelServer) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=f"{server.url}/v1", api_key="test", max_retries=0)


def test_calls_read_alike_from_the_sdk_object_and_the_wire_dict() -> None:
    sdk = ChatCompletion.model_validate(TWO_CALLS)
    expected = (
        ToolUseBlock("call_1", "get_weather", '{"city": "Paris", "days": 3}'),
        ToolUseBlock("call_2", "get_weather", '{"city": "Oslo", "days": 30}'),
    )
    assert openai_chat.tool_calls(sdk) == expected
    assert openai_chat.tool_calls(sdk.choices[0].message) == expected
    assert openai_chat.tool_calls(TWO_CALLS) == expected
    assert openai_chat.tool_calls(TWO_CALLS["choices"][0]["message"]) == expected
    assert openai_chat.tool_calls(completion(text="no tools")) == ()


async def test_a_round_trip_through_the_sdk(server: ModelServer) -> None:
    kit = toolkit()
    async with client(server) as openai:
        await _round_trip(kit, openai, server)


async def _round_trip(kit: Any, openai: AsyncOpenAI, server: ModelServer) -> None:
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Weather?"}]
    tools = openai_chat.tools(kit, strict=True)
    response = await openai.chat.completions.create(
        model="gpt-test", messages=messages, tools=tools
    )
    batch = await kit.call_tools(openai_chat.tool_calls(response))
    messages += [openai_chat.assistant_message(response), *openai_chat.result_messages(batch)]
    final = await openai.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    assert final.choices[0].message.content == "Paris is sunny."
    first, second = server.bodies()
    assert first["tools"] == tools
    assert first["tools"][0]["function"]["strict"] is True
    sent = second["messages"]
    assert sent == MESSAGES.dump_python(MESSAGES.validate_python(messages), mode="json")
    assert sent[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris", "days": 3}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "days": 30}'},
            },
        ],
    }
    assert sent[2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "Paris: sunny for 3 day(s)",
    }
    assert sent[3]["tool_call_id"] == "call_2"
    assert "days: expected at most 14, found integer 30" in sent[3]["content"]


async def test_every_state_is_sent_as_its_text_and_images_follow(server: ModelServer) -> None:
    results = results_of_every_state()
    messages = openai_chat.result_messages(results)
    MESSAGES.validate_python(messages)  # the SDK's own param types
    tool_messages, images = messages[:-1], messages[-1]
    assert [(m["role"], m["tool_call_id"]) for m in tool_messages] == [  # type: ignore[typeddict-item]
        ("tool", r.id) for r in results
    ]
    for message in tool_messages:
        assert message["content"] == TEXTS[message["tool_call_id"]]  # type: ignore[typeddict-item]
    assert images == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Images returned by tool call r8:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {"type": "text", "text": "Images returned by tool call r9:"},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ],
    }
    async with client(server) as openai:
        await openai.chat.completions.create(
            model="gpt-test",
            messages=[
                {"role": "user", "content": "go"},
                openai_chat.assistant_message(
                    completion(*((r.id or "", r.name or "", "{}") for r in results))
                ),
                *messages,
            ],
        )
    assert server.bodies()[0]["messages"][2:] == messages


@pytest.mark.asyncio_only(
    "the openai SDK leaves its stream's own async generators to the garbage collector, "
    "which trio reports"
)
async def test_streamed_arguments_gather_into_the_same_calls() -> None:
    events = [
        chunk([piece(0, "", "call_1", "get_weather")]),
        chunk([piece(0, '{"city": "Pa')]),
        chunk([piece(1, "", "call_2", "lookup"), piece(0, 'ris", "days": 3}')]),
        chunk([piece(1, '{"sku": "A1"}')]),
        chunk(None, "tool_calls"),
    ]
    calls = ToolCallStream(openai_chat.deltas)
    seen = []
    with ModelServer([Events([(None, event) for event in events], done=True)]) as server:
        async with client(server) as openai:
            stream = await openai.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "go"}], stream=True
            )
            async with stream:
                async for event in stream:
                    seen += [(call.name, call.partial()) for call in calls.feed(event)]
    assert calls.blocks() == (
        ToolUseBlock("call_1", "get_weather", '{"city": "Paris", "days": 3}'),
        ToolUseBlock("call_2", "lookup", '{"sku": "A1"}'),
    )
    assert all(call.done for call in calls.calls)
    assert ("get_weather", {"city": "Pa"}) in seen
    assert seen[-1] == ("lookup", {"sku": "A1"})


def test_what_is_not_a_function_call_is_refused() -> None:
    custom = completion()
    custom["choices"][0]["message"]["tool_calls"] = [
        {"id": "c1", "type": "custom", "custom": {"name": "grammar", "input": "x"}}
    ]
    with pytest.raises(ProviderShapeError, match="only function tool calls"):
        openai_chat.tool_calls(custom)
    with pytest.raises(ProviderShapeError, match="no choices"):
        openai_chat.tool_calls({"choices": []})
    with pytest.raises(ProviderShapeError, match="needs a string id and name"):
        openai_chat.tool_calls({"tool_calls": [{"function": {"name": "f", "arguments": ""}}]})
    with pytest.raises(ProviderShapeError, match="id of the call"):
        openai_chat.result_messages([ToolResultBlock.success("x")])
