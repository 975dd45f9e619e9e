"""`DurableAgent` in one process: a whole run as a DBOS workflow, replies awaited durably.

DBOS is launched once for the module on a SQLite file. The model is a function of the
transcript (as a real one is), so that a run replayed or recovered asks it the same things: its
first turn makes the calls its user message lists, its second answers with the results. The
crash and recovery tests, with real processes, are in `test_agent_crash`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import orjson
import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed")

from dbos import DBOS

from ferrotool import (
    Confirmation,
    InMemorySessionStore,
    PermissionContext,
    PermissionDecision,
    SessionKey,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    tool,
)
from ferrotool.agent import (
    DeltaSink,
    ModelReply,
    ModelRequest,
    PausedRun,
    RunFinished,
    RunSuspended,
    TurnLimitReached,
    UserMessage,
    results_in,
    run_agent,
)
from ferrotool.durable import NO_REPLY, REFUSED, DurableAgent, config
from ferrotool.errors import ResumeError

pytestmark = pytest.mark.asyncio_only("DBOS runs its workflows on asyncio")

RUNS: Counter[str] = Counter()  # how often each call ran, by call id
ASKED: Counter[str] = Counter()  # how often the model was asked, by the run's user message


class Planner:
    """A model that makes the calls its user message lists, then answers with their results.

    The user message is JSON: ``[[id, tool, arguments], ...]``.
    """

    async def respond(self, request: ModelRequest, on_delta: DeltaSink | None = None) -> ModelReply:
        first = request.messages[0]
        assert isinstance(first, UserMessage)
        ASKED[first.text] += 1
        if not any(isinstance(message, ModelReply) for message in request.messages):
            planned = orjson.loads(first.text)
            return ModelReply(
                "", tuple(ToolUseBlock.of(id_, name, args) for id_, name, args in planned)
            )
        said = [m.text for m in request.messages if isinstance(m, UserMessage)][1:]
        return ModelReply(" | ".join([*(r.content for r in results_in(request)), *said]))


def plan(*calls: tuple[str, str, dict[str, Any]]) -> UserMessage:
    return UserMessage(orjson.dumps(calls).decode())


@tool
def add(a: int, b: int, call: ToolUseBlock) -> int:
    """Add two numbers."""
    RUNS[call.id] += 1
    return a + b


@tool(external=True)
def pick_file(pattern: str) -> str:
    """Run by the client."""
    raise AssertionError("an external tool never runs here")


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys; asks first, naming the environment."""

    name = "deploy"
    idempotent = False
    input_schema = {
        "type": "object",
        "properties": {"env": {"type": "string", "enum": ["staging", "qa", "prod"]}},
        "required": ["env"],
    }

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask(f"Deploy to {tool_input.get('env')}?")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        RUNS[param.call.id] += 1
        return f"deployed to {param.input.get('env')}"


def toolkit() -> Toolkit:
    tools = Toolkit()
    for each in (add, pick_file, Deploy()):
        tools.register(each)
    return tools


TOOLS = toolkit()
STORE = InMemorySessionStore()
AGENT = DurableAgent(Planner(), TOOLS, store=STORE, name="agent-in-process")
HASTY = DurableAgent(Planner(), TOOLS, store=STORE, name="agent-hasty", reply_timeout=0.5)
PLAIN = DurableAgent(Planner(), TOOLS, name="agent-no-store", max_turns=1)


@pytest.fixture(scope="module", autouse=True)
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    settings = config(tmp_path_factory.mktemp("dbos"), name="agent-tests")
    DBOS(config={**settings, "log_level": "WARNING"})
    DBOS.launch()
    yield
    DBOS.destroy()


async def paused_run(agent: DurableAgent, workflow_id: str) -> PausedRun:
    """What the run waits for, once it waits (a safety net of 30 s)."""
    with anyio.fail_after(30):
        while (paused := await agent.waiting(workflow_id, timeout=0.05)) is None:
            await anyio.sleep(0.02)
    return paused


async def waiting_ids(session: str, user: str = "ann") -> list[str]:
    state = await STORE.load(SessionKey(user, session))
    return [pending.id for pending in state.pending_calls]


async def test_a_durable_run_is_run_agents_run() -> None:
    message = plan(("p-1", "add", {"a": 1, "b": 2}), ("p-2", "add", {"a": 3, "b": "x"}))
    durable = await AGENT.run([message], user_id="ann", session_id="same", workflow_id="same")
    plain = await run_agent(Planner(), TOOLS, [message]).result()
    assert isinstance(durable, RunFinished)
    assert isinstance(plain, RunFinished)
    assert durable.messages == plain.messages
    assert durable.reply.text.startswith("3 | ")


