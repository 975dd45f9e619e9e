"""Laws of containment, for generated batches with a raise injected at a random step.

A batch mixes async, sync (worker thread), sync-inline, external and permission-checking tools;
one call raises at one of its steps: argument validation, ``check_permissions``, ``match_rule``,
``generate_suggestions``, a middleware, the tool, or the conversion of its value. Then:

* every call is paired with exactly one result, in call order, each with its call's id;
* the injected call's result is an error naming the step;
* every other result equals what it is in the same batch without the injection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import orjson
from hypothesis import given
from hypothesis import strategies as st

from ferrotool import (
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionDecision,
    PermissionRule,
    RuntimeContext,
    SchemaOnlyTool,
    ToolBase,
    ToolCallFinished,
    ToolCallParam,
    ToolContextState,
    ToolEvent,
    Toolkit,
    ToolkitConfig,
    ToolRequestConfig,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    ToolView,
    tool,
)
from ferrotool._execution.middleware import Next

FUNCTION_STEPS = ("middleware", "tool", "conversion")
STEPS_BY_KIND: dict[str, tuple[str, ...]] = {
    "async": FUNCTION_STEPS,
    "sync": FUNCTION_STEPS,
    "inline": FUNCTION_STEPS,
    "external": ("middleware",),
    "checked": (
        "validation",
        "check_permissions",
        "match_rule",
        "generate_suggestions",
        "middleware",
        "tool",
        "conversion",
    ),
}


class Unconvertible:
    """No JSON, and no text."""

    def __str__(self) -> str:
        raise RuntimeError("no text")


def _act(name: str, fail: str, n: int) -> object:
    if fail == "tool":
        raise RuntimeError(f"{name} broke")
    if fail == "conversion":
        return Unconvertible()
    return {"tool": name, "n": n}


@tool
async def run_async(n: int, fail: str = "") -> object:
    """Awaited."""
    await anyio.sleep(0)
    return _act("run_async", fail, n)


@tool
def run_sync(n: int, fail: str = "") -> object:
    """On a worker thread."""
    return _act("run_sync", fail, n)


@tool(inline=True)
def run_inline(n: int, fail: str = "") -> object:
    """On the caller's thread."""
    return _act("run_inline", fail, n)


class Checked(ToolBase[dict[str, Any]]):
    """A tool with its own parser, permission check, rule matching and suggestions."""

    name = "checked"
    input_schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "fail": {"type": "string"},
            "ask": {"type": "boolean"},
        },
        "required": ["n"],
    }

    def parse_arguments(self, arguments: str | bytes) -> dict[str, Any]:
        if b'"validation"' in (arguments if isinstance(arguments, bytes) else arguments.encode()):
            raise RuntimeError("the parser broke")
        return super().parse_arguments(arguments)

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        fail = tool_input.get("fail")
        if fail == "check_permissions":
            raise RuntimeError("check broke")
        if tool_input.get("ask") or fail == "generate_suggestions":
            return PermissionDecision.ask(f"may I run {tool_input['n']}?")
        return PermissionDecision.allow("fine")

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        if tool_input.get("fail") == "match_rule":
            raise RuntimeError("match broke")
        return False

    def generate_suggestions(self, tool_input: dict[str, Any]) -> tuple[PermissionRule, ...]:
        if tool_input.get("fail") == "generate_suggestions":
            raise RuntimeError("suggestions broke")
        return (PermissionRule(tool_name="checked", behavior=PermissionBehavior.ALLOW),)

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> object:
        return _act("checked", str(param.input.get("fail", "")), int(param.input["n"]))


EXTERNAL = SchemaOnlyTool(
    {
        "name": "client_side",
        "parameters": {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "fail": {"type": "string"}},
        },
    }
)
NAMES = {
    "async": "run_async",
    "sync": "run_sync",
    "inline": "run_inline",
    "external": "client_side",
    "checked": "checked",
}


