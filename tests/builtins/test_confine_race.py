"""File tools under a symlink race: a folder inside the base swapped for a link to the outside.

A thread exchanges a real folder inside the base with a symlink to an outside folder
(``renameat2`` with ``RENAME_EXCHANGE``: both names always exist, one of them a link) while
read, list, write and insert calls run against paths under that folder through a `Toolkit`.
None may read, list or change the outside folder, and every call returns a result.
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
from ferrotool.builtins.files import file_tools
from symlink_race import Swapper  # tests/ is on the path (its conftest.py)

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="renameat2(RENAME_EXCHANGE) is Linux's"
)

CALLS = 10_000
"""Calls made while the folder is swapped (read, list, write and insert in turn)."""
BATCH = 50
"""Calls run concurrently at a time (worker threads)."""
SECRET = "OUTSIDE-SECRET"
MARKER = "outside-marker.txt"


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes (symlinks not followed)."""
    out: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = path.read_bytes()
    return out


@pytest.fixture(params=["outside", "dangerous"])
def layout(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    """``base/d`` (a real folder) and ``base/swap`` (a link to the target folder).

    The target is outside the base, or a dangerous folder inside it (``base/.git/hooks``):
    a call on ``d/...`` may reach neither.
    """
    base = tmp_path / "base"
    target = tmp_path / "outside" if request.param == "outside" else base / ".git" / "hooks"
    inside = base / "d"
    (inside / "deep").mkdir(parents=True)
    target.joinpath("deep").mkdir(parents=True)
    for folder, text in ((inside, "inside\n"), (target, f"{SECRET}\n")):
        for name in ("f.txt", "ins.txt", "deep/f.txt"):
            (folder / name).write_text(text)
    (inside / "inside-marker.txt").write_text("inside\n")
    (target / MARKER).write_text(f"{SECRET}\n")
    os.symlink(target, base / "swap")
    return base, target


def _calls(count: int) -> list[ToolUseBlock]:
    kinds: list[tuple[str, dict[str, object]]] = [
        ("view_text_file", {"file_path": "d/f.txt"}),
        ("list_directory", {"dir_path": "d"}),
        ("write_text_file", {"file_path": "d/w.txt", "content": "written\n"}),
        ("insert_text_file", {"file_path": "d/ins.txt", "content": "x", "line_number": 1}),
        ("view_text_file", {"file_path": "d/deep/f.txt"}),
        ("write_text_file", {"file_path": "d/deep/new/w.txt", "content": "written\n"}),
        ("list_directory", {"dir_path": "d/deep"}),
        ("insert_text_file", {"file_path": "d/deep/f.txt", "content": "y", "line_number": 1}),
    ]
    return [
        ToolUseBlock.of(f"c{index}", *kinds[index % len(kinds)])  # type: ignore[arg-type]
        for index in range(count)
    ]


@pytest.fixture(params=["openat2", "walk"])
def opener(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, layout: tuple[Path, Path]
) -> int:
    """How paths are opened beneath a base, and how many calls race: all of them with
    ``openat2`` towards the outside, a quarter otherwise (the component walk, the fallback of
    other systems; a dangerous folder inside the base)."""
    full = CALLS if layout[1].name == "outside" else CALLS // 4
    if request.param == "walk":
        monkeypatch.setattr(_confine, "HAS_OPENAT2", False)
        return CALLS // 4
    if not _confine.HAS_OPENAT2:
        pytest.skip("openat2 is not available here (a kernel before 5.6, or filtered)")
    return full


def test_swapped_folder_never_leads_outside(layout: tuple[Path, Path], opener: int) -> None:
    base, outside = layout
    before = snapshot(outside)
    toolkit = Toolkit()
    for item in file_tools(base, max_file_bytes=1 << 20):
        toolkit.register(item)
    results: list[ToolResultBlock] = []
    raised: list[BaseException] = []
    calls = _calls(opener)

    async def run_all() -> None:
        async def one(call: ToolUseBlock) -> None:
            try:
                results.append(await toolkit.call_tool(call))
            except Exception as error:  # counted: a call must never raise
                raised.append(error)

        for start in range(0, len(calls), BATCH):
            async with anyio.create_task_group() as group:
                for call in calls[start : start + BATCH]:
                    group.start_soon(one, call)

    began = time.perf_counter()
    with Swapper(base / "d", base / "swap") as swapper:
        anyio.run(run_all)
    elapsed = time.perf_counter() - began
    leaked = [r.content for r in results if SECRET in r.content or MARKER in r.content]
    after = snapshot(outside)
    changed = sorted(
        name for name in after.keys() | before.keys() if after.get(name) != before.get(name)
    )
    succeeded = sum(r.state is ToolResultState.SUCCESS for r in results)
    summary = (
        f"{len(calls)} calls ({succeeded} succeeded), {swapper.swaps} swaps, {elapsed:.1f} s: "
        f"{len(raised)} raised, {len(leaked)} showed the outside, outside files changed: {changed}"
    )
    print(summary)
    assert not raised, f"{summary}; the first raised: {raised[0]!r}"
    assert not leaked, f"{summary}; the first: {leaked[0][:200]}"
    assert not changed, summary
    assert len(results) == len(calls)
    swapper.assert_raced(succeeded, len(calls))
