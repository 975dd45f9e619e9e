"""A process that runs (``run``), recovers (``recover``) or adopts (``adopt``) one durable batch.

``python worker.py MODE DATABASE LOG WORKFLOW_ID PLAN [OUT [HOLD [EXECUTOR]]]``

* ``DATABASE``: DBOS's system database: a folder, where the SQLite file is (``config(folder)``),
  or a Postgres database's URL, ``postgresql://...`` (``config(database_url=...)``).
* ``LOG``: the side-effect log: each call appends ``<phase> start <call id>`` before its effect and
  ``<phase> end <call id>`` after it, each line flushed and fsynced.
* ``PLAN``: one letter per call, in call order: ``i`` a call of the idempotent tool ``record``,
  ``n`` one of the non-idempotent ``pay`` (both unsafe to overlap: one call at a time); ``s``
  and ``p`` the same two as concurrency-safe tools (``record_together``, ``pay_together``),
  whose consecutive calls run as overlapping steps. Each tool waits ``DELAY`` seconds between
  its two lines.
* ``HOLD``: the ids of the calls (comma-separated) that, in ``run``, never end: they wait
  after their first line until the process is killed, so that they are in flight at the kill.
* ``EXECUTOR``: in ``run`` and ``recover``, the process's DBOS executor id (DBOS's ``local``
  unless given); in ``adopt``, the id of the dead executor whose batch it takes over.

``run`` starts the batch under ``WORKFLOW_ID`` (and is killed before it ends); ``recover``
launches DBOS on the same database, which recovers the workflows its executor left pending,
waits for the batch and prints its results, one JSON object per line (to ``OUT`` when given).

``adopt`` is a second live process on a shared (Postgres) database, with an executor id of its
own (`ADOPTER`), which DBOS's launch recovers nothing for: it launches, makes the file
``OUT.ready``, waits for the file ``OUT.go`` (made once the process that ran the batch is dead),
then moves the dead executor's pending workflows to itself (`take_over`), waits for the batch and
writes its results as ``recover`` does.

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
from ferrotool.durable import DurableToolkit, adopt, config

DELAY = 0.01
HELD = 600.0  # seconds: longer than any test waits for the kill
WAIT = 60.0  # seconds: how long ``adopt`` waits for its go-ahead
ADOPTER = "adopter"
"""The executor id of the ``adopt`` process."""
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


def on_postgres(database: str) -> bool:
    """Whether ``DATABASE`` is a Postgres URL (else a folder for a SQLite file)."""
    return database.startswith(("postgresql://", "postgres://"))


async def work(
    mode: str,
    database: str,
    log: str,
    workflow_id: str,
    plan: str,
    out: str,
    hold: frozenset[str],
    executor: str,
) -> list[str]:
    """Run, recover or adopt the batch; the recovered batch's results, as JSON lines."""
    durable = DurableToolkit(tools(Path(log), mode, hold), name="crash")
    executor_id = ADOPTER if mode == "adopt" else executor or None
    if on_postgres(database):
        settings = config(name="crash", database_url=database, executor_id=executor_id)
    else:
        settings = config(database, name="crash", executor_id=executor_id)
    settings["log_level"] = "WARNING"
    DBOS(config=settings)
    DBOS.launch()
    try:
        if mode == "run":
            await durable.call_tools(calls(plan), workflow_id=workflow_id)
            return []
        if mode == "adopt":
            Path(f"{out}.ready").touch()
            go = Path(f"{out}.go")
            deadline = asyncio.get_running_loop().time() + WAIT
            while not go.exists():
                if asyncio.get_running_loop().time() > deadline:
                    raise TimeoutError(f"no {go} in {WAIT} s")
                await asyncio.sleep(0.005)
            taken = await adopt(executor)
            if taken != [workflow_id]:
                raise AssertionError(f"{executor} left {taken} pending, not [{workflow_id!r}]")
        batch = await durable.result(workflow_id, polling_interval=0.02)
        return [result.to_json().decode() for result in batch.results]
    finally:
        DBOS.destroy()


def main(
    mode: str,
    database: str,
    log: str,
    workflow_id: str,
    plan: str,
    out: str = "",
    hold: str = "",
    executor: str = "",
) -> None:
    """The process's work; the results go to the file ``out``, else to stdout."""
    held = frozenset(hold.split(",")) if hold and mode == "run" else frozenset[str]()
    lines = asyncio.run(work(mode, database, log, workflow_id, plan, out, held, executor))
    text = "".join(f"{line}\n" for line in lines)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main(*sys.argv[1:])
