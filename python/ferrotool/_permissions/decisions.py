"""Permission decisions: what a tool's own check says about one call."""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, final

from ferrotool._values.json import JsonValue
from ferrotool.errors import UnmatchableRule

_NAME_CHARACTERS: Final = re.compile(r"[A-Za-z0-9_*-]*")
_MAX_NAME: Final = 64  # the tool-name rule's length (`ferrotool._values.spec.TOOL_NAME`)


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
    """A standing rule about a tool, or about every tool whose name matches a pattern.

    ``tool_name`` is a tool's name or a pattern where ``*`` (the only special character) stands
    for any run of characters, none included, and the pattern matches a whole name:
    ``mcp__github__*`` matches every tool of that MCP server, ``read_*`` matches ``read_file``
    but not ``readme``, ``*`` every tool. Every other character stands for itself; there is no
    escaping, since no tool name contains ``*``. Where several rules of one behavior match a
    call, the rules naming the tool exactly come first, then the patterns in the order they
    were added (`PermissionContextState.rules_for`).

    A rule that can never match is refused when it is made (`ValueError` naming it): an empty
    name, a character no tool name has (tool names are 1 to 64 of ``A-Z a-z 0-9 _ -``: a ``.``,
    ``?``, ``[`` or space is never a wildcard, it is refused), or more than 64 characters
    besides the ``*``. The content is the tool's to read (its ``match_rule``), so only its type
    is checked here.

    Attributes:
        tool_name: The tool the rule is about, or a pattern of tool names.
        rule_content: What the rule matches in the input (tool-specific); ``None`` or ``""``
            matches every call.
        behavior: What the rule decides.
        source: Where the rule came from (``"user"``, ``"suggested"``, ...).

    Raises:
        ValueError: The rule can never match (`UnmatchableRule`), or its content is neither a
            string nor ``None``.
    """

    tool_name: str
    behavior: PermissionBehavior
    rule_content: str | None = None
    source: str = "user"

    def __post_init__(self) -> None:
        problem = _never_matches(self.tool_name)
        if problem is not None:
            raise UnmatchableRule(f"the permission rule {self._named()} can never match: {problem}")
        if self.rule_content is not None and not isinstance(self.rule_content, str):
            raise ValueError(
                f"the permission rule {self._named()} has a rule_content of type "
                f"{type(self.rule_content).__name__}: a rule's content is a string or None"
            )

    def _named(self) -> str:
        behavior = getattr(self.behavior, "value", self.behavior)
        content = "" if self.rule_content is None else f" ({self.rule_content!r})"
        return f"{behavior} {self.tool_name!r}{content}"

    @property
    def is_pattern(self) -> bool:
        """Whether the tool name is a pattern (it has a ``*``)."""
        return "*" in self.tool_name

    def matches_tool(self, name: str) -> bool:
        """Whether the rule is about the tool named ``name`` (the whole name, see the class)."""
        if "*" not in self.tool_name:
            return name == self.tool_name
        return _glob(self.tool_name).fullmatch(name) is not None

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


def _never_matches(name: object) -> str | None:
    """Why no tool name can match the rule name ``name``, or ``None`` when one can."""
    if not isinstance(name, str):
        return f"its tool_name is a {type(name).__name__}, not a string"
    if not name:
        return "its tool name is empty"
    if _NAME_CHARACTERS.fullmatch(name) is None:
        odd = "".join(dict.fromkeys(c for c in name if _NAME_CHARACTERS.fullmatch(c) is None))
        shown = ", ".join(repr(c) for c in odd)
        return (
            f"it has {shown}, which no tool name has (tool names are 1 to 64 of A-Z a-z 0-9 _ -; "
            "in a rule, '*' stands for any run of them and is the only wildcard)"
        )
    fixed = len(name) - name.count("*")
    if fixed > _MAX_NAME:
        return f"it needs {fixed} characters besides '*', and a tool name has at most {_MAX_NAME}"
    return None


@functools.lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    """The regular expression of a rule's name pattern: ``*`` is any run, the rest literal."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


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
    "UnmatchableRule",
]
