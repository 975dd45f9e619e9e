"""A ferrotool toolset in pydantic-ai's DBOS agent: each call is a step of the agent's workflow.

DBOS is launched once for the module on a SQLite file; the agents (``DBOSAgent``, and an agent
with the ``DBOSDurability`` capability run in a workflow of this module) register their
workflows before the launch. A run's steps are read back with ``DBOS.list_workflow_steps``; a
workflow forked from one of its steps replays the steps before it (their tools are not called)
and runs the rest, which is what a recovery does. The crash test kills a real process running
an agent with ``SIGKILL`` while a call is in flight, and a second process recovers the run.

Run as a script, this module is that process: ``python test_pydantic_ai_dbos.py MODE FOLDER LOG
WORKFLOW_ID PLAN HOLD [OUT]`` runs (``run``) or recovers (``recover``) one agent run (see
`worker`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed")

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync
from pydantic_ai import (
    Agent,
    AgentRunResult,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.durable_exec.dbos import DBOSAgent, DBOSDurability
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ferrotool import Toolkit, ToolResultBlock, ToolUseBlock, tool
from ferrotool.durable import config, not_retried
from ferrotool.interop import pydantic_ai as bridge

pytestmark = pytest.mark.asyncio_only("DBOS runs its workflows on asyncio")

RUNS: Counter[str] = Counter()  # how often each call ran, by call id


@tool
async def add(a: int, b: int, call: ToolUseBlock) -> int:
    """Add two numbers."""
    RUNS[call.id] += 1
    return a + b


@tool(idempotent=False)
async def pay(amount: int, call: ToolUseBlock) -> str:
    """Pay an amount (never twice)."""
    RUNS[call.id] += 1
    return f"paid {amount}"


TOOLS = Toolkit()
TOOLS.register(add)
TOOLS.register(pay)


def prompt(messages: list[ModelMessage]) -> str:
    """The run's user prompt: the prefix of its call ids (and its plan, in the crash test)."""
    first = messages[0]
    assert isinstance(first, ModelRequest)
    part = first.parts[-1]
    assert isinstance(part, UserPromptPart)
    assert isinstance(part.content, str)
    return part.content


def answers(messages: list[ModelMessage]) -> str:
    """What the model was told of each call of its last turn, one ``id=content`` a line."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return "\n".join(
        f"{part.tool_call_id}={part.content}"
        for part in last.parts
        if part.part_kind in ("tool-return", "retry-prompt")
    )


def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """One turn of three ``add`` calls and a ``pay``, then the answers as the output."""
    run = prompt(messages)
    if len(messages) == 1:
        adds = [ToolCallPart("add", {"a": i, "b": 10}, f"{run}-{i}") for i in range(3)]
        return ModelResponse(parts=[*adds, ToolCallPart("pay", {"amount": 5}, f"{run}-pay")])
    return ModelResponse(parts=[TextPart(answers(messages))])


def expected(run: str) -> str:
    return "\n".join([*(f"{run}-{i}={i + 10}" for i in range(3)), f"{run}-pay=paid 5"])


with warnings.catch_warnings():
    # The wrapper is deprecated in favour of the capability; both are tested.
    warnings.simplefilter("ignore")
    WRAPPED = DBOSAgent(
        Agent(FunctionModel(script), name="wrapped", toolsets=[bridge.toolset(TOOLS)])
    )
    SINGLE = DBOSAgent(
        Agent(
            FunctionModel(script),
            name="single",
            tools=[bridge.tool(TOOLS, "add"), bridge.tool(TOOLS, "pay")],
        )
    )

CAPABLE = Agent(
    FunctionModel(script),
    name="capable",
    toolsets=[bridge.toolset(TOOLS, id="sums")],
    capabilities=[DBOSDurability()],
)


@DBOS.workflow(name="capable.turn")
async def capable_turn(run: str) -> str:
    """A workflow of the application's own, whose agent run is durable through the capability."""
    return (await CAPABLE.run(run)).output


@pytest.fixture(scope="module", autouse=True)
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    folder = tmp_path_factory.mktemp("dbos")
    DBOS(config={**config(folder, name="pydantic_ai"), "log_level": "WARNING"})
    DBOS.launch()
    yield
    DBOS.destroy()


async def steps(workflow_id: str) -> list[tuple[str, object]]:
    """The workflow's steps in order: (name, recorded output)."""
    return [
        (step["function_name"], step["output"])
        for step in await DBOS.list_workflow_steps_async(workflow_id)
    ]


def ran(run: str) -> list[int]:
    """How often each call of ``run`` ran: its three ``add`` calls, then its ``pay``."""
    return [RUNS[f"{run}-{i}"] for i in range(3)] + [RUNS[f"{run}-pay"]]


