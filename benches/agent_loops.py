"""The loops and tool layers of ``batch_overhead``: ferrotool's, pydantic-ai's and the OpenAI
Agents SDK's.

Whole loops: each library runs a batch of tool calls inside an agent run (ferrotool's
`run_agent`, pydantic-ai's ``Agent.run``, the SDK's ``Runner.run``), driven by a scripted model
that answers from prebuilt responses (nothing leaves the process). Three runs per library, one
agent each: the batch's tool calls then the final text, the final text alone, and one tool call
then the final text.

Bare tool layers: each peer's own layer between a model's tool call and the function, driven
one task per call and gathered (``asyncio.gather``), as its loop runs a response's calls:

- pydantic-ai: a ``ToolManager`` over a ``FunctionToolset([tool])``, prepared for a run step
  (``await ToolManager(toolset, default_max_retries=1).for_run_step(ctx)``, what ``Agent.run``
  does at each step, with ``ctx`` a ``RunContext(deps=None, model=FunctionModel(...),
  usage=RunUsage(), run_step=1)``), then ``handle_call(ToolCallPart(name, raw_json, id))`` per
  call: validation, retries bookkeeping, the call. The manager ``Agent.run`` builds also wraps
  the toolset (``PreparedToolset``, ``ToolSearchToolset``) and runs capability hooks around each
  call; the bare layer leaves those out, which can only make it faster.
- the OpenAI Agents SDK: ``function_tool(tool).on_invoke_tool(ctx, raw_json)``, with ``ctx``
  built per call as the SDK's runner builds it: ``ToolContext.from_agent_context(wrapper,
  call_id, tool_call=ResponseFunctionToolCall(...), agent=agent, run_config=RunConfig(
  tracing_disabled=True))`` over one ``RunContextWrapper(context=None)``. The runner's span
  (off here), approval check and hooks around it are left out.

`benches.engine` derives the per-call overheads (``batch_overheads``) and explains the
definitions; this module only builds the runs and reads their results, so that a run that did
not execute exactly the scripted calls is never timed.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

from benches import tools as t
from ferrotool import Toolkit, ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool.agent import ModelReply, ModelRequest, RunFinished, UserMessage, run_agent

BATCH: Final = 100
"""The batch's size: the calls of the first run."""

PYDANTIC_AI: Final = "pydantic-ai"
AGENTS: Final = "openai-agents"
FERROTOOL: Final = "ferrotool"
PAI_LAYER: Final = "pydantic-ai ToolManager.handle_call, gathered"
AGENTS_LAYER: Final = "openai-agents FunctionTool.on_invoke_tool, gathered"
TOOLS_RUN: Final = f"{BATCH} tool calls"
TEXT_RUN: Final = "final text only"
ONE_RUN: Final = "1 tool call"
FINAL_TEXT: Final = "done"


_ENTRIES: Final = {PYDANTIC_AI: "Agent.run", AGENTS: "Runner.run", FERROTOOL: "run_agent"}


def peer_run(peer: str, run: str) -> str:
    """The name of one of a library's agent runs: ``"pydantic-ai Agent.run, 100 tool calls"``."""
    return f"{peer} {_ENTRIES[peer]}, {run}"


class ScriptedReplies:
    """`run_agent`'s side: the tool calls while the last message is not a tool result, then the
    final text (the peers' scripted models answer the same way)."""

    def __init__(self, script: Sequence[ToolUseBlock]) -> None:
        self.first = ModelReply(calls=tuple(script))
        self.final = ModelReply(FINAL_TEXT)

    async def respond(self, request: ModelRequest, on_delta: object = None) -> ModelReply:
        returned = isinstance(request.messages[-1], ToolResultBlock)
        return self.final if returned or not self.first.calls else self.first


def ferrotool_runs(
    calls: Sequence[ToolUseBlock], toolkit: Toolkit, expected: Sequence[object]
) -> dict[str, t.Built]:
    """``await run_agent(ScriptedReplies(script), toolkit, [UserMessage("go")]).result()``."""
    messages = (UserMessage("go"),)

    def read(count: int) -> Callable[[Any], t.Outcome]:
        def outcome(result: Any) -> t.Outcome:
            if not isinstance(result, RunFinished):
                return t.Outcome(False, result)
            returns = [m for m in result.messages if isinstance(m, ToolResultBlock)]
            ok = (
                result.reply.text == FINAL_TEXT
                and [r.id for r in returns] == [c.id for c in calls[:count]]
                and all(r.state is ToolResultState.SUCCESS for r in returns)
                and [t.unwrapped(r.structured) for r in returns] == list(expected[:count])
            )
            return t.Outcome(ok, [t.unwrapped(r.structured) for r in returns])

        return outcome

    def runner(model: ScriptedReplies) -> Callable[[], Any]:
        async def once() -> Any:
            return await run_agent(model, toolkit, messages).result()

        return once

    return {
        peer_run(FERROTOOL, run): t.Built(runner(ScriptedReplies(script)), True, read(len(script)))
        for run, script in ((TOOLS_RUN, calls), (TEXT_RUN, ()), (ONE_RUN, calls[:1]))
    }


