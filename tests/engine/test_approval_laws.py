"""The approval laws, over random sequences of suspensions and replies.

Replies are valid, rejected, edited, malformed, for unknown or settled calls, or duplicated;
calls come with ids a provider repeats. Whatever the sequence: each waiting call runs at most
once, a refused reply consumes nothing, and an accepted one settles exactly its call (an edit
that asks again leaves the same work waiting under a new id).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from ferrotool import (
    Confirmation,
    InMemorySessionStore,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
    Reply,
    ResumeError,
    RuntimeContext,
    SessionKey,
    ToolBase,
    ToolCallParam,
    Toolkit,
    ToolUseBlock,
    update_session,
)

CONTEXT = RuntimeContext(user_id="ann", session_id="s1")
KEY = SessionKey("ann", "s1")
IDS = ["a", "b", "gemini-call-0"]
KINDS = [
    "approve",
    "reject",
    "edit",
    "bad_schema",
    "too_big",
    "nan",
    "unknown",
    "duplicate",
    "stale",
]


class Job(ToolBase[dict[str, Any]]):
    """Runs a job once per token; level 0 asks plainly, level 1 for safety, level 2 is denied."""

    name = "job"
    input_schema = {
        "type": "object",
        "properties": {"token": {"type": "string"}, "level": {"enum": [0, 1, 2]}},
        "required": ["token", "level"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[str] = []

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        if tool_input["level"] == 1:
            return PermissionDecision.ask("Run at level 1?", reason="safety: level 1")
        return PermissionDecision.passthrough("job")

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        return rule_content == str(tool_input["level"])

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> str:
        self.runs.append(param.input["token"])
        return "done"


suspend = st.tuples(
    st.just("suspend"),
    st.lists(st.tuples(st.sampled_from(IDS), st.integers(0, 2)), min_size=1, max_size=3),
)
reply = st.tuples(st.just("reply"), st.integers(0, 7), st.sampled_from(KINDS), st.integers(0, 2))
plans = st.lists(st.one_of(suspend, reply), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(plans)
def test_each_waiting_call_runs_at_most_once_and_a_refused_reply_consumes_nothing(
    plan: list[tuple[Any, ...]],
) -> None:
    async def run() -> None:
        job = Job()
        kit = Toolkit()
        kit.register(job)
        registry = kit.snapshot()
        store = InMemorySessionStore()
        deny = PermissionRule(
            tool_name="job", rule_content="2", behavior=PermissionBehavior.DENY, source="user"
        )
        await update_session(
            store, KEY, lambda state: state.with_permissions(state.permissions.with_rules([deny]))
        )
        must_run: set[str] = set()
        never_runs: set[str] = set()
        settled: list[str] = []
        tokens = iter(range(10**6))

        for step in plan:
            before = await store.load(KEY)
            waiting = {p.id: p for p in before.pending_calls}
            if step[0] == "suspend":
                calls = []
                for call_id, level in step[1]:
                    token = f"t{next(tokens)}"
                    calls.append(ToolUseBlock.of(call_id, "job", {"token": token, "level": level}))
                    if level == 2:
                        never_runs.add(token)
                view = await registry.open_view(CONTEXT, store)
                await view.call_tools(calls, CONTEXT)
                after = await store.load(KEY)
                ids = [p.id for p in after.pending_calls]
                assert len(ids) == len(set(ids))  # never two waiting calls with one id
                assert after.pending_calls[: len(before.pending_calls)] == before.pending_calls
            else:
                _, pick, kind, level = step
                ids = list(waiting)
                target = waiting[ids[pick % len(ids)]] if ids else None
                if kind == "stale" and settled:  # an id settled before; it may wait again
                    stale = settled[pick % len(settled)]
                    target = waiting.get(stale)
                    kind = "approve" if target is not None else "unknown"
                replies, effect = _replies(kind, target, level)
                expect_refusal = effect == "refused" or any(
                    isinstance(r, Confirmation) and r.call_id not in waiting for r in replies
                )
                try:
                    await registry.resume(CONTEXT, store, replies)
                except ResumeError:
                    assert expect_refusal, (kind, replies)
                    after = await store.load(KEY)
                    assert (after, after.revision) == (before, before.revision)
                else:
                    assert not expect_refusal, (kind, replies)
                    assert target is not None
                    token = str(target.call.input["token"])
                    after = await store.load(KEY)
                    left = {p.id: p for p in after.pending_calls}
                    assert target.id not in left
                    for other in waiting.values():
                        if other.id != target.id:
                            assert left[other.id] == other
                    new = [p for p in left.values() if p.id not in waiting]
                    settled.append(target.id)
                    if effect == "runs":
                        must_run.add(token)
                        assert new == []
                    elif effect == "denied":
                        never_runs.add(token)
                        assert new == []
                    else:  # asked again: the same work waits under a new id
                        (again,) = new
                        assert again.call.input["token"] == token
                        assert again.id != target.id
            assert max(Counter(job.runs).values(), default=0) <= 1
            assert not never_runs & set(job.runs)
            assert must_run <= set(job.runs)

        # Whatever still waits is approved as asked: it runs, once.
        for pending in (await store.load(KEY)).pending_calls:
            await registry.resume(CONTEXT, store, [Confirmation(pending.id, True)])
            must_run.add(str(pending.call.input["token"]))
        assert (await store.load(KEY)).pending_calls == ()
        assert Counter(job.runs) == Counter(must_run)
        assert not never_runs & must_run

    anyio.run(run)


def _replies(kind: str, target: Any, level: int) -> tuple[list[Reply], str]:
    """The replies of a step, and what they should do: runs, denied, asked, refused."""
    if target is None or kind in ("unknown", "stale"):
        return [Confirmation("nobody", True)], "refused"
    token, was = target.call.input["token"], target.call.input["level"]
    if kind == "approve":
        return [Confirmation(target.id, True)], "runs"
    if kind == "reject":
        return [Confirmation(target.id, False)], "denied"
    if kind == "duplicate":
        return [Confirmation(target.id, True), Confirmation(target.id, True)], "refused"
    bad: dict[str, object] = {
        "bad_schema": {"token": token, "level": 7},
        "too_big": {"token": token, "level": 2**70},
        "nan": {"token": token, "level": math.nan},
    }
    if kind in bad:
        arguments = bad[kind]
        assert isinstance(arguments, dict)
        return [Confirmation(target.id, True, arguments=arguments)], "refused"
    edited = Confirmation(target.id, True, arguments={"token": token, "level": level})
    if level == was:
        return [edited], "runs"
    return [edited], "denied" if level == 2 else "asked"
