"""The agent loop with a scripted model: turns, events, suspension and resume, reset_tools."""

from __future__ import annotations

import gc
import threading
from typing import Any

import anyio
import pytest

from ferrotool import (
    AgentError,
    Confirmation,
    ConfirmationRequired,
    Emitter,
    ExternalExecutionRequired,
    InMemorySessionStore,
    PermissionContext,
    PermissionDecision,
    Registry,
    RuntimeContext,
    SchemaOnlyTool,
    SessionKey,
    TextBlock,
    ToolBase,
    ToolCallFinished,
    ToolCallParam,
    ToolCallStarted,
    Toolkit,
    ToolkitConfig,
    ToolProgress,
    ToolRequestConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    ToolView,
    tool,
)
from ferrotool.agent import (
    AgentEvent,
    ModelReply,
    ModelRequest,
    ModelResponded,
    PausedRun,
    RunFinished,
    RunSuspended,
    ScriptedModel,
    TurnLimitReached,
    UserMessage,
    results_in,
    resume_agent,
    run_agent,
)

CONTEXT = RuntimeContext(user_id="ann", session_id="s1")
GEO = SchemaOnlyTool(
    {
        "name": "geolocate",
        "description": "Where the user is (the client runs it).",
        "parameters": {"type": "object", "properties": {}},
    }
)


@tool
async def get_weather(city: str) -> str:
    """Get the weather."""
    return f"{city}: sunny"


@tool
async def db_query(sql: str) -> str:
    """Run a read-only query."""
    return "3 rows"


@tool
def slow_report(emitter: Emitter) -> str:
    """A sync tool on a worker thread that reports progress."""
    emitter.emit(f"working on thread {threading.get_ident() != MAIN}")
    return "report ready"


