"""``ferrotool demo --agent``: the agent loop over the demo toolkit, printed as its event stream.

A scripted model makes one turn of five calls at once: two plain tools that run together, an
order that the session's permission rules send to a person for approval, the client's own
``geolocate`` tool that the client must run, and a ``pick`` that a rule denies. The run pauses;
a person approves the order with an item taken off (edited arguments, validated and decided by
the rules again) and the client answers ``geolocate``; the run resumes, the edited order runs
and returns a record (`Receipt`: its result carries it as JSON, text and structured value), and
the model answers from every result.
"""

from __future__ import annotations

from typing import Final, TextIO

import orjson

from ferrotool._execution.batch import Confirmation
from ferrotool._execution.events import (
    AllToolsDenied,
    ConfirmationRequired,
    ConfirmationResult,
    ExternalExecutionRequired,
    ExternalExecutionResult,
    ToolCallFinished,
    ToolCallStarted,
)
from ferrotool._execution.resume import Reply
from ferrotool._permissions.decisions import PermissionBehavior, PermissionRule
from ferrotool._requests.config import ToolRequestConfig
from ferrotool._session.memory import InMemorySessionStore
from ferrotool._session.state import session_key, update_session
from ferrotool._tools.external import SchemaOnlyTool
from ferrotool._values.calls import ToolResultBlock, ToolUseBlock
from ferrotool._values.content import TextBlock
from ferrotool._values.context import RuntimeContext, ToolProgress
from ferrotool.agent import (
    AgentEvent,
    AgentRun,
    ModelReply,
    ModelRequest,
    ModelResponded,
    RunFinished,
    RunSuspended,
    ScriptedModel,
    TurnLimitReached,
    UserMessage,
    results_in,
    resume_agent,
    run_agent,
)
from ferrotool.cli.demo import Shop, demo_toolkit

QUESTION: Final = (
    "Weather in Paris, 10 EUR in USD, where am I? Order two A1 and one B2, and pick b."
)
GEOLOCATE: Final = SchemaOnlyTool(
    {
        "name": "geolocate",
        "description": "Where the user is (the client's own tool; it runs on the client).",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    }
)
CONTEXT: Final = RuntimeContext.of(
    Shop("Corner Shop", "EUR"), user_id="demo-user", session_id="demo-session"
).with_value(ToolRequestConfig([GEOLOCATE]))
ORDER: Final = (
    '{"items": [{"sku": "A1", "qty": 2, "price": 9.5}, {"sku": "B2", "qty": 1, "price": 20}]}'
)
FIRST_TURN: Final = ModelReply(
    "Let me look all of that up.",
    (
        ToolUseBlock("call_1", "get_weather", '{"city": "Paris", "days": 2}'),
        ToolUseBlock("call_2", "convert", '{"amount": 10, "rate": 1.08}'),
        ToolUseBlock("call_3", "geolocate", "{}"),
        ToolUseBlock("call_4", "place_order", ORDER),
        ToolUseBlock("call_5", "pick", '{"option": "b"}'),
    ),
)
EDITED_ORDER: Final[dict[str, object]] = {
    "items": [{"sku": "A1", "qty": 2, "price": 9.5}],
    "note": "without B2",
}
"""The order as the person approves it: the B2 line taken off."""


def _answer(request: ModelRequest) -> ModelReply:
    """The model's last turn: it answers from the results it was given."""
    lines = [f"- {result.name}: {result.content}" for result in results_in(request)]
    return ModelReply("Here is everything:\n" + "\n".join(lines))


