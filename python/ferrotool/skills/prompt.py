"""The skills prompt fragment: which skills exist and how to load one.

It lists names, descriptions and ids (in name order), XML-escaped, and never the session's
state, so the same skills give the same bytes and a provider's prompt cache keeps hitting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from xml.sax.saxutils import escape

from ferrotool._values.json import JsonValue
from ferrotool.skills.skill import AgentSkill

LOAD_SKILL: Final = "load_skill_through_path"
"""The skill loader's name."""

_HEADER: Final = f"""## Available Skills
<usage>
Skills are folders of instructions and files for particular tasks. When a task matches a
skill's description, load the skill before you start: call
{LOAD_SKILL}(skillId="<skill-id>", path="SKILL.md") to read its instructions, then any file
they mention with its exact path (for example path="references/guide.md"). Loading a skill
also makes the tools that come with it available. A skill is not a tool: follow its
instructions with the tools you have.
</usage>
<available_skills>
"""
_XML_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9._-]*")
_ESCAPES: Final = {'"': "&quot;", "'": "&apos;"}


def _text(value: str) -> str:
    return escape(value, _ESCAPES)


def _element(key: str, value: JsonValue, indent: str) -> list[str]:
    if _XML_NAME.fullmatch(key) and not key.lower().startswith("xml"):
        open_tag, close_tag = f"<{key}>", f"</{key}>"
    else:
        open_tag, close_tag = f'<entry key="{_text(key)}">', "</entry>"
    if isinstance(value, dict):
        lines = [f"{indent}{open_tag}"]
        for inner, item in value.items():
            lines.extend(_element(inner, item, indent + "  "))
        return [*lines, f"{indent}{close_tag}"]
    if isinstance(value, list):
        lines = [f"{indent}{open_tag}"]
        for item in value:
            lines.extend(_element("item", item, indent + "  "))
        return [*lines, f"{indent}{close_tag}"]
    text = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return [f"{indent}{open_tag}{_text(text)}{close_tag}"]


def skill_prompt(
    skills: Iterable[AgentSkill], *, metadata: bool = False, files_root: bool = False
) -> str:
    """The prompt fragment for these skills (``""`` for none).

    Args:
        skills: The skills the request sees.
        metadata: List every front-matter field, not only name and description.
        files_root: Name each skill's folder (for a model that runs the skill's scripts).
    """
    ordered = sorted(skills, key=lambda skill: (skill.name, skill.skill_id))
    if not ordered:
        return ""
    lines = [_HEADER.rstrip("\n")]
    for skill in ordered:
        lines.append("<skill>")
        lines.append(f"  <name>{_text(skill.name)}</name>")
        lines.append(f"  <description>{_text(skill.description)}</description>")
        if metadata:
            for key, value in skill.metadata.items():
                if key not in ("name", "description"):
                    lines.extend(_element(key, value, "  "))
        lines.append(f"  <skill-id>{_text(skill.skill_id)}</skill-id>")
        if files_root and skill.origin is not None:
            lines.append(f"  <files-root>{_text(str(skill.origin))}</files-root>")
        lines.append("</skill>")
    lines.append("</available_skills>")
    return "\n".join(lines) + "\n"


__all__ = ["LOAD_SKILL", "skill_prompt"]