async def breaks(call: ToolUseBlock, context: RuntimeContext, next: Next) -> ToolResultBlock:
    """The middleware: raises for a call whose arguments ask it to."""
    raw: str | bytes = call.arguments
    text = raw.decode() if isinstance(raw, bytes) else raw
    if '"middleware"' in text:
        raise RuntimeError("middleware broke")
    return await next(call, context)


def _view() -> ToolView:
    kit = Toolkit(ToolkitConfig(middleware=[breaks], max_threads=4))
    for item in (run_async, run_sync, run_inline, Checked()):
        kit.register(item)
    rules = [
        # A rule with content makes the engine call `match_rule` on every checked call.
        PermissionRule(tool_name="checked", behavior=PermissionBehavior.DENY, rule_content="x"),
        *(
            PermissionRule(tool_name=name, behavior=PermissionBehavior.ALLOW)
            for name in ("run_async", "run_sync", "run_inline")
        ),
    ]
    state = ToolContextState(permissions=PermissionContextState().with_rules(rules))
    return kit.snapshot().view(state, ToolRequestConfig([EXTERNAL]))


VIEW = _view()


@dataclass(frozen=True)
class Planned:
    kind: str
    ask: bool


plans = st.lists(
    st.builds(
        Planned,
        kind=st.sampled_from(sorted(STEPS_BY_KIND)),
        ask=st.booleans(),
    ),
    min_size=1,
    max_size=8,
)


def _call(index: int, plan: Planned, fail: str) -> ToolUseBlock:
    arguments: dict[str, object] = {"n": index}
    if plan.kind == "checked" and plan.ask:
        arguments["ask"] = True
    if fail:
        arguments["fail"] = fail
    return ToolUseBlock(f"call-{index}", NAMES[plan.kind], orjson.dumps(arguments).decode())


def _names_step(result: ToolResultBlock, step: str) -> bool:
    if result.state is not ToolResultState.ERROR:
        return False
    if step == "tool":
        return "Tool execution failed" in result.content
    return result.metadata.get("step") == step


@given(plans, st.data(), st.booleans(), st.booleans())
def test_a_raise_at_any_step_is_that_calls_result_alone(
    batch: list[Planned], data: st.DataObject, parallel: bool, streamed: bool
) -> None:
    victim = data.draw(st.integers(min_value=0, max_value=len(batch) - 1), label="victim")
    plan = batch[victim]
    steps: tuple[str, ...]
    if plan.kind == "checked" and plan.ask:
        steps = (
            "validation",
            "check_permissions",
            "match_rule",
            "generate_suggestions",
            "middleware",
        )
    else:
        steps = STEPS_BY_KIND[plan.kind]
    step = data.draw(st.sampled_from(steps), label="step")
    clean = [_call(i, p, "") for i, p in enumerate(batch)]
    injected = [_call(i, p, step if i == victim else "") for i, p in enumerate(batch)]

    async def run(calls: list[ToolUseBlock]) -> tuple[ToolResultBlock, ...]:
        if not streamed:
            return (await VIEW.call_tools(calls, parallel=parallel)).results
        finished: dict[str, ToolResultBlock] = {}
        events: list[ToolEvent] = []
        async with VIEW.stream_tools(calls, parallel=parallel) as stream:
            events.extend([event async for event in stream])
        for event in events:
            if isinstance(event, ToolCallFinished):
                assert event.result.id not in finished  # one result per call
                finished[event.result.id or ""] = event.result
        assert sorted(finished) == sorted(call.id for call in calls)
        return tuple(finished[call.id] for call in calls)

    async def both() -> tuple[tuple[ToolResultBlock, ...], tuple[ToolResultBlock, ...]]:
        with anyio.fail_after(10):
            return await run(clean), await run(injected)

    expected, got = anyio.run(both)
    assert [r.id for r in got] == [c.id for c in injected]
    assert _names_step(got[victim], step), (step, got[victim])
    for index, (before, after) in enumerate(zip(expected, got, strict=True)):
        if index != victim:
            assert after == before, (index, before, after)
