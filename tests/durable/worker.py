"""A process that runs (``run``) or recovers (``recover``) one durable batch.

``python worker.py MODE FOLDER LOG WORKFLOW_ID PLAN [OUT [HOLD]]``

* ``FOLDER``: where DBOS's SQLite database is.
* ``LOG``: the side-effect log: each call appends ``<phase> start <call id>`` before its effect and
  ``<phase> end <call id>`` after it, each line flushed and fsynced.
* ``PLAN``: one letter per call, in call order: ``i`` a call of the idempotent tool ``record``,
  ``n`` one of the non-idempotent ``pay`` (both unsafe to overlap: one call at a time); ``s``
  and ``p`` the same two as concurrency-safe tools (``record_together``, ``pay_together``),
  whose consecutive calls run as overlapping steps. Each tool waits ``DELAY`` seconds between
  its two lines.
* ``HOLD``: the ids of the calls (comma-separated) that, in ``run``, never end: they wait
  after their first line until the process is killed, so that they are in flight at the kill.

``run`` starts the batch under ``WORKFLOW_ID`` (and is killed before it ends); ``recover``
launches DBOS on the same database, which recovers the workflow, waits for its batch and prints
its results, one JSON object per line (to ``OUT`` when given).

The crash tests start it with `multiprocessing`'s fork server, which imports this module (and so
DBOS, whose import takes seconds) once: each worker is a fresh process forked from it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from dbos import DBOS

from ferrotool import Toolkit, ToolUseBlock, tool
from ferrotool.durable import DurableToolkit, config

DELAY = 0.01
HELD = 600.0  # seconds: longer than any test waits for the kill
TOOLS = {"i": "record", "n": "pay", "s": "record_together", "p": "pay_together"}
"""The tool of each letter of a plan."""
IDEMPOTENT = frozenset("is")
"""The letters of the idempotent tools."""


def tools(log: Path, phase: str, hold: frozenset[str] = frozenset()) -> Toolkit:
    """The toolkit both processes build: the same tools under the same names."""

    def write(line: str) -> None:
        with log.open("a", encoding="utf-8") as out:
            out.write(f"{phase} {line}\n")
            out.flush()
            os.fsync(out.fileno())

    async def effect(call: ToolUseBlock, amount: int) -> str:
        write(f"start {call.id}")
        await asyncio.sleep(HELD if call.id in hold else DELAY)
        write(f"end {call.id}")
        return f"{call.id}:{amount}"

    @tool(concurrency_safe=False)
    async def record(amount: int, call: ToolUseBlock) -> str:
        """Record an amount (safe to repeat)."""
        return await effect(call, amount)

    @tool(concurrency_safe=False, idempotent=False)
    async def pay(amount: int, call: ToolUseBlock) -> str:
        """Pay an amount (never twice)."""
        return await effect(call, amount)

    @tool
    async def record_together(amount: int, call: ToolUseBlock) -> str:
        """Record an amount (safe to repeat, and beside other calls)."""
        return await effect(call, amount)

    @tool(idempotent=False)
    async def pay_together(amount: int, call: ToolUseBlock) -> str:
        """Pay an amount (never twice; beside other calls)."""
        return await effect(call, amount)

    toolkit = Toolkit()
    for each in (record, pay, record_together, pay_together):
        toolkit.register(each)
    return toolkit


def calls(plan: str) -> list[ToolUseBlock]:
    """The batch's calls: ``c0``, ``c1``... of ``record`` or ``pay``, as ``plan`` says."""
    return [
        ToolUseBlock.of(f"c{index}", TOOLS[kind], {"amount": index})
        for index, kind in enumerate(plan)
    ]


async def work(
    mode: str, folder: str, log: str, workflow_id: str, plan: str, hold: frozenset[str]
) -> list[str]:
    """Run or recover the batch; the recovered batch's results, as JSON lines."""
    durable = DurableToolkit(tools(Path(log), mode, hold), name="crash")
    settings = config(folder, name="crash")
    settings["log_level"] = "WARNING"
    DBOS(config=settings)
    DBOS.launch()
    try:
        if mode == "run":
            await durable.call_tools(calls(plan), workflow_id=workflow_id)
            return []
        batch = await durable.result(workflow_id, polling_interval=0.02)
        return [result.to_json().decode() for result in batch.results]
    finally:
        DBOS.destroy()


def main(
    mode: str, folder: str, log: str, workflow_id: str, plan: str, out: str = "", hold: str = ""
) -> None:
    """The process's work; the results go to the file ``out``, else to stdout."""
    held = frozenset(hold.split(",")) if hold and mode == "run" else frozenset[str]()
    lines = asyncio.run(work(mode, folder, log, workflow_id, plan, held))
    text = "".join(f"{line}\n" for line in lines)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main(*sys.argv[1:])
