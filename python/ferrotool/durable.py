"""Durable model turns on DBOS: tool calls and model turns that survive the process running them.

`DurableToolkit` runs a batch (`call_tools`) as a DBOS workflow whose steps are the calls;
`DurableAgent` runs a whole agent turn (`ferrotool.agent.run_agent`'s loop) as one, whose steps
are the model's replies and the calls, and which waits for a person's approvals and the client's
results durably. Each step's result is recorded in DBOS's system database (a SQLite file by
default, Postgres to share it between hosts) as soon as it is known. If the process dies in the
middle, DBOS recovers the workflow when a process launches on the same database: what finished is
not run again (its recorded result is replayed), and the rest runs.

Each call's step runs the ordinary pipeline for that one call (validation in Rust, permissions,
middleware, timeouts, retries: `ToolView.call_tool`), and an agent's loop is `run_agent`'s own
with recorded steps (`ferrotool.agent.TurnSteps`); durability wraps them and repeats none of it.

The guarantees (see the documentation's "Durable turns" page):

* A call whose result was recorded never runs again: after a crash its recorded result is the
  call's result. So is a model reply: a recovered turn does not ask the model again.
* A call in flight when the process died (started, its result not recorded) runs again on
  recovery, unless its tool is not idempotent (``@tool(idempotent=False)``,
  `ToolSpec.idempotent`): such a call runs at most once. A separate step records that it
  started before it runs; on recovery, a non-idempotent call that started but has no result
  ends with an error result the model can act on, never with a second run.
* A call's timeout is a durable deadline: the step that records its start records the time, and
  a call run again on recovery has what is left of its first run's time (its timeout for each
  of its attempts), ending timed out if nothing is left.
* The results come back one per call, in call order, as from `Toolkit.call_tools`.
* What waits is written once, in a step: a batch's suspension (its reply id and the session's
  record of the waiting calls). A durable agent then waits for the replies as DBOS messages
  whose topic is the reply id, sent from any process (`DurableAgent.reply`); accepting them is
  the session's compare-and-set, in a step of its own, and each approved call is then a step
  like any other. The session store and the workflow agree on what waits: the calls leave the
  session's waiting set in the step that records which replies settled them.

DBOS keeps one instance per process, and finds a workflow's functions by name when it recovers
it: build each `DurableToolkit` and `DurableAgent` (with the same ``name``, tools and model)
before ``DBOS.launch()``, in every process that may recover its workflows. `config` gives a
DBOS configuration whose system database is a SQLite file in a folder you name, or Postgres.

This module needs the ``dbos`` package (``pip install 'ferrotool[dbos]'``).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import math
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Final, final

import anyio
import orjson

from ferrotool._execution import outcomes
from ferrotool._execution.batch import (
    Confirmation,
    Suspension,
    ToolBatch,
    _held,
    _suspend,
    check_calls,
    slots,
)
from ferrotool._execution.events import EventSink
from ferrotool._execution.loopback import running_trio
from ferrotool._execution.outcomes import settled
from ferrotool._execution.resume import Reply, Settlement, _check_shape, settle
from ferrotool._extras import requires_extra
from ferrotool._permissions.decisions import PermissionRule
from ferrotool._registry.source import ToolSource, view_of
from ferrotool._registry.toolkit import Toolkit
from ferrotool._registry.view import ToolView
from ferrotool._session.pending import PendingToolCall, answering, placed
from ferrotool._session.state import SessionStore, ToolContextState, update_session
from ferrotool._values.calls import ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._values.context import RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool.agent.loop import (
    Instructions,
    RunFinished,
    RunOutcome,
    RunSuspended,
    TurnLimitReached,
    run_agent,
)
from ferrotool.agent.messages import (
    ChatModel,
    DeltaSink,
    Message,
    ModelReply,
    ModelRequest,
    PausedRun,
    message_from_dict,
    message_to_dict,
)
from ferrotool.errors import ResumeError

with requires_extra("ferrotool.durable", "dbos"):
    from dbos import DBOS, DBOSConfig, SetWorkflowID, WorkflowHandleAsync
    from dbos import error as dbos_errors

DEFAULT_NAME: Final = "ferrotool"
"""The name of a `DurableToolkit` (and of the DBOS application of `config`) unless given."""

NOT_RETRIED: Final = "not_retried"
"""``metadata["durable"]`` of the error result of a non-idempotent call a crash interrupted."""

NO_REPLY: Final = "no_reply"
"""``metadata["durable"]`` of the error result of a call no reply came for in time."""

WAITING: Final = "ferrotool.waiting"
"""The DBOS event of a durable agent's workflow that holds what waits: a `PausedRun`'s JSON,
or ``null`` when nothing does (`DurableAgent.waiting`)."""

REFUSED: Final = "ferrotool.refused"
"""The DBOS event that holds the last refused replies' reason and reply id."""

