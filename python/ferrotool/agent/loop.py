"""The acting loop: model, then the turn's tool calls, then their results, then the model again.

This is the ReAct loop's acting phase around one `ToolView`, and nothing more::

    turn: request (transcript, the view's tools, the system prompt and the view's fragments)
          -> model reply -> no calls: finished
                         -> calls: view.call_tools (one batch: parallel where safe, approvals
                            and client tools suspended) -> reload the view (reset_tools may
                            have switched groups) -> suspended: paused
                                                    -> results join the transcript: next turn

Every event of the execution engine (`ToolCallStarted`, `ToolProgress`, `ToolCallFinished`,
`ConfirmationRequired`, `ExternalExecutionRequired`, `AllToolsDenied`; on a resume first
`ConfirmationResult` and `ExternalExecutionResult`) is yielded as it happens, with the loop's
own: `ModelResponded` after each model turn, a streaming model's `TextDelta` and
`ArgumentsDelta`, and one last event that says how the run ended: `RunFinished`, `RunSuspended`
(with the `PausedRun` that `resume_agent` continues from) or `TurnLimitReached`.

Where skills and other prompt sources plug in: the tools come from the view every turn (a tool a
loaded skill or ``reset_tools`` made visible is offered on the next turn), and the system prompt
is the run's own followed by each ``instructions`` fragment, computed from the view every turn
(the skills prompt of a `ferrotool.skills.SkillViews`, say).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeAlias, final

from ferrotool._execution.batch import ToolBatch
from ferrotool._execution.events import EventSink, ToolEvent
from ferrotool._execution.resume import Reply
from ferrotool._execution.stream import EventStream
from ferrotool._registry.source import ToolSource, view_of
from ferrotool._registry.view import ToolView
from ferrotool._values.calls import REPLACES_KEY, ToolResultBlock, ToolUseBlock
from ferrotool._values.context import RuntimeContext
from ferrotool._values.execution import ExecutionConfig
from ferrotool.agent.messages import (
    ChatModel,
    DeltaSink,
    Message,
    ModelDelta,
    ModelReply,
    ModelRequest,
    PausedRun,
    UserMessage,
)

Instructions: TypeAlias = Callable[[ToolView], str | Awaitable[str]]
"""A fragment of the system prompt, computed (or awaited) from the turn's view; empty adds
nothing. A skills prompt is one: ``lambda view: skill_views.prompt(context)``."""


@final
@dataclass(frozen=True, slots=True)
class ModelResponded:
    """The model answered a turn.

    Attributes:
        turn: The turn's number, from 1.
        reply: The model's text and calls.
    """

    turn: int
    reply: ModelReply


@final
@dataclass(frozen=True, slots=True)
class RunFinished:
    """The model answered without calling a tool: the run is over.

    Attributes:
        reply: The last reply.
        messages: The whole transcript, the last reply included.
    """

    reply: ModelReply
    messages: tuple[Message, ...]


@final
@dataclass(frozen=True, slots=True)
class RunSuspended:
    """Calls wait for a person's approval or for the client: the run stops here.

    Attributes:
        paused: What `resume_agent` continues from, once replies are in.
    """

    paused: PausedRun


@final
@dataclass(frozen=True, slots=True)
class TurnLimitReached:
    """The model still called tools after ``max_turns`` turns: the run stops.

    Attributes:
        messages: The transcript, the last turn's results included.
    """

    messages: tuple[Message, ...]


RunOutcome: TypeAlias = RunFinished | RunSuspended | TurnLimitReached
"""How a run ended: its last event."""

AgentEvent: TypeAlias = ToolEvent | ModelDelta | ModelResponded | RunOutcome
"""Every event a run yields."""

Emit: TypeAlias = Callable[[AgentEvent], None]


class TurnSteps(Protocol):
    """How a run asks its model, runs a turn's calls and waits for replies.

    `run_agent`'s ``steps``: without it a run does each directly and ends `RunSuspended` when
    calls wait. A durable turn (`ferrotool.durable.DurableAgent`) records each as a step of a
    workflow and waits for the replies in the run itself, so that a process that dies in the
    middle of a turn loses nothing: the loop is the same, only the steps are recorded.
    """

    def respond(
        self, model: ChatModel, request: ModelRequest, on_delta: DeltaSink
    ) -> Awaitable[ModelReply]:
        """The model's reply to one turn's request."""
        ...

    def call_tools(
        self, view: ToolView, calls: tuple[ToolUseBlock, ...], on_event: EventSink
    ) -> Awaitable[ToolBatch]:
        """Run a turn's calls as one batch (`ToolView.call_tools`)."""
        ...

    def replies(
        self, view: ToolView, paused: PausedRun, on_event: EventSink
    ) -> Awaitable[tuple[ToolBatch, tuple[Reply, ...]] | None]:
        """Wait for the replies to what waits, and settle them (`ToolView.resume`).

        Returns:
            The resume's batch and the replies it settled, or ``None``: the run ends
            `RunSuspended` with ``paused``.
        """
        ...