def _read_values(expected: Sequence[object]) -> Callable[[Any], t.Outcome]:
    def outcome(result: Any) -> t.Outcome:
        return t.Outcome(list(result) == list(expected), result)

    return outcome


def pydantic_ai_layer(
    calls: Sequence[ToolUseBlock], tool: Callable[..., Any], expected: Sequence[object]
) -> dict[str, t.Built]:
    """``asyncio.gather`` of ``manager.handle_call(part)`` over the calls' ``ToolCallPart`` s.

    The manager is prepared for its run step once, at the first call (``for_run_step`` is a
    coroutine), and kept: a run step's calls share one manager.
    """
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.usage import RunUsage

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(FINAL_TEXT)])

    context = RunContext(deps=None, model=FunctionModel(respond), usage=RunUsage(), run_step=1)
    unprepared = ToolManager[None](FunctionToolset([tool]), default_max_retries=1)
    parts = [ToolCallPart(c.name, c.arguments, c.id) for c in calls]
    prepared: list[ToolManager[None]] = []

    async def gathered() -> list[Any]:
        if not prepared:
            prepared.append(await unprepared.for_run_step(context))
        handle = prepared[0].handle_call
        results: list[Any] = await asyncio.gather(*(handle(part) for part in parts))
        return results

    return {PAI_LAYER: t.Built(gathered, True, _read_values(expected))}


def openai_agents_layer(
    calls: Sequence[ToolUseBlock], tool: Callable[..., Any], expected: Sequence[object]
) -> dict[str, t.Built]:
    """``asyncio.gather`` of ``function_tool(tool).on_invoke_tool(ctx, arguments)``, ``ctx`` a
    ``ToolContext`` built per call as the runner builds it."""
    import agents
    from agents.tool_context import ToolContext
    from openai.types.responses import ResponseFunctionToolCall

    function_tool = agents.function_tool(tool)
    agent = agents.Agent(name="bench", tools=[function_tool])
    config = agents.RunConfig(tracing_disabled=True)
    wrapper = agents.RunContextWrapper[None](context=None)
    items = [
        ResponseFunctionToolCall(
            type="function_call",
            id=f"fc_{c.id}",
            call_id=c.id,
            name=c.name,
            arguments=c.arguments,
            status="completed",
        )
        for c in calls
    ]
    invoke = function_tool.on_invoke_tool
    from_agent_context = ToolContext.from_agent_context

    async def one(item: ResponseFunctionToolCall) -> Any:
        context = from_agent_context(
            wrapper, item.call_id, tool_call=item, agent=agent, run_config=config
        )
        return await invoke(context, item.arguments)

    async def gathered() -> list[Any]:
        return await asyncio.gather(*(one(item) for item in items))

    return {AGENTS_LAYER: t.Built(gathered, True, _read_values(expected))}


def pydantic_ai_runs(
    calls: Sequence[ToolUseBlock], tool: Callable[..., Any], expected: Sequence[object]
) -> dict[str, t.Built]:
    """``Agent(FunctionModel(respond), tools=[tool]).run("go")``, one agent per script.

    ``respond`` returns a prebuilt `ModelResponse`: the tool calls while the last message holds
    no tool return, then the final text.
    """
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    final = ModelResponse(parts=[TextPart(FINAL_TEXT)])

    def agent(script: Sequence[ToolUseBlock]) -> Any:
        first = ModelResponse(parts=[ToolCallPart(c.name, c.arguments, c.id) for c in script])

        def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            returned = any(isinstance(part, ToolReturnPart) for part in messages[-1].parts)
            return final if returned or not script else first

        return Agent(FunctionModel(respond), tools=[tool])

    def read(count: int) -> Callable[[Any], t.Outcome]:
        def outcome(result: Any) -> t.Outcome:
            returns = [
                part
                for message in result.all_messages()
                for part in message.parts
                if isinstance(part, ToolReturnPart)
            ]
            ok = (
                result.output == FINAL_TEXT
                and [p.tool_call_id for p in returns] == [c.id for c in calls[:count]]
                and [p.content for p in returns] == list(expected[:count])
            )
            return t.Outcome(ok, [p.content for p in returns])

        return outcome

    out: dict[str, t.Built] = {}
    for run, script in ((TOOLS_RUN, calls), (TEXT_RUN, ()), (ONE_RUN, calls[:1])):
        runner = agent(script)
        out[peer_run(PYDANTIC_AI, run)] = t.Built(
            functools.partial(runner.run, "go"), True, read(len(script))
        )
    return out