_TAKEN: Final[set[str]] = set()  # the names of this process's durable toolkits
_CANCELLED: Final = "CANCELLED"  # DBOS's status of a cancelled workflow
_WAIT_AT_MOST: Final = 86_400.0  # seconds a wait without a timeout asks DBOS for at a time


def config(
    folder: str | os.PathLike[str] | None = None,
    *,
    name: str = DEFAULT_NAME,
    database_url: str | None = None,
    application_version: str | None = None,
    executor_id: str | None = None,
) -> DBOSConfig:
    """A DBOS configuration for durable turns: ``DBOS(config=config("state"))``.

    Args:
        folder: The folder of the embedded system database, a SQLite file ``<name>.sqlite``
            (made if missing). Ignored when ``database_url`` is given.
        name: The DBOS application's name.
        database_url: A system database's URL instead (``postgresql://...``), for processes
            on several hosts.
        application_version: The version DBOS files workflows under. A process recovers only
            the workflows of its own version; DBOS derives one from the source of the
            registered workflows unless it is given.
        executor_id: This process's name among the processes that share the database. A
            process that launches recovers the unfinished workflows of its own executor id
            (DBOS's default: ``"local"``), so processes that run at the same time on one
            database need ids of their own, lest one recover what another is running; a
            replacement takes the id of the process it replaces.

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
    if executor_id is not None:
        settings["executor_id"] = executor_id
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
        agent: The calling agent, for tools that ask for it.
        config: The execution settings of every call (after the tools' own, before the
            toolkit's); its timeout is a durable deadline (see the module).
        parallel: Whether consecutive concurrency-safe calls may run together, as overlapping
            steps.

    Raises:
        ValueError: Another durable toolkit of this process has the name.
    """

    __slots__ = (
        "_agent",
        "_begin",
        "_call",
        "_config",
        "_context",
        "_parallel",
        "_reply_id",
        "_suspend",
        "_tools",
        "_workflow",
        "name",
    )

    def __init__(
        self,
        tools: ToolSource,
        *,
        name: str = DEFAULT_NAME,
        context: RuntimeContext | None = None,
        agent: object | None = None,
        config: ExecutionConfig | None = None,
        parallel: bool = True,
    ) -> None:
        _take(name)
        self.name: Final = name
        self._tools = tools
        self._context = context
        self._agent = agent
        self._config = config
        self._parallel = parallel
        prefix = f"ferrotool.{name}"

        async def begin(run: str) -> str:  # records that a call starts in `run`, and when
            return orjson.dumps({"run": run, "at": time.time()}).decode()

        async def call(
            view: ToolView,
            context: RuntimeContext | None,
            encoded: str,
            run: str,
            begun: str,
            approval: str,
        ) -> str:
            return await self._run_call(view, context, encoded, run, begun, approval)

        async def reply_id() -> str:  # records a suspension's reply id
            return uuid.uuid4().hex

        async def suspend(
            view: ToolView, encoded: list[str], results: list[str], reply_id: str
        ) -> str:
            return await self._run_suspend(view, encoded, results, reply_id)

        async def batch(encoded: list[str]) -> str:
            running = _RUNNING.get()
            if running == [] and DBOS.workflow_id is not None:
                running.append(DBOS.workflow_id)  # the id DBOS gave, for a cancelled caller
            return await self._run_batch(view_of(self._tools), self._context, encoded)

        self._begin: Callable[[str], Awaitable[str]] = DBOS.step(name=f"{prefix}.begin")(begin)
        self._call: Callable[
            [ToolView, RuntimeContext | None, str, str, str, str], Awaitable[str]
        ] = DBOS.step(name=f"{prefix}.call")(call)
        self._reply_id: Callable[[], Awaitable[str]] = DBOS.step(name=f"{prefix}.reply_id")(
            reply_id
        )
        self._suspend: Callable[[ToolView, list[str], list[str], str], Awaitable[str]] = DBOS.step(
            name=f"{prefix}.suspend"
        )(suspend)
        self._workflow: Callable[[list[str]], Coroutine[Any, Any, str]] = DBOS.workflow(
            name=f"{prefix}.call_tools"
        )(batch)

    @property
    def view(self) -> ToolView:
        """The view the calls run in."""
        return view_of(self._tools)

    async def call_tools(
        self, calls: Sequence[ToolUseBlock], *, workflow_id: str | None = None
    ) -> ToolBatch:
        """Run a model turn's calls as one durable batch, and give its results.

        As `ToolView.call_tools`, but as a DBOS workflow: each call's result is recorded when
        the call finishes. Called again with the id of a batch that finished, it gives the
        recorded batch without running anything; with the id of one a crash interrupted (and
        not yet recovered), it finishes it. A cancelled caller cancels the workflow (DBOS's
        ``CANCELLED``), and the cancellation goes on; called again with its id, the batch goes
        on from its last recorded step.

        Args:
            calls: The model's calls, in order.
            workflow_id: The workflow's id (say, the turn's); DBOS makes one if not given.

        Raises:
            TypeError: The calls are not a sequence of `ToolUseBlock` with string ids and
                JSON text arguments (see `Toolkit.call_tools`).
            RuntimeError: Called in a trio run: DBOS runs its workflows on asyncio.
        """
        _on_asyncio("DurableToolkit.call_tools")
        checked = check_calls(calls)
        if not checked:
            return ToolBatch(())
        encoded = [call.to_json().decode() for call in checked]
        return _batch_of(await _inline(workflow_id, lambda: self._workflow(encoded)))

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

    async def _run_batch(
        self, view: ToolView, context: RuntimeContext | None, encoded: list[str]
    ) -> str:
        """A batch's steps: every call a step, the suspension (if any) another."""
        results = await self._run_calls(view, context, encoded, [""] * len(encoded))
        return await self._gathered(view, encoded, results)

    async def _gathered(self, view: ToolView, encoded: list[str], results: list[str]) -> str:
        """A batch's record: its results, and the suspension's step when calls wait."""
        parsed = [ToolResultBlock.from_json(result) for result in results]
        if any(r.metadata and (r.needs_approval or r.is_suspended) for r in parsed):
            suspension = await self._suspend(view, encoded, results, await self._reply_id())
            return orjson.dumps(
                {"results": results, "suspension": orjson.Fragment(suspension)}
            ).decode()
        return orjson.dumps({"results": results}).decode()

    async def _run_calls(
        self,
        view: ToolView,
        context: RuntimeContext | None,
        encoded: Sequence[str],
        approvals: Sequence[str],
    ) -> list[str]:
        """Every call a step (``approvals``: each call's approval, see `_run_call`)."""
        calls = tuple(ToolUseBlock.from_json(call) for call in encoded)
        # This run of the workflow: a `begin` step that gives another was recorded by an
        # earlier run, which the process's end interrupted.
        run = uuid.uuid4().hex
        results: list[str] = [""] * len(calls)
        for slot in slots(calls, view.concurrency_safe, self._parallel):
            # Step ids follow the order steps are started in: every `begin` step of the slot,
            # one after another, then its calls, started in call order.
            begun = [
                await self._begin(run) if self._marks_start(view, calls[index].name) else ""
                for index in slot
            ]
            steps = [
                self._call(view, context, encoded[index], run, marked, approvals[index])
                for index, marked in zip(slot, begun, strict=True)
            ]
            for index, result in zip(slot, await asyncio.gather(*steps), strict=True):
                results[index] = result
        return results

    def _marks_start(self, view: ToolView, name: str) -> bool:
        """Whether a call of ``name`` has a step that records its start.

        It has when its tool is not idempotent, or when the call has a timeout (a durable
        deadline).
        """
        spec = view.get_spec(name)
        if spec is not None and not spec.idempotent:
            return True
        tool = view.resolve(name)
        return tool is not None and tool.execution_for(self._config).timeout is not None

    async def _run_call(
        self,
        view: ToolView,
        context: RuntimeContext | None,
        encoded: str,
        run: str,
        begun: str,
        approval: str,
    ) -> str:
        """The step of one call: its result, or, when it must not run again, an error.

        ``begun`` is what the call's `begin` step recorded (``""``: it has none); ``approval``
        is, for an approved call of a durable agent's resume, the one-call settlement it runs
        under (``""``: a fresh call).
        """
        call = ToolUseBlock.from_json(encoded)
        started = orjson.loads(begun) if begun else None
        deadline: float | None = None
        timeout: float | None = None
        if started is not None:
            spec = view.get_spec(call.name)
            if started["run"] != run and spec is not None and not spec.idempotent:
                return not_retried(call).to_json().decode()
            tool = view.resolve(call.name)
            execution = None if tool is None else tool.execution_for(self._config)
            if execution is not None and execution.timeout is not None:
                timeout = execution.timeout
                deadline = started["at"] + timeout * execution.attempts
        left = None if deadline is None else deadline - time.time()
        if left is not None and left <= 0:  # its time ran out in an earlier run: not started
            return settled(outcomes.timed_out(call, timeout or 0.0), call).to_json().decode()
        async with _held(view.runner.calls):
            if left is None:
                result = await self._one(view, context, call, approval)
            else:
                with anyio.move_on_after(left) as scope:
                    result = await self._one(view, context, call, approval)
                if scope.cancelled_caught:
                    result = outcomes.timed_out(call, timeout or 0.0)
        return settled(result, call).to_json().decode()

    async def _one(
        self,
        view: ToolView,
        context: RuntimeContext | None,
        call: ToolUseBlock,
        approval: str,
    ) -> ToolResultBlock:
        """One call through the pipeline: fresh, or as a resume runs an approved call."""
        if not approval:
            if self._config is None:
                return await view.call_tool(call, context, agent=self._agent)
            return await view.run_one(view.scope(call, context, self._agent, None, self._config))
        host = Settlement.from_json(approval).approvals(await view.reload())
        scope = host.scope(call, context, self._agent, None, self._config, False)
        return await host.run_one(scope)

    async def _run_suspend(
        self, view: ToolView, encoded: list[str], results: list[str], reply_id: str
    ) -> str:
        """The step that gathers the calls that wait, stored in the session under ``reply_id``.

        The reply id was recorded by a step before this one: run again after a crash, this step
        replaces what an interrupted run of it stored, instead of adding the calls twice.
        """
        calls = tuple(ToolUseBlock.from_json(call) for call in encoded)
        done = tuple(ToolResultBlock.from_json(result) for result in results)
        suspension = await _suspend(view, calls, done, _ignore, reply_id)
        return orjson.dumps(
            {
                "reply_id": suspension.reply_id,
                "pending": [pending.to_dict() for pending in suspension.pending],
            }
        ).decode()

    def __repr__(self) -> str:
        return f"<DurableToolkit {self.name!r}>"