MAIN = threading.get_ident()


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys; asks first."""

    name = "deploy"
    input_schema = {"type": "object", "properties": {"env": {"type": "string"}}}

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask(f"Deploy to {tool_input.get('env')}?")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        return f"deployed to {param.input.get('env')}"


def registry() -> Registry:
    kit = Toolkit(ToolkitConfig(meta_tool=True))
    kit.register(get_weather)
    kit.register(slow_report)
    kit.register(Deploy())
    kit.create_group("database", "Database tools.", instructions="Read only.")
    kit.register(db_query, group="database")
    return kit.snapshot()


async def open_view(store: InMemorySessionStore, *client_tools: SchemaOnlyTool) -> ToolView:
    return await registry().open_view(CONTEXT, store, ToolRequestConfig(list(client_tools)))


def calls(*blocks: tuple[str, str, str]) -> ModelReply:
    return ModelReply("", tuple(ToolUseBlock(*block) for block in blocks))


async def collect(run: Any) -> list[AgentEvent]:
    async with run:
        return [event async for event in run]


async def test_a_turn_of_parallel_calls_then_the_answer() -> None:
    def answer(request: ModelRequest) -> ModelReply:
        return ModelReply(" / ".join(result.content for result in results_in(request)))

    model = ScriptedModel(
        [
            calls(
                ("c1", "get_weather", '{"city": "Paris"}'),
                ("c2", "get_weather", '{"city": "Oslo"}'),
            ),
            answer,
        ]
    )
    view = await open_view(InMemorySessionStore())
    events = await collect(run_agent(model, view, [UserMessage("Weather?")], CONTEXT))
    kinds = [type(event).__name__ for event in events]
    assert kinds[0] == "ModelResponded"
    assert sorted(kinds[1:5]) == ["ToolCallFinished"] * 2 + ["ToolCallStarted"] * 2
    assert kinds[5:] == ["ModelResponded", "RunFinished"]
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.reply.text == "Paris: sunny / Oslo: sunny"
    second = model.requests[1]
    assert [type(m).__name__ for m in second.messages] == [
        "UserMessage",
        "ModelReply",
        "ToolResultBlock",
        "ToolResultBlock",
    ]
    assert [r.id for r in results_in(second)] == ["c1", "c2"]
    assert finished.messages == (*second.messages, finished.reply)


async def test_an_approval_and_a_client_tool_pause_the_run_and_resume_continues_it() -> None:
    store = InMemorySessionStore()
    model = ScriptedModel(
        [
            calls(
                ("c1", "get_weather", '{"city": "Paris"}'),
                ("c2", "deploy", '{"env": "prod"}'),
                ("c3", "geolocate", "{}"),
            ),
            lambda request: ModelReply(" | ".join(r.content for r in results_in(request))),
        ]
    )
    view = await open_view(store, GEO)
    events = await collect(run_agent(model, view, [UserMessage("Ship it.")], CONTEXT))
    assert isinstance(events[-2], ExternalExecutionRequired)
    assert isinstance(events[-3], ConfirmationRequired)
    suspended = events[-1]
    assert isinstance(suspended, RunSuspended)
    paused = suspended.paused
    assert [p.id for p in paused.suspension.pending] == ["c2", "c3"]
    assert [r.state for r in paused.results] == [
        ToolResultState.SUCCESS,
        ToolResultState.RUNNING,
        ToolResultState.RUNNING,
    ]
    # The pause crosses a process boundary as JSON.
    paused = PausedRun.from_json(paused.to_json())
    assert paused.messages == suspended.paused.messages
    assert paused.results == suspended.paused.results

    # Only the approval: the client's call still waits, so the run pauses again.
    view = await open_view(store, GEO)
    again = await resume_agent(model, view, paused, [Confirmation("c2", True)], CONTEXT).result()
    assert isinstance(again, RunSuspended)
    assert [p.id for p in again.paused.suspension.pending] == ["c3"]
    assert again.paused.results[1].content == "deployed to prod"

    view = await open_view(store, GEO)
    client = ToolResultBlock.success("48.85N 2.35E", id="c3")
    resumed = await collect(resume_agent(model, view, again.paused, [client, "and hurry"], CONTEXT))
    done = resumed[-1]
    assert isinstance(done, RunFinished)
    assert done.reply.text == "Paris: sunny | deployed to prod | 48.85N 2.35E"
    assert model.requests[-1].messages[-1] == UserMessage("and hurry")
    assert (await store.load(SessionKey("ann", "s1"))).pending_calls == ()


async def test_reset_tools_shows_a_group_on_the_next_turn_and_the_prompt_follows() -> None:
    def groups_prompt(view: ToolView) -> str:
        return "groups: " + ",".join(sorted(view.active_groups))

    model = ScriptedModel(
        [
            calls(("c1", "reset_tools", '{"database": true}')),
            calls(("c2", "db_query", '{"sql": "select 1"}')),
            ModelReply("3 rows."),
        ]
    )
    view = await open_view(InMemorySessionStore())
    assert "db_query" not in view
    outcome = await run_agent(
        model,
        view,
        [UserMessage("Count.")],
        CONTEXT,
        system="Be brief.",
        instructions=[groups_prompt],
    ).result()
    assert isinstance(outcome, RunFinished)
    first, second, third = model.requests
    assert "db_query" not in first.tools.schemas_json().decode()
    assert "db_query" in second.tools.schemas_json().decode()
    assert first.system == "Be brief.\n\ngroups: "
    assert second.system == "Be brief.\n\ngroups: database"
    assert results_in(third)[0].content == "3 rows"


async def test_the_turn_limit_stops_a_model_that_keeps_calling() -> None:
    model = ScriptedModel([calls((f"c{i}", "get_weather", '{"city": "Rome"}')) for i in range(3)])
    view = await open_view(InMemorySessionStore())
    outcome = await run_agent(model, view, [UserMessage("Loop")], CONTEXT, max_turns=2).result()
    assert isinstance(outcome, TurnLimitReached)
    assert len(model.requests) == 2
    assert outcome.messages[-1] == ToolResultBlock.success(
        "Rome: sunny", id="c1", name="get_weather"
    )
    with pytest.raises(ValueError, match="max_turns"):
        run_agent(model, view, [], max_turns=0)


async def test_a_model_error_reaches_the_consumer_as_raised() -> None:
    view = await open_view(InMemorySessionStore())
    with pytest.raises(AgentError, match="no reply for turn 1"):
        await run_agent(ScriptedModel([]), view, [UserMessage("hi")], CONTEXT).result()


async def test_progress_of_a_sync_tool_on_its_thread_reaches_the_stream() -> None:
    model = ScriptedModel([calls(("c1", "slow_report", "{}")), ModelReply("done")])
    view = await open_view(InMemorySessionStore())
    events = await collect(run_agent(model, view, [UserMessage("Report")], CONTEXT))
    progress = [event for event in events if isinstance(event, ToolProgress)]
    assert [p.chunk for p in progress] == [TextBlock("working on thread True")]
    finished = [event for event in events if isinstance(event, ToolCallFinished)]
    assert finished[0].result.content == "report ready"


async def test_closing_the_run_interrupts_the_running_calls() -> None:
    started = anyio.Event()
    cancelled: list[bool] = []

    @tool
    async def wait_forever() -> str:
        """Never ends by itself."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.append(True)
        return "never"

    kit = Toolkit()
    kit.register(wait_forever)
    model = ScriptedModel([calls(("c1", "wait_forever", "{}"))])
    seen: list[AgentEvent] = []
    with anyio.fail_after(10):
        async with run_agent(model, kit.snapshot().view(), [UserMessage("go")]) as run:
            async for event in run:
                seen.append(event)
                if isinstance(event, ToolCallStarted):
                    await started.wait()
                    break
    assert cancelled == [True]
    assert isinstance(seen[0], ModelResponded)
    assert run.outcome is None


