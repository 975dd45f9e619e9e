"""A process that runs, recovers or answers one durable agent run (`DurableAgent`).

``main(spec)`` takes a JSON object:

* ``mode``: ``run`` starts the run and waits to be killed; ``serve`` starts it and writes its
  outcome; ``recover`` launches DBOS (which recovers the unfinished runs of its executor id)
  and writes the run's outcome; ``reply`` waits until the run waits, approves every call that
  waits, and, as every launched process may be handed the run to finish, writes its outcome.
* ``database``: DBOS's system database: a folder for a SQLite file, or a Postgres URL.
* ``executor``: this process's executor id (DBOS's default, ``local``, when absent).
* ``redis``: a Redis URL for the runs' sessions (with ``prefix``), or absent: no store.
* ``log``: the side-effect log: each call appends ``<mode> start <call id>`` before its effect
  and ``<mode> end <call id>`` after it, and the model ``<mode> model <turn>`` each time it is
  asked; every line flushed and fsynced.
* ``plan``: the model's turns, separated by ``/``, one letter per call: ``i`` a call of the
  idempotent ``record``, ``n`` one of the non-idempotent ``pay`` (both one at a time), ``t``
  one of ``slow`` (idempotent, with a timeout of `TIMEOUT` seconds; it takes `SLOW` seconds),
  ``d`` one of ``deploy``, which asks for approval. The calls are ``c0``, ``c1``... in order.
  After its last turn the model answers with every result, joined by `` | ``.
* ``hold``: ids of calls that, in ``run`` mode, never end: in flight when the process is killed.
* ``out``: where the outcome is written, as JSON (if given).

The tests start it with `multiprocessing`'s fork server, which imports this module (and DBOS)
once: each worker is a fresh process forked from it.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from dbos import DBOS
from worker import on_postgres

from ferrotool import (
    Confirmation,
    PermissionContext,
    PermissionDecision,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolResultBlock,
    ToolUseBlock,
    tool,
)
from ferrotool.agent import DeltaSink, ModelReply, ModelRequest, RunFinished, UserMessage
from ferrotool.durable import DurableAgent, DurableRun, config
from ferrotool.redis import RedisSessionStore

DELAY = 0.01
HELD = 600.0  # seconds: longer than any test waits for the kill
TIMEOUT = 4.0  # seconds: the timeout of `slow`
SLOW = 2.0  # seconds: how long `slow` takes when it is not held
TOOLS = {"i": "record", "n": "pay", "t": "slow", "d": "deploy"}
"""The tool of each letter of a plan."""
IDEMPOTENT = frozenset("it")
"""The letters of the idempotent tools."""
SESSION = "crash"


def turns(plan: str) -> list[list[ToolUseBlock]]:
    """The calls of each of the model's turns."""
    numbered: list[list[ToolUseBlock]] = []
    index = 0
    for turn in plan.split("/"):
        calls = []
        for kind in turn:
            calls.append(ToolUseBlock.of(f"c{index}", TOOLS[kind], {"amount": index}))
            index += 1
        numbered.append(calls)
    return numbered


class Log:
    """The side-effect log of one process."""

    def __init__(self, path: Path, mode: str) -> None:
        self._path = path
        self._mode = mode

    def write(self, line: str) -> None:
        with self._path.open("a", encoding="utf-8") as out:
            out.write(f"{self._mode} {line}\n")
            out.flush()
            os.fsync(out.fileno())


