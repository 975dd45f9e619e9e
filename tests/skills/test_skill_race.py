"""The lazy skill loader under a symlink race: its folders swapped for links to the outside.

A thread exchanges a folder of a skill (or the skill's folder itself) with a symlink to an
outside folder holding files of the same names (``renameat2`` with ``RENAME_EXCHANGE``), while
`load_skill_through_path` loads a resource under it through a `Toolkit`: no load may return an
outside file, and every load returns a result.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import pytest

from ferrotool import Toolkit, ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool._permissions import confine as _confine
from ferrotool.skills import LOAD_SKILL, FileSystemSkillRepository, add_skills
from symlink_race import Swapper  # tests/ is on the path (its conftest.py)

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="renameat2(RENAME_EXCHANGE) is Linux's"
)

LOADS = 10_000
"""Loads made while the folder is swapped."""
SECRET = "OUTSIDE-SECRET"


def _skill(folder: Path, text: str) -> None:
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Read PDF files.\n---\nSee references/guide.md.\n"
    )
    (folder / "references" / "guide.md").write_text(text)


@pytest.fixture(params=["openat2", "walk"])
def opener(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """How paths are opened beneath the skill's folder, and how many loads race."""
    if request.param == "walk":
        monkeypatch.setattr(_confine, "HAS_OPENAT2", False)
        return LOADS // 4
    if not _confine.HAS_OPENAT2:
        pytest.skip("openat2 is not available here (a kernel before 5.6, or filtered)")
    return LOADS


@pytest.mark.parametrize("swapped", ["references", "skill"])
def test_swapped_skill_folder_never_leads_outside(
    tmp_path: Path, opener: int, swapped: str
) -> None:
    collection, outside = tmp_path / "skills", tmp_path / "outside"
    _skill(collection / "pdf", "inside guide\n")
    _skill(outside, f"{SECRET} guide\n")
    toolkit = Toolkit()
    skills = add_skills(toolkit, FileSystemSkillRepository(collection, source="fs", lazy=True))
    pdf = skills.get("pdf")
    assert pdf is not None
    if swapped == "references":
        real, link = collection / "pdf" / "references", collection / "pdf" / "swap"
        os.symlink(outside / "references", link)
    else:
        real, link = collection / "pdf", collection / "swap"
        os.symlink(outside, link)
    results: list[ToolResultBlock] = []
    raised: list[BaseException] = []

    async def run_all() -> None:
        for index in range(opener):
            call = ToolUseBlock.of(
                f"l{index}", LOAD_SKILL, {"skillId": pdf.skill_id, "path": "references/guide.md"}
            )
            try:
                results.append(await toolkit.call_tool(call))
            except Exception as error:  # counted: a load must never raise
                raised.append(error)

    began = time.perf_counter()
    with Swapper(real, link) as swapper:
        anyio.run(run_all)
    elapsed = time.perf_counter() - began
    leaked = [r.content for r in results if SECRET in r.content]
    loaded = sum(r.state is ToolResultState.SUCCESS for r in results)
    summary = (
        f"{opener} loads ({loaded} loaded), {swapper.swaps} swaps, {elapsed:.1f} s: "
        f"{len(raised)} raised, {len(leaked)} returned the outside file"
    )
    print(summary)
    assert not raised, f"{summary}; the first raised: {raised[0]!r}"
    assert not leaked, summary
    assert len(results) == opener
    swapper.assert_raced(loaded, opener)
