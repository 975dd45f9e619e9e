"""Provider adapters and the agent loop, as `benches.run` times them (``adapters``, ``agent_loop``).

``adapters``: for each provider, reading a response's tool calls (`tool_calls`, from the SDK's
own response object and from the wire dict) and writing results back (`result_messages`), for a
turn of 1 call and of 8, beside the floor a user would write by hand for the same shape (a list
comprehension over the SDK object, with no checks). Per call and per result is the median over
the number of calls.

``agent_loop``: one run of ferrotool's `run_agent` against one of pydantic-ai's ``Agent.run``
driven by its ``FunctionModel``, on the same scripted turns over the same tool: "answer" (one
model turn, no tool), and "one call, then answer" (two model turns around one tool call). Both
models are functions of the transcript, so each run starts fresh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from ferrotool import Toolkit, ToolResultBlock, ToolUseBlock, tool
from ferrotool.agent import ModelReply, ModelRequest, RunFinished, UserMessage, run_agent
from ferrotool.providers import anthropic, gemini, openai_chat, openai_responses

PROVIDERS = ("openai_chat", "openai_responses", "anthropic", "gemini")
CALL_COUNTS = (1, 8)
ARGUMENTS = {"city": "Paris", "days": 3, "unit": "c"}
RAW = orjson.dumps(ARGUMENTS).decode()

FLOOR = "hand-written glue"
FROM_SDK = "tool_calls (SDK object)"
FROM_DICT = "tool_calls (wire dict)"
RESULTS = "result_messages"


def case_name(provider: str, count: int) -> str:
    return f"{provider}, {count} call{'s' if count > 1 else ''}"


def _ids(count: int) -> list[str]:
    return [f"call_{i}" for i in range(count)]


def wire_response(provider: str, count: int) -> dict[str, Any]:
    """A response with ``count`` calls of ``get_weather``, as the provider's API sends it."""
    if provider == "openai_chat":
        calls = [
            {"id": i, "type": "function", "function": {"name": "get_weather", "arguments": RAW}}
            for i in _ids(count)
        ]
        message = {"role": "assistant", "content": None, "tool_calls": calls}
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
        }
    if provider == "openai_responses":
        output = [
            {
                "type": "function_call",
                "id": f"fc_{i}",
                "call_id": i,
                "name": "get_weather",
                "arguments": RAW,
                "status": "completed",
            }
            for i in _ids(count)
        ]
        return {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "gpt-test",
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
    if provider == "anthropic":
        content = [
            {"type": "tool_use", "id": i, "name": "get_weather", "input": ARGUMENTS}
            for i in _ids(count)
        ]
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    parts = [
        {"functionCall": {"id": i, "name": "get_weather", "args": ARGUMENTS}} for i in _ids(count)
    ]
    return {"candidates": [{"content": {"role": "model", "parts": parts}}]}


def sdk_response(provider: str, count: int) -> Any:
    """The same response as the provider SDK's own object."""
    wire = wire_response(provider, count)
    if provider == "openai_chat":
        from openai.types.chat import ChatCompletion

        return ChatCompletion.model_validate(wire)
    if provider == "openai_responses":
        from openai.types.responses import Response

        return Response.model_validate(wire)
    if provider == "anthropic":
        from anthropic.types import Message

        return Message.model_validate(wire)
    from google.genai.types import GenerateContentResponse

    return GenerateContentResponse.model_validate(wire)


def results(count: int) -> list[ToolResultBlock]:
    return [
        ToolResultBlock.success("Paris: sunny for 3 day(s)", id=i, name="get_weather")
        for i in _ids(count)
    ]


ADAPTERS = {
    "openai_chat": openai_chat,
    "openai_responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
}


def floor(provider: str) -> Callable[[Any], list[ToolUseBlock]]:
    """What a user writes by hand to read the SDK object's calls: no checks, one shape only."""
    if provider == "openai_chat":
        return lambda r: [
            ToolUseBlock(c.id, c.function.name, c.function.arguments)
            for c in r.choices[0].message.tool_calls or ()
        ]
    if provider == "openai_responses":
        return lambda r: [
            ToolUseBlock(i.call_id, i.name, i.arguments)
            for i in r.output
            if i.type == "function_call"
        ]
    if provider == "anthropic":
        return lambda r: [
            ToolUseBlock(b.id, b.name, orjson.dumps(b.input).decode())
            for b in r.content
            if b.type == "tool_use"
        ]
    return lambda r: [
        ToolUseBlock(
            p.function_call.id, p.function_call.name, orjson.dumps(p.function_call.args).decode()
        )
        for p in r.candidates[0].content.parts
        if p.function_call is not None
    ]


def adapter_implementations(provider: str, count: int) -> dict[str, Callable[[], object]]:
    """The timed calls of one provider and turn size (every one returns ``count`` items)."""
    module = ADAPTERS[provider]
    sdk, wire, done = sdk_response(provider, count), wire_response(provider, count), results(count)
    read_floor = floor(provider)
    read = module.tool_calls
    write = module.result_messages
    return {
        FLOOR: lambda: read_floor(sdk),
        FROM_SDK: lambda: read(sdk),
        FROM_DICT: lambda: read(wire),
        RESULTS: lambda: write(done),
    }


def expected_calls(count: int) -> list[ToolUseBlock]:
    return [ToolUseBlock(i, "get_weather", RAW) for i in _ids(count)]


# --- the agent loop ------------------------------------------------------------------------------

ANSWER = "answer"
ONE_CALL = "one call, then answer"
LOOP_CASES = (ANSWER, ONE_CALL)
FT_LOOP = "ferrotool run_agent"
PAI_LOOP = "pydantic-ai Agent.run (FunctionModel)"
TURNS = {ANSWER: 1, ONE_CALL: 2}


async def _get_weather(city: str, days: int = 1) -> str:
    """Get the weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


class TranscriptModel:
    """ferrotool's side: answers from the transcript's length, as the FunctionModel does."""

    def __init__(self, case: str) -> None:
        self.case = case

    async def respond(self, request: ModelRequest, on_delta: object = None) -> ModelReply:
        if self.case == ONE_CALL and len(request.messages) == 1:
            return ModelReply(calls=(ToolUseBlock("call_1", "get_weather", RAW),))
        return ModelReply("done")


def ferrotool_loop(case: str) -> Callable[[], Any]:
    toolkit = Toolkit()
    toolkit.register(tool(_get_weather, name="get_weather"))
    view = toolkit.snapshot().view()
    model = TranscriptModel(case)
    messages: Sequence[UserMessage] = (UserMessage("Weather in Paris?"),)

    async def once() -> str:
        outcome = await run_agent(model, view, messages).result()
        assert isinstance(outcome, RunFinished)
        return outcome.reply.text

    return once


def pydantic_ai_loop(case: str) -> Callable[[], Any]:
    from pydantic_ai import Agent, ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if case == ONE_CALL and len(messages) == 1:
            call = ToolCallPart(tool_name="get_weather", args=RAW, tool_call_id="call_1")
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond), tools=[_get_weather])

    async def once() -> str:
        return (await agent.run("Weather in Paris?")).output

    return once


def loop_implementations(case: str) -> dict[str, Callable[[], Any] | str]:
    """The two loops of a case, or why pydantic-ai is left out."""
    out: dict[str, Callable[[], Any] | str] = {FT_LOOP: ferrotool_loop(case)}
    try:
        out[PAI_LOOP] = pydantic_ai_loop(case)
    except ImportError as exc:
        out[PAI_LOOP] = f"unavailable: {exc}"
    return out
