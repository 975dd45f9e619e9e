"""How skills sit in a toolkit's table: the loader entry, skill-bound groups.

The `Toolkit` methods (`add_skills`, `create_skill_tool_group`, `register_skill_tools`) are
thin: the rules live here. The skills a toolkit holds are its loader's; the loader is compiled
again whenever the skills or the groups change, so it always knows which groups a skill binds.
"""

from __future__ import annotations

import dataclasses

from ferrotool._execution.pipeline import compile_tool
from ferrotool._execution.runner import ToolkitConfig
from ferrotool._registry.table import Table
from ferrotool._values.groups import ToolGroup
from ferrotool.errors import RegistrationError
from ferrotool.skills.loader import (
    LoadSkillThroughPath,
    skill_group_name,
    skill_group_reminder,
    valid_group_name,
)
from ferrotool.skills.prompt import LOAD_SKILL
from ferrotool.skills.skill import EMPTY_SKILLS, AgentSkill, SkillSet


def skills_of(table: Table) -> SkillSet:
    """The skills of a table's loader (none without one)."""
    entry = table.entries.get(LOAD_SKILL)
    if entry is not None and isinstance(entry.tool, LoadSkillThroughPath):
        return entry.tool.skills
    return EMPTY_SKILLS


def check_loader_name(table: Table) -> None:
    """Refuse skills while a tool that is not the loader holds the loader's name.

    Raises:
        RegistrationError: Naming that tool's origin.
    """
    old = table.entries.get(LOAD_SKILL)
    if old is not None and not isinstance(old.tool, LoadSkillThroughPath):
        raise RegistrationError(
            f"a tool named {LOAD_SKILL!r} is already registered (from {old.origin}); "
            "it is the skill loader's name"
        )


def place_loader(table: Table, skills: SkillSet, config: ToolkitConfig) -> None:
    """Put the loader of ``skills`` in ``table`` (ungrouped, keeping its place), or drop it."""
    old = table.entries.get(LOAD_SKILL)
    if not len(skills):
        if old is not None:
            table.drop(LOAD_SKILL)
        return
    entry = compile_tool(LoadSkillThroughPath(skills, table.groups.values()), None, config)
    seq = old.seq if old is not None else table.next_seq
    if old is None:
        table.next_seq += 1
    table.place(dataclasses.replace(entry, seq=seq))


def refresh_loader(table: Table, config: ToolkitConfig) -> None:
    """Compile the loader again after the groups changed (no loader: nothing to do)."""
    entry = table.entries.get(LOAD_SKILL)
    if entry is not None and isinstance(entry.tool, LoadSkillThroughPath):
        place_loader(table, skills_of(table), config)


def skill_tool_group(
    name: str,
    description: str,
    *,
    skill_name: str,
    active: bool,
    instructions: str | None,
) -> ToolGroup:
    """A group bound to the skill named ``skill_name``; its description says so once.

    Raises:
        ValueError: The name is invalid, or ``skill_name`` is blank.
    """
    if not skill_name.strip():
        raise ValueError("skill_name must not be blank")
    return ToolGroup(
        name=name,
        description=skill_group_reminder(description, skill_name),
        instructions=instructions,
        active=active,
        skill_name=skill_name,
    )


def own_group(skill: AgentSkill) -> str:
    """The name of the skill's own group, ``<skillId>_skill_tools``.

    Raises:
        RegistrationError: The skill's id makes no valid group name.
    """
    group = skill_group_name(skill)
    if not valid_group_name(group):
        raise RegistrationError(
            f"skill {skill.skill_id!r} cannot have a tool group: {group!r} is not a valid "
            "group name (1 to 64 letters, digits, '_' or '-')"
        )
    return group


__all__ = [
    "check_loader_name",
    "own_group",
    "place_loader",
    "refresh_loader",
    "skill_tool_group",
    "skills_of",
]
