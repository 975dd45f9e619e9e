"""The agent loop across approvals that ask again and calls that wait under ids of ferrotool's."""

from __future__ import annotations

from typing import Any

from ferrotool import (
    Confirmation,
    InMemorySessionStore,
    PermissionContext,
    PermissionDecision,
    RuntimeContext,
    SessionKey,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool.agent import (
    ModelReply,
    PausedRun,
    RunFinished,
    RunSuspended,
    ScriptedModel,
    UserMessage,
    results_in,
    resume_agent,
    run_agent,
)
from ferrotool.providers import openai_chat

CONTEXT = RuntimeContext(user_id="ann", session_id="s1")


class Deploy(ToolBase[dict[str, Any]]):
    """Deploys; asks first, naming the environment."""

    name = "deploy"
    input_schema = {"type": "object", "properties": {"env": {"type": "string"}}}

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        return PermissionDecision.ask(f"Deploy to {tool_input.get('env')}?")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        return f"deployed to {param.input.get('env')}"


def _answer(request: Any) -> ModelReply:
    return ModelReply(" | ".join(r.content for r in results_in(request)))


async def test_a_call_asked_again_takes_its_place_in_the_transcript() -> None:
    kit = Toolkit()
    kit.register(Deploy())
    registry = kit.snapshot()
    store = InMemorySessionStore()
    turn = ModelReply(
        "",
        (
            ToolUseBlock("c1", "deploy", '{"env": "staging"}'),
            ToolUseBlock("c1", "deploy", '{"env": "qa"}'),  # the model repeated an id
        ),
    )
    model = ScriptedModel([turn, _answer])
    view = await registry.open_view(CONTEXT, store)
    first = await run_agent(model, view, [UserMessage("Ship it.")], CONTEXT).result()
    assert isinstance(first, RunSuspended)
    one, two = first.paused.suspension.pending
    assert one.id == "c1" != two.id
    assert [r.id for r in first.paused.results] == [one.id, two.id]

    # The first approval is edited: it asks again, and the run pauses under the new id.
    view = await registry.open_view(CONTEXT, store)
    edited = Confirmation("c1", True, arguments={"env": "prod"})
    again = await resume_agent(model, view, first.paused, [edited], CONTEXT).result()
    assert isinstance(again, RunSuspended)
    paused = PausedRun.from_json(again.paused.to_json())
    asked = {p.message: p.id for p in paused.suspension.pending}
    assert set(asked) == {"Deploy to prod?", "Deploy to qa?"}
    assert [r.id for r in paused.results] == [asked["Deploy to prod?"], two.id]

    view = await registry.open_view(CONTEXT, store)
    replies = [Confirmation(call_id, True) for call_id in asked.values()]
    done = await resume_agent(model, view, paused, replies, CONTEXT).result()
    assert isinstance(done, RunFinished)
    assert done.reply.text == "deployed to prod | deployed to qa"
    results = [m for m in done.messages if isinstance(m, ToolResultBlock)]
    assert [r.state for r in results] == [ToolResultState.SUCCESS] * 2
    assert [dict(m)["tool_call_id"] for m in openai_chat.result_messages(results)] == ["c1", "c1"]
    assert (await store.load(SessionKey("ann", "s1"))).pending_calls == ()
