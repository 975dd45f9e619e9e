"""The peers of ``batch_overhead``: pydantic-ai's and the OpenAI Agents SDK's agent loops.

Each peer runs a batch of tool calls the only way it can: inside an agent run, driven by a
scripted model that answers from prebuilt responses (nothing leaves the process). Three runs
per peer, one agent each: the batch's tool calls then the final text, the final text alone,
and one tool call then the final text. `benches.engine` derives the per-call overhead from
them (``batch_overheads``) and explains the definition; this module only builds the runs and
reads their results, so that a run that did not execute exactly the scripted calls is never
timed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

from benches import tools as t
from ferrotool import ToolUseBlock

BATCH: Final = 100
"""The batch's size: the calls of the first run."""

PYDANTIC_AI: Final = "pydantic-ai"
AGENTS: Final = "openai-agents"
TOOLS_RUN: Final = f"{BATCH} tool calls"
TEXT_RUN: Final = "final text only"
ONE_RUN: Final = "1 tool call"
FINAL_TEXT: Final = "done"


def peer_run(peer: str, run: str) -> str:
    """The name of one of a peer's agent runs: ``"pydantic-ai Agent.run, 100 tool calls"``."""
    entry = "Agent.run" if peer == PYDANTIC_AI else "Runner.run"
    return f"{peer} {entry}, {run}"


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
SECOND_TURN_NOTE: Final = (
    "the 100-call run has a second turn (a model request over the history of 100 tool "
    "returns, and the loop's nodes) that the text-only run does not, so the per-call "
    "overhead counts it; the cross-check (100 calls - 1 call) / 99 cancels it"
)


__all__ = [
    "AGENTS",
    "AGENTS_NOTE",
    "BATCH",
    "FINAL_TEXT",
    "ONE_RUN",
    "PYDANTIC_AI",
    "SECOND_TURN_NOTE",
    "TEXT_RUN",
    "TOOLS_RUN",
    "openai_agents_runs",
    "peer_run",
    "pydantic_ai_runs",
]