@final
@dataclass(frozen=True, slots=True)
class _Run:
    """One run's settings, fixed at its start."""

    model: ChatModel
    context: RuntimeContext | None
    max_turns: int
    system: str
    instructions: tuple[Instructions, ...]
    agent: object | None
    config: ExecutionConfig | None
    parallel: bool
    steps: TurnSteps | None = None

    async def system_prompt(self, view: ToolView) -> str:
        parts = [self.system]
        for fragment in self.instructions:
            part = fragment(view)
            parts.append(part if isinstance(part, str) else await part)
        return "\n\n".join(part for part in parts if part)

    async def turns(
        self, view: ToolView, transcript: list[Message], done: int, emit: Emit
    ) -> RunOutcome:
        """Model and tools, turn after turn, from turn ``done + 1``."""
        steps = self.steps
        for turn in range(done + 1, self.max_turns + 1):
            request = ModelRequest(tuple(transcript), view, await self.system_prompt(view))
            if steps is None:
                reply = await self.model.respond(request, emit)
            else:
                reply = await steps.respond(self.model, request, emit)
            transcript.append(reply)
            emit(ModelResponded(turn, reply))
            if not reply.calls:
                return RunFinished(reply, tuple(transcript))
            if steps is None:
                batch = await view.call_tools(
                    reply.calls,
                    self.context,
                    agent=self.agent,
                    config=self.config,
                    parallel=self.parallel,
                    on_event=emit,
                )
            else:
                batch = await steps.call_tools(view, reply.calls, emit)
            view = await view.reload()
            results = batch.results
            said: list[UserMessage] = []
            while batch.suspension is not None:
                paused = PausedRun(tuple(transcript), results, batch.suspension, turn)
                answer = None if steps is None else await steps.replies(view, paused, emit)
                if answer is None:
                    return RunSuspended(paused)
                batch, replies = answer
                results = _merged(results, batch)
                said += (UserMessage(reply) for reply in replies if isinstance(reply, str))
                view = await view.reload()
            transcript += (*results, *said)
        return TurnLimitReached(tuple(transcript))

    async def resume(
        self, view: ToolView, paused: PausedRun, replies: Sequence[Reply], emit: Emit
    ) -> RunOutcome:
        """Settle the paused calls; go on once none waits."""
        batch: ToolBatch = await view.resume(
            replies,
            self.context,
            agent=self.agent,
            config=self.config,
            parallel=self.parallel,
            on_event=emit,
        )
        results = _merged(paused.results, batch)
        view = await view.reload()
        if batch.suspension is not None:
            return RunSuspended(replace(paused, results=results, suspension=batch.suspension))
        said = [UserMessage(reply) for reply in replies if isinstance(reply, str)]
        transcript = [*paused.messages, *results, *said]
        return await self.turns(view, transcript, paused.turns, emit)


def _merged(results: tuple[ToolResultBlock, ...], batch: ToolBatch) -> tuple[ToolResultBlock, ...]:
    """A paused turn's results, with the placeholders of the calls a resume settled replaced."""
    settled = {_answers(result): result for result in batch.results}
    return tuple(settled.get(result.id, result) for result in results)


def _answers(result: ToolResultBlock) -> str | None:
    """The id of the paused call a resume's result stands for.

    A call asked again waits under a new id: its placeholder names the one it replaces.
    """
    replaced = result.metadata.get(REPLACES_KEY)
    return replaced if isinstance(replaced, str) else result.id


