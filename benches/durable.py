"""Durable tool calls: the cost of recording each call, ferrotool against pydantic-ai's DBOS agent.

One scripted model turn of `CALLS` calls of a trivial idempotent async tool (``touch``, which
returns its argument), run plainly and durably (each call a DBOS step, recorded in DBOS's system
database when it ends), on a SQLite file and on Postgres:

* `FT_PLAIN`: ``Toolkit.call_tools`` of the turn's calls; `FT_DURABLE`:
  ``DurableToolkit.call_tools`` of the same calls (a workflow, a step per call);
* `PAI_PLAIN`: pydantic-ai's ``Agent.run`` with a ``FunctionModel`` whose first response holds
  the calls and whose second is the final text (two model requests); `PAI_DURABLE`:
  ``DBOSAgent.run`` of that agent (a workflow, a step per model request). pydantic-ai runs a
  function tool in the workflow's own code, unrecorded; its documentation makes a tool's work
  durable by making it a DBOS step, so the tool here calls a ``@DBOS.step`` (outside a
  workflow, that step is a plain call): a step per call, as ferrotool's;
* `FT_IN_PAI_PLAIN`, `FT_IN_PAI_DURABLE`: the same agent with ferrotool's toolset
  (`ferrotool.interop.pydantic_ai.toolset`) instead of the function tool, whose calls are steps
  of the agent's workflow;
* `FT_AGENT_PLAIN`: ferrotool's ``run_agent(...).result()`` with a model (`Scripted`) whose
  first reply holds the calls and whose second is the final text; `FT_AGENT_DURABLE`:
  ``DurableAgent.run`` of the same model and tools (a workflow, a step per model reply and a
  step per call): the whole agent turn, as pydantic-ai's rows. ``DurableAgent.run`` waits for
  the workflow's outcome by reading its status every 0.1 s (``DurableRun.outcome``'s default
  polling interval); `FT_AGENT_POLLED` starts the same run (``DurableAgent.start``) and reads it
  every `POLL_S`, which shows how much of the figure is that wait (reported, not a target).

Each run has a fresh workflow id, so every durable run runs and records everything. The figure
is the cost durability adds per call: (durable - plain) / `CALLS`, each pair timed in the same
run. pydantic-ai's figure holds the recording of its two model responses too, which a tool
batch alone does not have; ``DurableAgent``'s figure holds them too (the same turn, end to end);
the toolset rows, inside the same agent, compare the per-call steps alone. Before timing, one run
of each durable implementation is checked: its workflow holds `CALLS` recorded steps of the tool
(and ``DurableAgent``'s, `MODEL_TURNS` recorded model replies).

It is the ``durable`` group of `benches.run`; the Postgres case runs when ``POSTGRES_ENV``
names a server (``postgresql://user@host:port/database``), and is skipped with a note
otherwise.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from benches import tools as t
from benches.engine import Derived
from ferrotool import ToolBatch, Toolkit, ToolResultBlock, ToolUseBlock, tool
from ferrotool.agent import (
    DeltaSink,
    Message,
    ModelReply,
    ModelRequest,
    RunFinished,
    RunOutcome,
    UserMessage,
    run_agent,
)

CALLS: Final = 10
POSTGRES_ENV: Final = "FERROTOOL_POSTGRES_URL"
SQLITE: Final = f"{CALLS} calls, SQLite"
POSTGRES: Final = f"{CALLS} calls, Postgres"

FT_PLAIN: Final = "ferrotool call_tools"
FT_DURABLE: Final = "ferrotool DurableToolkit.call_tools"
PAI_PLAIN: Final = "pydantic-ai Agent.run"
PAI_DURABLE: Final = "pydantic-ai DBOSAgent.run (tool calls a DBOS step)"
FT_IN_PAI_PLAIN: Final = "pydantic-ai Agent.run, ferrotool toolset"
FT_IN_PAI_DURABLE: Final = "pydantic-ai DBOSAgent.run, ferrotool toolset"
FT_AGENT_PLAIN: Final = "ferrotool run_agent"
FT_AGENT_DURABLE: Final = "ferrotool DurableAgent.run"
POLL_S: Final = 0.005
FT_AGENT_POLLED: Final = f"ferrotool DurableAgent.start, outcome polled every {POLL_S * 1000:g} ms"

FT_FIGURE: Final = "ferrotool DurableToolkit"
PAI_FIGURE: Final = "pydantic-ai DBOSAgent"
TOOLSET_FIGURE: Final = "ferrotool toolset in DBOSAgent"
AGENT_FIGURE: Final = "ferrotool DurableAgent"
POLLED_FIGURE: Final = f"ferrotool DurableAgent, outcome polled every {POLL_S * 1000:g} ms"
PAIRS: Final = {
    FT_FIGURE: (FT_DURABLE, FT_PLAIN),
    AGENT_FIGURE: (FT_AGENT_DURABLE, FT_AGENT_PLAIN),
    POLLED_FIGURE: (FT_AGENT_POLLED, FT_AGENT_PLAIN),
    PAI_FIGURE: (PAI_DURABLE, PAI_PLAIN),
    TOOLSET_FIGURE: (FT_IN_PAI_DURABLE, FT_IN_PAI_PLAIN),
}
"""Each figure's name, and its (durable, plain) rows. The targets (`TARGETS`) are on ferrotool's
figures over `PAI_FIGURE`; `TOOLSET_FIGURE` over `PAI_FIGURE` compares the same DBOS steps in the
same agent (a step per call both), so it is reported, not a target."""
TARGETS: Final = (FT_FIGURE, AGENT_FIGURE)
"""The figures whose ratio to `PAI_FIGURE` is a target (under 1)."""

NAME: Final = "ferrotool_bench"
"""The name of the durable toolkit, of the agents' prefix and of the DBOS application."""
AGENT_NAME: Final = f"{NAME}_agent"
"""The name of the durable agent (its workflow and steps), unique in the process."""
STEPS: Final = {
    FT_DURABLE: f"ferrotool.{NAME}.call",
    FT_AGENT_DURABLE: f"ferrotool.{AGENT_NAME}.call",
    FT_AGENT_POLLED: f"ferrotool.{AGENT_NAME}.call",
    PAI_DURABLE: f"{NAME}.touch",
    FT_IN_PAI_DURABLE: "ferrotool.touch",
}
"""The name of each durable implementation's tool steps."""
MODEL_TURNS: Final = 2
"""Model replies in the turn: the calls, then the final text."""
MODEL_STEPS: Final = {
    FT_AGENT_DURABLE: f"ferrotool.{AGENT_NAME}.respond",
    FT_AGENT_POLLED: f"ferrotool.{AGENT_NAME}.respond",
}
"""The name of the model steps of the durable implementations whose steps this module names."""
FINAL_TEXT: Final = "done"
MODEL_NOTE: Final = (
    "its workflow also records the turn's two model responses (as DurableAgent's does), which a"
    " tool batch has not"
)


