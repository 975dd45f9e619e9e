"""The loop's model adapters over the real SDK clients, against a local server."""

from __future__ import annotations

from typing import Any

import pytest
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI

from ferrotool import Toolkit, ToolResultBlock, ToolUseBlock, tool
from ferrotool.agent import (
    AgentEvent,
    AnthropicModel,
    ArgumentsDelta,
    ModelReply,
    ModelRequest,
    OpenAIChatModel,
    RunFinished,
    TextDelta,
    UserMessage,
    run_agent,
)
from providers.payloads import (
    chunk,
    completion,
    json_delta,
    message,
    piece,
    sse,
    streamed,
    tool_use,
)
from providers.wire import Events, ModelServer, Reply


@tool
async def get_weather(city: str) -> str:
    """Get the weather."""
    return f"{city}: sunny"


def kit() -> Toolkit:
    toolkit = Toolkit()
    toolkit.register(get_weather)
    return toolkit


async def collect(run: Any) -> list[AgentEvent]:
    async with run:
        return [event async for event in run]


async def test_the_openai_chat_model_runs_a_turn_of_calls() -> None:
    script = [
        Reply(
            completion(
                ("call_1", "get_weather", '{"city": "Paris"}'),
                ("call_2", "get_weather", '{"city": "Oslo"}'),
            )
        ),
        Reply(completion(text="Both sunny.")),
    ]
    with ModelServer(script) as server:
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as client:
            model = OpenAIChatModel(client, "gpt-test", strict=True, settings={"temperature": 0})
            view = kit().snapshot().view()
            outcome = await run_agent(
                model, view, [UserMessage("Weather?")], system="Be brief."
            ).result()
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "Both sunny."
    first, second = server.bodies()
    assert first["temperature"] == 0
    assert first["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
    ]
    assert first["tools"][0]["function"]["strict"] is True
    assert [m["role"] for m in second["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
    ]
    assert second["messages"][3:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "Paris: sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Oslo: sunny"},
    ]


def text_chunk(text: str) -> dict[str, Any]:
    event = chunk(None)
    event["choices"][0]["delta"]["content"] = text
    return event


@pytest.mark.asyncio_only(
    "the openai SDK leaves its stream's own async generators to the garbage collector, "
    "which trio reports"
)
async def test_the_openai_chat_model_streams_text_and_arguments() -> None:
    calling = [
        chunk([piece(0, "", "call_1", "get_weather")]),
        chunk([piece(0, '{"city": "Pa')]),
        chunk([piece(0, 'ris"}')]),
        chunk(None, "tool_calls"),
    ]
    answering = [text_chunk("Sunny "), text_chunk("in Paris."), chunk(None, "stop")]
    script = [
        Events([(None, event) for event in calling], done=True),
        Events([(None, event) for event in answering], done=True),
    ]
    with ModelServer(script) as server:
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as client:
            model = OpenAIChatModel(client, "gpt-test", stream=True)
            run = run_agent(model, kit().snapshot().view(), [UserMessage("Weather?")])
            events = await collect(run)
    partials = [e.partial for e in events if isinstance(e, ArgumentsDelta)]
    assert {"city": "Pa"} in partials
    assert partials[-1] == {"city": "Paris"}
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Sunny ", "in Paris."]
    outcome = events[-1]
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "Sunny in Paris."
    assert server.bodies()[0]["stream"] is True


async def test_the_anthropic_model_sends_its_own_reply_back_with_thinking() -> None:
    thinking = {"type": "thinking", "thinking": "The user wants weather.", "signature": "sig-1"}
    script = [
        Reply(message(thinking, tool_use("toolu_1", "get_weather", {"city": "Paris"}))),
        Reply(message({"type": "text", "text": "Sunny."})),
    ]
    with ModelServer(script) as server:
        async with AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as client:
            model = AnthropicModel(client, "claude-test", max_tokens=200)
            outcome = await run_agent(
                model, kit().snapshot().view(), [UserMessage("Weather?")], system="Be brief."
            ).result()
    assert isinstance(outcome, RunFinished)
    first, second = server.bodies()
    assert first["system"] == "Be brief."
    assert first["max_tokens"] == 200
    assert second["messages"][1] == {
        "role": "assistant",
        "content": [thinking, tool_use("toolu_1", "get_weather", {"city": "Paris"})],
    }
    assert second["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "is_error": False,
                "content": "Paris: sunny",
            }
        ],
    }


