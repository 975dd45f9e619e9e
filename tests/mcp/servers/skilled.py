"""The toolkit with skills the skill tests serve: ``skilled:toolkit``.

Its skills are the folders of ``skills/`` beside this file (``csv-report``), read from disk on
demand, and one skill held in memory (``tidy``).
"""

from __future__ import annotations

from pathlib import Path

from ferrotool import Toolkit, tool
from ferrotool.skills import AgentSkill, FileSystemSkillRepository, add_skills

SKILLS = Path(__file__).parent / "skills"
TIDY = AgentSkill(
    name="tidy",
    description="Tidy a folder",
    content="Move every file into a folder named after its type; see rules.txt.",
    resources={"rules.txt": "images/, documents/, other/\n"},
    source="memory",
)


@tool(read_only=True)
def count(text: str) -> int:
    """Count the characters of a text.

    Args:
        text: The text.
    """
    return len(text)


def toolkit() -> Toolkit:
    """A tool, the skills of ``skills/`` (source ``local``) and ``tidy``."""
    kit = Toolkit()
    kit.register(count)
    add_skills(kit, FileSystemSkillRepository(SKILLS, source="local", lazy=True), TIDY)
    return kit