async def test_each_call_is_a_step_of_the_agents_workflow() -> None:
    with SetWorkflowID("steps"):
        result = await WRAPPED.run("steps")
    assert result.output == expected("steps")
    assert ran("steps") == [1, 1, 1, 1]
    recorded = await steps("steps")
    names = [name for name, _ in recorded]
    assert names == [
        "wrapped__model.request",
        "ferrotool.add",
        "ferrotool.add",
        "ferrotool.add",
        "ferrotool.pay.begin",  # pay is not idempotent: its start is recorded first
        "ferrotool.pay",
        "wrapped__model.request",
    ]
    calls = [output for name, output in recorded if name in ("ferrotool.add", "ferrotool.pay")]
    # Each step's output is the call's ferrotool result, as JSON text.
    assert [ToolResultBlock.from_json(str(output)).id for output in calls] == [
        "steps-0",
        "steps-1",
        "steps-2",
        "steps-pay",
    ]


async def test_a_finished_run_is_recorded_and_not_run_again() -> None:
    with SetWorkflowID("again"):
        first = await WRAPPED.run("again")
    with SetWorkflowID("again"):
        second = await WRAPPED.run("again")
    assert first.output == second.output == expected("again")
    assert ran("again") == [1, 1, 1, 1]


async def step_of(workflow_id: str, name: str, nth: int = 0) -> int:
    found = [
        step["function_id"]
        for step in await DBOS.list_workflow_steps_async(workflow_id)
        if step["function_name"] == name
    ]
    return found[nth]


async def test_a_forked_run_replays_the_recorded_calls_and_runs_the_rest() -> None:
    with SetWorkflowID("fork"):
        await WRAPPED.run("fork")
    assert ran("fork") == [1, 1, 1, 1]
    # From the third add on: the first two are replayed, the rest run again.
    start = await step_of("fork", "ferrotool.add", 2)
    handle = await DBOS.fork_workflow_async("fork", start)
    again = await handle.get_result()
    assert again.output == expected("fork")  # the replayed results reached the model
    assert ran("fork") == [1, 1, 2, 2]
    # From the last model request: every call is replayed, none runs.
    handle = await DBOS.fork_workflow_async(
        "fork", await step_of("fork", "wrapped__model.request", 1)
    )
    assert (await handle.get_result()).output == expected("fork")
    assert ran("fork") == [1, 1, 2, 2]


async def test_a_started_call_that_is_not_idempotent_never_runs_twice() -> None:
    with SetWorkflowID("once"):
        await WRAPPED.run("once")
    # Forked from the pay step: its start is recorded, its result is not (as after a crash in
    # the call). It does not run; the model is told it may or may not have taken effect.
    handle = await DBOS.fork_workflow_async("once", await step_of("once", "ferrotool.pay"))
    output = (await handle.get_result()).output
    assert ran("once") == [1, 1, 1, 1]
    lines = output.splitlines()
    assert lines[:3] == expected("once").splitlines()[:3]
    refusal = not_retried(ToolUseBlock.of("once-pay", "pay", {})).content
    assert lines[3].startswith("once-pay=")
    assert refusal in output


async def test_a_single_tool_is_a_step_too() -> None:
    with SetWorkflowID("single"):
        result = await SINGLE.run("single")
    assert result.output == expected("single")
    names = [name for name, _ in await steps("single")]
    assert names.count("ferrotool.add") == 3
    assert names.count("ferrotool.pay") == names.count("ferrotool.pay.begin") == 1


async def test_the_capability_makes_the_calls_steps_of_the_applications_workflow() -> None:
    with SetWorkflowID("capable"):
        output = await capable_turn("capable")
    assert output == expected("capable")
    names = [name for name, _ in await steps("capable")]
    assert names.count("ferrotool.sums.add") == 3  # the toolset's id names its steps
    assert names.count("ferrotool.sums.pay") == 1
    handle = await DBOS.fork_workflow_async(
        "capable", await step_of("capable", "ferrotool.sums.pay")
    )
    assert (await handle.get_result()).splitlines()[:3] == expected("capable").splitlines()[:3]
    assert ran("capable") == [1, 1, 1, 1]


async def test_outside_a_workflow_the_calls_run_plainly() -> None:
    result = await CAPABLE.run("plain")  # the capability is transparent outside a workflow
    assert result.output == expected("plain")
    assert ran("plain") == [1, 1, 1, 1]
    assert DBOS.workflow_id is None


# --- a killed process, and its run recovered by another ----------------------------------------

LIMIT = 120.0  # seconds: a safety net, never reached when things work
CRASH_TOOLS = {"i": "record", "n": "charge"}  # idempotent, not idempotent
HELD = 600.0