async def test_the_anthropic_model_streams_text_and_arguments() -> None:
    calling = [
        sse("message_start", message=message() | {"stop_reason": None}),
        sse("content_block_start", index=0, content_block=tool_use("toolu_1", "get_weather", {})),
        json_delta(0, '{"city": '),
        json_delta(0, '"Paris"}'),
        sse("content_block_stop", index=0),
        sse("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 5}),
        sse("message_stop"),
    ]
    answering = [
        sse("message_start", message=message() | {"stop_reason": None}),
        sse("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        sse("content_block_delta", index=0, delta={"type": "text_delta", "text": "Sunny."}),
        sse("content_block_stop", index=0),
        sse("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 1}),
        sse("message_stop"),
    ]
    with ModelServer([Events(calling), Events(answering)]) as server:
        async with AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as client:
            model = AnthropicModel(client, "claude-test", stream=True)
            events = await collect(run_agent(model, kit().snapshot().view(), [UserMessage("?")]))
    assert [e.partial for e in events if isinstance(e, ArgumentsDelta)][-1] == {"city": "Paris"}
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Sunny."]
    assert server.bodies()[1]["messages"][1]["content"] == [
        tool_use("toolu_1", "get_weather", {"city": "Paris"})
    ]


async def test_the_streaming_anthropic_model_sends_thinking_back_with_its_signature() -> None:
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    redacted = {"type": "redacted_thinking", "data": "opaque"}
    calling = streamed(
        (
            thinking,
            [
                {"type": "thinking_delta", "thinking": "The user wants "},
                {"type": "thinking_delta", "thinking": "weather."},
                {"type": "signature_delta", "signature": "sig-1"},
            ],
        ),
        (redacted, []),
        (
            tool_use("toolu_1", "get_weather", {}),
            [{"type": "input_json_delta", "partial_json": '{"city": "Paris"}'}],
        ),
        stop="tool_use",
    )
    answering = streamed(
        ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "Sunny."}]),
        stop="end_turn",
    )
    with ModelServer([Events(calling), Events(answering)]) as server:
        async with AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as client:
            model = AnthropicModel(client, "claude-test", stream=True)
            events = await collect(run_agent(model, kit().snapshot().view(), [UserMessage("?")]))
    outcome = events[-1]
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "Sunny."
    assert server.bodies()[1]["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "The user wants weather.", "signature": "sig-1"},
            redacted,
            tool_use("toolu_1", "get_weather", {"city": "Paris"}),
        ],
    }


def test_anthropic_turns_keep_alternating_when_text_follows_results() -> None:
    call = ToolUseBlock("toolu_1", "get_weather", '{"city": "Paris"}')
    request = ModelRequest(
        (
            UserMessage("Weather?"),
            ModelReply("Checking.", (call,)),
            ToolResultBlock.success("Paris: sunny", id="toolu_1", name="get_weather"),
            UserMessage("and hurry"),
        ),
        kit(),
    )
    messages = AnthropicModel(AsyncAnthropic(api_key="t"), "claude-test").messages(request)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    assert messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "is_error": False,
            "content": "Paris: sunny",
        },
        {"type": "text", "text": "and hurry"},
    ]


async def test_no_tools_and_no_system_prompt_are_left_out_of_the_requests() -> None:
    with ModelServer(
        [Reply(completion(text="Hi.")), Reply(message({"type": "text", "text": "Hi."}))]
    ) as server:
        empty = Toolkit().snapshot().view()
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as openai:
            await run_agent(
                OpenAIChatModel(openai, "gpt-test"), empty, [UserMessage("Hi")]
            ).result()
        async with AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as claude:
            await run_agent(
                AnthropicModel(claude, "claude-test"), empty, [UserMessage("Hi")]
            ).result()
    chat, messages = server.bodies()
    assert "tools" not in chat
    assert "tools" not in messages
    assert "system" not in messages
