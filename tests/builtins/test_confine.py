"""Opening beneath a folder descriptor, rules over a symlinked base, calls that never raise."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ferrotool import (
    Emitter,
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionRule,
    RuntimeContext,
    ToolCallParam,
    ToolContextState,
    Toolkit,
    ToolResultState,
    ToolUseBlock,
)
from ferrotool._permissions import confine as _confine
from ferrotool.builtins.files import WriteTextFile, file_tools


@pytest.fixture(params=["openat2", "walk"])
def opener(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with ``openat2`` (where there is one) and with the component walk."""
    if request.param == "walk":
        monkeypatch.setattr(_confine, "HAS_OPENAT2", False)
    elif not _confine.HAS_OPENAT2:
        pytest.skip("openat2 is not available here")
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``root/a/f.txt``, ``root/out`` (a link to an outside folder), ``root/flink`` (to a file)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a").mkdir(parents=True)
    outside.mkdir()
    (root / "a" / "f.txt").write_text("inside")
    (outside / "f.txt").write_text("secret")
    os.symlink(outside, root / "out")
    os.symlink(root / "a" / "f.txt", root / "flink")
    return root


def test_reads_and_lists_beneath(tree: Path, opener: str) -> None:
    with _confine.opened_root(str(tree)) as root:
        assert _confine.read_beneath(root, "a/f.txt", 100) == b"inside"
        assert sorted(_confine.list_beneath(root, "")) == [
            ("a", True),
            ("flink", False),
            ("out", False),
        ]
        assert _confine.list_beneath(root, "a") == [("f.txt", False)]


@pytest.mark.parametrize("path", ["out/f.txt", "flink", "out"])
def test_no_symlink_is_followed(tree: Path, opener: str, path: str) -> None:
    with _confine.opened_root(str(tree)) as root:
        with pytest.raises(OSError) as read:  # noqa: PT011 - the errno is checked below
            _confine.read_beneath(root, path, 100)
        with pytest.raises(OSError) as listed:  # noqa: PT011 - the errno is checked below
            _confine.list_beneath(root, path)
        with pytest.raises((OSError, _confine.Refused)):
            _confine.write_beneath(root, path if path != "out" else "out/new.txt", b"x")
    assert {read.value.errno, listed.value.errno} <= {errno.ELOOP, errno.ENOTDIR, errno.EXDEV}
    assert (tree.parent / "outside" / "f.txt").read_text() == "secret"
    assert not (tree.parent / "outside" / "new.txt").exists()
    assert (tree / "a" / "f.txt").read_text() == "inside"


@pytest.mark.parametrize("path", ["../outside/f.txt", "a/../a/f.txt", "/etc/hostname", "a//f.txt"])
def test_only_plain_paths_below_the_root(tree: Path, opener: str, path: str) -> None:
    with _confine.opened_root(str(tree)) as root, pytest.raises(_confine.Refused):
        _confine.read_beneath(root, path, 100)


def test_a_root_reached_through_a_symlink_is_refused(tree: Path, opener: str) -> None:
    with (
        pytest.raises(OSError) as opened,  # noqa: PT011 - the errno is checked below
        _confine.opened_root(str(tree / "out")),
    ):
        pass
    assert opened.value.errno in (errno.ELOOP, errno.ENOTDIR)


def test_writes_keep_the_mode_and_leave_no_temporary(tree: Path, opener: str) -> None:
    target = tree / "a" / "f.txt"
    target.chmod(0o640)
    with _confine.opened_root(str(tree)) as root:
        _confine.write_beneath(root, "a/f.txt", b"new")
        _confine.write_beneath(root, "b/c/new.txt", b"made")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640
    umask = os.umask(0o022)
    os.umask(umask)
    assert (tree / "b" / "c" / "new.txt").stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in tree.rglob(".ferrotool-*")] == []


def test_a_fifo_is_refused_without_blocking(tree: Path, opener: str) -> None:
    os.mkfifo(tree / "pipe")
    with _confine.opened_root(str(tree)) as root, pytest.raises(_confine.Refused):
        _confine.read_beneath(root, "pipe", 100)


# - rules over a base that holds a symlink -


@pytest.fixture
def linked(tmp_path: Path) -> tuple[Path, Path]:
    """``x/real/secret/a`` and ``x/link`` pointing to ``x/real``."""
    real = tmp_path / "x" / "real"
    (real / "secret").mkdir(parents=True)
    (real / "secret" / "a").write_text("kept")
    os.symlink(real, tmp_path / "x" / "link")
    return tmp_path / "x" / "link", real


@pytest.mark.parametrize(
    ("configured", "written"),
    [("link", "link"), ("link", "real"), ("real", "link"), ("real", "real")],
)
async def test_a_rule_with_the_base_matches_through_its_symlink(
    linked: tuple[Path, Path], configured: str, written: str
) -> None:
    link, real = linked
    spelled = {"link": link, "real": real}
    tool = WriteTextFile(spelled[configured])
    rule = f"{spelled[written]}/secret/*"
    assert tool.match_rule(rule, {"file_path": "secret/a", "content": "x"})
    assert not tool.match_rule(rule, {"file_path": "open/a", "content": "x"})
    toolkit = Toolkit()
    toolkit.register(tool)
    state = PermissionContextState(
        deny_rules={
            tool.name: (
                PermissionRule(
                    tool_name=tool.name, behavior=PermissionBehavior.DENY, rule_content=rule
                ),
            )
        }
    )
    view = toolkit.snapshot().view(ToolContextState(permissions=state))
    result = await view.call_tool(
        ToolUseBlock.of("w", tool.name, {"file_path": "secret/a", "content": "x"})
    )
    assert result.state is ToolResultState.DENIED, result.content
    assert (real / "secret" / "a").read_text() == "kept"