def crash_agent(log: Path, phase: str, hold: str) -> DBOSAgent[None, str]:
    """The agent both processes build: the same name, tools and script.

    Its calls run one at a time (``sequential``), so a call starts only once the one before it
    ended and its result was recorded.
    """

    def write(line: str) -> None:
        with log.open("a", encoding="utf-8") as out:
            out.write(f"{phase} {line}\n")
            out.flush()
            os.fsync(out.fileno())

    async def effect(call: ToolUseBlock, amount: int) -> str:
        write(f"start {call.id}")
        await asyncio.sleep(HELD if call.id == hold else 0.005)
        write(f"end {call.id}")
        return f"{call.name} {amount}"

    @tool
    async def record(amount: int, call: ToolUseBlock) -> str:
        """Record an amount (safe to repeat)."""
        return await effect(call, amount)

    @tool(idempotent=False)
    async def charge(amount: int, call: ToolUseBlock) -> str:
        """Charge an amount (never twice)."""
        return await effect(call, amount)

    toolkit = Toolkit()
    toolkit.register(record)
    toolkit.register(charge)

    def plan_script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        plan = prompt(messages)
        if len(messages) == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart(CRASH_TOOLS[kind], {"amount": index}, f"c{index}")
                    for index, kind in enumerate(plan)
                ]
            )
        return ModelResponse(parts=[TextPart(answers(messages))])

    agent = Agent(FunctionModel(plan_script), name="crash", toolsets=[bridge.toolset(toolkit)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DBOSAgent(agent, parallel_execution_mode="sequential")


async def worker(mode: str, folder: str, log: str, workflow_id: str, plan: str, hold: str) -> str:
    """Run the agent on ``plan`` (``run``), or recover that run and give its output."""
    agent = crash_agent(Path(log), mode, hold if mode == "run" else "")
    DBOS(config={**config(folder, name="crash"), "log_level": "WARNING"})
    DBOS.launch()  # recovers the runs a crash interrupted
    try:
        if mode == "run":
            with SetWorkflowID(workflow_id):
                return (await agent.run(plan)).output
        handle: WorkflowHandleAsync[AgentRunResult[str]]
        handle = await DBOS.retrieve_workflow_async(workflow_id)
        result = await handle.get_result(polling_interval_sec=0.05)
        return result.output
    finally:
        DBOS.destroy()


def lines_of(log: Path, phase: str, what: str) -> Counter[str]:
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return Counter(
        call
        for who, kind, call in (line.split() for line in text.splitlines())
        if (who, kind) == (phase, what)
    )


def spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, *args], stderr=subprocess.PIPE)


def crash(folder: Path, number: int, plan: str, held: int) -> tuple[str, Path]:
    """Run ``plan``, kill the process with SIGKILL when call ``held`` started, recover the run."""
    log, out = folder / f"log-{number}", folder / f"out-{number}"
    args = (str(folder), str(log), f"crash-{number}", plan, f"c{held}")
    running = spawn("run", *args)
    deadline = time.monotonic() + LIMIT
    while f"run start c{held}\n" not in (log.read_text(encoding="utf-8") if log.exists() else ""):
        assert running.poll() is None, running.communicate()[1].decode()
        assert time.monotonic() < deadline
        time.sleep(0.005)
    running.send_signal(signal.SIGKILL)
    _, errors = running.communicate(timeout=LIMIT)
    assert running.returncode == -signal.SIGKILL, errors.decode()
    recovering = spawn("recover", *args, str(out))
    _, errors = recovering.communicate(timeout=LIMIT)
    assert recovering.returncode == 0, errors.decode()
    return out.read_text(encoding="utf-8"), log


@pytest.mark.parametrize(("plan", "held"), [("inini", 2), ("iinni", 3)], ids=["record", "charge"])
def test_a_killed_run_recovers_without_running_a_finished_call_again(
    tmp_path: Path, plan: str, held: int
) -> None:
    output, log = crash(tmp_path, held, plan, held)
    first, second = lines_of(log, "run", "start"), lines_of(log, "recover", "start")
    for index, kind in enumerate(plan):
        call = f"c{index}"
        if index < held:  # recorded before the kill: never run again
            assert (first[call], second[call]) == (1, 0), call
        elif index > held:  # not started before the kill
            assert (first[call], second[call]) == (0, 1), call
        elif kind == "i":  # in flight, safe to repeat: run again
            assert (first[call], second[call]) == (1, 1)
        else:  # in flight, not idempotent: never run again, and the model is told
            assert (first[call], second[call]) == (1, 0)
    told = dict(line.split("=", 1) for line in output.splitlines())
    assert list(told) == [f"c{index}" for index in range(len(plan))]
    for index, kind in enumerate(plan):
        if index == held and kind == "n":
            assert "not safe to run again" in told[f"c{index}"]
        else:
            assert told[f"c{index}"] == f"{CRASH_TOOLS[kind]} {index}"


if __name__ == "__main__":
    mode, folder, log, workflow_id, plan, hold, *out = sys.argv[1:]
    text = asyncio.run(worker(mode, folder, log, workflow_id, plan, hold))
    if out:
        Path(out[0]).write_text(text, encoding="utf-8")