@tool
async def touch(n: int) -> int:
    """Give the number back."""
    return n


def calls() -> list[ToolUseBlock]:
    """The turn's calls: ``touch(n=i)``, ``c0`` to ``c9``."""
    return [ToolUseBlock.of(f"c{i}", "touch", {"n": i}) for i in range(CALLS)]


class Scripted:
    """The turn's model: the calls first, then the final text once their results are in.

    A function of the transcript, so one instance serves every run (and a replayed run).
    """

    async def respond(self, request: ModelRequest, on_delta: DeltaSink | None = None) -> ModelReply:
        """The calls when the transcript has no reply yet; the final text after.

        Args:
            request: The transcript so far.
            on_delta: Unused: the model does not stream.

        Returns:
            The turn's reply.
        """
        if any(isinstance(message, ModelReply) for message in request.messages):
            return ModelReply(FINAL_TEXT)
        return ModelReply("", tuple(calls()))


def problem() -> str | None:
    """Why the group cannot run here (a package missing), or ``None``."""
    for module, extra in (("dbos", "the dbos extra"), ("pydantic_ai", "pydantic-ai")):
        try:
            __import__(module)
        except ImportError:
            return f"skipped: {module} is not installed ({extra})"
    return None


def postgres_url() -> str | None:
    """The Postgres server to measure on, from `POSTGRES_ENV`."""
    return os.environ.get(POSTGRES_ENV) or None


