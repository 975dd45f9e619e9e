"""The permission engine's order and messages, as a table.

Each row: the session's permission state, the tool (read-only or not, its own check's answer),
and the decision expected (behaviour, message, reason). The order: deny rules, ask rules, the
tool's own denial and safety asks, the mode, the tool's own allow, read-only tools, allow
rules, bypass, the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from ferrotool import (
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
    ToolBase,
    ToolCallParam,
    ToolContextState,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool._permissions import engine
from ferrotool._permissions.engine import decide

ALLOW, DENY, ASK, PASS = (
    PermissionBehavior.ALLOW,
    PermissionBehavior.DENY,
    PermissionBehavior.ASK,
    PermissionBehavior.PASSTHROUGH,
)


class Probe(ToolBase[dict[str, Any]]):
    """A tool whose own check answers as told; rules match on the input's ``path``."""

    input_schema = {"type": "object", "properties": {"path": {"type": "string"}}}

    def __init__(self, *, read_only: bool, own: PermissionDecision | None) -> None:
        super().__init__(name="probe", read_only=read_only)
        self.own = own

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        assert self.own is not None
        return self.own

    def match_rule(self, rule_content: str | None, tool_input: dict[str, Any]) -> bool:
        return str(tool_input.get("path", "")).startswith(rule_content or "")

    async def call(self, param: ToolCallParam[dict[str, Any]]) -> None:
        """Never called here."""


def rule(behavior: PermissionBehavior, content: str | None = None) -> PermissionRule:
    return PermissionRule(tool_name="probe", behavior=behavior, rule_content=content)


@dataclass(frozen=True)
class Row:
    name: str
    mode: PermissionMode = PermissionMode.DEFAULT
    rules: tuple[PermissionRule, ...] = ()
    read_only: bool = False
    own: PermissionDecision | None = None
    path: str = "/work/a.txt"
    behavior: PermissionBehavior = ALLOW
    message: str = ""
    reason: str | None = None


SAFETY = PermissionDecision.ask("touches .env", reason="safety: dangerous path")
TOOL_DENY = PermissionDecision.deny("never here", reason="tool says no")
TOOL_ALLOW = PermissionDecision.allow("tool says yes")
TOOL_ASK = PermissionDecision.ask("tool asks", reason="unsure")
EMPTY = PermissionDecision.passthrough("no opinion")

