"""Each provider's model, streamed and not: two turns through the real SDK, a local server.

The second request must carry back everything the provider needs: Anthropic's thinking blocks
with their signatures, the Responses API's reasoning items and function calls, Gemini's thought
signatures; a streaming model reports its text and arguments as they come.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from typing import Any

import pytest
from anthropic import AsyncAnthropic
from google import genai
from google.genai import types
from openai import AsyncOpenAI
from openai.types.responses import Response

from ferrotool import AgentError, ProviderShapeError, Toolkit, ToolUseBlock, tool
from ferrotool.agent import (
    AgentEvent,
    AgentRun,
    AnthropicModel,
    ArgumentsDelta,
    ChatModel,
    GeminiModel,
    ModelReply,
    ModelRequest,
    OpenAIChatModel,
    OpenAIResponsesModel,
    RunFinished,
    TextDelta,
    UserMessage,
    run_agent,
)
from ferrotool.providers import gemini, openai_responses
from providers.payloads import (
    candidate,
    chunk,
    completion,
    event,
    function_call,
    message,
    output_message,
    piece,
    response,
    streamed,
    tool_use,
)
from providers.wire import Events, ModelServer, Reply

OPENAI_STREAMS = "the openai SDK leaves its stream's own async generators to the garbage collector"
STREAMED = [False, pytest.param(True, marks=pytest.mark.asyncio_only(OPENAI_STREAMS))]
ARGUMENTS = ('{"city": ', '"Paris"}')
"""The call's arguments, in the two pieces a stream sends."""


@tool
async def get_weather(city: str) -> str:
    """Get the weather."""
    return f"{city}: sunny"


def kit() -> Toolkit:
    toolkit = Toolkit()
    toolkit.register(get_weather)
    return toolkit


async def run(model: ChatModel) -> list[AgentEvent]:
    """A run over `kit` from one question, with a system prompt; every event it yields."""
    agent: AgentRun = run_agent(
        model, kit().snapshot().view(), [UserMessage("Weather?")], system="Be brief."
    )
    async with agent:
        events = [item async for item in agent]
    assert isinstance(events[-1], RunFinished)
    return events


def texts(events: list[AgentEvent]) -> list[str]:
    return [item.text for item in events if isinstance(item, TextDelta)]


def partials(events: list[AgentEvent]) -> list[dict[str, Any]]:
    return [dict(item.partial) for item in events if isinstance(item, ArgumentsDelta)]


def final(events: list[AgentEvent]) -> RunFinished:
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last


def check_deltas(events: list[AgentEvent], stream: bool, text: list[str]) -> None:
    """Streamed: the text in its pieces and the arguments growing; else no delta at all."""
    if not stream:
        assert texts(events) == []
        assert partials(events) == []
        return
    assert texts(events) == text
    grown = partials(events)
    assert grown[-1] == {"city": "Paris"}
    calls = [item for item in events if isinstance(item, ArgumentsDelta)]
    assert {(item.id, item.name) for item in calls} >= {("call_1", "get_weather")}


# -- OpenAI Chat Completions --


def chat_script(stream: bool) -> list[Reply | Events]:
    call = ("call_1", "get_weather", "".join(ARGUMENTS))
    if not stream:
        return [Reply(completion(call)), Reply(completion(text="Sunny in Paris."))]
    calling = [
        chunk([piece(0, "", "call_1", "get_weather")]),
        *(chunk([piece(0, text)]) for text in ARGUMENTS),
        chunk(None, "tool_calls"),
    ]
    answering = []
    for text in ("Sunny ", "in Paris."):
        answering.append(text_chunk := chunk(None))
        text_chunk["choices"][0]["delta"]["content"] = text
    answering.append(chunk(None, "stop"))
    return [
        Events([(None, item) for item in calling], done=True),
        Events([(None, item) for item in answering], done=True),
    ]


