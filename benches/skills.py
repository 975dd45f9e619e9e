"""Skill benchmarks: loading a skill through a view, and building views over many skills.

* ``skill_load``: ``open_view`` of a request whose skills come from its context, then
  ``load_skill_through_path`` of one skill's ``SKILL.md`` (the session written with
  compare-and-set), against reading the same ``SKILL.md`` from disk (the floor: what a loader
  must do at the least). Cached: the view's box exists. Cold: a fresh `SkillViews`, so the
  box is built (20 in-memory skills written to disk, the loader compiled, the registry copied).
* ``skill_views``: a request's view over 10, 100 and 1,000 skills when its box exists: flat in
  the number of skills, as views are flat in the number of tools.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from ferrotool import (
    EMPTY_STATE,
    InMemorySessionStore,
    Registry,
    RuntimeContext,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    ToolView,
    tool,
)
from ferrotool.skills import (
    LOAD_SKILL,
    AgentSkill,
    ContextSkillRepository,
    SkillSet,
    SkillViews,
    create_skill_tool_group,
)

LOAD_SKILLS: Final = 20
VIEW_SIZES: Final = (10, 100, 1_000)
CONTENT: Final = "Follow these steps.\n" * 50


def view_case(size: int) -> str:
    return f"{size:,} skills"


def skills(count: int, prefix: str = "skill", origin: Path | None = None) -> SkillSet:
    """``count`` skills of about 1 KB of instructions and three resources each.

    With ``origin``, each skill names a folder under it (not written: nothing is materialised).
    """
    return SkillSet(
        AgentSkill(
            origin=None if origin is None else origin / f"{prefix}-{index}",
            name=f"{prefix}-{index}",
            description=f"Does task {index} well",
            content=CONTENT,
            resources={
                "scripts/run.py": f"print({index})\n",
                "references/guide.md": "# Guide\n" * 20,
                "assets/data.txt": "x" * 200,
            },
        )
        for index in range(count)
    )


def registry() -> Registry:
    """Ten ungrouped tools and a skill-bound group of two."""
    toolkit = Toolkit()
    for index in range(10):

        def function(text: str, index: int = index) -> str:
            return text

        function.__name__ = f"tool_{index}"
        toolkit.register(tool(function, description=f"Tool {index}."))
    create_skill_tool_group(toolkit, "bound", "Bound tools", skill_name="skill-0")
    for index in range(2):

        def bound(text: str) -> str:
            return text

        bound.__name__ = f"bound_{index}"
        toolkit.register(tool(bound, description="Bound."), group="bound")
    return toolkit.snapshot()


def load_call(skill_id: str = "skill-0_custom") -> ToolUseBlock:
    return ToolUseBlock.of("load", LOAD_SKILL, {"skillId": skill_id, "path": "SKILL.md"})


class LoadTrip:
    """A session's skill load through a view, cached or cold."""

    def __init__(self, base: Registry, work: Path) -> None:
        self.base = base
        self.work = work
        self.store = InMemorySessionStore()
        self.skills = skills(LOAD_SKILLS)
        self.context = RuntimeContext.of(self.skills, user_id="bench", session_id="load")
        self.views = SkillViews(base, [ContextSkillRepository()], work_dir=work)

    async def cached(self) -> ToolResultBlock:
        view = await self.views.open_view(self.context, self.store)
        return await view.call_tool(load_call(), self.context)

    async def cold(self) -> ToolResultBlock:
        views = SkillViews(self.base, [ContextSkillRepository()], work_dir=self.work)
        view = await views.open_view(self.context, self.store)
        return await view.call_tool(load_call(), self.context)

    def floor_path(self) -> Path:
        box = self.views.box_sync(self.context)
        skill = box.skills.get("skill-0")
        assert skill is not None
        assert skill.origin is not None
        return skill.origin / "SKILL.md"


def load_ok(result: object) -> bool:
    return (
        isinstance(result, ToolResultBlock)
        and result.state is ToolResultState.SUCCESS
        and result.content.startswith("Successfully loaded skill: skill-0_custom")
    )


@contextmanager
def work_dir() -> Iterator[Path]:
    """A folder for the materialised skills, removed after the group."""
    with tempfile.TemporaryDirectory(prefix="ferrotool-bench-skills-") as folder:
        yield Path(folder)


class ViewOverSkills:
    """A request's view over ``size`` skills whose box exists.

    The skills have folders of their own, so building the box writes nothing: the group
    measures the view, not the disk.
    """

    def __init__(self, base: Registry, size: int, work: Path) -> None:
        self.views = SkillViews(base, [ContextSkillRepository()], work_dir=work)
        request_skills = skills(size, origin=work)
        self.context = RuntimeContext.of(request_skills, user_id="bench", session_id="views")
        self.views.box_sync(self.context)  # the box is built before the clock

    def build(self) -> ToolView:
        return self.views.box_sync(self.context).registry.view(EMPTY_STATE)


def view_ok(view: ToolView, size: int) -> bool:
    spec = view.get_spec(LOAD_SKILL)
    return spec is not None and spec.parameters_json.count(b'"skill-') == size