ROWS = [
    Row(
        "deny rule first",
        rules=(rule(DENY, "/work"), rule(ALLOW)),
        own=TOOL_ALLOW,
        behavior=DENY,
        message="Permission to use probe has been denied",
        reason="Rule: /work",
    ),
    Row(
        "deny rule beats bypass",
        mode=PermissionMode.BYPASS,
        rules=(rule(DENY),),
        behavior=DENY,
        message="Permission to use probe has been denied",
        reason="Rule: probe",
    ),
    Row(
        "empty rule content matches",
        rules=(rule(DENY, ""),),
        behavior=DENY,
        message="Permission to use probe has been denied",
        reason="Rule: probe",
    ),
    Row(
        "a rule that does not match is skipped",
        rules=(rule(DENY, "/etc"),),
        own=TOOL_ALLOW,
        behavior=ALLOW,
        message="tool says yes",
    ),
    Row(
        "ask rule second",
        rules=(rule(ASK, "/work"), rule(ALLOW)),
        behavior=ASK,
        message="Permission required for probe",
        reason="Rule: /work",
    ),
    Row(
        "tool deny beats bypass",
        mode=PermissionMode.BYPASS,
        own=TOOL_DENY,
        behavior=DENY,
        message="never here",
        reason="tool says no",
    ),
    Row(
        "safety ask survives bypass",
        mode=PermissionMode.BYPASS,
        own=SAFETY,
        behavior=ASK,
        message="touches .env",
        reason="safety: dangerous path",
    ),
    Row(
        "safety ask comes before explore",
        mode=PermissionMode.EXPLORE,
        read_only=True,
        own=SAFETY,
        behavior=ASK,
        message="touches .env",
        reason="safety: dangerous path",
    ),
    Row(
        "explore allows read-only",
        mode=PermissionMode.EXPLORE,
        read_only=True,
        own=TOOL_ASK,
        behavior=ALLOW,
        message="Permission granted for probe (explore mode - read-only tool)",
        reason="Explore mode allows read-only operations",
    ),
    Row(
        "explore denies the rest",
        mode=PermissionMode.EXPLORE,
        own=TOOL_ALLOW,
        behavior=DENY,
        message="Permission denied for probe (explore mode is read-only)",
        reason="Explore mode does not allow modifications",
    ),
    Row(
        "accept edits allows read-only",
        mode=PermissionMode.ACCEPT_EDITS,
        read_only=True,
        own=TOOL_ASK,
        behavior=ALLOW,
        message="Permission granted for probe (accept edits mode - read-only tool)",
        reason="Accept edits mode allows read-only operations",
    ),
    Row(
        "tool allow stands",
        mode=PermissionMode.DONT_ASK,
        own=TOOL_ALLOW,
        behavior=ALLOW,
        message="tool says yes",
    ),
    Row(
        "read-only with no opinion runs",
        mode=PermissionMode.DONT_ASK,
        read_only=True,
        own=EMPTY,
        behavior=ALLOW,
        message="Permission granted for probe (read-only tool)",
        reason="Read-only tools run without asking",
    ),
    Row(
        "allow rule",
        mode=PermissionMode.DONT_ASK,
        rules=(rule(ALLOW, "/work"),),
        own=TOOL_ASK,
        behavior=ALLOW,
        message="Permission granted for probe",
        reason="Rule: /work",
    ),
    Row(
        "bypass allows",
        mode=PermissionMode.BYPASS,
        own=TOOL_ASK,
        behavior=ALLOW,
        message="Permission granted for probe (bypass mode)",
        reason="Bypass mode allows all operations",
    ),
    Row(
        "dont_ask denies the default ask",
        mode=PermissionMode.DONT_ASK,
        own=TOOL_ASK,
        behavior=DENY,
        message="Permission denied for probe (dont_ask mode - user not available)",
        reason="User is not available to answer permission prompts",
    ),
    Row(
        "dont_ask keeps an ask rule's ask",
        mode=PermissionMode.DONT_ASK,
        rules=(rule(ASK),),
        behavior=ASK,
        message="Permission required for probe",
        reason="Rule: probe",
    ),
    Row(
        "the default asks",
        rules=(rule(ALLOW, "/etc"),),
        own=EMPTY,
        behavior=ASK,
        message="Permission required for probe",
        reason="Mode: default",
    ),
    Row(
        "the default asks in accept edits for a writer",
        mode=PermissionMode.ACCEPT_EDITS,
        own=EMPTY,
        behavior=ASK,
        message="Permission required for probe",
        reason="Mode: accept_edits",
    ),
    Row(
        "trivial: the tool's ask asks",
        own=TOOL_ASK,
        behavior=ASK,
        message="tool asks",
        reason="unsure",
    ),
    Row(
        "trivial: the tool's deny denies",
        own=TOOL_DENY,
        behavior=DENY,
        message="never here",
        reason="tool says no",
    ),
    Row(
        "trivial: no opinion runs",
        own=EMPTY,
        behavior=ALLOW,
        message="allowed: no permission rules apply to this session",
    ),
    Row(
        "trivial: no check of its own runs",
        own=None,
        behavior=ALLOW,
        message="allowed: no permission rules apply to this session",
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
async def test_the_engines_order_and_messages(row: Row) -> None:
    state = PermissionContextState(mode=row.mode).with_rules(row.rules)
    tool = Probe(read_only=row.read_only, own=row.own)
    decision = await decide(
        tool,
        {"path": row.path},
        PermissionContext(state=state),
        own_check=row.own is not None,
    )
    assert (decision.behavior, decision.message) == (row.behavior, row.message)
    if row.reason is not None:
        assert decision.reason == row.reason
    if decision.behavior is ASK:  # every ask offers rules (the default: allow the tool)
        assert decision.suggested_rules == (
            PermissionRule(tool_name="probe", behavior=ALLOW, source="suggested"),
        )


def test_modes_and_behaviors_parse_case_insensitively() -> None:
    assert PermissionBehavior.parse("ALLOW") is ALLOW
    assert PermissionMode.parse("Dont_Ask") is PermissionMode.DONT_ASK
    with pytest.raises(ValueError, match="Unknown PermissionBehavior: maybe"):
        PermissionBehavior.parse("maybe")
    with pytest.raises(ValueError, match="Unknown PermissionMode: sometimes"):
        PermissionMode.parse("sometimes")


def test_rules_added_twice_are_kept_once_and_passthrough_rules_ignored() -> None:
    state = PermissionContextState().with_rules([rule(ALLOW), rule(ALLOW), rule(PASS)])
    assert state.allow_rules == {"probe": (rule(ALLOW),)}
    assert not state.is_trivial
    assert PermissionContextState().with_rules([rule(PASS)]).is_trivial


class _Counted(type):
    """A metaclass that counts ``isinstance`` checks against its classes."""

    checks = 0

    def __instancecheck__(cls, instance: object) -> bool:
        _Counted.checks += 1
        return True


async def test_the_gate_makes_no_protocol_check_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a tool has rule matching and suggestions is decided when it is compiled.

    A runtime protocol check costs about as much as the rest of a gated call.
    """
    _Counted.checks = 0
    kit = Toolkit()
    kit.register(Probe(read_only=False, own=PermissionDecision.allow()))
    state = PermissionContextState(mode=PermissionMode.BYPASS).with_rules([rule(ASK, "/etc")])
    view = kit.snapshot().view(ToolContextState(permissions=state))
    trivial = kit.snapshot().view()
    monkeypatch.setattr(engine, "Checked", _Counted("Checked", (), {}))
    for path in ("/tmp/a", "/etc/passwd"):
        call = ToolUseBlock("c1", "probe", orjson.dumps({"path": path}).decode())
        await view.call_tool(call)
        await trivial.call_tool(call)
    assert _Counted.checks == 0
    asked = await view.call_tool(ToolUseBlock("c2", "probe", '{"path": "/etc/hosts"}'))
    assert asked.needs_approval  # its own match_rule still applies the ask rule
    ran = await view.call_tool(ToolUseBlock("c3", "probe", '{"path": "/tmp/b"}'))
    assert ran.state is ToolResultState.SUCCESS