@final
class DurableAgent:
    """A whole agent run (`ferrotool.agent.run_agent`) as one DBOS workflow.

    The loop is `run_agent`'s: each model reply is a step, each turn's calls are steps as in
    `DurableToolkit`, and when calls wait for a person's approval or for the client the run
    waits in the workflow, durably, for replies sent from any process (`reply`), then settles
    them and goes on. A process that dies anywhere in the run loses nothing: a process that
    launches DBOS on the same database goes on from the last recorded step.

    Build it before ``DBOS.launch()``, the same way in every process that may recover its runs
    or reply to them. Each run opens its session's view in ``store`` (the session of the run's
    user and session ids), so that ``reset_tools`` and skills take effect between turns, and
    calls that wait are kept there: the replies are accepted there, exactly once. Give a store
    every such process shares (`ferrotool.redis.RedisSessionStore`). Without a store the runs
    use the tools' default view, and a run whose calls wait ends `RunSuspended`, as
    `run_agent`'s does.

    Args:
        model: The model. Its replies are recorded without their ``native`` object.
        tools: The run's tools: a toolkit or a registry (or, without a store, a view).
        store: Where each run's session lives.
        name: The name of the workflow and steps (``ferrotool.<name>.run_agent``...), unique
            in the process.
        context: The runtime context of every tool call (a run's user and session ids
            replace its own).
        max_turns: Model turns at most; then the run ends with `TurnLimitReached`.
        system: The system prompt.
        instructions: System prompt fragments computed from each turn's view.
        agent: The calling agent, for tools that ask for it.
        config: The execution settings of every call; its timeout is a durable deadline.
        parallel: Whether a turn's concurrency-safe calls may run together.
        reply_timeout: Seconds the run waits for the replies to what waits, a durable deadline
            (DBOS's durable sleep): then the calls still waiting end with an error result
            (``metadata["durable"] == "no_reply"``) and the run goes on. ``None``: no limit.

    Raises:
        ValueError: Another durable toolkit or agent of this process has the name, a view
            comes with a store, or ``max_turns`` is less than 1.
    """

    __slots__ = (
        "_expire",
        "_instructions",
        "_max_turns",
        "_model",
        "_respond",
        "_settle",
        "_store",
        "_system",
        "_workflow",
        "reply_timeout",
        "toolkit",
    )

    def __init__(
        self,
        model: ChatModel,
        tools: ToolSource,
        *,
        store: SessionStore | None = None,
        name: str = DEFAULT_NAME,
        context: RuntimeContext | None = None,
        max_turns: int = 10,
        system: str = "",
        instructions: Sequence[Instructions] = (),
        agent: object | None = None,
        config: ExecutionConfig | None = None,
        parallel: bool = True,
        reply_timeout: float | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if store is not None and isinstance(tools, ToolView):
            raise ValueError(
                "DurableAgent opens each run's view in the store: give it the toolkit or the "
                "registry, not a view"
            )
        if reply_timeout is not None and not reply_timeout > 0:
            raise ValueError(f"reply_timeout must be positive, got {reply_timeout}")
        self.toolkit: Final = DurableToolkit(
            tools, name=name, context=context, agent=agent, config=config, parallel=parallel
        )
        self._model = model
        self._store = store
        self._max_turns = max_turns
        self._system = system
        self._instructions = tuple(instructions)
        self.reply_timeout: Final = reply_timeout
        prefix = f"ferrotool.{name}"

        async def respond(request: ModelRequest) -> str:
            reply = await model.respond(request)
            return orjson.dumps(message_to_dict(reply)).decode()

        async def settle_replies(
            view: ToolView, context: RuntimeContext | None, message: str
        ) -> str:
            return await self._run_settle(view, context, message)

        async def expire(view: ToolView, reply_id: str) -> str:
            return await self._run_expire(view, reply_id)

        async def run(transcript: str) -> str:
            return await self._run(transcript)

        self._respond: Callable[[ModelRequest], Awaitable[str]] = DBOS.step(
            name=f"{prefix}.respond"
        )(respond)
        self._settle: Callable[[ToolView, RuntimeContext | None, str], Awaitable[str]] = DBOS.step(
            name=f"{prefix}.settle"
        )(settle_replies)
        self._expire: Callable[[ToolView, str], Awaitable[str]] = DBOS.step(
            name=f"{prefix}.expire"
        )(expire)
        self._workflow: Callable[[str], Coroutine[Any, Any, str]] = DBOS.workflow(
            name=f"{prefix}.run_agent"
        )(run)

    @property
    def name(self) -> str:
        """The name of the workflow and its steps."""
        return self.toolkit.name

    async def run(
        self,
        messages: Sequence[Message],
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        workflow_id: str | None = None,
    ) -> RunOutcome:
        """Run the model and the tools until the model answers without calling a tool.

        As `run_agent(...).result()`, as a DBOS workflow (see the class). Called again with
        the id of a run that ended, it gives the recorded outcome without running anything. A
        cancelled caller cancels the run (`DurableRun.cancel`); called again with its id, the
        run goes on from its last recorded step.

        Args:
            messages: The transcript so far (usually the person's first message).
            user_id: The user the run is for (with ``session_id``, its session in the store).
            session_id: The session the run belongs to.
            workflow_id: The workflow's id (say, the conversation turn's); DBOS makes one if
                not given.

        Raises:
            RuntimeError: Called in a trio run: DBOS runs its workflows on asyncio.
            ValueError: The agent has a store and the run no session id.
        """
        started = await self.start(
            messages, user_id=user_id, session_id=session_id, workflow_id=workflow_id
        )
        try:
            return await started.outcome()
        except asyncio.CancelledError:
            await started.cancel()
            raise

    async def start(
        self,
        messages: Sequence[Message],
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        workflow_id: str | None = None,
    ) -> DurableRun:
        """Start a run (see `run`) in the background of this process.

        Its handle gives the outcome, here; any other process has it by the workflow id
        (`DurableRun`). Started again with the id of a cancelled run, the run goes on from its
        last recorded step.

        Raises:
            RuntimeError: Called in a trio run: DBOS runs its workflows on asyncio.
            ValueError: The agent has a store and the run no session id.
        """
        _on_asyncio("DurableAgent.start")
        base = self.toolkit._context
        if self._store is not None and session_id is None and (base is None or not base.session_id):
            raise ValueError(
                "DurableAgent.start needs a session_id: each run's session lives in the store"
            )
        transcript = orjson.dumps(
            {
                "messages": [message_to_dict(message) for message in messages],
                "user_id": user_id,
                "session_id": session_id,
            }
        ).decode()
        if workflow_id is None:
            handle = await DBOS.start_workflow_async(self._workflow, transcript)
        else:
            with SetWorkflowID(workflow_id):
                handle = await DBOS.start_workflow_async(self._workflow, transcript)
            status = await handle.get_status()
            if status.status == _CANCELLED:  # a cancelled run started again goes on
                handle = await DBOS.resume_workflow_async(workflow_id)
        return DurableRun(handle.get_workflow_id(), handle)

    async def waiting(self, workflow_id: str, *, timeout: float = 0.0) -> PausedRun | None:
        """What a run waits for now, if anything: its transcript, results and waiting calls.

        Args:
            workflow_id: The run's workflow id (any process's).
            timeout: Seconds to wait for the run to record whether it waits, when it has not
                yet.
        """
        raw = await DBOS.get_event_async(workflow_id, WAITING, timeout_seconds=timeout)
        return None if raw is None or raw == "null" else PausedRun.from_json(raw)

    async def reply(self, workflow_id: str, replies: Sequence[Reply]) -> None:
        """Send replies to what a run waits for, from any process.

        The replies are checked here against what waits (their shape, their call ids), then
        sent as a DBOS message whose topic is the suspension's reply id; the run accepts them
        in its session, exactly once (a reply sent twice is accepted once), and goes on.

        Args:
            workflow_id: The run's workflow id.
            replies: `Confirmation` values, the client's `ToolResultBlock` results, and text.

        Raises:
            ResumeError: Nothing waits in the run, or a reply is malformed or names no
                waiting call; nothing is sent then.
        """
        _check_shape(tuple(replies))
        paused = await self.waiting(workflow_id)
        if paused is None:
            raise ResumeError(f"Run {workflow_id!r} waits for no reply.")
        waiting = {pending.id for pending in paused.suspension.pending}
        named = [
            reply.call_id if isinstance(reply, Confirmation) else reply.id or ""
            for reply in replies
            if not isinstance(reply, str)
        ]
        unknown = [call_id for call_id in named if call_id not in waiting]
        if unknown:
            raise ResumeError(
                f"Run {workflow_id!r} does not wait for {', '.join(unknown)}; it waits for "
                f"{', '.join(sorted(waiting))}."
            )
        message = orjson.dumps([_reply_dict(reply) for reply in replies]).decode()
        await DBOS.send_async(workflow_id, message, topic=paused.suspension.reply_id)

    async def _run(self, payload: str) -> str:
        """The workflow: `run_agent`'s loop with recorded steps."""
        raw = orjson.loads(payload)
        messages = [message_from_dict(message) for message in raw["messages"]]
        context = self.toolkit._context
        ids = {key: raw[key] for key in ("user_id", "session_id") if raw[key] is not None}
        if ids:
            context = dataclasses.replace(context or RuntimeContext(), **ids)
        view = await self._view(context)
        run = run_agent(
            self._model,
            view,
            messages,
            context,
            max_turns=self._max_turns,
            system=self._system,
            instructions=self._instructions,
            agent=self.toolkit._agent,
            config=self.toolkit._config,
            parallel=self.toolkit._parallel,
            steps=_Steps(self, context),
        )
        return _outcome_json(await run.result())

    async def _view(self, context: RuntimeContext | None) -> ToolView:
        """A run's view: its session's, opened in the store, or the tools' default view."""
        tools = self.toolkit._tools
        if self._store is None or isinstance(tools, ToolView):
            return view_of(tools)
        registry = tools.snapshot() if isinstance(tools, Toolkit) else tools
        return await registry.open_view(context or RuntimeContext(), self._store)

    async def _run_settle(
        self, view: ToolView, context: RuntimeContext | None, message: str
    ) -> str:
        """The step that accepts replies in the session: the settlement, or the refusal."""
        replies = tuple(_reply_of(raw) for raw in orjson.loads(message))
        try:
            settlement = await settle(view, None, replies, context)
        except ResumeError as error:
            return orjson.dumps({"refused": str(error)}).decode()
        return settlement.to_json().decode()

    async def _run_expire(self, view: ToolView, reply_id: str) -> str:
        """The step that ends the calls still waiting under ``reply_id`` (no reply in time)."""
        session = view.session
        expired: list[PendingToolCall] = []
        if session is not None:
            store, key = session

            def take(current: ToolContextState) -> ToolContextState:
                expired[:] = [p for p in current.pending_calls if p.reply_id == reply_id]
                return current.without_pending(p.id for p in expired)

            await update_session(store, key, take)
        results = [
            answering(
                ToolResultBlock.error(
                    f"No reply came within {self.reply_timeout:g} s: the call did not run",
                    id=pending.id,
                    name=pending.call.name,
                    metadata={"durable": NO_REPLY},
                ),
                pending,
            ).to_json()
            for pending in expired
        ]
        return orjson.dumps(
            {"results": [orjson.Fragment(result) for result in results], "reply_id": reply_id}
        ).decode()

    def __repr__(self) -> str:
        return f"<DurableAgent {self.name!r}>"


@final
class _Steps:
    """A durable agent's `ferrotool.agent.TurnSteps`: each one recorded in the workflow."""

    __slots__ = ("_agent", "_context")

    def __init__(self, agent: DurableAgent, context: RuntimeContext | None) -> None:
        self._agent = agent
        self._context = context

    async def respond(
        self, model: ChatModel, request: ModelRequest, on_delta: DeltaSink
    ) -> ModelReply:
        del model, on_delta  # the agent's own model, in a step; nothing streams from a step
        reply = message_from_dict(orjson.loads(await self._agent._respond(request)))
        assert isinstance(reply, ModelReply)
        return reply

    async def call_tools(
        self, view: ToolView, calls: tuple[ToolUseBlock, ...], on_event: EventSink
    ) -> ToolBatch:
        del on_event
        encoded = [call.to_json().decode() for call in check_calls(calls)]
        return _batch_of(await self._agent.toolkit._run_batch(view, self._context, encoded))

    async def replies(
        self, view: ToolView, paused: PausedRun, on_event: EventSink
    ) -> tuple[ToolBatch, tuple[Reply, ...]] | None:
        del on_event
        if view.session is None:
            return None
        agent, toolkit = self._agent, self._agent.toolkit
        reply_id = paused.suspension.reply_id
        await DBOS.set_event_async(WAITING, paused.to_json().decode())
        left = math.inf if agent.reply_timeout is None else agent.reply_timeout
        while True:
            wait = min(left, _WAIT_AT_MOST)
            message: str | None = await DBOS.recv_async(reply_id, timeout_seconds=wait)
            if message is None:
                left -= wait  # a durable sleep: the time passed, whatever happened meanwhile
                if left > 0:
                    continue
                expired = orjson.loads(await agent._expire(view, reply_id))
                await DBOS.set_event_async(WAITING, "null")
                results = tuple(
                    ToolResultBlock.from_json(orjson.dumps(r)) for r in expired["results"]
                )
                return ToolBatch(results, None, False, reply_id), ()
            recorded = orjson.loads(await agent._settle(view, self._context, message))
            if "refused" in recorded:
                await DBOS.set_event_async(
                    REFUSED, orjson.dumps({"reply_id": reply_id, **recorded}).decode()
                )
                continue
            break
        settlement = Settlement.from_json(orjson.dumps(recorded))
        # Each approved call is a step as a fresh one is, under a settlement of its own call.
        accepted = {pending.id: pending for pending in settlement.accepted}
        each = [
            Settlement((accepted[c.id],), {}, (c,), settlement.answered & {c.id}, ())
            .to_json()
            .decode()
            for c in settlement.approved
        ]
        approved = [call.to_json().decode() for call in settlement.approved]
        host = await view.reload()
        done = await toolkit._run_calls(host, self._context, approved, each)
        ran = _batch_of(await toolkit._gathered(host, approved, done))
        await DBOS.set_event_async(WAITING, "null")
        replies = tuple(_reply_of(raw) for raw in orjson.loads(message))
        return settlement.finish(ran.results, ran.suspension), replies


@final
class DurableRun:
    """A durable agent run started in the background (`DurableAgent.start`).

    Attributes:
        workflow_id: The run's workflow id: the name other processes know it by.
    """

    __slots__ = ("_handle", "workflow_id")

    def __init__(self, workflow_id: str, _handle: WorkflowHandleAsync[str] | None = None) -> None:
        self.workflow_id: Final = workflow_id
        self._handle = _handle  # the start's own, which waits without polling

    async def outcome(self, *, polling_interval: float = 0.1) -> RunOutcome:
        """How the run ended, once it has (a run another process recovers included).

        A run this process started (the handle `DurableAgent.start` gave) is awaited where it
        runs; another is looked up in DBOS's database every ``polling_interval``.

        Args:
            polling_interval: Seconds between two looks at the workflow's status.

        Raises:
            dbos.error.DBOSAwaitedWorkflowCancelledError: The run was cancelled.
        """
        handle = self._handle
        if handle is None:
            handle = await DBOS.retrieve_workflow_async(self.workflow_id)
        return _outcome_of(await handle.get_result(polling_interval_sec=polling_interval))

    async def cancel(self) -> None:
        """Stop the run (DBOS's ``CANCELLED``), in whichever process runs it.

        What was recorded stays: `DurableAgent.start` with the run's id goes on from there.
        Calls that wait stay in the session, for the run that goes on.
        """
        with anyio.CancelScope(shield=True):  # also when the caller's own cancellation runs
            await DBOS.cancel_workflow_async(self.workflow_id)

    def __repr__(self) -> str:
        return f"<DurableRun {self.workflow_id!r}>"


async def adopt(executor_id: str) -> list[str]:
    """Take over the unfinished workflows of a dead process: this process finishes them.

    A process that launches recovers only the workflows of its own executor id (`config`'s
    ``executor_id``); those of a process that died for good, on a host that is gone, wait for
    another to adopt them. Each is handed to DBOS's internal queue
    (`DBOS.resume_workflow_async`), which gives it to exactly one live process (this one, or
    another on the same database): it goes on from its recorded steps, as a recovery would.

    Call it only once the process is known to be dead: a process still running one of its
    workflows would run it beside its new owner.

    Args:
        executor_id: The dead process's executor id.

    Returns:
        The ids of the workflows taken over.
    """
    pending = await DBOS.list_workflows_async(
        status="PENDING", executor_id=executor_id, load_input=False, load_output=False
    )
    for status in pending:
        await DBOS.resume_workflow_async(status.workflow_id)
    return [status.workflow_id for status in pending]


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


_RUNNING: Final[contextvars.ContextVar[list[str] | None]] = contextvars.ContextVar(
    "ferrotool.durable.running", default=None
)
"""Where a workflow run in its caller's task (`_inline`) leaves its id, once it runs."""


async def _inline(workflow_id: str | None, workflow: Callable[[], Awaitable[str]]) -> str:
    """A workflow run in the caller's task.

    Its id is ``workflow_id``, else the one DBOS gives it (a ``SetWorkflowID`` around the call,
    or a fresh one). A cancelled caller cancels the workflow, and the cancellation goes on; run
    again under the id of a cancelled workflow, it goes on from its last recorded step.
    """
    running: list[str] = [] if workflow_id is None else [workflow_id]
    token = _RUNNING.set(running)
    try:
        if workflow_id is None:
            return await workflow()
        with SetWorkflowID(workflow_id):
            return await workflow()
    except dbos_errors.DBOSAwaitedWorkflowCancelledError:
        if not running:
            raise
        handle: WorkflowHandleAsync[str] = await DBOS.resume_workflow_async(running[0])
        try:
            return await handle.get_result(polling_interval_sec=0.05)
        except asyncio.CancelledError:
            await DurableRun(running[0]).cancel()
            raise
    except asyncio.CancelledError:
        if running:
            await DurableRun(running[0]).cancel()
        raise
    finally:
        _RUNNING.reset(token)


def _ignore(event: object) -> None:
    del event


def _take(name: str) -> None:
    if name in _TAKEN:
        raise ValueError(
            f"a durable toolkit named {name!r} exists in this process: give each its own name"
        )
    _TAKEN.add(name)


def _on_asyncio(what: str) -> None:
    if running_trio() is not None:
        raise RuntimeError(f"{what} runs on asyncio (DBOS's workflows do), not in a trio run")


def _suspension_of(raw: object) -> Suspension | None:
    if not isinstance(raw, dict):
        return None
    pending = tuple(PendingToolCall.from_dict(p) for p in raw["pending"])
    return Suspension(str(raw["reply_id"]), pending)


def _batch_of(recorded: str) -> ToolBatch:
    """The `ToolBatch` a workflow's output stands for."""
    raw = orjson.loads(recorded)
    results = tuple(ToolResultBlock.from_json(result) for result in raw["results"])
    suspension = _suspension_of(raw.get("suspension"))
    if suspension is not None:
        results = placed(results, suspension.pending)
    all_denied = all(r.state is ToolResultState.DENIED for r in results)
    return ToolBatch(
        results, suspension, all_denied, None if suspension is None else suspension.reply_id
    )


def _reply_dict(reply: Reply) -> dict[str, object]:
    """A reply's JSON form, for the DBOS message that carries it."""
    if isinstance(reply, Confirmation):
        return {
            "confirm": reply.call_id,
            "approved": reply.approved,
            "arguments": reply.arguments,
            "rules": [rule.to_dict() for rule in reply.rules],
        }
    if isinstance(reply, ToolResultBlock):
        return {"result": reply.to_dict()}
    return {"text": reply}


def _reply_of(raw: dict[str, Any]) -> Reply:
    """Read what `_reply_dict` wrote."""
    if "confirm" in raw:
        rules = tuple(PermissionRule.from_dict(rule) for rule in raw["rules"])
        return Confirmation(raw["confirm"], raw["approved"], raw["arguments"], rules)
    if "result" in raw:
        return ToolResultBlock.from_json(orjson.dumps(raw["result"]))
    return str(raw["text"])


def _outcome_json(outcome: RunOutcome) -> str:
    """A run's outcome as the workflow records it."""
    if isinstance(outcome, RunFinished):
        messages = [message_to_dict(message) for message in outcome.messages]
        return orjson.dumps({"finished": messages}).decode()
    if isinstance(outcome, RunSuspended):
        return orjson.dumps({"suspended": orjson.Fragment(outcome.paused.to_json())}).decode()
    messages = [message_to_dict(message) for message in outcome.messages]
    return orjson.dumps({"limit": messages}).decode()


def _outcome_of(recorded: str) -> RunOutcome:
    """Read what `_outcome_json` wrote."""
    raw = orjson.loads(recorded)
    if "suspended" in raw:
        return RunSuspended(PausedRun.from_json(orjson.dumps(raw["suspended"])))
    if "finished" in raw:
        messages = tuple(message_from_dict(message) for message in raw["finished"])
        last = messages[-1]
        assert isinstance(last, ModelReply)
        return RunFinished(last, messages)
    return TurnLimitReached(tuple(message_from_dict(message) for message in raw["limit"]))


__all__ = [
    "DEFAULT_NAME",
    "NOT_RETRIED",
    "NO_REPLY",
    "REFUSED",
    "WAITING",
    "DurableAgent",
    "DurableRun",
    "DurableToolkit",
    "adopt",
    "config",
    "not_retried",
]