@dataclass(frozen=True)
class Setup:
    """What the group runs: built once per process, before DBOS is launched."""

    implementations: dict[str, t.Built]


_SETUPS: list[Setup] = []  # DBOS registers workflows by name, once per process


def setup() -> Setup:
    """The implementations, built (and their workflows registered) once per process."""
    if _SETUPS:
        return _SETUPS[0]
    from dbos import DBOS
    from pydantic_ai import Agent, ModelResponse, TextPart, Tool, ToolCallPart, ToolReturnPart
    from pydantic_ai.durable_exec.dbos import DBOSAgent
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from ferrotool.durable import DurableAgent, DurableToolkit
    from ferrotool.interop import pydantic_ai as bridge

    toolkit = Toolkit()
    toolkit.register(touch)
    durable = DurableToolkit(toolkit, name=NAME)
    model = Scripted()
    durable_agent = DurableAgent(model, toolkit, name=AGENT_NAME)
    messages: list[Message] = [UserMessage("go")]

    async def agent_turn() -> RunOutcome:
        return await run_agent(model, toolkit, messages).result()

    async def polled_turn() -> RunOutcome:
        started = await durable_agent.start(messages)
        return await started.outcome(polling_interval=POLL_S)

    turn = calls()
    first = ModelResponse(parts=[ToolCallPart(c.name, c.arguments, c.id) for c in turn])
    final = ModelResponse(parts=[TextPart(FINAL_TEXT)])

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        returned = any(isinstance(part, ToolReturnPart) for part in messages[-1].parts)
        return final if returned else first

    @DBOS.step(name=f"{NAME}.touch")
    async def touched(n: int) -> int:
        return n

    async def touch_step(n: int) -> int:
        """Give the number back."""
        return await touched(n)

    agent = Agent(
        FunctionModel(respond), name=f"{NAME}_pai", tools=[Tool(touch_step, name="touch")]
    )
    ft_agent = Agent(FunctionModel(respond), name=f"{NAME}_ft", toolsets=[bridge.toolset(toolkit)])
    with warnings.catch_warnings():
        # DBOSAgent is deprecated in favour of its DBOSDurability capability (same steps).
        warnings.simplefilter("ignore")
        agent_durable = DBOSAgent(agent)
        ft_durable = DBOSAgent(ft_agent)
    read_run = functools.partial(_read_run, [c.id for c in turn])
    built = {
        FT_PLAIN: t.Built(functools.partial(toolkit.call_tools, turn), True, _read_batch),
        FT_DURABLE: t.Built(functools.partial(durable.call_tools, turn), True, _read_batch),
        FT_AGENT_PLAIN: t.Built(agent_turn, True, _read_outcome),
        FT_AGENT_DURABLE: t.Built(
            functools.partial(durable_agent.run, messages), True, _read_outcome
        ),
        FT_AGENT_POLLED: t.Built(polled_turn, True, _read_outcome),
        PAI_PLAIN: t.Built(functools.partial(agent.run, "go"), True, read_run),
        PAI_DURABLE: t.Built(functools.partial(agent_durable.run, "go"), True, read_run),
        FT_IN_PAI_PLAIN: t.Built(functools.partial(ft_agent.run, "go"), True, read_run),
        FT_IN_PAI_DURABLE: t.Built(functools.partial(ft_durable.run, "go"), True, read_run),
    }
    _SETUPS.append(Setup(built))
    return _SETUPS[0]


def _read_batch(batch: ToolBatch) -> t.Outcome:
    values = [result.structured for result in batch.results]
    ok = values == [{"result": i} for i in range(CALLS)] and [r.id for r in batch.results] == [
        f"c{i}" for i in range(CALLS)
    ]
    return t.Outcome(ok, values)


def _read_outcome(outcome: RunOutcome) -> t.Outcome:
    if not isinstance(outcome, RunFinished):
        return t.Outcome(False, outcome)
    results = [
        (message.id, message.structured)
        for message in outcome.messages
        if isinstance(message, ToolResultBlock)
    ]
    expected = [(f"c{i}", {"result": i}) for i in range(CALLS)]
    ok = outcome.reply.text == FINAL_TEXT and results == expected
    return t.Outcome(ok, (outcome.reply.text, results))


