"""Path fuzzing: no generated path reads or writes outside its root, symlinks included.

Every path-taking tool (``view_text_file``, ``list_directory``, ``write_text_file``,
``insert_text_file``) and ``load_skill_through_path`` gets 10,000 generated paths: ``..``,
``.``, absolute paths into the forbidden folder, symlinks (to a folder, to a file, relative
and absolute, pointing in and out), encoded traversal, backslashes, NUL bytes and random
text. An escape is any result that shows the forbidden folder's marker, or any change under
that folder; the count must be 0.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ferrotool import Emitter, RuntimeContext, ToolCallParam, ToolUseBlock
from ferrotool.builtins.files import (
    InsertTextFile,
    ListDirectory,
    ViewTextFile,
    WriteTextFile,
    _Failed,
)
from ferrotool.skills import LOAD_SKILL, FileSystemSkillRepository, LoadSkillThroughPath

PATHS_PER_TOOL = 10_000
BATCH = 100
CONTENT = "FORBIDDEN-CONTENT-7f3a"  # what every forbidden file holds
HIDDEN_NAME = "never-generated-name"  # a forbidden file name no generated path holds


def _snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(folder, name)
            out[full] = b"" if os.path.isdir(full) else Path(full).read_bytes()
    return out


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    outside = root / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text(CONTENT)
    (outside / f"{HIDDEN_NAME}.txt").write_text(CONTENT)
    (outside / "dir" / "inner.txt").write_text(CONTENT)
    base = root / "base"
    (base / "sub").mkdir(parents=True)
    (base / "inside.txt").write_text("inside\n")
    (base / "sub" / "ok.txt").write_text("ok\nline 2\n")
    os.symlink("../outside", base / "link_out")
    os.symlink("../outside/secret.txt", base / "link_secret")
    os.symlink("sub", base / "link_in")
    os.symlink(outside, base / "link_abs")
    os.symlink(base / "sub" / "ok.txt", base / "link_ok")
    skill = root / "skills" / "pdf"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: pdf\ndescription: d\n---\nbody\n")
    (skill / "scripts" / "a.py").write_text("print(1)\n")
    os.symlink("../../outside", skill / "link_out")
    os.symlink("../../outside/secret.txt", skill / "link_secret")
    os.symlink(outside, skill / "scripts" / "link_abs")
    return root


def _segments(root: Path) -> st.SearchStrategy[str]:
    outside = str(root / "outside")
    return st.one_of(
        st.sampled_from(
            [
                "..",
                ".",
                "",
                "sub",
                "ok.txt",
                "inside.txt",
                "link_out",
                "link_secret",
                "link_in",
                "link_abs",
                "link_ok",
                "secret.txt",
                "dir",
                "inner.txt",
                "outside",
                "base",
                "skills",
                "pdf",
                "scripts",
                "a.py",
                "SKILL.md",
                "%2e%2e",
                "%2f",
                "%252e%252e",
                "..\\..",
                "~",
                "\x00",
                "..%00",
                "new.txt",
                outside,
                outside + "/",
                "//",
                "...",
                " ..",
                ".. ",
            ]
        ),
        st.text(min_size=1, max_size=8).filter(lambda text: "never" not in text),
    )


def _paths(root: Path) -> st.SearchStrategy[list[str]]:
    one = st.builds(
        lambda absolute, parts, sep: ("/" if absolute else "") + sep.join(parts),
        st.booleans(),
        st.lists(_segments(root), min_size=1, max_size=6),
        st.sampled_from(["/", "\\", "/./"]),
    )
    return st.lists(one, min_size=BATCH, max_size=BATCH)


FUZZ = settings(
    max_examples=PATHS_PER_TOOL // BATCH,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_file_tools_never_leave_their_base(sandbox: Path) -> None:
    base, outside = sandbox / "base", sandbox / "outside"
    before = _snapshot(outside)
    tools = {
        "view": ViewTextFile(base),
        "list": ListDirectory(base),
        "write": WriteTextFile(base, durable=False),
        "insert": InsertTextFile(base, durable=False),
    }
    counts = dict.fromkeys(tools, 0)
    escapes = []

    @FUZZ
    @given(paths=_paths(sandbox))
    def check(paths: list[str]) -> None:
        for path in paths:
            for kind, tool in tools.items():
                field = "dir_path" if kind == "list" else "file_path"
                arguments: dict[str, object] = {field: path, "content": "WRITTEN\n"}
                if kind == "insert":
                    arguments["line_number"] = 1
                counts[kind] += 1
                try:
                    shown = tool.run(arguments)  # type: ignore[arg-type]
                except _Failed as failure:
                    shown = str(failure)
                if CONTENT in shown or HIDDEN_NAME in shown:
                    escapes.append((kind, path))
        if _snapshot(outside) != before:
            escapes.append(("changed", repr(paths)))

    check()
    assert escapes == []
    assert min(counts.values()) >= PATHS_PER_TOOL


@pytest.mark.parametrize("lazy", [True, False])
def test_skill_loader_never_leaves_the_skill_folder(sandbox: Path, lazy: bool) -> None:
    skills = FileSystemSkillRepository(sandbox / "skills", lazy=lazy).skills()
    loader = LoadSkillThroughPath(skills)
    pdf = skills.get("pdf")
    assert pdf is not None
    count = 0
    escapes = []

    async def load(paths: list[str]) -> list[str]:
        texts = []
        for path in paths:
            arguments = {"skillId": pdf.skill_id, "path": path}
            call = ToolUseBlock.of("f", LOAD_SKILL, arguments)
            param = ToolCallParam(arguments, call, RuntimeContext(), None, Emitter(call))
            texts.append((await loader.call(param)).content)
        return texts

    @FUZZ
    @given(paths=_paths(sandbox))
    def check(paths: list[str]) -> None:
        nonlocal count
        count += len(paths)
        for path, text in zip(paths, anyio.run(load, paths), strict=True):
            if CONTENT in text or HIDDEN_NAME in text:
                escapes.append(path)

    check()
    assert escapes == []
    assert count >= PATHS_PER_TOOL
