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
from ferrotool.builtins._sandbox import sandbox_problem, seccomp_filter, unix_sockets_confined
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
