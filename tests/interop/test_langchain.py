"""LangChain both ways, with langchain-core's own fake chat model driving the calls."""

from __future__ import annotations

import orjson
import pytest
import trio
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import ToolException
from langchain_core.tools import tool as langchain_tool_decorator
from langchain_core.utils.function_calling import convert_to_openai_tool

from ferrotool import (
    ImageBlock,
    TextBlock,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.interop import langchain as bridge

pytestmark = pytest.mark.asyncio_only("LangChain runs sync tools in asyncio's executor")

PNG = "iVBORw0KGgo="


@tool
async def get_weather(city: str, days: int = 1) -> str:
    """Get the weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


@tool
async def chart(title: str) -> ToolResultBlock:
    """Draw a chart."""
    return ToolResultBlock.success([TextBlock(title), ImageBlock(media_type="image/png", data=PNG)])


def kit() -> Toolkit:
    toolkit = Toolkit()
    toolkit.register(get_weather)
    toolkit.register(chart)
    return toolkit


async def test_a_fake_chat_model_drives_exported_tools() -> None:
    toolkit = kit()
    tools = {t.name: t for t in bridge.langchain_tools(toolkit)}
    model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(
                    "",
                    tool_calls=[
                        {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"},
                        {"name": "get_weather", "args": {"city": "Oslo", "days": 0.5}, "id": "c2"},
                        {"name": "chart", "args": {"title": "rain"}, "id": "c3"},
                    ],
                ),
                AIMessage("done"),
            ]
        )
    )
    messages: list[BaseMessage] = [HumanMessage("Weather?")]
    reply = await model.ainvoke(messages)
    assert isinstance(reply, AIMessage)
    messages.append(reply)
    for call in reply.tool_calls:
        answer = await tools[call["name"]].ainvoke({**call, "type": "tool_call"})
        assert isinstance(answer, ToolMessage)
        messages.append(answer)
    assert (await model.ainvoke(messages)).content == "done"
    paris, oslo, drawn = messages[2:]
    assert isinstance(paris, ToolMessage)
    assert isinstance(oslo, ToolMessage)
    assert isinstance(drawn, ToolMessage)
    assert (paris.content, paris.status, paris.tool_call_id) == (
        "Paris: sunny for 1 day(s)",
        "success",
        "c1",
    )
    assert paris.artifact == ToolResultBlock.success(
        "Paris: sunny for 1 day(s)", id="c1", name="get_weather"
    )
    assert oslo.status == "error"
    assert "days: expected integer" in str(oslo.content)
    assert drawn.content == [
        {"type": "text", "text": "rain"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]


def test_the_schema_langchain_sends_is_ferrotools() -> None:
    toolkit = kit()
    exported = bridge.langchain_tool(toolkit, "get_weather")
    sent = convert_to_openai_tool(exported)["function"]
    assert sent["name"] == "get_weather"
    assert sent["parameters"] == orjson.loads(toolkit.get_spec("get_weather").parameters_json)  # type: ignore[union-attr]


def test_sync_invocation_runs_the_call_on_this_thread() -> None:
    exported = bridge.langchain_tool(kit(), "get_weather")
    answer = exported.invoke(
        {"type": "tool_call", "name": "x", "args": {"city": "Rome"}, "id": "c9"}
    )
    assert isinstance(answer, ToolMessage)
    assert answer.content == "Rome: sunny for 1 day(s)"


@langchain_tool_decorator
def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


@langchain_tool_decorator
def fragile(name: str) -> str:
    """Fails for some names."""
    if name == "bad":
        raise ToolException("no such name")
    return f"hello {name}"


async def test_langchain_tools_imported_into_a_toolkit() -> None:
    toolkit = Toolkit()
    toolkit.register(bridge.from_langchain(multiply))
    toolkit.register(bridge.from_langchain(fragile))
    schema = orjson.loads(toolkit.get_spec("multiply").parameters_json)  # type: ignore[union-attr]
    assert schema["required"] == ["a", "b"]
    assert toolkit.get_spec("multiply").description == "Multiply two numbers."  # type: ignore[union-attr]
    result = await toolkit.call_tool(ToolUseBlock("c1", "multiply", '{"a": 6, "b": 7}'))
    assert (result.state, result.content) == (ToolResultState.SUCCESS, "42")
    invalid = await toolkit.call_tool(ToolUseBlock("c2", "multiply", '{"a": 6}'))
    assert invalid.state is ToolResultState.ERROR
    assert "b" in invalid.content
    failed = await toolkit.call_tool(ToolUseBlock("c3", "fragile", '{"name": "bad"}'))
    assert failed.state is ToolResultState.ERROR
    assert "no such name" in failed.content


@tool
async def flaky(city: str) -> str:
    """Fails for one city."""
    if city == "Atlantis":
        raise LookupError("no such city")
    return city


def error_artifact(answer: object, call_id: str) -> ToolResultBlock:
    assert isinstance(answer, ToolMessage)
    assert (answer.status, answer.tool_call_id) == ("error", call_id)
    assert isinstance(answer.artifact, ToolResultBlock)
    assert answer.artifact.state is ToolResultState.ERROR
    assert answer.artifact.id == call_id
    assert answer.content == answer.artifact.content
    return answer.artifact


async def test_an_error_result_keeps_its_artifact() -> None:
    toolkit = kit()
    toolkit.register(flaky)
    weather = bridge.langchain_tool(toolkit, "get_weather")
    invalid = await weather.ainvoke(
        {"type": "tool_call", "name": "get_weather", "args": {"city": 3}, "id": "c1"}
    )
    assert "city: expected string" in error_artifact(invalid, "c1").content
    raised = bridge.langchain_tool(toolkit, "flaky").invoke(
        {"type": "tool_call", "name": "flaky", "args": {"city": "Atlantis"}, "id": "c2"}
    )
    assert "no such city" in error_artifact(raised, "c2").content
    assert error_artifact(raised, "c2").name == "flaky"


def test_an_error_result_without_a_tool_call_is_its_text() -> None:
    weather = bridge.langchain_tool(kit(), "get_weather")
    assert "city: expected string" in weather.invoke({"city": 3})
    strict = weather.model_copy(update={"handle_tool_error": False})
    with pytest.raises(ToolException, match="city: expected string"):
        strict.invoke({"type": "tool_call", "name": "get_weather", "args": {"city": 3}, "id": "c"})


async def test_sync_invocation_of_an_async_tool_inside_a_running_loop() -> None:
    exported = bridge.langchain_tool(kit(), "get_weather")
    answer = exported.invoke(
        {"type": "tool_call", "name": "get_weather", "args": {"city": "Rome"}, "id": "c1"}
    )
    assert isinstance(answer, ToolMessage)
    assert (answer.content, answer.status) == ("Rome: sunny for 1 day(s)", "success")
    assert exported.invoke({"city": "Oslo", "days": 2}) == "Oslo: sunny for 2 day(s)"


def test_sync_invocation_of_an_async_tool_inside_a_trio_run() -> None:
    exported = bridge.langchain_tool(kit(), "get_weather")

    async def main() -> object:
        return exported.invoke({"city": "Rome"})

    assert trio.run(main) == "Rome: sunny for 1 day(s)"


async def test_content_only_tools_answer_with_the_content() -> None:
    exported = bridge.langchain_tool(kit(), "get_weather")
    plain = exported.model_copy(update={"response_format": "content"})
    ok = await plain.ainvoke(
        {"type": "tool_call", "name": "get_weather", "args": {"city": "Rome"}, "id": "c1"}
    )
    assert isinstance(ok, ToolMessage)
    assert (ok.content, ok.artifact, ok.status) == ("Rome: sunny for 1 day(s)", None, "success")
    assert plain.invoke({"city": "Oslo"}) == "Oslo: sunny for 1 day(s)"
    failed = plain.invoke(
        {"type": "tool_call", "name": "get_weather", "args": {"city": 3}, "id": "c2"}
    )
    assert "city: expected string" in error_artifact(failed, "c2").content
