"""pydantic-ai both ways, with its own offline models (FunctionModel, TestModel)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import orjson
import pytest
from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RunContext,
    TextPart,
    Tool,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from ferrotool import (
    Injected,
    InMemorySessionStore,
    PermissionContext,
    PermissionDecision,
    RuntimeContext,
    SchemaOnlyTool,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolkitConfig,
    ToolRequestConfig,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.interop import pydantic_ai as bridge

pytestmark = pytest.mark.asyncio_only("pydantic-ai's agent graph runs on asyncio")

CONTEXT = RuntimeContext(user_id="ann", session_id="s1")


@tool
async def get_weather(city: str, days: int = 1) -> str:
    """Get the weather forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


@tool
async def db_query(sql: str) -> str:
    """Run a read-only query."""
    return "3 rows"


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys a service; asks first."""

    name = "deploy"
    input_schema = {
        "type": "object",
        "properties": {"env": {"type": "string"}},
        "required": ["env"],
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


def kit(deploy: Deploy | None = None) -> Toolkit:
    toolkit = Toolkit(ToolkitConfig(meta_tool=True))
    toolkit.register(get_weather)
    toolkit.register(deploy or Deploy())
    toolkit.create_group("database", "Database tools.")
    toolkit.register(db_query, group="database")
    return toolkit


def returns(messages: list[ModelMessage]) -> dict[str, Any]:
    """The tool returns of the last request, by call id."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return {
        part.tool_call_id: part.content for part in last.parts if isinstance(part, ToolReturnPart)
    }


def call(name: str, args: dict[str, Any], id: str) -> ToolCallPart:
    return ToolCallPart(tool_name=name, args=orjson.dumps(args).decode(), tool_call_id=id)


async def test_a_view_as_a_toolset_runs_through_ferrotool() -> None:
    seen: dict[str, Any] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            seen["tools"] = {t.name: t.parameters_json_schema for t in info.function_tools}
            return ModelResponse(
                parts=[
                    call("get_weather", {"city": "Paris", "days": 3}, "c1"),
                    call("get_weather", {"city": "Paris", "days": "three"}, "c2"),
                ]
            )
        seen["returns"] = returns(messages)
        return ModelResponse(parts=[TextPart("done")])

    toolkit = kit()
    agent = Agent(FunctionModel(model), toolsets=[bridge.toolset(toolkit)])
    result = await agent.run("Weather?")
    assert result.output == "done"
    assert seen["tools"]["get_weather"] == orjson.loads(
        toolkit.get_spec("get_weather").parameters_json  # type: ignore[union-attr]
    )
    assert set(seen["tools"]) == {"get_weather", "deploy", "reset_tools"}  # db_query: inactive
    assert seen["returns"]["c1"] == "Paris: sunny for 3 day(s)"
    failed = [
        part
        for message in result.all_messages()
        for part in getattr(message, "parts", [])
        if getattr(part, "tool_call_id", None) == "c2" and part.part_kind != "tool-call"
    ]
    assert "days: expected integer" in str(failed[0].content)


async def test_an_approval_defers_the_run_and_an_approved_call_runs_once() -> None:
    deploy = Deploy()

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[call("deploy", {"env": "prod"}, "c1")])
        return ModelResponse(parts=[TextPart(str(returns(messages)["c1"]))])

    agent = Agent(
        FunctionModel(model),
        toolsets=[bridge.toolset(kit(deploy))],
        output_type=[str, DeferredToolRequests],
    )
    first = await agent.run("Ship it.")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.approvals] == ["c1"]
    assert deploy.runs == []
    second = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"c1": True}),
    )
    assert second.output == "deployed to prod"
    assert deploy.runs == ["prod"]


