"""Each adapter's values go into its SDK as they are: type-checked, never run.

``tests/typing/test_sdk_fit.py`` runs ``mypy --strict`` and pyright over this file.
Every function below is what a user writes to hand a view's tools, and its results, to one SDK:
no cast, no ``# type: ignore``.
"""

from __future__ import annotations

import agents
import pydantic_ai
from anthropic import AsyncAnthropic
from anthropic.types import MessageParam
from google import genai
from google.genai import types as genai_types
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputItemParam

from ferrotool import RuntimeContext, ToolView
from ferrotool.interop import langchain, openai_agents
from ferrotool.interop import pydantic_ai as ferrotool_pydantic_ai
from ferrotool.providers import anthropic, gemini, openai_chat, openai_responses


async def openai_chat_turn(client: AsyncOpenAI, view: ToolView, context: RuntimeContext) -> None:
    """The README's first example: the tools, then the two lines, then the next request."""
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Weather?"}]
    tools = openai_chat.tools(view, strict=True)
    reply = await client.chat.completions.create(model="m", messages=messages, tools=tools)
    batch = await view.call_tools(openai_chat.tool_calls(reply), context)
    messages += [openai_chat.assistant_message(reply), *openai_chat.result_messages(batch)]
    await client.chat.completions.create(model="m", messages=messages, tools=tools)


async def openai_responses_turn(
    client: AsyncOpenAI, view: ToolView, context: RuntimeContext
) -> None:
    """The same two lines for the Responses API, as the module documents them (stateless)."""
    tools = openai_responses.tools(view, strict=True)
    items: list[ResponseInputItemParam] = [{"role": "user", "content": "Weather?"}]
    response = await client.responses.create(model="m", input=items, tools=tools)
    batch = await view.call_tools(openai_responses.tool_calls(response), context)
    items += [*openai_responses.output_items(response), *openai_responses.result_messages(batch)]
    await client.responses.create(model="m", input=items, tools=tools)
    # Or on the server's state: the results alone, after the previous response.
    await client.responses.create(
        model="m",
        input=openai_responses.result_messages(batch),
        tools=tools,
        previous_response_id=response.id,
    )


async def anthropic_turn(client: AsyncAnthropic, view: ToolView, context: RuntimeContext) -> None:
    """Anthropic: the model's turn as it was, then every result in one ``user`` message."""
    messages: list[MessageParam] = [{"role": "user", "content": "Weather?"}]
    tools = anthropic.tools(view, strict=True)
    message = await client.messages.create(
        model="m", max_tokens=1024, messages=messages, tools=tools
    )
    batch = await view.call_tools(anthropic.tool_calls(message), context)
    messages += [{"role": "assistant", "content": message.content}, anthropic.user_turn(batch)]
    messages += [anthropic.assistant("Done.", anthropic.tool_calls(message))]
    await client.messages.create(
        model="m",
        max_tokens=1024,
        messages=messages,
        tools=tools,
    )


async def gemini_turn(client: genai.Client, view: ToolView, context: RuntimeContext) -> None:
    """Gemini: ``GenerateContentConfig(tools=...)`` takes the tools; the results are a turn."""
    config = genai_types.GenerateContentConfig(tools=gemini.tools(view))
    contents: list[genai_types.ContentUnionDict] = [
        genai_types.Content(role="user", parts=[genai_types.Part(text="Weather?")])
    ]
    response = await client.aio.models.generate_content(model="m", contents=contents, config=config)
    batch = await view.call_tools(gemini.tool_calls(response), context)
    if response.candidates and response.candidates[0].content:
        contents += [response.candidates[0].content, gemini.user_turn(batch)]
    contents += [genai_types.ContentDict(role="user", parts=gemini.result_messages(batch))]
    await client.aio.models.generate_content(model="m", contents=contents, config=config)


def openai_agents_agent(view: ToolView, context: RuntimeContext) -> agents.Agent[None]:
    """The OpenAI Agents SDK: ``Agent(tools=...)`` takes the function tools."""
    tools = openai_agents.function_tools(view, context)
    one = openai_agents.function_tool(view, "get_weather", context)
    agents.Agent(name="one", tools=[one])
    return agents.Agent(name="weather", instructions="Answer.", tools=tools)


def pydantic_ai_agents(view: ToolView, context: RuntimeContext) -> None:
    """pydantic-ai: the toolset as one of ``toolsets=``, a single tool in ``tools=``."""
    toolset = ferrotool_pydantic_ai.toolset(view, context)
    pydantic_ai.Agent("test", toolsets=[toolset])
    weather = ferrotool_pydantic_ai.tool(view, "get_weather", context)
    pydantic_ai.Agent("test", tools=[weather])
    pydantic_ai.Agent("test", deps_type=int, toolsets=[toolset], tools=[weather])


async def langchain_model(model: BaseChatModel, view: ToolView, context: RuntimeContext) -> None:
    """LangChain: a chat model binds the tools; a tool call's answer is a ``ToolMessage``."""
    tools = langchain.langchain_tools(view, context)
    reply = await model.bind_tools(tools).ainvoke([HumanMessage("Weather?")])
    assert isinstance(reply, AIMessage)
    for call in reply.tool_calls:
        await langchain.langchain_tool(view, call["name"], context).ainvoke(call)