@pytest.mark.parametrize("stream", STREAMED)
async def test_the_chat_model_sends_the_call_and_its_result_back(stream: bool) -> None:
    with ModelServer(chat_script(stream)) as server:
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as client:
            events = await run(OpenAIChatModel(client, "gpt-test", stream=stream))
    assert final(events).reply.text == "Sunny in Paris."
    check_deltas(events, stream, ["Sunny ", "in Paris."])
    assert [request.path for request in server.requests] == ["/v1/chat/completions"] * 2
    assert server.bodies()[1]["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Paris: sunny"},
    ]


# -- Anthropic Messages --

THINKING = {"type": "thinking", "thinking": "The user wants weather.", "signature": "sig-1"}
REDACTED = {"type": "redacted_thinking", "data": "opaque"}
CHECKING = {"type": "text", "text": "Checking."}


def anthropic_script(stream: bool) -> list[Reply | Events]:
    call = tool_use("call_1", "get_weather", {"city": "Paris"})
    if not stream:
        return [
            Reply(message(THINKING, REDACTED, CHECKING, call)),
            Reply(message({"type": "text", "text": "Sunny in Paris."})),
        ]
    calling = streamed(
        (
            {"type": "thinking", "thinking": "", "signature": ""},
            [
                {"type": "thinking_delta", "thinking": "The user wants "},
                {"type": "thinking_delta", "thinking": "weather."},
                {"type": "signature_delta", "signature": "sig-1"},
            ],
        ),
        (REDACTED, []),
        ({"type": "text", "text": ""}, [{"type": "text_delta", "text": "Checking."}]),
        (
            tool_use("call_1", "get_weather", {}),
            [{"type": "input_json_delta", "partial_json": text} for text in ARGUMENTS],
        ),
        stop="tool_use",
    )
    answering = streamed(
        (
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": text} for text in ("Sunny ", "in Paris.")],
        ),
        stop="end_turn",
    )
    return [Events(calling), Events(answering)]


@pytest.mark.parametrize("stream", [False, True])
async def test_the_anthropic_model_sends_thinking_back_with_its_signature(stream: bool) -> None:
    with ModelServer(anthropic_script(stream)) as server:
        async with AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as client:
            events = await run(AnthropicModel(client, "claude-test", stream=stream))
    assert final(events).reply.text == "Sunny in Paris."
    check_deltas(events, stream, ["Checking.", "Sunny ", "in Paris."])
    assert [request.path for request in server.requests] == ["/v1/messages"] * 2
    first, second = server.bodies()
    assert first.get("stream", False) is stream
    assert second["system"] == "Be brief."
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                THINKING,
                REDACTED,
                CHECKING,
                tool_use("call_1", "get_weather", {"city": "Paris"}),
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "is_error": False,
                    "content": "Paris: sunny",
                }
            ],
        },
    ]


# -- OpenAI Responses --

REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Look the weather up."}],
    "encrypted_content": "enc-1",
}
CALL = function_call("call_1", "get_weather", "".join(ARGUMENTS))


def responses_script(stream: bool) -> list[Reply | Events]:
    answer = output_message("Sunny in Paris.")
    if not stream:
        return [Reply(response(REASONING, CALL)), Reply(response(answer))]
    started = response(status="in_progress")
    added = CALL | {"arguments": "", "status": "in_progress"}
    calling = [
        event("response.created", response=started),
        event("response.output_item.added", output_index=0, item=REASONING),
        event("response.output_item.done", output_index=0, item=REASONING),
        event("response.output_item.added", output_index=1, item=added),
        *(
            event(
                "response.function_call_arguments.delta",
                output_index=1,
                item_id="fc_call_1",
                delta=text,
            )
            for text in ARGUMENTS
        ),
        event(
            "response.function_call_arguments.done",
            output_index=1,
            item_id="fc_call_1",
            name="get_weather",
            arguments=CALL["arguments"],
        ),
        event("response.output_item.done", output_index=1, item=CALL),
        event("response.completed", response=response(REASONING, CALL)),
    ]
    empty = answer | {"content": [], "status": "in_progress"}
    part = {"type": "output_text", "text": "", "annotations": []}
    answering = [
        event("response.created", response=started),
        event("response.output_item.added", output_index=0, item=empty),
        event(
            "response.content_part.added",
            output_index=0,
            item_id="msg_1",
            content_index=0,
            part=part,
        ),
        *(
            event(
                "response.output_text.delta",
                output_index=0,
                item_id="msg_1",
                content_index=0,
                delta=text,
                logprobs=[],
            )
            for text in ("Sunny ", "in Paris.")
        ),
        event("response.output_item.done", output_index=0, item=answer),
        event("response.completed", response=response(answer)),
    ]
    return [Events(calling), Events(answering)]