# - calls that never raise -

ODD_PATHS = {
    "long-name": "a" * 300,
    "long-inside": "x/" + "a" * 300 + "/b",
    "deep": "/".join(["d"] * 3000),
    "nul": "a\x00b",
    "dangerous-long": ".ssh/" + "k" * 300,
}


def _arguments(name: str, path: str) -> dict[str, object]:
    key = "dir_path" if name == "list_directory" else "file_path"
    extra: dict[str, object] = {"content": "x"} if "write" in name or "insert" in name else {}
    if "insert" in name:
        extra["line_number"] = 1
    return {key: path, **extra}


@pytest.mark.parametrize("path", ODD_PATHS.values(), ids=ODD_PATHS.keys())
async def test_odd_paths_are_error_results(tmp_path: Path, path: str) -> None:
    toolkit = Toolkit()
    for tool in file_tools(tmp_path):
        toolkit.register(tool)
    names = ("view_text_file", "list_directory", "write_text_file", "insert_text_file")
    calls = [ToolUseBlock.of(f"c{i}", name, _arguments(name, path)) for i, name in enumerate(names)]  # type: ignore[arg-type]
    for call in calls:
        result = await toolkit.call_tool(call)
        assert result.state is not ToolResultState.SUCCESS or result.needs_approval, result.content
    good = ToolUseBlock.of("good", "write_text_file", {"file_path": "ok.txt", "content": "ok"})
    batch = await toolkit.call_tools([*calls, good])
    assert [r.id for r in batch.results] == [*(c.id for c in calls), "good"]
    assert batch.results[-1].state is ToolResultState.SUCCESS
    assert (tmp_path / "ok.txt").read_text() == "ok"


async def test_a_lone_surrogate_is_an_error_result(tmp_path: Path) -> None:
    path = "bad\ud800.txt"
    for tool in file_tools(tmp_path):
        arguments = _arguments(tool.name, path)
        decision = await tool.check_permissions(arguments, PermissionContext())  # type: ignore[arg-type]
        assert decision.behavior is PermissionBehavior.ALLOW  # nothing will be touched
        assert not tool.match_rule("*", arguments)  # type: ignore[arg-type]
        assert tool.generate_suggestions(arguments) == ()  # type: ignore[arg-type]
        call = ToolUseBlock.of("s", tool.name, {})
        param = ToolCallParam(arguments, call, RuntimeContext(), None, Emitter(call))
        result = await tool.call(param)  # type: ignore[arg-type]
        assert result.state is ToolResultState.ERROR
        assert "cannot be resolved" in result.content


# - a dangerous path reached through a symlink -


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A base with ``.git/hooks/``, ``.aws/credentials`` and an ordinary ``notes/`` folder."""
    base = tmp_path / "project"
    (base / ".git" / "hooks").mkdir(parents=True)
    (base / ".aws").mkdir()
    (base / ".aws" / "credentials").write_text("key")
    (base / "notes").mkdir()
    return base


async def test_a_link_to_a_dangerous_path_is_refused(project: Path) -> None:
    os.symlink(project / ".aws" / "credentials", project / "harmless.txt")
    os.symlink(project / ".git" / "hooks", project / "hooks")
    toolkit = Toolkit()
    for tool in file_tools(project):
        toolkit.register(tool)
    read = await toolkit.call_tool(
        ToolUseBlock.of("r", "view_text_file", {"file_path": "harmless.txt"})
    )
    write = await toolkit.call_tool(
        ToolUseBlock.of("w", "write_text_file", {"file_path": "hooks/pre-commit", "content": "x"})
    )
    for result in (read, write):
        assert result.state is ToolResultState.ERROR
        assert "through a symlink" in result.content
    assert "key" not in read.content
    assert not (project / ".git" / "hooks" / "pre-commit").exists()


async def test_a_link_swapped_in_after_the_check_is_refused_when_the_call_runs(
    project: Path,
) -> None:
    tool = WriteTextFile(project)
    arguments: dict[str, object] = {"file_path": "notes/pre-commit", "content": "evil"}
    decision = await tool.check_permissions(arguments, PermissionContext())  # type: ignore[arg-type]
    assert decision.behavior is PermissionBehavior.PASSTHROUGH  # an ordinary file, then
    (project / "notes").rmdir()
    os.symlink(project / ".git" / "hooks", project / "notes")
    call = ToolUseBlock.of("w", tool.name, arguments)  # type: ignore[arg-type]
    param = ToolCallParam(arguments, call, RuntimeContext(), None, Emitter(call))
    result = await tool.call(param)  # type: ignore[arg-type]
    assert result.state is ToolResultState.ERROR
    assert "through a symlink" in result.content
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
