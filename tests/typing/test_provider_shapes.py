"""`schemas(format)` is typed per format: each provider SDK's ``tools=`` takes the list as is.

Checked statically by ``mypy --strict tests/typing`` (the functions below are never awaited
against a server), and at run time: every element loads into the SDK's own type.
"""

from __future__ import annotations

from typing import assert_type

import anthropic
import openai
import pydantic
from anthropic.types import ToolParam
from google.genai import types as genai
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam

from ferrotool import Registry, Toolkit, ToolView, tool
from ferrotool.providers.shapes import McpTool


@tool
def get_weather(city: str, days: int = 1) -> str:
    """Get the weather forecast for a city.

    Args:
        city: The city.
        days: How many days ahead.
    """
    return f"{city}: sunny for {days} day(s)"


def _toolkit() -> Toolkit:
    toolkit = Toolkit()
    toolkit.register(get_weather)
    return toolkit


def _static(toolkit: Toolkit, registry: Registry, view: ToolView) -> None:
    assert_type(toolkit.schemas(), list[ChatCompletionToolParam])
    assert_type(toolkit.schemas("openai_chat", strict=True), list[ChatCompletionToolParam])
    assert_type(registry.schemas("openai_responses"), list[FunctionToolParam])
    assert_type(view.schemas("anthropic"), list[ToolParam])
    assert_type(view.schemas("gemini"), list[genai.FunctionDeclarationDict])
    assert_type(toolkit.schemas("mcp"), list[McpTool])


async def _sdks_take_the_lists(toolkit: Toolkit) -> None:
    chat = openai.AsyncOpenAI(api_key="x", base_url="http://127.0.0.1:9")
    await chat.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=toolkit.schemas()
    )
    await chat.responses.create(model="m", input="hi", tools=toolkit.schemas("openai_responses"))
    claude = anthropic.AsyncAnthropic(api_key="x", base_url="http://127.0.0.1:9")
    await claude.messages.create(
        model="m",
        max_tokens=10,
        messages=[{"role": "user", "content": "hi"}],
        tools=toolkit.schemas("anthropic"),
    )
    config = genai.GenerateContentConfigDict(
        tools=[genai.ToolDict(function_declarations=toolkit.schemas("gemini"))]
    )
    genai.GenerateContentConfig.model_validate(config)


def test_every_format_loads_into_the_sdk_type() -> None:
    toolkit = _toolkit()
    for strict in (False, True):
        for definition in toolkit.schemas("openai_chat", strict=strict):
            pydantic.TypeAdapter(ChatCompletionToolParam).validate_python(definition, strict=True)
        for response_tool in toolkit.schemas("openai_responses", strict=strict):
            pydantic.TypeAdapter(FunctionToolParam).validate_python(response_tool, strict=True)
        for claude_tool in toolkit.schemas("anthropic", strict=strict):
            pydantic.TypeAdapter(ToolParam).validate_python(claude_tool, strict=True)
    for declaration in toolkit.schemas("gemini"):
        genai.FunctionDeclaration.model_validate(declaration)
    for mcp_tool in toolkit.schemas("mcp"):
        pydantic.TypeAdapter(McpTool).validate_python(mcp_tool, strict=True)
