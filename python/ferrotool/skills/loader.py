"""``load_skill_through_path``: the model reads a skill, and loading it activates its tools.

The loader is registered without a group, so it is visible whenever skills exist. Its
``skillId`` is an enum of the skills the request sees. A successful load returns the
instructions or the resource, and records the skill as loaded in the session's
`ToolContextState` together with every tool group bound to it (``<skillId>_skill_tools`` and
the groups created with ``skill_name=``), in one compare-and-set on the session. It never
changes the registry or another session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Final, final

from ferrotool._permissions.confine import real
from ferrotool._permissions.decisions import PermissionDecision
from ferrotool._permissions.state import PermissionContext
from ferrotool._registry.derived import DerivedTool, SessionHandle
from ferrotool._session.state import ToolContextState
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock
from ferrotool._values.groups import ToolGroup
from ferrotool._values.json import JsonValue
from ferrotool._values.spec import TOOL_NAME
from ferrotool.skills.prompt import LOAD_SKILL
from ferrotool.skills.resources import clean_path, listing, read_from_disk
from ferrotool.skills.skill import SKILL_FILE, AgentSkill, SkillSet

SKILL_TOOLS_SUFFIX: Final = "_skill_tools"
"""``<skillId>_skill_tools``: the group of the tools registered with a skill."""

_DESCRIPTION: Final = (
    "Load a skill's instructions, or one of its files, by the skill's id and the file's exact "
    "path. Use path 'SKILL.md' first to read the instructions; they name the other files "
    "(for example 'references/guide.md' or 'scripts/run.py'). Loading a skill makes the "
    "tools bound to it available for the rest of the session."
)
_PATH_HELP: Final = (
    "The exact resource path within the skill. Use 'SKILL.md' to load the skill "
    "instructions. Do not use '.', './', directories, or absolute paths."
)


def skill_group_name(skill: AgentSkill) -> str:
    """The name of the group that holds the tools registered with ``skill``."""
    return f"{skill.skill_id}{SKILL_TOOLS_SUFFIX}"


def skill_group_reminder(description: str, skill_name: str) -> str:
    """A skill-bound group's description: the given one and, once, which skill it serves."""
    reminder = (
        f"**This tool group belongs to the skill '{skill_name}': loading the skill activates "
        "it, and it must be active whenever the skill is in use.**"
    )
    if reminder in description:
        return description
    return f"{description}\n\n{reminder}" if description else reminder


def bound_groups(skill: AgentSkill, groups: Iterable[ToolGroup]) -> tuple[str, ...]:
    """The groups loading ``skill`` activates, in the order they were added.

    ``<skillId>_skill_tools`` when it exists, and every group bound to the skill's name.
    """
    own = skill_group_name(skill)
    return tuple(
        group.name for group in groups if group.name == own or group.skill_name == skill.name
    )