async def test_a_finished_run_is_recorded_and_never_runs_again() -> None:
    message = plan(("r-1", "add", {"a": 2, "b": 2}), ("r-2", "add", {"a": 5, "b": 5}))
    first = await AGENT.run([message], session_id="recorded", workflow_id="recorded")
    assert (RUNS["r-1"], RUNS["r-2"], ASKED[message.text]) == (1, 1, 2)
    assert await AGENT.run([message], session_id="recorded", workflow_id="recorded") == first
    assert (RUNS["r-1"], RUNS["r-2"], ASKED[message.text]) == (1, 1, 2)  # nothing ran again


async def test_an_approval_sent_later_settles_the_run_once() -> None:
    message = plan(("a-1", "add", {"a": 1, "b": 1}), ("a-2", "deploy", {"env": "staging"}))
    run = await AGENT.start([message], user_id="ann", session_id="approve", workflow_id="approve")
    paused = await paused_run(AGENT, "approve")
    (pending,) = paused.suspension.pending
    assert (pending.id, pending.message) == ("a-2", "Deploy to staging?")
    # The session and the workflow agree on what waits.
    assert await waiting_ids("approve") == ["a-2"]
    await AGENT.reply("approve", [Confirmation("a-2", approved=True)])
    outcome = await run.outcome()
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "2 | deployed to staging"
    assert RUNS["a-2"] == 1
    assert await waiting_ids("approve") == []
    assert await AGENT.waiting("approve") is None
    with pytest.raises(ResumeError, match="waits for no reply"):
        await AGENT.reply("approve", [Confirmation("a-2", approved=True)])
    assert RUNS["a-2"] == 1


async def test_a_rejection_ends_the_call_denied() -> None:
    message = plan(("d-1", "deploy", {"env": "prod"}))
    run = await AGENT.start([message], user_id="ann", session_id="deny", workflow_id="deny")
    await paused_run(AGENT, "deny")
    await AGENT.reply("deny", [Confirmation("d-1", approved=False)])
    outcome = await run.outcome()
    assert isinstance(outcome, RunFinished)
    result = outcome.messages[2]
    assert isinstance(result, ToolResultBlock)
    assert result.state is ToolResultState.DENIED
    assert RUNS["d-1"] == 0


async def test_a_reply_the_session_refuses_leaves_the_call_waiting() -> None:
    message = plan(("f-1", "deploy", {"env": "qa"}))
    run = await AGENT.start([message], user_id="ann", session_id="refuse", workflow_id="refuse")
    await paused_run(AGENT, "refuse")
    # Edited arguments the tool's schema refuses: the run's settlement step refuses them.
    await AGENT.reply("refuse", [Confirmation("f-1", True, arguments={"env": "mars"})])
    with anyio.fail_after(30):
        while (refusal := await DBOS.get_event_async("refuse", REFUSED, 0.05)) is None:
            await anyio.sleep(0.02)
    assert "edited arguments are invalid" in orjson.loads(refusal)["refused"]
    assert await waiting_ids("refuse") == ["f-1"]
    assert RUNS["f-1"] == 0
    await AGENT.reply("refuse", [Confirmation("f-1", approved=True)])
    outcome = await run.outcome()
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "deployed to qa"
    assert RUNS["f-1"] == 1


async def test_an_edited_approval_is_decided_again_and_waits_anew() -> None:
    message = plan(("e-1", "deploy", {"env": "staging"}))
    run = await AGENT.start([message], user_id="ann", session_id="edit", workflow_id="edit")
    await paused_run(AGENT, "edit")
    await AGENT.reply("edit", [Confirmation("e-1", True, arguments={"env": "prod"})])
    # Approving "staging" does not answer "Deploy to prod?": the call waits anew, under a new id.
    with anyio.fail_after(30):
        while True:
            again = await paused_run(AGENT, "edit")
            if again.suspension.pending[0].id != "e-1":
                break
            await anyio.sleep(0.02)
    (pending,) = again.suspension.pending
    assert pending.id.startswith("e-1#")
    assert pending.message == "Deploy to prod?"
    assert RUNS["e-1"] == 0
    await AGENT.reply("edit", [Confirmation(pending.id, approved=True)])
    outcome = await run.outcome()
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "deployed to prod"
    assert (RUNS["e-1"], RUNS[pending.id]) == (0, 1)  # it ran once, under the id it waited by