async def test_a_client_tool_is_deferred_and_reset_tools_changes_the_next_step() -> None:
    geo = SchemaOnlyTool({"name": "geolocate", "description": "Where?", "parameters": {}})
    registry = kit().snapshot()
    store = InMemorySessionStore()
    view = await registry.open_view(CONTEXT, store, ToolRequestConfig([geo]))
    offered: list[set[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append({t.name for t in info.function_tools})
        if len(messages) == 1:
            return ModelResponse(parts=[call("reset_tools", {"database": True}, "c1")])
        if len(messages) == 3:
            return ModelResponse(parts=[call("geolocate", {}, "c2")])
        return ModelResponse(parts=[TextPart(str(returns(messages)["c2"]))])

    agent = Agent(
        FunctionModel(model),
        toolsets=[bridge.toolset(view, CONTEXT)],
        output_type=[str, DeferredToolRequests],
    )
    first = await agent.run("Where am I?")
    assert isinstance(first.output, DeferredToolRequests)
    assert [c.tool_call_id for c in first.output.calls] == ["c2"]
    assert "db_query" not in offered[0]
    assert "db_query" in offered[1]
    second = await agent.run(
        message_history=first.all_messages(),
        deferred_tool_results=DeferredToolResults(calls={"c2": "Paris"}),
    )
    assert second.output == "Paris"


async def test_test_model_calls_every_tool_with_schema_made_arguments() -> None:
    toolkit = Toolkit()
    toolkit.register(get_weather)
    agent = Agent(TestModel(), toolsets=[bridge.toolset(toolkit)])
    result = await agent.run("go")
    assert "get_weather" in result.output
    assert any(
        isinstance(part, ToolReturnPart) and "sunny" in str(part.content)
        for message in result.all_messages()
        for part in getattr(message, "parts", [])
    )


async def test_one_tool_exported_as_a_pydantic_ai_tool() -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[call("get_weather", {"city": "Oslo"}, "c1")])
        return ModelResponse(parts=[TextPart(str(returns(messages)["c1"]))])

    agent = Agent(FunctionModel(model), tools=[bridge.tool(kit(), "get_weather")])
    assert (await agent.run("?")).output == "Oslo: sunny for 1 day(s)"


@dataclasses.dataclass
class Line:
    sku: str
    qty: int


@dataclasses.dataclass
class Shop:
    currency: str


def total(lines: list[Line], discount: float = 0.0) -> str:
    """Price some order lines."""
    return f"{sum(line.qty for line in lines) * 2.5 - discount:.2f}"


def priced(ctx: RunContext[Shop], amount: float) -> str:
    """Format an amount in the shop's currency."""
    return f"{amount:.2f} {ctx.deps.currency} ({ctx.tool_call_id})"


async def test_pydantic_ai_tools_imported_into_a_toolkit() -> None:
    toolkit = Toolkit()
    toolkit.register(bridge.from_pydantic_ai(Tool(total)))
    toolkit.register(bridge.from_pydantic_ai(Tool(priced, takes_ctx=True), deps_type=Shop))
    good = await toolkit.call_tool(
        ToolUseBlock("c1", "total", '{"lines": [{"sku": "A", "qty": 2}], "discount": 1}')
    )
    assert (good.state, good.content) == (ToolResultState.SUCCESS, "4.00")
    bad = await toolkit.call_tool(ToolUseBlock("c2", "total", '{"lines": [{"sku": "A"}]}'))
    assert bad.state is ToolResultState.ERROR
    assert "qty" in bad.content
    with_deps = await toolkit.call_tool(
        ToolUseBlock("c3", "priced", '{"amount": 3}'), RuntimeContext.of(Shop("EUR"))
    )
    assert with_deps.content == "3.00 EUR (c3)"
    assert toolkit.get_spec("total").description == "Price some order lines."  # type: ignore[union-attr]


@dataclasses.dataclass(frozen=True)
class Account:
    owner: str


def deps_kit(arrived: asyncio.Barrier | None = None) -> Toolkit:
    @tool
    async def balance(currency: str, account: Injected[Account], shop: Injected[Shop]) -> str:
        """The balance of the run's account."""
        if arrived is not None:
            async with asyncio.timeout(10):
                await arrived.wait()  # both runs are inside a call at once
        return f"{account.owner}: 10 {currency} ({shop.currency} shop)"

    toolkit = Toolkit()
    toolkit.register(balance)
    return toolkit


def balance_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[call("balance", {"currency": "EUR"}, "c1")])
    return ModelResponse(parts=[TextPart(str(returns(messages)["c1"]))])