def _shown(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _line(event: AgentEvent) -> str | None:
    """One printed line per event (None for the events the demo does not show)."""
    if isinstance(event, ModelResponded):
        calls = ", ".join(f"{call.name}({call.arguments})" for call in event.reply.calls)
        said = f' says "{_shown(event.reply.text)}"' if event.reply.text else ""
        tail = f" and calls {len(event.reply.calls)} tools at once" if event.reply.calls else ""
        return f"[turn {event.turn}] model{said}{tail}" + (
            f"\n    {_shown(calls, 200)}" if calls else ""
        )
    if isinstance(event, ToolCallStarted):
        return f"  started   {event.call.id} {event.call.name}"
    if isinstance(event, ToolProgress):
        chunk = event.chunk
        text = chunk.text if isinstance(chunk, TextBlock) else str(chunk)
        return f"  progress  {event.call_id} {event.tool_name}: {_shown(text)}"
    if isinstance(event, ToolCallFinished):
        result = event.result
        state = "waiting" if result.is_suspended or result.needs_approval else result.state.value
        line = f"  finished  {result.id} {result.name}: {state}: {_shown(result.content)}"
        if isinstance(result.structured, dict):
            value = orjson.dumps(result.structured).decode()
            line += f"\n  structured {result.id} {result.name}: {_shown(value, 200)}"
        return line
    if isinstance(event, ConfirmationRequired):
        asks = "; ".join(f"{p.call.name} ({p.message})" for p in event.pending)
        return f"  approval needed: {asks}"
    if isinstance(event, ExternalExecutionRequired):
        return f"  the client must run: {', '.join(call.name for call in event.calls)}"
    if isinstance(event, AllToolsDenied):
        return "  every call was denied"
    if isinstance(event, ConfirmationResult):
        answers = [
            f"{c.name} approved" + (f" as {c.arguments}" if c.arguments != ORDER else "")
            for c in event.approved
        ]
        answers += [f"{c.name} rejected" for c in event.rejected]
        return f"  answered: {', '.join(answers)}"
    if isinstance(event, ExternalExecutionResult):
        return f"  the client ran: {', '.join(str(r.name) for r in event.results)}"
    if isinstance(event, RunSuspended):
        waiting = ", ".join(p.call.name for p in event.paused.suspension.pending)
        return f"== paused after turn {event.paused.turns}: waiting for {waiting}"
    if isinstance(event, RunFinished):
        return "== finished:\n" + "\n".join(
            f"   | {line}" for line in event.reply.text.splitlines()
        )
    if isinstance(event, TurnLimitReached):
        return "== stopped: turn limit"
    return None  # a streaming model's deltas: this model does not stream


async def _print(run: AgentRun, out: TextIO) -> AgentEvent | None:
    last: AgentEvent | None = None
    async with run:
        async for event in run:
            line = _line(event)
            if line is not None:
                out.write(line + "\n")
            last = event
    return last


async def run_demo(out: TextIO) -> None:
    """Run the scripted agent and print its events."""
    registry = demo_toolkit().snapshot()
    store = InMemorySessionStore()
    rules = [  # the session's own rules: orders need a person, the client's tool does not, and
        # picking is not allowed
        PermissionRule(tool_name="place_order", behavior=PermissionBehavior.ASK, source="demo"),
        PermissionRule(tool_name="geolocate", behavior=PermissionBehavior.ALLOW, source="demo"),
        PermissionRule(tool_name="pick", behavior=PermissionBehavior.DENY, source="demo"),
    ]
    await update_session(
        store,
        session_key(CONTEXT),
        lambda state: state.with_permissions(state.permissions.with_rules(rules)),
    )
    model = ScriptedModel([FIRST_TURN, _answer])
    out.write(f"ferrotool demo --agent: a scripted model over {len(registry)} tools\n")
    out.write(f"> user: {QUESTION}\n")
    view = await registry.open_view(CONTEXT, store)
    last = await _print(run_agent(model, view, [UserMessage(QUESTION)], CONTEXT), out)
    if not isinstance(last, RunSuspended):
        return
    out.write("-- a person approves place_order without B2; the client answers geolocate\n")
    replies: list[Reply] = [
        Confirmation("call_4", approved=True, arguments=EDITED_ORDER),
        ToolResultBlock.success("48.8566 N, 2.3522 E (Paris)", id="call_3"),
    ]
    view = await registry.open_view(CONTEXT, store)
    await _print(resume_agent(model, view, last.paused, replies, CONTEXT), out)


__all__ = ["run_demo"]
