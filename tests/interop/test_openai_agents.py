"""The OpenAI Agents SDK both ways: its Runner and Chat Completions model against a local server."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from agents import (
    Agent,
    FunctionTool,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    function_tool,
)
from openai import AsyncOpenAI

from ferrotool import (
    InteropError,
    PermissionContext,
    PermissionDecision,
    SchemaOnlyTool,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.interop import openai_agents as bridge
from providers.payloads import completion
from providers.wire import ModelServer, Reply

pytestmark = pytest.mark.asyncio_only("the OpenAI Agents SDK runs on asyncio (its tools too)")

NO_TRACING = RunConfig(tracing_disabled=True)


@tool
async def get_weather(city: str, days: int = 1) -> str:
    """Get the weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys a service; asks first."""

    name = "deploy"
    input_schema = {
        "type": "object",
        "properties": {"env": {"type": "string"}},
        "required": ["env"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[str] = []

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask(f"Deploy to {tool_input['env']}?")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        self.runs.append(param.input["env"])
        return f"deployed to {param.input['env']}"


def kit(deploy: Deploy) -> Toolkit:
    toolkit = Toolkit()
    toolkit.register(get_weather)
    toolkit.register(deploy)
    return toolkit


def agent(server: ModelServer, toolkit: Toolkit, client: AsyncOpenAI) -> Agent[Any]:
    model = OpenAIChatCompletionsModel(model="gpt-test", openai_client=client)
    return Agent(name="helper", model=model, tools=list(bridge.function_tools(toolkit)))


def client_of(server: ModelServer) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=f"{server.url}/v1", api_key="t", max_retries=0)


async def test_the_runner_calls_ferrotool_tools() -> None:
    script = [
        Reply(
            completion(
                ("call_1", "get_weather", '{"city": "Paris", "days": null}'),
                ("call_2", "get_weather", '{"city": "Oslo", "days": 99, "x": 1}'),
            )
        ),
        Reply(completion(text="Sunny.")),
    ]
    with ModelServer(script) as server:
        async with client_of(server) as client:
            result = await Runner.run(
                agent(server, kit(Deploy()), client), "Weather?", run_config=NO_TRACING
            )
    assert result.final_output == "Sunny."
    first, second = server.bodies()
    declared = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert declared["get_weather"]["strict"] is True
    assert declared["get_weather"]["parameters"]["required"] == ["city", "days"]
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["content"] == "Paris: sunny for 1 day(s)"  # null read as left out
    assert "unexpected_property" in tool_messages[1]["content"]  # ferrotool validated


async def test_an_asking_tool_interrupts_the_run_and_runs_once_approved() -> None:
    deploy = Deploy()
    script = [
        Reply(completion(("call_1", "deploy", '{"env": "prod"}'))),
        Reply(completion(text="Shipped.")),
    ]
    with ModelServer(script) as server:
        async with client_of(server) as client:
            helper = agent(server, kit(deploy), client)
            first = await Runner.run(helper, "Ship it.", run_config=NO_TRACING)
            assert [i.name for i in first.interruptions] == ["deploy"]
            assert deploy.runs == []
            state = first.to_state()
            state.approve(first.interruptions[0])
            second = await Runner.run(helper, state, run_config=NO_TRACING)
    assert second.final_output == "Shipped."
    assert deploy.runs == ["prod"]
    tool_messages = [m for m in server.bodies()[-1]["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["content"] == "deployed to prod"


async def test_a_plain_call_does_not_ask() -> None:
    toolkit = kit(Deploy())
    (weather,) = bridge.function_tools(toolkit, names=["get_weather"])
    assert isinstance(weather, FunctionTool)
    assert weather.needs_approval is not False
    assert callable(weather.needs_approval)
    assert await weather.needs_approval(None, {"city": "Rome"}, "c1") is False  # type: ignore[arg-type]


def test_an_external_tool_cannot_be_exported() -> None:
    geo = SchemaOnlyTool({"name": "geolocate", "description": "Where?", "parameters": {}})
    toolkit = Toolkit()
    toolkit.register(geo)
    toolkit.register(get_weather)
    assert [t.name for t in bridge.function_tools(toolkit)] == ["get_weather"]
    with pytest.raises(InteropError, match="geolocate"):
        bridge.function_tool(toolkit, "geolocate")


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_an_sdk_function_tool_imported_into_a_toolkit() -> None:
    toolkit = Toolkit()
    toolkit.register(bridge.from_openai_agents(add))
    assert orjson.loads(toolkit.get_spec("add").parameters_json)["required"] == ["a", "b"]  # type: ignore[union-attr]
    result = await toolkit.call_tool(ToolUseBlock("c1", "add", '{"a": 2, "b": 3}'))
    assert (result.state, result.content) == (ToolResultState.SUCCESS, "5")
    invalid = await toolkit.call_tool(ToolUseBlock("c2", "add", '{"a": "two", "b": 3}'))
    assert invalid.state is ToolResultState.ERROR
    assert "a: expected integer" in invalid.content