async def test_each_runs_deps_reach_the_tools_of_a_toolset_shared_by_concurrent_runs() -> None:
    arrived = asyncio.Barrier(2)
    shop = RuntimeContext.of(Shop("EUR"), user_id="ann")
    agent = Agent(
        FunctionModel(balance_model),
        deps_type=Account,
        toolsets=[bridge.toolset(deps_kit(arrived), shop)],
    )
    ann, bob = await asyncio.gather(
        agent.run("Balance?", deps=Account("ann")), agent.run("Balance?", deps=Account("bob"))
    )
    assert ann.output == "ann: 10 EUR (EUR shop)"
    assert bob.output == "bob: 10 EUR (EUR shop)"


async def test_a_runtime_context_as_deps_is_the_runs_context() -> None:
    agent = Agent(
        FunctionModel(balance_model),
        deps_type=RuntimeContext,
        toolsets=[bridge.toolset(deps_kit(), RuntimeContext.of(Shop("EUR")))],
    )
    result = await agent.run("?", deps=RuntimeContext.of(Account("cy"), Shop("NOK")))
    assert result.output == "cy: 10 EUR (NOK shop)"


async def test_context_from_builds_each_calls_context_from_the_run() -> None:
    def context(ctx: RunContext[Account]) -> RuntimeContext:
        return RuntimeContext.of(ctx.deps, Shop("SEK"), user_id=ctx.deps.owner)

    toolsets = [bridge.toolset(deps_kit(), context_from=context)]
    agent = Agent(FunctionModel(balance_model), deps_type=Account, toolsets=toolsets)
    assert (await agent.run("?", deps=Account("dee"))).output == "dee: 10 EUR (SEK shop)"
    one = bridge.tool(deps_kit(), "balance", context_from=context)
    agent = Agent(FunctionModel(balance_model), deps_type=Account, tools=[one])
    assert (await agent.run("?", deps=Account("eve"))).output == "eve: 10 EUR (SEK shop)"
    with pytest.raises(TypeError, match="context_from"):
        bridge.toolset(deps_kit(), RuntimeContext(), context_from=context)


async def test_one_exported_tool_sees_the_runs_deps() -> None:
    one = bridge.tool(deps_kit(), "balance", RuntimeContext.of(Shop("DKK")))
    agent = Agent(FunctionModel(balance_model), deps_type=Account, tools=[one])
    assert (await agent.run("?", deps=Account("fay"))).output == "fay: 10 EUR (DKK shop)"


@dataclasses.dataclass(frozen=True)
class Area:
    """An area."""

    square_m: float


@tool
async def area(w: int, h: int) -> Area:
    """The area of a room."""
    return Area(w * h)


@tool
def rooms(floor: int) -> list[int]:
    """The rooms of a floor."""
    return [floor * 100 + 1, floor * 100 + 2]


@tool
async def count(floor: int) -> int:
    """How many rooms a floor has."""
    return 2


async def test_a_typed_result_returns_its_value_the_wrapped_one_unwrapped() -> None:
    seen: dict[str, Any] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[
                    call("area", {"w": 2, "h": 3}, "c1"),
                    call("rooms", {"floor": 1}, "c2"),
                    call("count", {"floor": 1}, "c3"),
                ]
            )
        seen["returns"] = returns(messages)
        return ModelResponse(parts=[TextPart("done")])

    toolkit = Toolkit()
    for item in (area, rooms, count):
        toolkit.register(item)
    agent = Agent(FunctionModel(model), toolsets=[bridge.toolset(toolkit)])
    await agent.run("Rooms?")
    assert seen["returns"] == {"c1": {"square_m": 6.0}, "c2": [101, 102], "c3": 2}
    one = bridge.tool(toolkit, "rooms")
    assert one.name == "rooms"
