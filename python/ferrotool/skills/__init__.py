"""Skills: folders of instructions (``SKILL.md``) and files a model loads on demand.

Add skills to a toolkit (`add_skills(toolkit, ...)`) and the
``load_skill_through_path`` tool is registered with them; or read repositories per request
through `SkillViews`. Loading a skill activates the tool groups bound to it, in the loading
session only.
"""

from ferrotool.skills.filter import ALL_SKILLS, SkillFilter
from ferrotool.skills.loader import SKILL_TOOLS_SUFFIX, LoadSkillThroughPath, skill_group_name
from ferrotool.skills.markdown import MAX_ALIASES, MAX_DEPTH, MAX_FRONT_MATTER, MAX_NUMBER_TEXT
from ferrotool.skills.prompt import LOAD_SKILL, skill_prompt
from ferrotool.skills.registration import (
    add_skills,
    create_skill_tool_group,
    register_skill_tools,
    skills_of,
)
from ferrotool.skills.repository import (
    DEFAULT_BUDGET,
    ContextSkillRepository,
    FileSystemSkillRepository,
    PackageSkillRepository,
    SkillRepository,
    merge_skills,
)
from ferrotool.skills.skill import (
    BASE64_PREFIX,
    DEFAULT_SOURCE,
    EMPTY_SKILLS,
    SKILL_FILE,
    AgentSkill,
    SkillSet,
)
from ferrotool.skills.views import DEFAULT_MAX_BOXES, SkillBox, SkillViews

__all__ = [
    "ALL_SKILLS",
    "BASE64_PREFIX",
    "DEFAULT_BUDGET",
    "DEFAULT_MAX_BOXES",
    "DEFAULT_SOURCE",
    "EMPTY_SKILLS",
    "LOAD_SKILL",
    "MAX_ALIASES",
    "MAX_DEPTH",
    "MAX_FRONT_MATTER",
    "MAX_NUMBER_TEXT",
    "SKILL_FILE",
    "SKILL_TOOLS_SUFFIX",
    "AgentSkill",
    "ContextSkillRepository",
    "FileSystemSkillRepository",
    "LoadSkillThroughPath",
    "PackageSkillRepository",
    "SkillBox",
    "SkillFilter",
    "SkillRepository",
    "SkillSet",
    "SkillViews",
    "add_skills",
    "create_skill_tool_group",
    "merge_skills",
    "register_skill_tools",
    "skill_group_name",
    "skill_prompt",
    "skills_of",
]
