"""The sandbox against two escapes: a host Unix socket reached by path, and files planted in
the working folder that the host runs later (git hooks and config, editor and agent settings).

Each test shows the escape blocked by default and, where the operator may allow it, open with
the option that allows it.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from ferrotool import Toolkit, ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool.builtins import Sandbox, SandboxWarning
from ferrotool.builtins._sandbox import (
    BLOCKED_SUFFIX,
    _runtime_cover,
    sandbox_problem,
    seccomp_filter,
    unix_sockets_confined,
)
from ferrotool.builtins.shell import SHELL_TOOL, ShellCommandTool

PY = os.path.realpath(sys.executable)
PROBLEM = sandbox_problem(Sandbox())
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=f"no sandbox here: {PROBLEM}")


async def _run(tool: ShellCommandTool, command: str) -> ToolResultBlock:
    toolkit = Toolkit()
    toolkit.register(tool)
    return await toolkit.call_tool(ToolUseBlock.of("c", SHELL_TOOL, {"command": command}))


def _py(code: str, *args: str) -> str:
    """A command running ``code`` with this Python (the code quoted for the command line)."""
    quoted = code.replace("'", "'\"'\"'")
    return " ".join([PY, "-c", f"'{quoted}'", *args])


def _out(result: ToolResultBlock) -> Mapping[str, object]:
    assert isinstance(result.structured, dict)
    return result.structured


def _tool(cwd: Path, sandbox: Sandbox | None = None, *allow: str) -> ShellCommandTool:
    return ShellCommandTool(
        allow=[PY, f"{PY} -c", *allow], cwd=cwd, sandbox=sandbox or Sandbox(), timeout=30
    )


# --- host Unix sockets ----------------------------------------------------------------------


@pytest.fixture
def host_socket() -> Iterator[str]:
    """A host Unix stream server answering ``pong`` to each connection, its socket in a folder
    the sandbox sees (read-only) outside the working folder and outside /tmp and /run."""
    folder = tempfile.mkdtemp(prefix="ferrotool-sock-", dir=Path.home())
    path = os.path.join(folder, "service.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    server.settimeout(0.2)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                peer, _ = server.accept()
            except OSError:
                continue
            with peer:
                peer.sendall(b"pong")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        done.set()
        thread.join()
        server.close()
        shutil.rmtree(folder)


CONNECT = (
    "import socket, sys; s = socket.socket(socket.AF_UNIX); s.settimeout(5); "
    "s.connect(sys.argv[1]); print(s.recv(4).decode())"
)
DATAGRAM = (
    "import socket, sys; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); "
    "a.sendto(b'x', sys.argv[1]); print('sent')"
)


async def test_a_host_unix_socket_cannot_be_reached(tmp_path: Path, host_socket: str) -> None:
    blocked = await _run(_tool(tmp_path), _py(CONNECT, host_socket))
    assert blocked.state is ToolResultState.ERROR
    assert "pong" not in str(_out(blocked)["stdout"])
    assert "PermissionError" in blocked.content
    # nor by a datagram from a socket pair (its sockets may send to any path)
    sent = await _run(_tool(tmp_path), _py(DATAGRAM, host_socket))
    assert "sent" not in str(_out(sent)["stdout"])
    # the operator may allow it
    allowed = await _run(_tool(tmp_path, Sandbox(unix_sockets=True)), _py(CONNECT, host_socket))
    assert allowed.state is ToolResultState.SUCCESS, allowed.content
    assert _out(allowed)["stdout"] == "pong\n"


async def test_abstract_sockets_are_kept_apart_by_the_network_namespace(tmp_path: Path) -> None:
    # without the seccomp filter, the sandbox's own network namespace still hides the host's
    # abstract sockets; with the host's network, they are reachable
    name = f"\0ferrotool-test-{os.getpid()}-{id(tmp_path)}"
    connect = (
        "import socket, sys; s = socket.socket(socket.AF_UNIX); s.settimeout(5); "
        f"s.connect({name!r}); print(s.recv(4).decode())"
    )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(name)
        server.listen(8)
        apart = await _run(_tool(tmp_path, Sandbox(unix_sockets=True)), _py(connect))
        assert "ConnectionRefusedError" in apart.content
        shared = Sandbox(unix_sockets=True, network=True)
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, _answer_once, server)
            reached = await _run(_tool(tmp_path, shared), _py(connect))
        assert _out(reached)["stdout"] == "pong\n", reached.content


def _answer_once(server: socket.socket) -> None:
    server.settimeout(10)
    peer, _ = server.accept()
    with peer:
        peer.sendall(b"pong")


async def test_common_programs_work_under_the_filter(tmp_path: Path) -> None:
    code = (
        "import asyncio, socket, subprocess; a, b = socket.socketpair(); "
        "socket.socket().close(); asyncio.run(asyncio.sleep(0)); "
        "print(subprocess.run(['git', 'init', '-q', 'repo']).returncode)"
    )
    result = await _run(_tool(tmp_path), _py(code))
    assert result.state is ToolResultState.SUCCESS, result.content
    assert (tmp_path / "repo" / ".git").is_dir()


def test_the_filter_is_known_per_architecture() -> None:
    for machine in ("x86_64", "aarch64"):
        program = seccomp_filter(Sandbox(), machine)
        assert program is not None
        assert len(program) % 8 == 0
    # an unknown machine gets no filter (its Unix sockets are not confined), nor does an
    # operator who allows Unix sockets
    assert seccomp_filter(Sandbox(), "riscv64") is None
    assert seccomp_filter(Sandbox(unix_sockets=True)) is None
    assert not unix_sockets_confined(Sandbox(unix_sockets=True))


def test_an_unknown_architecture_says_unix_sockets_are_not_confined(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(platform, "machine", lambda: "riscv64")
    with pytest.warns(SandboxWarning, match="Unix sockets on this architecture"):
        ShellCommandTool(sandbox=Sandbox())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ShellCommandTool(sandbox=Sandbox(unix_sockets=True))  # the operator's own choice


# --- files the host runs later ---------------------------------------------------------------

WRITE = "import sys; open(sys.argv[1], 'w').write('#!/bin/sh\\necho planted\\n')"
RENAME = "import os, sys; os.rename(sys.argv[1], sys.argv[2])"
# git run from inline code: the command policy asks before a bare ``git config core.hooksPath``
GIT = "import subprocess, sys; sys.exit(subprocess.call(['git', *sys.argv[1:]]))"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with editor settings and a direnv file, as a project has them."""
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / ".vscode").mkdir()
    (work / ".vscode" / "tasks.json").write_text("{}")
    (work / ".envrc").write_text("")
    return work


