"""Tool groups: tools switched on and off together, per session."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, final

from ferrotool._values.spec import TOOL_NAME

BASIC: Final = "basic"
"""The reserved group of every tool registered without a group; always active."""


class ToolGroupScope(enum.StrEnum):
    """Who switches a group on and off. Either way, activation lives in the session's state."""

    SESSION = "session"
    """The model, through the ``reset_tools`` meta tool (and the application)."""
    APPLICATION = "application"
    """Only the application (`ToolContextState.with_groups`); the meta tool never shows it."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolGroup:
    """A named set of tools, visible to the model only while the group is active.

    Attributes:
        name: The group's name (``^[A-Za-z0-9_-]{1,64}$``; ``basic`` is reserved).
        description: What the tools are for; the meta tool shows it to the model.
        instructions: How to use the tools, sent to the model when the group is switched on.
        scope: Who switches the group (`ToolGroupScope`).
        active: Whether the group is active in a session that has not switched it yet.
        skill_name: The skill whose loading activates the group (see
            `ferrotool.skills.create_skill_tool_group`), if any.
    """

    name: str
    description: str = ""
    instructions: str | None = None
    scope: ToolGroupScope = ToolGroupScope.SESSION
    active: bool = False
    skill_name: str | None = None

    def __post_init__(self) -> None:
        if self.name == BASIC:
            raise ValueError(f"the group name {BASIC!r} is reserved for ungrouped tools")
        if TOOL_NAME.fullmatch(self.name) is None:
            raise ValueError(
                f"invalid tool group name {self.name!r}: use 1 to 64 letters, digits, '_' or '-'"
            )


__all__ = ["BASIC", "ToolGroup", "ToolGroupScope"]