@pytest.mark.parametrize("stream", STREAMED)
async def test_the_responses_model_sends_reasoning_and_calls_back(stream: bool) -> None:
    with ModelServer(responses_script(stream)) as server:
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as client:
            model = OpenAIResponsesModel(
                client, "gpt-test", stream=stream, settings={"store": False}
            )
            events = await run(model)
    outcome = final(events)
    assert outcome.reply.text == "Sunny in Paris."
    check_deltas(events, stream, ["Sunny ", "in Paris."])
    assert [request.path for request in server.requests] == ["/v1/responses"] * 2
    first, second = server.bodies()
    assert first.get("stream", False) is stream
    assert first["tools"][0]["name"] == "get_weather"
    assert second["instructions"] == "Be brief."
    assert second["store"] is False
    assert "previous_response_id" not in second
    assert second["input"] == [
        {"role": "user", "content": "Weather?"},
        REASONING,
        CALL,
        {"type": "function_call_output", "call_id": "call_1", "output": "Paris: sunny"},
    ]


@pytest.mark.asyncio_only(OPENAI_STREAMS)
async def test_a_responses_stream_completed_without_its_output_keeps_the_items() -> None:
    script = responses_script(stream=True)
    for reply in script:
        assert isinstance(reply, Events)
        name, completed = reply.events[-1]
        assert name == "response.completed"
        completed["response"]["output"] = []  # the items came one by one only
    with ModelServer(script) as server:
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as client:
            outcome = final(await run(OpenAIResponsesModel(client, "gpt-test", stream=True)))
    assert outcome.reply.text == "Sunny in Paris."
    assert server.bodies()[1]["input"][1:3] == [REASONING, CALL]


async def test_a_responses_stream_that_fails_raises() -> None:
    failed = response(status="failed") | {"error": {"code": "server_error", "message": "down"}}
    script = [Events([event("response.failed", response=failed)])]
    with ModelServer(script) as server:
        async with AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0) as client:
            model = OpenAIResponsesModel(client, "gpt-test", stream=True)
            with pytest.raises(AgentError, match="the response failed"):
                await model.respond(ModelRequest((UserMessage("?"),), kit()))


# -- Gemini --

SIGNATURE = base64.b64encode(b"sig-1").decode()
GEMINI_CALL = {
    "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
    "thoughtSignature": SIGNATURE,
}
GEMINI_STREAMS = "google-genai's async client needs asyncio's event loop"


def gemini_script(stream: bool) -> list[Reply | Events]:
    if not stream:
        calling = candidate(
            {"text": "Weighing it.", "thought": True},
            {"text": "Checking Paris."},
            GEMINI_CALL,
        )
        return [Reply(calling), Reply(candidate({"text": "Sunny in Paris."}))]
    pieces = [
        candidate({"text": "Weighing ", "thought": True}, finish=None),
        candidate({"text": "it.", "thought": True}, finish=None),
        candidate({"text": "Checking "}, finish=None),
        candidate({"text": "Paris."}, finish=None),
        candidate(GEMINI_CALL),
    ]
    answer = [
        candidate({"text": "Sunny "}, finish=None),
        candidate({"text": "in Paris."}, finish=None),
        candidate({"text": "", "thoughtSignature": base64.b64encode(b"sig-2").decode()}),
    ]
    return [Events([(None, c) for c in pieces]), Events([(None, c) for c in answer])]