def _git_config(work: Path, key: str) -> str:
    shown = subprocess.run(
        ["git", "-C", str(work), "config", "--get", key], capture_output=True, text=True
    )
    return shown.stdout.strip()


async def test_the_host_runs_nothing_a_command_plants(repo: Path) -> None:
    tool = _tool(repo, Sandbox(), "git")
    hook = await _run(tool, _py(WRITE, ".git/hooks/pre-commit"))
    assert hook.state is ToolResultState.ERROR
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    configured = await _run(tool, _py(GIT, "config", "core.hooksPath", "/tmp/x"))
    assert configured.state is ToolResultState.ERROR
    assert _git_config(repo, "core.hooksPath") == ""
    for planted in (".vscode/tasks.json", ".envrc"):
        assert (await _run(tool, _py(WRITE, planted))).state is ToolResultState.ERROR
        assert "planted" not in (repo / planted).read_text()
    # nor by moving the repository's folder aside to make a new one
    moved = await _run(tool, _py(RENAME, ".git", "old-git"))
    assert moved.state is ToolResultState.ERROR
    assert (repo / ".git" / "config").is_file()
    assert not (repo / "old-git").exists()
    # the project stays writable, and git works in it
    written = await _run(tool, _py(WRITE, "src/a.py"))
    assert written.state is ToolResultState.SUCCESS, written.content
    assert "planted" in (repo / "src" / "a.py").read_text()
    added = await _run(tool, "git add src/a.py")
    assert added.state is ToolResultState.SUCCESS, added.content
    commit = "git -c user.name=t -c user.email=t@example.com commit -q -m add"
    committed = await _run(tool, commit)
    assert committed.state is ToolResultState.SUCCESS, committed.content