@final
class LoadSkillThroughPath(ToolBase[dict[str, str]], DerivedTool):
    """The skill loader for one set of skills and the tool groups they activate.

    Args:
        skills: The skills the model may load.
        groups: The registry's tool groups (loading a skill activates those bound to it).
        hold: Holds the skills' folder while a call reads from it (a `SkillViews` box counts
            its running calls so that its folder is not deleted under them).
    """

    uses_session: Final = True
    """The view hands the loader its session (`SessionHandle`)."""

    def __init__(
        self,
        skills: SkillSet,
        groups: Iterable[ToolGroup] = (),
        *,
        hold: Callable[[], AbstractContextManager[None]] | None = None,
    ) -> None:
        self.skills = skills
        self._hold = hold
        self.groups: Final[tuple[ToolGroup, ...]] = tuple(groups)
        self._by_id: Mapping[str, AgentSkill] = {skill.skill_id: skill for skill in skills}
        # Each folder's real path, resolved once: a folder swapped for a symlink later is
        # refused when it is opened, not followed.
        self._roots: Mapping[str, str] = {
            skill_id: root
            for skill_id, skill in self._by_id.items()
            if (root := _real_origin(skill)) is not None
        }
        self._activates: Mapping[str, tuple[str, ...]] = {
            skill_id: bound_groups(skill, self.groups) for skill_id, skill in self._by_id.items()
        }
        ids: list[JsonValue] = list(self._by_id)
        super().__init__(
            name=LOAD_SKILL,
            description=_DESCRIPTION,
            input_schema={
                "type": "object",
                "properties": {
                    "skillId": {
                        "type": "string",
                        "description": "The unique identifier of the skill.",
                        "enum": ids,
                    },
                    "path": {"type": "string", "description": _PATH_HELP},
                },
                "required": ["skillId", "path"],
            },
            read_only=True,  # it reads files; it changes only which tools the session sees
            concurrency_safe=True,
        )

    def following(self, groups: Sequence[ToolGroup]) -> LoadSkillThroughPath:
        """The loader of the same skills for ``groups`` (the toolkit's groups changed)."""
        return LoadSkillThroughPath(self.skills, groups, hold=self._hold)

    def activates(self, skill_id: str) -> tuple[str, ...]:
        """The groups a load of ``skill_id`` activates."""
        return self._activates.get(skill_id, ())

    async def check_permissions(
        self, tool_input: dict[str, str], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed: it reads only the skill's own files (confined to its folder)."""
        return PermissionDecision.allow("loading a skill is always allowed")

    async def call(self, param: ToolCallParam[dict[str, str]]) -> ToolResultBlock:
        """Return the instructions or the resource, and activate the skill in the session."""
        skill_id = str(param.input.get("skillId", "")).strip()
        path = str(param.input.get("path", ""))
        if not skill_id:
            return ToolResultBlock.error("Missing or empty required parameter: skillId")
        if not path.strip():
            return ToolResultBlock.error("Missing or empty required parameter: path")
        skill = self._by_id.get(skill_id)
        if skill is None:
            return ToolResultBlock.error(
                f"Skill not found: '{skill_id}'. Please check the skill ID."
            )
        if path == SKILL_FILE:
            text = (
                f"Successfully loaded skill: {skill_id}\n\nName: {skill.name}\n"
                f"Description: {skill.description}\nSource: {skill.source}\n\n"
                f"Content:\n---\n{skill.content}\n---\n"
            )
        else:
            with self._holding():
                content = self._read(skill, path)
                if content is None:
                    return self._not_found(skill, path)
            text = (
                f"Successfully loaded resource from skill: {skill_id}\n"
                f"Resource path: {path}\n\nContent:\n---\n{content}\n---\n"
            )
        return await self._activate(param, skill, path, text)

    def read_resource(self, skill_id: str, path: str) -> str | None:
        """A skill's file (not ``SKILL.md``) as a load reads it, or ``None``.

        ``None`` when the skill is unknown, the path is not an acceptable one
        (`ferrotool.skills.resources.clean_path`), or the file is missing or refused (outside
        the skill's folder, a symlink out of it, larger than
        `ferrotool.skills.resources.MAX_RESOURCE_BYTES`). Binary files come as ``base64:...``.
        """
        skill = self._by_id.get(skill_id)
        if skill is None:
            return None
        with self._holding():
            return self._read(skill, path)

    def _holding(self) -> AbstractContextManager[None]:
        return nullcontext() if self._hold is None else self._hold()

    def _read(self, skill: AgentSkill, path: str) -> str | None:
        cleaned = clean_path(path)
        if cleaned is None:
            return None
        held = skill.resources.get(cleaned)
        if held is not None:
            return held
        return read_from_disk(skill, cleaned, self._roots.get(skill.skill_id))

    @staticmethod
    def _not_found(skill: AgentSkill, path: str) -> ToolResultBlock:
        names, more = listing(skill)
        lines = [
            f"Resource not found: '{path}' in skill '{skill.skill_id}'.",
            "",
            "Available resources:",
            *(f"{index}. {name}" for index, name in enumerate(names, 1)),
        ]
        if more:
            lines.append(f"... and {more} more")
        return ToolResultBlock.error("\n".join(lines))

    async def _activate(
        self, param: ToolCallParam[dict[str, str]], skill: AgentSkill, path: str, text: str
    ) -> ToolResultBlock:
        groups = self.activates(skill.skill_id)
        metadata: dict[str, JsonValue] = {"skill_id": skill.skill_id, "path": path}
        handle = param.context.get(SessionHandle)
        if handle is None:  # no session: the content is returned, nothing is activated
            metadata["activated"] = False
            return ToolResultBlock.success(text, metadata=metadata)

        def change(state: ToolContextState) -> ToolContextState:
            if skill.skill_id in state.skills and all(state.groups.get(g) for g in groups):
                return state
            return state.with_skills((skill.skill_id,)).with_groups(dict.fromkeys(groups, True))

        stored = await handle.update(
            change,
            unsaved=f"the skill {skill.skill_id!r} was read but not activated",
            retry=LOAD_SKILL,
        )
        if isinstance(stored, ToolResultBlock):
            return stored
        metadata.update(activated=True, groups=list(groups), revision=stored.revision)
        return ToolResultBlock.success(text, metadata=metadata)


def _real_origin(skill: AgentSkill) -> str | None:
    if skill.origin is None:
        return None
    try:
        return real(skill.origin)
    except (OSError, ValueError):
        return None


def valid_group_name(name: str) -> bool:
    """Whether ``name`` can name a tool group."""
    return TOOL_NAME.fullmatch(name) is not None


__all__ = [
    "SKILL_TOOLS_SUFFIX",
    "LoadSkillThroughPath",
    "bound_groups",
    "skill_group_name",
    "skill_group_reminder",
    "valid_group_name",
]
