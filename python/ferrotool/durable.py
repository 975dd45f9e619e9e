"""Durable tool batches on DBOS: a model turn's calls that survive the process running them.

`DurableToolkit` runs a batch (`call_tools`) as a DBOS workflow whose steps are the calls: each
call's result is recorded in DBOS's system database (a SQLite file by default, Postgres to share
it between hosts) as soon as the call finishes. If the process dies in the middle of a batch,
DBOS recovers the workflow when a process launches on the same database: the calls that finished
are not run again (their recorded results are replayed), and the rest run.

Each call's step runs the ordinary pipeline for that one call (validation in Rust, permissions,
middleware, timeouts, retries: `ToolView.call_tool`); durability wraps it and repeats none of it.

The guarantees (see the documentation's "Durable batches" page):

* A call whose result was recorded never runs again: after a crash its recorded result is the
  call's result.
* A call in flight when the process died (started, its result not recorded) runs again on
  recovery, unless its tool is not idempotent (``@tool(idempotent=False)``,
  `ToolSpec.idempotent`): such a call runs at most once. A separate step records that it
  started before it runs; on recovery, a non-idempotent call that started but has no result
  ends with an error result the model can act on, never with a second run.
* The results come back one per call, in call order, as from `Toolkit.call_tools`.
* A batch's suspension (calls that wait for approval or for the client) is made in a step of
  its own: its reply id and the session's record of the waiting calls are written once.

DBOS keeps one instance per process, and finds a workflow's functions by name when it recovers
it: build each `DurableToolkit` (with the same ``name`` and the same tools) before
``DBOS.launch()``, in every process that may recover its batches. `config` gives a DBOS
configuration whose system database is a SQLite file in a folder you name.

This module needs the ``dbos`` package (``pip install 'ferrotool[dbos]'``).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Final, final

import orjson

from ferrotool._execution.batch import Suspension, ToolBatch, _held, _suspend, check_calls, slots
from ferrotool._execution.loopback import running_trio
from ferrotool._execution.outcomes import settled
from ferrotool._extras import requires_extra
from ferrotool._registry.source import ToolSource, view_of
from ferrotool._registry.view import ToolView
from ferrotool._session.pending import PendingToolCall, placed
from ferrotool._values.calls import ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._values.context import RuntimeContext

with requires_extra("ferrotool.durable", "dbos"):
    from dbos import DBOS, DBOSConfig, SetWorkflowID, WorkflowHandleAsync

DEFAULT_NAME: Final = "ferrotool"
"""The name of a `DurableToolkit` (and of the DBOS application of `config`) unless given."""

NOT_RETRIED: Final = "not_retried"
"""``metadata["durable"]`` of the error result of a non-idempotent call a crash interrupted."""

_TAKEN: Final[set[str]] = set()  # the names of this process's durable toolkits


def config(
    folder: str | os.PathLike[str] | None = None,
    *,
    name: str = DEFAULT_NAME,
    database_url: str | None = None,
    application_version: str | None = None,
) -> DBOSConfig:
    """A DBOS configuration for durable batches: ``DBOS(config=config("state"))``.

    Args:
        folder: The folder of the embedded system database, a SQLite file ``<name>.sqlite``
            (made if missing). Ignored when ``database_url`` is given.
        name: The DBOS application's name.
        database_url: A system database's URL instead (``postgresql://...``), for processes
            on several hosts.
        application_version: The version DBOS files workflows under. A process recovers only
            the workflows of its own version; DBOS derives one from the source of the
            registered workflows unless it is given.

    Returns:
        The configuration, to pass to ``DBOS(config=...)`` before ``DBOS.launch()``.

    Raises:
        ValueError: Neither ``folder`` nor ``database_url`` is given.
    """
    if database_url is None:
        if folder is None:
            raise ValueError("config() needs a folder for the SQLite database, or a database_url")
        path = Path(folder)
        path.mkdir(parents=True, exist_ok=True)
        database_url = f"sqlite:///{(path / f'{name}.sqlite').resolve()}"
    settings = DBOSConfig(name=name, system_database_url=database_url)
    if application_version is not None:
        settings["application_version"] = application_version
    return settings


@final
class DurableToolkit:
    """A toolkit's batches as DBOS workflows, each call a step recorded with its result.

    Build it before ``DBOS.launch()``, with the same ``name`` and tools in every process that
    may recover its batches: DBOS finds the workflow and its steps by name, and the steps find
    the tools by name in ``tools``.

    Args:
        tools: Where the calls run: a toolkit, a registry or a request's view.
        name: The name of the workflow and steps (``ferrotool.<name>.call_tools``...), unique
            in the process.
        context: The runtime context of every call.

    Raises:
        ValueError: Another durable toolkit of this process has the name.
    """

    __slots__ = ("_begin", "_call", "_context", "_suspend", "_tools", "_workflow", "name")

    def __init__(
        self,
        tools: ToolSource,
        *,
        name: str = DEFAULT_NAME,
        context: RuntimeContext | None = None,
    ) -> None:
        if name in _TAKEN:
            raise ValueError(
                f"a durable toolkit named {name!r} exists in this process: give each its own name"
            )
        self.name: Final = name
        self._tools = tools
        self._context = context
        prefix = f"ferrotool.{name}"

        async def begin(run: str) -> str:  # records that a non-idempotent call starts in `run`
            return run

        async def call(encoded: str, run: bool) -> str:
            return await self._run_call(encoded, run)

        async def suspend(encoded: list[str], results: list[str]) -> str:
            return await self._run_suspend(encoded, results)

        async def batch(encoded: list[str], parallel: bool) -> str:
            return await self._run_batch(encoded, parallel)

        self._begin: Callable[[str], Awaitable[str]] = DBOS.step(name=f"{prefix}.begin")(begin)
        self._call: Callable[[str, bool], Awaitable[str]] = DBOS.step(name=f"{prefix}.call")(call)
        self._suspend: Callable[[list[str], list[str]], Awaitable[str]] = DBOS.step(
            name=f"{prefix}.suspend"
        )(suspend)
        self._workflow: Callable[[list[str], bool], Coroutine[Any, Any, str]] = DBOS.workflow(
            name=f"{prefix}.call_tools"
        )(batch)
        _TAKEN.add(name)

    @property
    def view(self) -> ToolView:
        """The view the calls run in."""
        return view_of(self._tools)

    async def call_tools(
        self,
        calls: Sequence[ToolUseBlock],
        *,
        workflow_id: str | None = None,
        parallel: bool = True,
    ) -> ToolBatch:
        """Run a model turn's calls as one durable batch, and give its results.

        As `ToolView.call_tools`, but as a DBOS workflow: each call's result is recorded when
        the call finishes. Called again with the id of a batch that finished, it gives the
        recorded batch without running anything; with the id of one a crash interrupted (and
        not yet recovered), it finishes it.

        Args:
            calls: The model's calls, in order.
            workflow_id: The workflow's id (say, the turn's); DBOS makes one if not given.
            parallel: Whether consecutive concurrency-safe calls may run together.

        Raises:
            TypeError: The calls are not a sequence of `ToolUseBlock` with string ids and
                JSON text arguments (see `Toolkit.call_tools`).
            RuntimeError: Called in a trio run: DBOS runs its workflows on asyncio.
        """
        if running_trio() is not None:
            raise RuntimeError(
                "DurableToolkit.call_tools runs on asyncio (DBOS's workflows do), not in a trio run"
            )
        checked = check_calls(calls)
        if not checked:
            return ToolBatch(())
        encoded = [call.to_json().decode() for call in checked]
        if workflow_id is None:
            return _batch_of(await self._workflow(encoded, parallel))
        with SetWorkflowID(workflow_id):
            return _batch_of(await self._workflow(encoded, parallel))

    async def result(self, workflow_id: str, *, polling_interval: float = 1.0) -> ToolBatch:
        """The batch of a workflow started earlier (in this process or another), once it ends.

        A process that launches DBOS recovers the batches a crash interrupted; this waits for
        one of them to finish.

        Args:
            workflow_id: The batch's workflow id.
            polling_interval: Seconds between two looks at the workflow's status.

        Raises:
            dbos.error.DBOSNonExistentWorkflowError: No workflow has the id.
        """
        handle: WorkflowHandleAsync[str] = await DBOS.retrieve_workflow_async(workflow_id)
        return _batch_of(await handle.get_result(polling_interval_sec=polling_interval))

    async def _run_batch(self, encoded: list[str], parallel: bool) -> str:
        """The workflow: every call a step, the suspension (if any) another."""
        calls = tuple(ToolUseBlock.from_json(call) for call in encoded)
        view = view_of(self._tools)
        # This run of the workflow: a `begin` step that gives another was recorded by an
        # earlier run, which the process's end interrupted.
        run = uuid.uuid4().hex
        results: list[str] = [""] * len(calls)
        for slot in slots(calls, view.concurrency_safe, parallel):
            # Step ids follow the order steps are started in: every `begin` step of the slot,
            # one after another, then its calls, started in call order.
            fresh: list[bool] = []
            for index in slot:
                spec = view.get_spec(calls[index].name)
                fresh.append(spec is None or spec.idempotent or await self._begin(run) == run)
            steps = [self._call(encoded[index], ok) for index, ok in zip(slot, fresh, strict=True)]
            for index, result in zip(slot, await asyncio.gather(*steps), strict=True):
                results[index] = result
        parsed = [ToolResultBlock.from_json(result) for result in results]
        if any(r.metadata and (r.needs_approval or r.is_suspended) for r in parsed):
            suspension = await self._suspend(encoded, results)
            return orjson.dumps(
                {"results": results, "suspension": orjson.Fragment(suspension)}
            ).decode()
        return orjson.dumps({"results": results}).decode()

    async def _run_call(self, encoded: str, run: bool) -> str:
        """The step of one call: its result, or, when it must not run again, an error."""
        call = ToolUseBlock.from_json(encoded)
        if not run:
            result = not_retried(call)
        else:
            view = view_of(self._tools)
            async with _held(view.runner.calls):
                result = await view.call_tool(call, self._context)
            result = settled(result, call)
        return result.to_json().decode()

    async def _run_suspend(self, encoded: list[str], results: list[str]) -> str:
        """The step that gathers the calls that wait (a fresh reply id, stored in the session)."""
        calls = tuple(ToolUseBlock.from_json(call) for call in encoded)
        done = tuple(ToolResultBlock.from_json(result) for result in results)
        suspension = await _suspend(view_of(self._tools), calls, done, _ignore)
        return orjson.dumps(
            {
                "reply_id": suspension.reply_id,
                "pending": [pending.to_dict() for pending in suspension.pending],
            }
        ).decode()

    def __repr__(self) -> str:
        return f"<DurableToolkit {self.name!r}>"


def not_retried(call: ToolUseBlock) -> ToolResultBlock:
    """The error result of a non-idempotent call that a crash interrupted (never run again)."""
    return ToolResultBlock.error(
        f"Tool {call.name!r} was interrupted by a crash before its result was recorded, and is "
        "not safe to run again: it may or may not have taken effect; check before calling it "
        "again",
        id=call.id,
        name=call.name,
        metadata={"durable": NOT_RETRIED},
    )


def _ignore(event: object) -> None:
    del event


def _batch_of(recorded: str) -> ToolBatch:
    """The `ToolBatch` a workflow's output stands for."""
    raw = orjson.loads(recorded)
    results = tuple(ToolResultBlock.from_json(result) for result in raw["results"])
    suspension: Suspension | None = None
    waiting = raw.get("suspension")
    if waiting is not None:
        pending = tuple(PendingToolCall.from_dict(p) for p in waiting["pending"])
        suspension = Suspension(waiting["reply_id"], pending)
        results = placed(results, pending)
    all_denied = all(r.state is ToolResultState.DENIED for r in results)
    return ToolBatch(
        results, suspension, all_denied, None if suspension is None else suspension.reply_id
    )


__all__ = ["DEFAULT_NAME", "NOT_RETRIED", "DurableToolkit", "config", "not_retried"]
