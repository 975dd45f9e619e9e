"""The permission engine: whether one call may run, asks first, or is denied.

`decide` is a function of the tool, its input and the session's `PermissionContextState`
(plus the tool's own `check_permissions`, the one step that may await). The order:

1. **deny rules** of the tool: the first that matches denies;
2. **ask rules**: the first that matches asks, with the tool's suggestions;
3. **the tool's own check**: a denial stands, and an ask whose reason names safety (a dangerous
   path, say) stands in every mode, ``BYPASS`` included;
4. **the mode**: ``EXPLORE`` allows read-only tools and denies the rest, ``ACCEPT_EDITS``
   allows read-only tools;
5. the tool's own **allow** stands;
6. a **read-only** tool (its check had no opinion) is allowed: reading needs no approval;
7. **allow rules**: the first that matches allows;
8. ``BYPASS`` allows;
9. the **default**: ``DONT_ASK`` denies (nobody is there to ask), every other mode asks.

A session whose permission state is trivial (default mode, no rules, no working directories)
takes a lighter path: only the tool's own check counts, its ask asking and its denial denying;
everything else runs. A rule matches a call when its content is empty or ``None``, or when the
tool's `match_rule` says so.

This order is AgentScope's, with two changes the tool-chapter asks for: a safety ask and the
tool's own denial come before the mode (so ``EXPLORE`` never reads a dangerous path without
asking), and read-only tools run without asking.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

from ferrotool._permissions.decisions import (
    PermissionBehavior,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)
from ferrotool._permissions.state import PermissionContext
from ferrotool._values.spec import ToolSpec


class Subject(Protocol):
    """What the engine reads of a tool: its spec (name, read-only flag)."""

    @property
    def spec(self) -> ToolSpec:
        """The tool's spec."""
        ...


@runtime_checkable
class Checked(Protocol):
    """A tool with a permission check of its own, rule matching and suggestions (`ToolBase`)."""

    async def check_permissions(
        self, tool_input: Any, context: PermissionContext
    ) -> PermissionDecision:
        """The tool's own decision about this input."""
        ...

    def match_rule(self, rule_content: str | None, tool_input: Any) -> bool:
        """Whether a rule's content matches this input."""
        ...

    def generate_suggestions(self, tool_input: Any) -> tuple[PermissionRule, ...]:
        """Rules to offer a user who is asked about this call."""
        ...


async def decide(
    tool: Subject,
    tool_input: object,
    context: PermissionContext,
    *,
    own_check: bool,
) -> PermissionDecision:
    """Decide one call (see the module's docstring for the order).

    Args:
        tool: The tool (its own check, rule matching and suggestions are used when it has them).
        tool_input: The validated input.
        context: The session's permission state and the call's runtime context.
        own_check: Whether the tool's ``check_permissions`` is its own (else it is not called:
            the default has no opinion).
    """
    checked = tool if isinstance(tool, Checked) else None
    return await decide_known(tool, checked, tool_input, context, own_check=own_check)


async def decide_known(
    tool: Subject,
    checked: Checked | None,
    tool_input: object,
    context: PermissionContext,
    *,
    own_check: bool,
) -> PermissionDecision:
    """`decide`, with the tool as a `Checked` (or ``None``) found out beforehand.

    A runtime protocol check costs about as much as the rest of a gated call: the pipeline
    makes it once, when the tool is compiled (`CompiledTool.checked`).
    """
    decision = await _decide(tool, checked, tool_input, context, own_check)
    if decision.behavior is PermissionBehavior.ASK and not decision.suggested_rules:
        # Every ask offers the person rules to stop being asked.
        suggestions = _suggestions(checked, tool.spec.name, tool_input)
        return dataclasses.replace(decision, suggested_rules=suggestions)
    return decision


