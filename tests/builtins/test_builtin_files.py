"""File tools: confinement, ranges, messages, dangerous paths, atomic writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ferrotool import (
    InMemorySessionStore,
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionMode,
    RuntimeContext,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
    WorkingDirectory,
)
from ferrotool.builtins.files import (
    InsertTextFile,
    ListDirectory,
    ViewTextFile,
    WriteTextFile,
    file_tools,
    parse_range,
)


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = tmp_path / "base"
    (root / "sub").mkdir(parents=True)
    (root / "five.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    (tmp_path / "outside.txt").write_text("secret")
    return root


async def _call(base: Path, name: str, **arguments: object) -> tuple[ToolResultState, str]:
    toolkit = Toolkit()
    for item in file_tools(base):
        toolkit.register(item)
    result = await toolkit.call_tool(ToolUseBlock.of("f", name, arguments))  # type: ignore[arg-type]
    return result.state, result.content


def test_flags_are_honest(base: Path) -> None:
    view, listing, write, insert = file_tools(base)
    assert view.spec.read_only
    assert listing.spec.read_only
    assert not write.spec.read_only
    assert not insert.spec.read_only
    assert len(file_tools(base, write=False)) == 2


async def test_view_whole_and_ranges(base: Path) -> None:
    state, text = await _call(base, "view_text_file", file_path="five.txt")
    assert state is ToolResultState.SUCCESS
    assert text == "The content of five.txt:\n```\n1: one\n2: two\n3: three\n4: four\n5: five\n```"
    _, last_two = await _call(base, "view_text_file", file_path="five.txt", ranges="-2,-1")
    assert last_two == "The content of five.txt in lines [4, 5]:\n```\n4: four\n5: five\n```"
    _, middle = await _call(base, "view_text_file", file_path="five.txt", ranges="[2,3]")
    assert "2: two\n3: three" in middle
    _, listed = await _call(base, "view_text_file", file_path="five.txt", ranges=[1, 1])
    assert "1: one\n```" in listed


@pytest.mark.parametrize(
    ("ranges", "message"),
    [
        ("a,b", "Error: Invalid range format. Expected '[start,end]' or 'start,end', but got a,b."),
        ("4,2", "Error: Invalid range: start line 4 is greater than end line 2."),
    ],
)
async def test_bad_ranges(base: Path, ranges: str, message: str) -> None:
    assert await _call(base, "view_text_file", file_path="five.txt", ranges=ranges) == (
        ToolResultState.ERROR,
        message,
    )


def test_parse_range_clamps() -> None:
    assert parse_range("0,100", 5) == (1, 5)
    assert parse_range("-100,-1", 5) == (1, 5)


@pytest.mark.parametrize("path", ["../outside.txt", "sub/../../outside.txt", "/etc/hostname"])
async def test_outside_paths_are_refused(base: Path, path: str) -> None:
    state, text = await _call(base, "view_text_file", file_path=path)
    assert state is ToolResultState.ERROR
    assert text == (
        f"Error: Access denied: The file path '{path}' is outside the allowed base "
        f"directory '{base}'."
    )


async def test_symlink_escape_is_refused(base: Path) -> None:
    os.symlink(base.parent / "outside.txt", base / "link")
    state, text = await _call(base, "view_text_file", file_path="link")
    assert state is ToolResultState.ERROR
    assert "secret" not in text
    state, text = await _call(base, "write_text_file", file_path="link", content="x")
    assert state is ToolResultState.ERROR
    assert (base.parent / "outside.txt").read_text() == "secret"


async def test_missing_file(base: Path) -> None:
    assert await _call(base, "view_text_file", file_path="nope.txt") == (
        ToolResultState.ERROR,
        "Error: The file nope.txt does not exist.",
    )


async def test_list_directory(base: Path) -> None:
    state, text = await _call(base, "list_directory", dir_path=".")
    assert state is ToolResultState.SUCCESS
    assert text == "The content of .:\nfive.txt\nsub/"


async def test_write_create_overwrite_and_ranges(base: Path) -> None:
    assert await _call(base, "write_text_file", file_path="new/deep/a.txt", content="hi\n") == (
        ToolResultState.SUCCESS,
        "Create and write new/deep/a.txt successfully.",
    )
    assert (base / "new" / "deep" / "a.txt").read_text() == "hi\n"
    _, created = await _call(base, "write_text_file", file_path="b.txt", content="x", ranges="1,2")
    assert "ranges were ignored" in created
    _, over = await _call(base, "write_text_file", file_path="b.txt", content="y")
    assert over == "Overwrite b.txt successfully."
    _, ranged = await _call(
        base, "write_text_file", file_path="five.txt", content="TWO", ranges="2,3"
    )
    assert ranged == "Write five.txt successfully: lines [2, 3] replaced."
    assert (base / "five.txt").read_text() == "one\nTWO\nfour\nfive\n"


async def test_insert(base: Path) -> None:
    _, text = await _call(
        base, "insert_text_file", file_path="five.txt", content="zero", line_number=1
    )
    assert text == "Insert content into five.txt at line 1 successfully."
    await _call(base, "insert_text_file", file_path="five.txt", content="six", line_number=7)
    assert (base / "five.txt").read_text() == "zero\none\ntwo\nthree\nfour\nfive\nsix"
    assert await _call(
        base, "insert_text_file", file_path="five.txt", content="x", line_number=9
    ) == (
        ToolResultState.ERROR,
        "Error: InvalidArgumentsError: The given line_number (9) is not in the valid range [1, 8].",
    )


async def test_write_keeps_the_file_mode(base: Path) -> None:
    target = base / "five.txt"
    target.chmod(0o640)
    await _call(base, "write_text_file", file_path="five.txt", content="new")
    assert target.stat().st_mode & 0o777 == 0o640
    assert not [p for p in base.iterdir() if p.name.startswith(".ferrotool-")]


async def test_size_caps(base: Path) -> None:
    (base / "big.txt").write_text("x" * 100)
    small = ViewTextFile(base, max_file_bytes=10)
    toolkit = Toolkit()
    toolkit.register(small)
    toolkit.register(WriteTextFile(base, max_file_bytes=10))
    read = await toolkit.call_tool(ToolUseBlock.of("a", "view_text_file", {"file_path": "big.txt"}))
    assert "larger than 10 bytes" in read.content
    write = await toolkit.call_tool(
        ToolUseBlock.of("b", "write_text_file", {"file_path": "w.txt", "content": "y" * 11})
    )
    assert write.state is ToolResultState.ERROR
    assert not (base / "w.txt").exists()


async def test_binary_file_is_not_text(base: Path) -> None:
    (base / "b.bin").write_bytes(b"\xff\xfe\x00")
    state, text = await _call(base, "view_text_file", file_path="b.bin")
    assert (state, text) == (
        ToolResultState.ERROR,
        "Error: The file b.bin is not a UTF-8 text file.",
    )


@pytest.mark.parametrize("path", [".env", "sub/.git/config", ".ssh/authorized_keys", ".bashrc"])
async def test_dangerous_paths_ask_for_safety(base: Path, path: str) -> None:
    for tool in (ViewTextFile(base), WriteTextFile(base)):
        decision = await tool.check_permissions({"file_path": path}, PermissionContext())
        assert decision.behavior is PermissionBehavior.ASK
        assert (decision.reason or "").startswith("safety:")
    toolkit = Toolkit()
    toolkit.register(WriteTextFile(base))
    state = PermissionContextState(mode=PermissionMode.BYPASS)
    from ferrotool import ToolContextState

    view = toolkit.snapshot().view(ToolContextState(permissions=state))
    result = await view.call_tool(
        ToolUseBlock.of("w", "write_text_file", {"file_path": path, "content": "x"})
    )
    assert result.needs_approval  # survives bypass
    assert not (base / path).exists()


async def test_accept_edits_inside_a_working_directory(base: Path) -> None:
    tool = WriteTextFile(base)
    state = PermissionContextState(mode=PermissionMode.ACCEPT_EDITS).with_working_directory(
        "w", WorkingDirectory(str(base / "sub"))
    )
    inside = await tool.check_permissions(
        {"file_path": "sub/a.txt"}, PermissionContext(state=state)
    )
    assert inside.behavior is PermissionBehavior.ALLOW
    elsewhere = await tool.check_permissions({"file_path": "a.txt"}, PermissionContext(state=state))
    assert elsewhere.behavior is PermissionBehavior.PASSTHROUGH


async def test_rules_match_path_globs(base: Path) -> None:
    tool = WriteTextFile(base)
    assert tool.match_rule("sub/*", {"file_path": "sub/a.txt"})
    assert not tool.match_rule("sub/*", {"file_path": "a.txt"})
    assert tool.match_rule(f"{base.resolve()}/*.txt", {"file_path": "a.txt"})
    suggestion = tool.generate_suggestions({"file_path": "sub/a.txt"})[0]
    assert suggestion.rule_content == os.path.join(str((base / "sub").resolve()), "*")
    store = InMemorySessionStore()
    context = RuntimeContext(user_id="u", session_id="s")
    toolkit = Toolkit()
    toolkit.register(tool)
    view = await toolkit.snapshot().open_view(context, store)
    assert view.state.permissions.is_trivial
    assert tool.match_rule(None, {"file_path": "x"})
    _ = InsertTextFile(base), ListDirectory(base)


def test_killed_writer_leaves_the_old_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "data.txt"
    old, new = "A" * 4_000_000, "B" * 4_000_000
    target.write_text(old)
    program = textwrap.dedent(
        f"""
        import sys
        from ferrotool.builtins.files import atomic_write
        print("ready", flush=True)
        while True:
            atomic_write({str(target)!r}, "B" * 4_000_000)
        """
    )
    for delay in (0.05, 0.15, 0.3):
        target.write_text(old)
        with subprocess.Popen(
            [sys.executable, "-c", program], stdout=subprocess.PIPE, text=True
        ) as process:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "ready"
            time.sleep(delay)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        content = target.read_text()
        assert content in (old, new)  # never torn
    leftovers = [p for p in tmp_path.iterdir() if p.name != "data.txt"]
    assert all(p.name.startswith(".ferrotool-") for p in leftovers)