async def test_an_operator_may_leave_the_project_unprotected(repo: Path) -> None:
    tool = _tool(repo, Sandbox(protected=()), "git")
    hook = await _run(tool, _py(WRITE, ".git/hooks/pre-commit"))
    assert hook.state is ToolResultState.SUCCESS, hook.content
    configured = await _run(tool, _py(GIT, "config", "core.hooksPath", "/tmp/x"))
    assert configured.state is ToolResultState.SUCCESS, configured.content
    assert _git_config(repo, "core.hooksPath") == "/tmp/x"


PLANT = (
    "import os\n"
    "os.makedirs('.claude', exist_ok=True)\n"
    "open('.claude/settings.json', 'w').write('{}')\n"
    "open('.mcp.json', 'w').write('{}')\n"
    "open('.git/commondir', 'w').write('/tmp/elsewhere')\n"
    "open('src/b.py', 'w').write('ok')\n"
)


async def test_a_protected_path_a_command_creates_is_moved_aside(repo: Path) -> None:
    result = await _run(_tool(repo), _py(PLANT))
    assert result.state is ToolResultState.ERROR
    for planted in (".claude", ".mcp.json", ".git/commondir"):
        assert not (repo / planted).exists()
        assert (repo / f"{planted}{BLOCKED_SUFFIX}").exists()
        assert f"Sandbox: {repo / planted} is protected" in result.content
    assert (repo / "src" / "b.py").read_text() == "ok"  # the rest of the work stands
    assert _git_config(repo, "core.bare") == "false"  # git still reads the repository's own


async def test_a_worktrees_git_link_is_protected(repo: Path, tmp_path: Path) -> None:
    author = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    first = ["git", "-C", str(repo), *author, "commit", "-q", "--allow-empty", "-m", "first"]
    subprocess.run(first, check=True)
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], check=True)
    link = (linked / ".git").read_text()
    result = await _run(_tool(linked), _py(WRITE, ".git"))
    assert result.state is ToolResultState.ERROR
    assert (linked / ".git").read_text() == link


def test_protected_paths_stay_inside_their_folder() -> None:
    assert Sandbox(protected=["a/./b", ".envrc"]).protected == ("a/b", ".envrc")
    for bad in ("/etc/passwd", "../x", "a/../../x", "", "."):
        with pytest.raises(ValueError, match="protected"):
            Sandbox(protected=[bad])
    with pytest.raises(TypeError, match="protected"):
        Sandbox(protected=".envrc")


async def test_the_hosts_runtime_folders_are_empty(tmp_path: Path) -> None:
    service = Path("/run") / f"ferrotool-test-{os.getpid()}-{id(tmp_path)}"
    service.mkdir()
    try:
        (service / "service.sock").write_text("")
        look = "import os, sys; print(os.path.exists(sys.argv[1]))"
        covered = await _run(_tool(tmp_path), _py(look, str(service / "service.sock")))
        assert _out(covered)["stdout"] == "False\n", covered.content
        shown = Sandbox(unix_sockets=True)
        seen = await _run(_tool(tmp_path, shown), _py(look, str(service / "service.sock")))
        assert _out(seen)["stdout"] == "True\n", seen.content
    finally:
        shutil.rmtree(service)


def test_what_a_command_needs_from_the_runtime_folders_stays() -> None:
    env = {"PATH": "/run/wrappers/bin:/usr/bin", "XDG_RUNTIME_DIR": "/run/user/0"}
    args = _runtime_cover(env)
    assert args.count("--tmpfs") == 1  # /run covers the session's folder; /var/run is /run
    assert args[:2] == ["--tmpfs", os.path.realpath("/run")]
    assert args[-3:] == ["--ro-bind-try", "/run/wrappers/bin", "/run/wrappers/bin"]