async def _decide(
    tool: Subject,
    checked: Checked | None,
    tool_input: object,
    context: PermissionContext,
    own_check: bool,
) -> PermissionDecision:
    name = tool.spec.name
    state = context.state
    if state.is_trivial:
        if checked is None or not own_check:
            return _GRANTED_TRIVIAL
        decision = await checked.check_permissions(tool_input, context)
        if decision.behavior in (PermissionBehavior.ASK, PermissionBehavior.DENY):
            return decision
        return decision if decision.behavior is PermissionBehavior.ALLOW else _GRANTED_TRIVIAL
    for rule in state.rules_for(PermissionBehavior.DENY, name):
        if _matches(rule, checked, tool_input):
            return PermissionDecision.deny(
                f"Permission to use {name} has been denied", reason=_rule_reason(rule)
            )
    for rule in state.rules_for(PermissionBehavior.ASK, name):
        if _matches(rule, checked, tool_input):
            return PermissionDecision.ask(
                f"Permission required for {name}", reason=_rule_reason(rule)
            )
    own = None
    if checked is not None and own_check:
        own = await checked.check_permissions(tool_input, context)
        if own.behavior is PermissionBehavior.DENY:
            return own
        if own.behavior is PermissionBehavior.ASK and _is_safety(own):
            return own
    read_only = tool.spec.read_only
    mode = state.mode
    if mode is PermissionMode.EXPLORE:
        if read_only:
            return PermissionDecision.allow(
                f"Permission granted for {name} (explore mode - read-only tool)",
                reason="Explore mode allows read-only operations",
            )
        return PermissionDecision.deny(
            f"Permission denied for {name} (explore mode is read-only)",
            reason="Explore mode does not allow modifications",
        )
    if mode is PermissionMode.ACCEPT_EDITS and read_only:
        return PermissionDecision.allow(
            f"Permission granted for {name} (accept edits mode - read-only tool)",
            reason="Accept edits mode allows read-only operations",
        )
    if own is not None and own.behavior is PermissionBehavior.ALLOW:
        return own
    if read_only and (own is None or own.behavior is PermissionBehavior.PASSTHROUGH):
        return PermissionDecision.allow(
            f"Permission granted for {name} (read-only tool)",
            reason="Read-only tools run without asking",
        )
    for rule in state.rules_for(PermissionBehavior.ALLOW, name):
        if _matches(rule, checked, tool_input):
            updated = tool_input if isinstance(tool_input, dict) else None
            return PermissionDecision.allow(
                f"Permission granted for {name}", reason=_rule_reason(rule), updated_input=updated
            )
    if mode is PermissionMode.BYPASS:
        return PermissionDecision.allow(
            f"Permission granted for {name} (bypass mode)",
            reason="Bypass mode allows all operations",
        )
    if mode is PermissionMode.DONT_ASK:
        return PermissionDecision.deny(
            f"Permission denied for {name} (dont_ask mode - user not available)",
            reason="User is not available to answer permission prompts",
        )
    return PermissionDecision.ask(f"Permission required for {name}", reason=f"Mode: {mode.value}")


_GRANTED_TRIVIAL = PermissionDecision.allow("allowed: no permission rules apply to this session")


def _matches(rule: PermissionRule, tool: Checked | None, tool_input: object) -> bool:
    if not rule.rule_content:
        return True
    return tool is not None and tool.match_rule(rule.rule_content, tool_input)


def _rule_reason(rule: PermissionRule) -> str:
    return f"Rule: {rule.rule_content}" if rule.rule_content else f"Rule: {rule.tool_name}"


def _is_safety(decision: PermissionDecision) -> bool:
    return decision.reason is not None and "safety" in decision.reason.lower()


def _suggestions(tool: Checked | None, name: str, tool_input: object) -> tuple[PermissionRule, ...]:
    if tool is not None:
        return tuple(tool.generate_suggestions(tool_input))
    return (PermissionRule(tool_name=name, behavior=PermissionBehavior.ALLOW, source="suggested"),)


__all__ = ["Checked", "Subject", "decide", "decide_known"]