class Planner:
    """The model: turn by turn the plan's calls, then every result.

    A function of the transcript, as a real model's answer is.
    """

    def __init__(self, plan: str, log: Log) -> None:
        self._turns = turns(plan)
        self._log = log

    async def respond(self, request: ModelRequest, on_delta: DeltaSink | None = None) -> ModelReply:
        done = sum(isinstance(message, ModelReply) for message in request.messages)
        self._log.write(f"model {done + 1}")
        if done < len(self._turns):
            return ModelReply("", tuple(self._turns[done]))
        results = [m.content for m in request.messages if isinstance(m, ToolResultBlock)]
        return ModelReply(" | ".join(results))


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys (asks first; never twice)."""

    name = "deploy"
    idempotent = False
    concurrency_safe = False
    input_schema = {"type": "object", "properties": {"amount": {"type": "integer"}}}

    def __init__(self, effect: Callable[[ToolUseBlock, int], Awaitable[str]]) -> None:
        super().__init__()
        self._effect = effect

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask("Deploy?")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        return await self._effect(param.call, int(param.input["amount"]))


def toolkit(log: Log, hold: frozenset[str]) -> Toolkit:
    """The tools every process builds: the same tools under the same names."""

    async def effect(call: ToolUseBlock, amount: int, takes: float = DELAY) -> str:
        log.write(f"start {call.id}")
        await asyncio.sleep(HELD if call.id in hold else takes)
        log.write(f"end {call.id}")
        return f"{call.id}:{amount}"

    @tool(concurrency_safe=False)
    async def record(amount: int, call: ToolUseBlock) -> str:
        """Record an amount (safe to repeat)."""
        return await effect(call, amount)

    @tool(concurrency_safe=False, idempotent=False)
    async def pay(amount: int, call: ToolUseBlock) -> str:
        """Pay an amount (never twice)."""
        return await effect(call, amount)

    @tool(concurrency_safe=False, timeout=TIMEOUT)
    async def slow(amount: int, call: ToolUseBlock) -> str:
        """Take a while (safe to repeat), within a timeout."""
        return await effect(call, amount, SLOW)

    tools = Toolkit()
    for each in (record, pay, slow, Deploy(effect)):
        tools.register(each)
    return tools


async def work(spec: dict[str, Any]) -> dict[str, Any]:
    mode = spec["mode"]
    log = Log(Path(spec["log"]), mode)
    hold = frozenset(spec.get("hold", ())) if mode == "run" else frozenset[str]()
    store = None
    if spec.get("redis"):
        store = RedisSessionStore.from_url(spec["redis"], prefix=spec["prefix"])
    agent = DurableAgent(Planner(spec["plan"], log), toolkit(log, hold), store=store, name="crash")
    database, executor = spec["database"], spec.get("executor")
    if on_postgres(database):
        settings = config(database_url=database, name="crash", executor_id=executor)
    else:
        settings = config(database, name="crash", executor_id=executor)
    settings["log_level"] = "WARNING"
    DBOS(config=settings)
    DBOS.launch()
    workflow_id = spec["workflow_id"]
    try:
        if mode == "reply":
            while (paused := await agent.waiting(workflow_id, timeout=0.05)) is None:
                await asyncio.sleep(0.02)
            answers = [Confirmation(p.id, approved=True) for p in paused.suspension.pending]
            await agent.reply(workflow_id, answers)
            # A launched process takes part: DBOS may hand it the run to finish (a recovered
            # workflow goes to whichever process dequeues it first), so it stays to the end.
        if mode in ("run", "serve"):
            message = UserMessage(spec["plan"])
            await agent.start([message], session_id=SESSION, workflow_id=workflow_id)
            if mode == "run":
                await asyncio.sleep(HELD)
        outcome = await DurableRun(workflow_id).outcome(polling_interval=0.02)
        assert isinstance(outcome, RunFinished), outcome
        return {
            "text": outcome.reply.text,
            "results": [
                message.to_dict()
                for message in outcome.messages
                if isinstance(message, ToolResultBlock)
            ],
        }
    finally:
        if store is not None:
            await store.aclose()
        DBOS.destroy()


def main(spec: str) -> None:
    """The process's work; the outcome goes to the file ``out``."""
    parsed = json.loads(spec)
    outcome = asyncio.run(work(parsed))
    if parsed.get("out"):
        Path(parsed["out"]).write_text(json.dumps(outcome), encoding="utf-8")
