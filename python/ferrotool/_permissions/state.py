"""`PermissionContextState`: a session's permission mode, working directories and rules.

An immutable value kept inside the session's `ToolContextState` (and its versioned JSON), so a
sticky decision (a rule a user adds while approving a call) is stored with compare-and-set like
every other change of the session.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Final, final

from ferrotool._permissions.decisions import (
    PermissionBehavior,
    PermissionMode,
    PermissionRule,
    UnmatchableRule,
)
from ferrotool._values.context import EMPTY_CONTEXT, RuntimeContext
from ferrotool._values.json import JsonValue

_log: Final = logging.getLogger("ferrotool")

Rules = Mapping[str, tuple[PermissionRule, ...]]
"""Rules by the name (or name pattern) of the tools they are about, in the order they were added."""

_NO_RULES: Final[Rules] = MappingProxyType({})
_NO_DIRECTORIES: Final[Mapping[str, WorkingDirectory]] = MappingProxyType({})


@final
@dataclass(frozen=True, slots=True)
class WorkingDirectory:
    """A directory the session's tools may work in.

    Attributes:
        path: The directory.
        source: Where it came from (``"user"``, ``"session"``...).
    """

    path: str
    source: str = "user"


def _frozen_rules(rules: Mapping[str, Iterable[PermissionRule]]) -> Rules:
    return MappingProxyType({name: tuple(entries) for name, entries in rules.items() if entries})


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionContextState:
    """A session's permission settings: an immutable value.

    Attributes:
        mode: The permission mode.
        working_directories: Directories the tools may work in, by key.
        allow_rules: Rules that allow calls, by tool name.
        deny_rules: Rules that deny calls, by tool name.
        ask_rules: Rules that make calls ask for approval, by tool name.
    """

    mode: PermissionMode = PermissionMode.DEFAULT
    working_directories: Mapping[str, WorkingDirectory] = field(
        default_factory=lambda: _NO_DIRECTORIES
    )
    allow_rules: Rules = field(default_factory=lambda: _NO_RULES)
    deny_rules: Rules = field(default_factory=lambda: _NO_RULES)
    ask_rules: Rules = field(default_factory=lambda: _NO_RULES)

    def __post_init__(self) -> None:
        for name in ("allow_rules", "deny_rules", "ask_rules"):
            rules = getattr(self, name)
            if not isinstance(rules, MappingProxyType):
                object.__setattr__(self, name, _frozen_rules(rules))
        if not isinstance(self.working_directories, MappingProxyType):
            object.__setattr__(
                self, "working_directories", MappingProxyType(dict(self.working_directories))
            )

    @property
    def is_trivial(self) -> bool:
        """Whether nothing is set: the default mode, no rules and no working directories.

        Then only a tool's own check decides (its ask asks and its deny denies; anything else
        runs), and a tool with no check of its own runs without any permission step.
        """
        return (
            self.mode is PermissionMode.DEFAULT
            and not self.working_directories
            and not self.allow_rules
            and not self.deny_rules
            and not self.ask_rules
        )

    def rules(self, behavior: PermissionBehavior) -> Rules:
        """The rules of one behavior (none for `PASSTHROUGH`)."""
        if behavior is PermissionBehavior.ALLOW:
            return self.allow_rules
        if behavior is PermissionBehavior.DENY:
            return self.deny_rules
        if behavior is PermissionBehavior.ASK:
            return self.ask_rules
        return _NO_RULES

    def rules_for(self, behavior: PermissionBehavior, name: str) -> tuple[PermissionRule, ...]:
        """The rules of one behavior about the tool ``name``, in the order they apply.

        The rules naming the tool exactly come first, in the order they were added; then the
        rules whose name pattern matches it (``mcp__github__*``, ``*``: see `PermissionRule`),
        in the order their patterns were first added.
        """
        table = self.rules(behavior)
        exact = table.get(name, ())
        if len(table) == (1 if exact else 0):  # no other key: no pattern (no rules at all, say)
            return exact
        patterns = tuple(
            rule
            for key, rules in table.items()
            if "*" in key
            for rule in rules
            if rule.matches_tool(name)
        )
        return exact + patterns if patterns else exact

    def with_mode(self, mode: PermissionMode) -> PermissionContextState:
        """A copy in another mode (this value when unchanged)."""
        return self if mode is self.mode else replace(self, mode=mode)

    def with_rules(self, rules: Iterable[PermissionRule]) -> PermissionContextState:
        """A copy with these rules added, each after the rules of its tool and behavior.

        A rule already there is not added twice; `PASSTHROUGH` rules are ignored.
        """
        tables = {
            behavior: {name: list(entries) for name, entries in self.rules(behavior).items()}
            for behavior in (
                PermissionBehavior.ALLOW,
                PermissionBehavior.DENY,
                PermissionBehavior.ASK,
            )
        }
        changed = False
        for rule in rules:
            table = tables.get(rule.behavior)
            if table is None:
                continue
            entries = table.setdefault(rule.tool_name, [])
            if rule not in entries:
                entries.append(rule)
                changed = True
        if not changed:
            return self
        return replace(
            self,
            allow_rules=_frozen_rules(tables[PermissionBehavior.ALLOW]),
            deny_rules=_frozen_rules(tables[PermissionBehavior.DENY]),
            ask_rules=_frozen_rules(tables[PermissionBehavior.ASK]),
        )

    def with_working_directory(
        self, key: str, directory: WorkingDirectory
    ) -> PermissionContextState:
        """A copy with a working directory set under ``key``."""
        directories = dict(self.working_directories)
        directories[key] = directory
        return replace(self, working_directories=MappingProxyType(directories))

    def to_dict(self) -> dict[str, JsonValue]:
        """The JSON form (the order of every table kept)."""

        def table(rules: Rules) -> dict[str, JsonValue]:
            return {name: [rule.to_dict() for rule in entries] for name, entries in rules.items()}

        return {
            "mode": self.mode.value,
            "working_directories": {
                key: {"path": directory.path, "source": directory.source}
                for key, directory in self.working_directories.items()
            },
            "allow_rules": table(self.allow_rules),
            "deny_rules": table(self.deny_rules),
            "ask_rules": table(self.ask_rules),
        }

    @classmethod
    def from_dict(cls, raw: object) -> PermissionContextState:
        """Read the JSON form.

        Raises:
            ValueError: ``raw`` is not a permission state.
        """
        if not isinstance(raw, dict):
            raise ValueError("a permission state is a JSON object")
        directories = raw.get("working_directories", {})
        if not isinstance(directories, dict):
            raise ValueError("working_directories is an object")
        read: dict[str, WorkingDirectory] = {}
        for key, value in directories.items():
            if not isinstance(value, dict) or not isinstance(value.get("path"), str):
                raise ValueError(f"working directory {key!r} needs a path")
            read[key] = WorkingDirectory(value["path"], str(value.get("source", "user")))
        return cls(
            mode=PermissionMode.parse(str(raw.get("mode", "default"))),
            working_directories=MappingProxyType(read),
            allow_rules=_read_table(raw.get("allow_rules", {})),
            deny_rules=_read_table(raw.get("deny_rules", {})),
            ask_rules=_read_table(raw.get("ask_rules", {})),
        )


def _read_table(raw: object) -> Rules:
    if not isinstance(raw, dict):
        raise ValueError("a rule table is an object of lists")
    table: dict[str, list[PermissionRule]] = {}
    for name, entries in raw.items():
        if not isinstance(entries, list):
            raise ValueError(f"the rules of {name!r} are a list")
        table[name] = [rule for entry in entries if (rule := _read_rule(entry)) is not None]
    return _frozen_rules(table)


def _read_rule(raw: object) -> PermissionRule | None:
    """A stored rule; ``None`` (and a warning) for one that can never match.

    Such a rule was stored before rules were checked when made: it never decided a call, so
    leaving it out changes no decision, and the session stays readable.
    """
    try:
        return PermissionRule.from_dict(raw)
    except UnmatchableRule as problem:
        _log.warning("a stored permission rule is left out: %s", problem)
        return None


EMPTY_PERMISSIONS: Final = PermissionContextState()
"""The permission state of a session nothing has set: trivial."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionContext:
    """What a tool's `check_permissions` is told about the call's circumstances.

    Attributes:
        state: The session's permission state (mode, working directories, rules).
        runtime: The call's runtime context (user, session, typed values).
    """

    state: PermissionContextState = EMPTY_PERMISSIONS
    runtime: RuntimeContext = EMPTY_CONTEXT

    @property
    def mode(self) -> PermissionMode:
        """The session's permission mode."""
        return self.state.mode

    @property
    def working_directories(self) -> Mapping[str, WorkingDirectory]:
        """The directories the session's tools may work in."""
        return self.state.working_directories


__all__ = [
    "EMPTY_PERMISSIONS",
    "PermissionContext",
    "PermissionContextState",
    "Rules",
    "WorkingDirectory",
]