async def test_the_clients_result_and_text_go_on_with_the_run() -> None:
    message = plan(("c-1", "pick_file", {"pattern": "*.py"}))
    run = await AGENT.start([message], user_id="ann", session_id="client", workflow_id="client")
    await paused_run(AGENT, "client")
    picked = ToolResultBlock.text("main.py", id="c-1", name="pick_file")
    await AGENT.reply("client", [picked, "and be quick"])
    outcome = await run.outcome()
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "main.py | and be quick"


async def test_a_cancelled_run_stops_and_goes_on_under_its_id() -> None:
    message = plan(("k-1", "add", {"a": 2, "b": 3}), ("k-2", "deploy", {"env": "qa"}))
    with anyio.move_on_after(5) as scope:
        await AGENT.run([message], session_id="cancel", workflow_id="cancel")
    assert scope.cancelled_caught  # waiting for the approval, the run was cancelled
    status = await DBOS.get_workflow_status_async("cancel")
    assert status is not None
    assert status.status == "CANCELLED"
    assert await waiting_ids("cancel", user="") == ["k-2"]  # the call still waits
    run = await AGENT.start([message], session_id="cancel", workflow_id="cancel")
    await AGENT.reply("cancel", [Confirmation("k-2", approved=True)])
    outcome = await run.outcome()
    assert isinstance(outcome, RunFinished)
    assert outcome.reply.text == "5 | deployed to qa"
    assert (RUNS["k-1"], RUNS["k-2"]) == (1, 1)


async def test_a_reply_to_a_call_that_does_not_wait_is_refused_before_it_is_sent() -> None:
    message = plan(("u-1", "deploy", {"env": "qa"}))
    run = await AGENT.start([message], user_id="ann", session_id="unknown", workflow_id="unknown")
    await paused_run(AGENT, "unknown")
    with pytest.raises(ResumeError, match="does not wait for u-9"):
        await AGENT.reply("unknown", [Confirmation("u-9", approved=True)])
    with pytest.raises(ResumeError, match="approved must be True or False"):
        await AGENT.reply("unknown", [Confirmation("u-1", approved="yes")])  # type: ignore[arg-type]
    await AGENT.reply("unknown", [Confirmation("u-1", approved=False)])
    assert isinstance(await run.outcome(), RunFinished)


async def test_no_reply_in_time_ends_the_waiting_calls_with_an_error() -> None:
    message = plan(("t-1", "add", {"a": 1, "b": 1}), ("t-2", "deploy", {"env": "qa"}))
    outcome = await HASTY.run([message], user_id="ann", session_id="late", workflow_id="late")
    assert isinstance(outcome, RunFinished)
    result = outcome.messages[3]
    assert isinstance(result, ToolResultBlock)
    assert (result.id, result.state) == ("t-2", ToolResultState.ERROR)
    assert result.metadata["durable"] == NO_REPLY
    assert "No reply came within 0.5 s" in result.content
    assert RUNS["t-2"] == 0
    assert await waiting_ids("late") == []


async def test_without_a_store_a_run_that_waits_ends_suspended() -> None:
    waits = await PLAIN.run([plan(("n-1", "deploy", {"env": "qa"}))], workflow_id="no-store")
    assert isinstance(waits, RunSuspended)
    assert [p.id for p in waits.paused.suspension.pending] == ["n-1"]
    limited = await PLAIN.run([plan(("n-2", "add", {"a": 1, "b": 1}))], workflow_id="limited")
    assert isinstance(limited, TurnLimitReached)
    last = limited.messages[-1]
    assert isinstance(last, ToolResultBlock)
    assert (last.id, last.content) == ("n-2", "2")
    assert RUNS["n-1"] == 0


def test_a_view_with_a_store_and_no_turns_are_refused() -> None:
    with pytest.raises(ValueError, match="not a view"):
        DurableAgent(Planner(), TOOLS.view(), store=STORE, name="agent-view")
    with pytest.raises(ValueError, match="max_turns"):
        DurableAgent(Planner(), TOOLS, name="agent-turns", max_turns=0)


async def test_a_run_with_a_store_needs_a_session() -> None:
    with pytest.raises(ValueError, match="needs a session_id"):
        await AGENT.start([plan()])
