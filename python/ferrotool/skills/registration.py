"""Skills in a toolkit: the loader entry, skill-bound groups; functions over `ToolHost`.

`add_skills`, `create_skill_tool_group` and `register_skill_tools` change a toolkit through its
public methods (`Toolkit.rebuild`, `Toolkit.add_group`, `Toolkit.register`), so the core
knows nothing of skills. The skills a toolkit holds are its loader's; the loader is
a `DerivedTool`, which the toolkit rebuilds whenever its groups change, so it always knows
which groups a skill binds.
"""

from __future__ import annotations

from ferrotool._execution.pipeline import origin_of
from ferrotool._registry.host import ToolHost, ToolReader
from ferrotool._tools.base import AgentTool
from ferrotool._values.groups import ToolGroup
from ferrotool.errors import RegistrationError
from ferrotool.skills.loader import (
    LoadSkillThroughPath,
    skill_group_name,
    skill_group_reminder,
    valid_group_name,
)
from ferrotool.skills.prompt import LOAD_SKILL
from ferrotool.skills.repository import SkillRepository, merge_skills
from ferrotool.skills.skill import EMPTY_SKILLS, AgentSkill, SkillSet


def skills_of(tools: ToolReader) -> SkillSet:
    """The skills of a toolkit's or a registry's loader (none without one)."""
    loader = tools.get_tool(LOAD_SKILL)
    if isinstance(loader, LoadSkillThroughPath):
        return loader.skills
    return EMPTY_SKILLS


def add_skills(toolkit: ToolHost, *sources: AgentSkill | SkillRepository) -> SkillSet:
    """Add skills (or every skill of repositories, read now), and the skill loader.

    ``load_skill_through_path`` is registered without a group the first time, so it is visible
    whenever skills exist; later sources of the same skill name win. For skills that change
    per request or on disk, use `ferrotool.skills.SkillViews` instead.

    Returns:
        Every skill the toolkit holds now.

    Raises:
        RegistrationError: A tool that is not the loader has its name.
    """
    added = merge_skills([SkillSet((s,)) if isinstance(s, AgentSkill) else s for s in sources])
    held = EMPTY_SKILLS

    def build(old: AgentTool | None) -> AgentTool | None:
        nonlocal held
        if old is not None and not isinstance(old, LoadSkillThroughPath):
            raise RegistrationError(
                f"a tool named {LOAD_SKILL!r} is already registered (from {origin_of(old)}); "
                "it is the skill loader's name"
            )
        held = merge_skills([old.skills if old is not None else EMPTY_SKILLS, added])
        if not len(held):
            return None
        return LoadSkillThroughPath(held, toolkit.groups())

    toolkit.rebuild(LOAD_SKILL, build)
    return held


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


def create_skill_tool_group(
    toolkit: ToolHost,
    name: str,
    description: str = "",
    *,
    skill_name: str,
    active: bool = False,
    instructions: str | None = None,
) -> ToolGroup:
    """Create a group that loading the skill named ``skill_name`` activates.

    Its description says so (once). Register tools into it with ``register(..., group=name)``.

    Raises:
        RegistrationError: A group of that name exists.
        ValueError: The name is invalid, or ``skill_name`` is blank.
    """
    group = skill_tool_group(
        name, description, skill_name=skill_name, active=active, instructions=instructions
    )
    return toolkit.add_group(group)


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


def register_skill_tools(
    toolkit: ToolHost, skill: AgentSkill, *items: object
) -> tuple[AgentTool, ...]:
    """Add a skill and register tools that come with it, in ``<skillId>_skill_tools``.

    The group is created inactive when missing: the tools stay hidden until a session loads
    the skill.

    Raises:
        RegistrationError: As `Toolkit.register`; or the skill's id cannot name a group.
    """
    group = own_group(skill)
    if all(existing.name != group for existing in toolkit.groups()):
        toolkit.add_group(ToolGroup(name=group, description=group))
    add_skills(toolkit, skill)
    return tuple(tool for item in items for tool in toolkit.register(item, group=group))


__all__ = [
    "add_skills",
    "create_skill_tool_group",
    "own_group",
    "register_skill_tools",
    "skill_tool_group",
    "skills_of",
]
