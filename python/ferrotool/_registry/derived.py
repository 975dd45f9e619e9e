"""Tools a toolkit keeps in step with itself, and the handle through which tools write a session.

A `DerivedTool` is rebuilt from the toolkit's groups after every change of them: the
``reset_tools`` meta tool (`ResetTools`, one boolean per session-scoped group), which the
toolkit registers itself while `ToolkitConfig.meta_tool` is on, and the skill loader of
`ferrotool.skills`, which a wing registers through `Toolkit.replace`. A tool that writes its
session (``uses_session = True``: the meta tool, the skill loader, ``todo_write``) finds a
`SessionHandle` in its call's context when its view has a store, and updates the session
through it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, final

from ferrotool._permissions.decisions import PermissionDecision
from ferrotool._permissions.state import PermissionContext
from ferrotool._session.state import (
    DEFAULT_ATTEMPTS,
    SessionKey,
    SessionStore,
    ToolContextState,
    update_session,
)
from ferrotool._tools.base import AgentTool, ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock
from ferrotool._values.groups import ToolGroup, ToolGroupScope
from ferrotool._values.json import JsonValue
from ferrotool.errors import SessionConflict

RESET_TOOLS: Final = "reset_tools"
"""The meta tool's name."""

_DESCRIPTION: Final = (
    "Reset your equipped tools to what the current task needs. Tools are organized in groups; "
    "set a group to true to activate it and to false (or leave it out) to deactivate it.\n\n"
    "**Important: a call states the FINAL set of active groups, not a change.** Every group "
    "not set to true is deactivated, whatever its state before.\n\n"
    "**Best practice:** activate only what the task needs, and deactivate groups once they "
    "are no longer needed, to keep the context small.\n\nTool groups:\n"
)


@final
@dataclass(frozen=True, slots=True)
class SessionHandle:
    """Where a session-writing tool stores its session's state; a view puts it in its context.

    Attributes:
        store: The session store.
        key: The session.
        state: The state the view was built from (tried first: one compare-and-set when
            nobody wrote since).
        attempts: How many compare-and-set attempts an update makes before it gives up.
    """

    store: SessionStore
    key: SessionKey
    state: ToolContextState | None = None
    attempts: int = DEFAULT_ATTEMPTS

    async def update(
        self, change: Callable[[ToolContextState], ToolContextState], *, unsaved: str, retry: str
    ) -> ToolContextState | ToolResultBlock:
        """Store ``change(state)`` with compare-and-set (`update_session`) and return it.

        When every attempt met a state another update had just stored, nothing is stored and
        the answer is the calling tool's error result: ``unsaved`` (what was not done, say
        ``"the todo list was not saved"``), why, and that ``retry`` (the tool's name) may be
        called again.
        """
        try:
            return await update_session(
                self.store, self.key, change, attempts=self.attempts, current=self.state
            )
        except SessionConflict:
            return ToolResultBlock.error(
                f"{unsaved}: this session was changed by {self.attempts} other updates "
                f"meanwhile; call {retry} again"
            )


class DerivedTool:
    """A tool the toolkit rebuilds from its groups after every change of them.

    The toolkit calls `following` with its groups (in the order they were added) and puts the
    tool returned in this one's place, or removes this one when it returns ``None``.
    """

    __slots__ = ()

    def following(self, groups: Sequence[ToolGroup]) -> AgentTool | None:
        """This tool rebuilt for ``groups``, or ``None`` when it has no place any more."""
        raise NotImplementedError


def activation_text(groups: Iterable[ToolGroup]) -> str:
    """The meta tool's answer: the active groups, then their descriptions and instructions."""
    active = list(groups)
    if not active:
        return "All tool groups are currently deactivated."
    lines = [f"The currently activated tool group(s): {', '.join(g.name for g in active)}."]
    described = [g for g in active if g.description or g.instructions]
    if described:
        lines.append("<tool-instructions>")
        for group in described:
            body = "\n".join(part for part in (group.description, group.instructions) if part)
            lines.append(f'<group name="{group.name}">{body}</group>')
        lines.append("</tool-instructions>")
    return "\n".join(lines)


class ResetTools(ToolBase[dict[str, bool]], DerivedTool):
    """The meta tool: one boolean per session-scoped group; a call sets the final activation.

    Its description and schema list the groups (never the session's current state, so they
    stay byte-stable for prompt caches); its result lists the groups now active with their
    descriptions and instructions. It changes only the calling session's state, through the
    view's store with compare-and-set.
    """

    uses_session: Final = True
    """The view hands the tool its session (`SessionHandle`)."""

    def __init__(self, groups: Iterable[ToolGroup]) -> None:
        self.groups: Mapping[str, ToolGroup] = {group.name: group for group in groups}
        managed = [g for g in self.groups.values() if g.scope is ToolGroupScope.SESSION]
        self.managed: Final[tuple[str, ...]] = tuple(group.name for group in managed)
        properties: dict[str, JsonValue] = {
            group.name: {"type": "boolean", "description": group.description or group.name}
            for group in managed
        }
        notes = "\n".join(
            f"- {group.name}: {group.description or '(no description)'}" for group in managed
        )
        super().__init__(
            name=RESET_TOOLS,
            description=_DESCRIPTION + notes,
            input_schema={
                "type": "object",
                "properties": properties,
                "additionalProperties": False,
            },
            read_only=False,
            concurrency_safe=False,
        )

    def following(self, groups: Sequence[ToolGroup]) -> ResetTools | None:
        """The meta tool for ``groups``; ``None`` when no group is session-scoped."""
        if not any(group.scope is ToolGroupScope.SESSION for group in groups):
            return None
        return ResetTools(groups)

    def new_state(self, state: ToolContextState, flags: Mapping[str, bool]) -> ToolContextState:
        """The state after a call with these arguments: every managed group set, others kept."""
        return state.with_groups({name: bool(flags.get(name, False)) for name in self.managed})

    def active(self, state: ToolContextState) -> list[ToolGroup]:
        """The groups active in ``state``, in the order they were added."""
        return [g for g in self.groups.values() if state.is_active(g.name, g.active)]

    async def check_permissions(
        self, tool_input: dict[str, bool], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed: it changes only which tools the model sees."""
        return PermissionDecision.allow("switching tool groups is always allowed")

    async def call(self, param: ToolCallParam[dict[str, bool]]) -> ToolResultBlock:
        """Store the session's new group activation and report it."""
        handle = param.context.get(SessionHandle)
        if handle is None:
            return ToolResultBlock.error(
                f"{RESET_TOOLS} needs a session: call it through a view built with a store"
            )
        flags = param.input
        stored = await handle.update(
            lambda state: self.new_state(state, flags),
            unsaved="the tool groups were not switched",
            retry=RESET_TOOLS,
        )
        if isinstance(stored, ToolResultBlock):
            return stored
        active = self.active(stored)
        return ToolResultBlock.success(
            activation_text(active),
            structured={"active_groups": [group.name for group in active]},
            metadata={"revision": stored.revision},
        )


def uses_session(tool: AgentTool) -> bool:
    """Whether ``tool`` writes its session: its ``uses_session`` attribute is ``True``."""
    return getattr(tool, "uses_session", False) is True


__all__ = [
    "RESET_TOOLS",
    "DerivedTool",
    "ResetTools",
    "SessionHandle",
    "activation_text",
    "uses_session",
]