@pytest.mark.asyncio_only(GEMINI_STREAMS)
@pytest.mark.parametrize("stream", [False, True])
async def test_the_gemini_model_sends_thought_signatures_back(stream: bool) -> None:
    with ModelServer(gemini_script(stream)) as server:
        client = genai.Client(api_key="t", http_options=types.HttpOptions(base_url=server.url))
        model = GeminiModel(client, "gemini-test", stream=stream, settings={"temperature": 0})
        try:
            events = await run(model)
        finally:
            await client.aio.aclose()
    outcome = final(events)
    assert outcome.reply.text == "Sunny in Paris."
    if stream:
        assert texts(events) == ["Checking ", "Paris.", "Sunny ", "in Paris."]
        calls = [item for item in events if isinstance(item, ArgumentsDelta)]
        assert [(c.id, c.name, c.partial) for c in calls] == [
            ("gemini-call-2", "get_weather", {"city": "Paris"})
        ]
    else:
        check_deltas(events, stream, [])
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    paths = {f"/{version}/models/gemini-test:{method}" for version in ("v1", "v1beta")}
    assert all(request.path in paths for request in server.requests)  # the SDK's API version
    first, second = server.bodies()
    assert first["generationConfig"] == {"temperature": 0}
    assert second["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert second["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "Weighing it.", "thought": True},
                {"text": "Checking Paris."},
                GEMINI_CALL,
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"output": "Paris: sunny"},
                    }
                }
            ],
        },
    ]
    last = model.contents(ModelRequest(outcome.messages, kit()))[-1]
    assert isinstance(last, types.Content)
    assert last.parts is not None
    signed = [(part.text, part.thought_signature) for part in last.parts]
    assert signed == [("Sunny in Paris.", b"sig-2" if stream else None)]


def test_a_reply_from_elsewhere_is_written_in_each_providers_shape() -> None:
    arguments = '{"city": "Paris"}'
    calls = (
        ToolUseBlock("call_1", "get_weather", arguments),
        ToolUseBlock("gemini-call-1", "get_weather", arguments),
    )
    call = ModelReply("Checking.", calls)
    request = ModelRequest((UserMessage("Weather?"), call), kit())
    client = genai.Client(api_key="t")
    assert GeminiModel(client, "gemini-test").contents(request)[1] == {
        "role": "model",
        "parts": [
            {"text": "Checking."},
            {"function_call": {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}},
            {"function_call": {"name": "get_weather", "args": {"city": "Paris"}}},
        ],
    }
    responses = OpenAIResponsesModel(AsyncOpenAI(api_key="t"), "gpt-test").items(request)
    assert responses[1:] == [
        {"role": "assistant", "content": "Checking."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {
            "type": "function_call",
            "call_id": "gemini-call-1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
    ]


def test_output_items_read_alike_from_the_sdk_object_and_the_wire_dict() -> None:
    wire = response(REASONING, CALL, output_message("Done."))
    expected = [REASONING, CALL, output_message("Done.")]
    assert openai_responses.output_items(wire) == expected
    assert openai_responses.output_items(Response.model_validate(wire)) == expected
    with pytest.raises(ProviderShapeError, match="not an object"):
        openai_responses.output_items(["reasoning"])


def test_the_model_content_is_the_first_candidates() -> None:
    wire = candidate({"text": "Hi."})
    assert gemini.model_content(wire) == wire["candidates"][0]["content"]
    sdk = types.GenerateContentResponse.model_validate(wire)
    assert sdk.candidates
    assert gemini.model_content(sdk) is sdk.candidates[0].content
    with pytest.raises(ProviderShapeError, match="no content"):
        gemini.model_content({"candidates": [{"finishReason": "SAFETY"}]})


def test_importing_the_models_imports_no_sdk() -> None:
    program = (
        "import sys, ferrotool.agent, ferrotool.agent.models; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'openai', 'anthropic', 'google'}))"
    )
    found = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "[]"