def _read_run(ids: list[str], result: Any) -> t.Outcome:
    returns = [
        (part.tool_call_id, part.content)
        for message in result.all_messages()
        for part in message.parts
        if part.part_kind == "tool-return"
    ]
    ok = result.output == FINAL_TEXT and sorted(returns) == sorted(
        zip(ids, range(CALLS), strict=True)
    )
    return t.Outcome(ok, returns)


@contextlib.contextmanager
def launched(database_url: str | None) -> Iterator[None]:
    """DBOS launched on ``database_url``, or on a SQLite file in a fresh folder; destroyed after."""
    from dbos import DBOS

    from ferrotool.durable import config

    folder = tempfile.mkdtemp(prefix="ferrotool-durable-bench-")
    settings = config(folder, name=NAME, database_url=database_url)
    settings["log_level"] = "WARNING"
    DBOS(config=settings)
    DBOS.launch()
    try:
        yield
    finally:
        DBOS.destroy()
        shutil.rmtree(folder, ignore_errors=True)


async def check(implementations: Mapping[str, t.Built]) -> dict[str, str]:
    """Run each implementation once; what is wrong with each that is (by name).

    A durable one runs under a workflow id of its own, whose recorded steps are read back: it
    must hold `CALLS` steps of the tool (and `MODEL_TURNS` model steps, where `MODEL_STEPS`
    names them).
    """
    from dbos import DBOS, SetWorkflowID

    wrong: dict[str, str] = {}
    for name, built in implementations.items():
        step = STEPS.get(name)
        workflow_id = f"{NAME}-check-{uuid.uuid4().hex}"
        with SetWorkflowID(workflow_id) if step is not None else contextlib.nullcontext():
            outcome = built.read(await built.call())
        if not outcome.ok:
            wrong[name] = f"not timed, wrong outcome: {outcome!r:.160}"
        elif step is not None:
            recorded = await DBOS.list_workflow_steps_async(workflow_id, load_output=False)
            expected = {step: CALLS}
            if name in MODEL_STEPS:
                expected[MODEL_STEPS[name]] = MODEL_TURNS
            for function, want in expected.items():
                count = sum(1 for each in recorded if each["function_name"] == function)
                if count != want:
                    wrong[name] = f"not timed, {count} recorded steps {function!r} (not {want})"
    return wrong


def added(median: Mapping[str, float]) -> list[Derived]:
    """The cost durability adds per call, for each (durable, plain) pair measured.

    Args:
        median: The case's medians (µs) by implementation name.
    """
    return [
        Derived(name, (median[durable] - median[plain]) / CALLS, f"(durable - plain) / {CALLS}")
        for name, (durable, plain) in PAIRS.items()
        if durable in median and plain in median
    ]


def ratios(median: Mapping[str, float]) -> dict[str, float]:
    """ferrotool's added cost per call over pydantic-ai's, by ferrotool's figure's name."""
    figures = {figure.name: figure.value_us for figure in added(median)}
    peer = figures.get(PAI_FIGURE)
    if peer is None or peer <= 0:
        return {}
    return {name: value / peer for name, value in figures.items() if name != PAI_FIGURE}


__all__ = [
    "AGENT_FIGURE",
    "CALLS",
    "FT_AGENT_DURABLE",
    "FT_AGENT_PLAIN",
    "FT_AGENT_POLLED",
    "FT_DURABLE",
    "FT_FIGURE",
    "FT_IN_PAI_DURABLE",
    "FT_IN_PAI_PLAIN",
    "FT_PLAIN",
    "MODEL_NOTE",
    "MODEL_TURNS",
    "PAI_DURABLE",
    "PAI_FIGURE",
    "PAI_PLAIN",
    "POLLED_FIGURE",
    "POLL_S",
    "POSTGRES",
    "POSTGRES_ENV",
    "SQLITE",
    "TARGETS",
    "TOOLSET_FIGURE",
    "Scripted",
    "added",
    "check",
    "launched",
    "postgres_url",
    "problem",
    "ratios",
    "setup",
]