def openai_agents_runs(
    calls: Sequence[ToolUseBlock], tool: Callable[..., Any], expected: Sequence[object]
) -> dict[str, t.Built]:
    """``Runner.run(Agent(model=scripted, tools=[function_tool(tool)]), "go")``.

    The scripted `Model` returns prebuilt output items: the ``function_call`` items while the
    input's last item is not a ``function_call_output``, then the final message. Tracing is off
    for the run (``RunConfig(tracing_disabled=True)``): see `AGENTS_NOTE`.
    """
    import agents
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    final: list[Any] = [
        ResponseOutputMessage(
            id="msg_final",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=FINAL_TEXT, annotations=[])],
        )
    ]

    class ScriptedModel(Model):
        """Answers from a script; nothing leaves the process."""

        def __init__(self, first: list[Any]) -> None:
            self.first = first

        async def get_response(
            self,
            system_instructions: str | None,
            input: str | list[Any],
            model_settings: Any,
            tools: list[Any],
            output_schema: Any,
            handoffs: list[Any],
            tracing: Any,
            *,
            previous_response_id: str | None = None,
            conversation_id: str | None = None,
            prompt: Any = None,
        ) -> Any:
            last = input[-1] if isinstance(input, list) and input else None
            returned = isinstance(last, dict) and last.get("type") == "function_call_output"
            output = final if returned or not self.first else self.first
            return agents.ModelResponse(output=output, usage=agents.Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the benchmark runs without streaming")

    function_tool = agents.function_tool(tool)
    config = agents.RunConfig(tracing_disabled=True)
    settings = agents.ModelSettings(parallel_tool_calls=True)

    def items(script: Sequence[ToolUseBlock]) -> list[Any]:
        return [
            ResponseFunctionToolCall(
                type="function_call",
                id=f"fc_{c.id}",
                call_id=c.id,
                name=c.name,
                arguments=c.arguments,
                status="completed",
            )
            for c in script
        ]

    def read(count: int) -> Callable[[Any], t.Outcome]:
        def outcome(result: Any) -> t.Outcome:
            outputs = [i for i in result.new_items if isinstance(i, agents.ToolCallOutputItem)]
            raw: list[Any] = [o.raw_item for o in outputs]
            ok = (
                result.final_output == FINAL_TEXT
                and [item["call_id"] for item in raw] == [c.id for c in calls[:count]]
                and [o.output for o in outputs] == list(expected[:count])
            )
            return t.Outcome(ok, [o.output for o in outputs])

        return outcome

    out: dict[str, t.Built] = {}
    for run, script in ((TOOLS_RUN, calls), (TEXT_RUN, ()), (ONE_RUN, calls[:1])):
        agent = agents.Agent(
            name="bench",
            model=ScriptedModel(items(script)),
            tools=[function_tool],
            model_settings=settings,
        )
        out[peer_run(AGENTS, run)] = t.Built(
            functools.partial(agents.Runner.run, agent, "go", run_config=config),
            True,
            read(len(script)),
        )
    return out


AGENTS_NOTE: Final = (
    "run with RunConfig(tracing_disabled=True): by default every run is a trace and every tool "
    "call a span, exported to OpenAI's backend (ferrotool's row has no tracing either); "
    "ModelSettings(parallel_tool_calls=True) is sent to no API here, the SDK runs a "
    "response's function calls concurrently in any case"
)
PAI_LAYER_NOTE: Final = (
    "ToolManager(FunctionToolset([add])) prepared for a run step, handle_call per call: "
    "without the wrapper toolsets and capability hooks Agent.run adds"
)
AGENTS_LAYER_NOTE: Final = (
    "on_invoke_tool per call, its ToolContext built per call as the runner builds it: without "
    "the runner's span (tracing off), approval check and hooks"
)
SECOND_TURN_NOTE: Final = (
    "the 100-call run has a second turn (a model request over the history of 100 tool "
    "returns, and the loop's nodes) that the text-only run does not, so the per-call "
    "overhead counts it; the cross-check (100 calls - 1 call) / 99 cancels it"
)


__all__ = [
    "AGENTS",
    "AGENTS_LAYER",
    "AGENTS_LAYER_NOTE",
    "AGENTS_NOTE",
    "BATCH",
    "FERROTOOL",
    "FINAL_TEXT",
    "ONE_RUN",
    "PAI_LAYER",
    "PAI_LAYER_NOTE",
    "PYDANTIC_AI",
    "SECOND_TURN_NOTE",
    "TEXT_RUN",
    "TOOLS_RUN",
    "ScriptedReplies",
    "ferrotool_runs",
    "openai_agents_layer",
    "openai_agents_runs",
    "peer_run",
    "pydantic_ai_layer",
    "pydantic_ai_runs",
]