async def test_reload_reads_the_session_again_and_a_view_without_one_stays() -> None:
    store = InMemorySessionStore()
    view = await open_view(store)
    plain = registry().view()
    assert await plain.reload() is plain
    switched = await view.call_tool(ToolUseBlock("c1", "reset_tools", '{"database": true}'))
    assert switched.state is ToolResultState.SUCCESS
    assert "db_query" not in view  # a view is a value: the call changed the session, not it
    again = await view.reload()
    assert "db_query" in again
    assert again.config is view.config


async def test_a_run_dropped_unclosed_never_cancels_its_consumer() -> None:
    started = anyio.Event()
    cancelled: list[bool] = []

    @tool
    async def wait_forever() -> str:
        """Never ends by itself."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.append(True)
        return "never"

    kit = Toolkit()
    kit.register(wait_forever)
    model = ScriptedModel([calls(("c1", "wait_forever", "{}"))])
    with anyio.fail_after(10):
        run = run_agent(model, kit.snapshot().view(), [UserMessage("go")])
        assert isinstance(await run.__anext__(), ModelResponded)
        await started.wait()
        del run
        gc.collect()
        for _ in range(20):  # a stray cancellation of this task would arrive here
            await anyio.sleep(0.01)
        while not cancelled:  # the dropped run's call is stopped
            await anyio.sleep(0.01)
    assert cancelled == [True]


@pytest.mark.parametrize("source", ["toolkit", "registry"])
async def test_a_toolkit_or_a_registry_runs_in_its_default_view(source: str) -> None:
    toolkit = Toolkit()
    toolkit.register(get_weather)
    tools: Toolkit | Registry = toolkit if source == "toolkit" else toolkit.snapshot()
    model = ScriptedModel(
        [
            ModelReply(calls=(ToolUseBlock("c1", "get_weather", '{"city": "Paris"}'),)),
            ModelReply("Sunny in Paris."),
        ]
    )
    outcome = await run_agent(model, tools, [UserMessage("Weather?")]).result()
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "Sunny in Paris."
    (result,) = results_in(model.requests[1])
    assert result.content == "Paris: sunny"
