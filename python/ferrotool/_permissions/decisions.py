"""Permission decisions: what a tool's own check says about one call."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import final

from ferrotool._values.context import EMPTY_CONTEXT, RuntimeContext
from ferrotool._values.json import JsonValue


class PermissionBehavior(enum.StrEnum):
    """What a permission check decided."""

    ALLOW = "allow"
    """Run the call."""
    DENY = "deny"
    """Refuse the call: it ends `DENIED`."""
    ASK = "ask"
    """A user must approve the call first."""
    PASSTHROUGH = "passthrough"
    """No opinion: the rules and mode decide (with none, the call runs)."""

    @classmethod
    def parse(cls, value: str) -> PermissionBehavior:
        """Read a behavior name, case-insensitively.

        Raises:
            ValueError: ``value`` names no behavior.
        """
        try:
            return cls(value.lower())
        except ValueError:
            raise ValueError(f"Unknown PermissionBehavior: {value}") from None


class PermissionMode(enum.StrEnum):
    """The session-wide permission mode."""

    DEFAULT = "default"
    ACCEPT_EDITS = "accept_edits"
    EXPLORE = "explore"
    BYPASS = "bypass"
    DONT_ASK = "dont_ask"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRule:
    """A standing rule about a tool.

    Attributes:
        tool_name: The tool the rule is about.
        rule_content: What the rule matches in the input (tool-specific); ``None`` or ``""``
            matches every call.
        behavior: What the rule decides.
        source: Where the rule came from (``"user"``, ``"suggested"``, ...).
    """

    tool_name: str
    behavior: PermissionBehavior
    rule_content: str | None = None
    source: str = "user"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDecision:
    """The outcome of a permission check.

    Attributes:
        behavior: Allow, deny, ask or pass through.
        message: Why, in words a model or user can read.
        reason: A short machine-oriented reason, if any (``"safety: ..."`` marks a safety ask).
        updated_input: Arguments to run with instead of the model's, if the check changed them.
        suggested_rules: Rules a user could add to stop being asked.
    """

    behavior: PermissionBehavior
    message: str
    reason: str | None = None
    updated_input: Mapping[str, JsonValue] | None = None
    suggested_rules: tuple[PermissionRule, ...] = ()

    @classmethod
    def allow(
        cls,
        message: str = "allowed",
        *,
        reason: str | None = None,
        updated_input: Mapping[str, JsonValue] | None = None,
    ) -> PermissionDecision:
        """An `ALLOW` decision, optionally running with changed arguments."""
        return cls(
            behavior=PermissionBehavior.ALLOW,
            message=message,
            reason=reason,
            updated_input=updated_input,
        )

    @classmethod
    def deny(cls, message: str, *, reason: str | None = None) -> PermissionDecision:
        """A `DENY` decision."""
        return cls(behavior=PermissionBehavior.DENY, message=message, reason=reason)

    @classmethod
    def ask(
        cls,
        message: str,
        *,
        reason: str | None = None,
        suggested_rules: tuple[PermissionRule, ...] = (),
    ) -> PermissionDecision:
        """An `ASK` decision."""
        return cls(
            behavior=PermissionBehavior.ASK,
            message=message,
            reason=reason,
            suggested_rules=suggested_rules,
        )

    @classmethod
    def passthrough(cls, message: str) -> PermissionDecision:
        """A `PASSTHROUGH` decision."""
        return cls(behavior=PermissionBehavior.PASSTHROUGH, message=message)

    def to_dict(self) -> dict[str, JsonValue]:
        """The JSON form (``None`` fields left out)."""
        out: dict[str, JsonValue] = {"behavior": self.behavior.value, "message": self.message}
        if self.reason is not None:
            out["decision_reason"] = self.reason
        if self.updated_input is not None:
            out["updated_input"] = dict(self.updated_input)
        if self.suggested_rules:
            out["suggested_rules"] = [
                {
                    "tool_name": rule.tool_name,
                    "rule_content": rule.rule_content,
                    "behavior": rule.behavior.value,
                    "source": rule.source,
                }
                for rule in self.suggested_rules
            ]
        return out


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionContext:
    """What a tool's `check_permissions` is told about the call's circumstances.

    Attributes:
        mode: The session's permission mode.
        runtime: The call's runtime context (user, session, typed values).
    """

    mode: PermissionMode = PermissionMode.DEFAULT
    runtime: RuntimeContext = EMPTY_CONTEXT


__all__ = [
    "PermissionBehavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionMode",
    "PermissionRule",
]