def run_agent(
    model: ChatModel,
    view: ToolSource,
    messages: Sequence[Message],
    context: RuntimeContext | None = None,
    *,
    max_turns: int = 10,
    system: str = "",
    instructions: Sequence[Instructions] = (),
    agent: object | None = None,
    config: ExecutionConfig | None = None,
    parallel: bool = True,
    steps: TurnSteps | None = None,
) -> AgentRun:
    """Run the model and the view's tools until the model answers without calling a tool.

    Iterate the returned run for its events (see the module), best as ``async with
    run_agent(...) as run: async for event in run: ...``; its last event, also `AgentRun.outcome`
    afterwards, says how it ended. Open the view with a session store (`Registry.open_view`) for
    ``reset_tools`` to take effect between turns and for a suspension to be resumable.

    Args:
        model: The model (`OpenAIChatModel`, `AnthropicModel`, `ScriptedModel`, or your own).
        view: The request's tools: its view, or a toolkit's or registry's default view.
        messages: The transcript so far (usually the person's first message).
        context: The runtime context of every tool call.
        max_turns: Model turns at most; then the run ends with `TurnLimitReached`.
        system: The system prompt.
        instructions: System prompt fragments computed from each turn's view, after ``system``.
        agent: The calling agent, for tools that ask for it.
        config: The execution settings of every batch.
        parallel: Whether a turn's concurrency-safe calls may run together.
        steps: How the run asks the model, runs calls and waits for replies (`TurnSteps`):
            ``None`` does each directly and ends `RunSuspended` when calls wait; a durable
            agent's records each (`ferrotool.durable.DurableAgent`).

    Raises:
        ValueError: ``max_turns`` is less than 1.
    """
    run = _settings(model, context, max_turns, system, instructions, agent, config, parallel)
    if steps is not None:
        run = replace(run, steps=steps)
    transcript = list(messages)
    start = view_of(view)
    return AgentRun(lambda emit: run.turns(start, transcript, 0, emit))


def resume_agent(
    model: ChatModel,
    view: ToolView,
    paused: PausedRun,
    replies: Sequence[Reply],
    context: RuntimeContext | None = None,
    *,
    max_turns: int = 10,
    system: str = "",
    instructions: Sequence[Instructions] = (),
    agent: object | None = None,
    config: ExecutionConfig | None = None,
    parallel: bool = True,
) -> AgentRun:
    """Settle a paused run's waiting calls with ``replies``, then go on as `run_agent` does.

    Replies are `Confirmation` values for calls waiting for approval, `ToolResultBlock` values
    for calls the client ran, and text (the person's, added to the transcript after the
    results). Settling goes through `ToolView.resume`: each reply is accepted once, approved
    calls run, and a refusal raises `ResumeError` with nothing accepted. While calls still wait,
    the run ends `RunSuspended` again; ``max_turns`` counts the turns before the pause too.

    Raises:
        ResumeError: A reply was refused (while iterating).
        ValueError: ``max_turns`` is less than 1, or the view has no session store.
    """
    run = _settings(model, context, max_turns, system, instructions, agent, config, parallel)
    if view.session is None:
        raise ValueError("resume_agent needs a view with a session: open it with open_view")
    return AgentRun(lambda emit: run.resume(view, paused, tuple(replies), emit))


def _settings(
    model: ChatModel,
    context: RuntimeContext | None,
    max_turns: int,
    system: str,
    instructions: Sequence[Instructions],
    agent: object | None,
    config: ExecutionConfig | None,
    parallel: bool,
) -> _Run:
    if max_turns < 1:
        raise ValueError(f"max_turns must be at least 1, got {max_turns}")
    return _Run(model, context, max_turns, system, tuple(instructions), agent, config, parallel)


@final
class AgentRun(EventStream[AgentEvent]):
    """A run's events, as they happen: an async iterator and an async context manager.

    The run starts when iteration does, in a task of the stream's own (an `EventStream`).
    Leaving the ``async with`` (or `aclose`) stops it: the tool calls still running end
    ``INTERRUPTED``. A run dropped without being closed is stopped once it is collected, and
    never touches its consumer's task. An exception of the model (or a refused resume) reaches
    the consumer as it was raised.
    """

    __slots__ = ("_ended",)

    def __init__(self, start: Callable[[Emit], Awaitable[RunOutcome]]) -> None:
        ended: list[RunOutcome] = []

        async def run(emit: Emit) -> None:
            ended.append(await start(emit))
            emit(ended[0])

        # The run's task holds ``ended``, never this object, so that dropping this object is
        # what stops the run.
        super().__init__(run)
        self._ended = ended

    @property
    def outcome(self) -> RunOutcome | None:
        """How the run ended (its last event), once it has."""
        return self._ended[0] if self._ended else None

    async def result(self) -> RunOutcome:
        """Run to the end, dropping the events; return how it ended."""
        async with self:
            async for _ in self:
                pass
        assert self.outcome is not None  # the stream ends with the outcome, or raises
        return self.outcome


__all__ = [
    "AgentEvent",
    "AgentRun",
    "Instructions",
    "ModelResponded",
    "RunFinished",
    "RunOutcome",
    "RunSuspended",
    "TurnLimitReached",
    "TurnSteps",
    "resume_agent",
    "run_agent",
]
