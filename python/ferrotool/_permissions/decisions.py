"""Permission decisions: what a tool's own check says about one call."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import final

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
    """Rules and the tools' own checks decide; what nothing decides asks the user."""
    ACCEPT_EDITS = "accept_edits"
    """Like `DEFAULT`, and read-only tools run without asking."""
    EXPLORE = "explore"
    """Read-only tools run; every other tool is denied."""
    BYPASS = "bypass"
    """Everything runs, except what a deny rule, a tool's denial or a safety check stops."""
    DONT_ASK = "dont_ask"
    """Nobody is there to ask: what would ask is denied."""

    @classmethod
    def parse(cls, value: str) -> PermissionMode:
        """Read a mode name, case-insensitively.

        Raises:
            ValueError: ``value`` names no mode.
        """
        try:
            return cls(value.lower())
        except ValueError:
            raise ValueError(f"Unknown PermissionMode: {value}") from None


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

    def to_dict(self) -> dict[str, JsonValue]:
        """The JSON form: ``tool_name``, ``rule_content``, ``behavior``, ``source``."""
        return {
            "tool_name": self.tool_name,
            "rule_content": self.rule_content,
            "behavior": self.behavior.value,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, raw: object) -> PermissionRule:
        """Read the JSON form.

        Raises:
            ValueError: ``raw`` is not a rule.
        """
        if not isinstance(raw, dict) or not isinstance(raw.get("tool_name"), str):
            raise ValueError("a permission rule needs a tool_name")
        content = raw.get("rule_content")
        if content is not None and not isinstance(content, str):
            raise ValueError("a permission rule's rule_content is a string or null")
        return cls(
            tool_name=raw["tool_name"],
            rule_content=content,
            behavior=PermissionBehavior.parse(str(raw.get("behavior"))),
            source=str(raw.get("source", "user")),
        )


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
            out["suggested_rules"] = [rule.to_dict() for rule in self.suggested_rules]
        return out


__all__ = [
    "PermissionBehavior",
    "PermissionDecision",
    "PermissionMode",
    "PermissionRule",
]
