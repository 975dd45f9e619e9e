"""execute_shell_command's limits and sandbox: timeout, environment, charset, descendants,
the file system, the network, resource limits, and what happens where no sandbox can start.

The sandbox tests run commands inside the real bubblewrap sandbox and are skipped (with the
reason) where it cannot start. The fork bomb runs only once a safe probe has shown that the
number of processes is bounded, and inside a PID namespace that dies with the call.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

import anyio
import pytest

from ferrotool import (
    Confirmation,
    InMemorySessionStore,
    PermissionBehavior,
    PermissionContext,
    PermissionContextState,
    PermissionMode,
    RuntimeContext,
    Toolkit,
    ToolResultBlock,
    ToolResultState,
    ToolUseBlock,
    ToolView,
)
from ferrotool.builtins import Sandbox, SandboxWarning
from ferrotool.builtins._sandbox import ENV_ALLOW, command_env, sandbox_problem
from ferrotool.builtins.shell import SHELL_TOOL, ShellCommandTool

PY = os.path.realpath(sys.executable)
PROBLEM = sandbox_problem(Sandbox())
needs_sandbox = pytest.mark.skipif(PROBLEM is not None, reason=f"no sandbox here: {PROBLEM}")
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
MISSING_BWRAP = Sandbox(bwrap="/nonexistent/ferrotool-test/bwrap")

# Both ways of running: in the sandbox (where it can start) and without one.
MODES = [
    pytest.param(True, id="sandboxed", marks=needs_sandbox),
    pytest.param(False, id="unsandboxed"),
]


CONTEXT = RuntimeContext(user_id="u", session_id="s")


async def _view(tool: ShellCommandTool, mode: PermissionMode | None = None) -> ToolView:
    toolkit = Toolkit()
    toolkit.register(tool)
    view = await toolkit.snapshot().open_view(CONTEXT, InMemorySessionStore())
    if mode is None:
        return view
    state = PermissionContextState(mode=mode)
    return toolkit.snapshot().view(view.state.with_permissions(state))


async def _run(tool: ShellCommandTool, command: str, **extra: object) -> ToolResultBlock:
    toolkit = Toolkit()
    toolkit.register(tool)
    call = ToolUseBlock.of("c", SHELL_TOOL, {"command": command, **extra})  # type: ignore[dict-item]
    return await toolkit.call_tool(call)


def _py(code: str, *args: str) -> str:
    """A command running ``code`` with this Python (the code quoted for the command line)."""
    quoted = code.replace("'", "'\"'\"'")
    return " ".join([PY, "-c", f"'{quoted}'", *args])


def _out(result: ToolResultBlock) -> Mapping[str, object]:
    assert isinstance(result.structured, dict)
    return result.structured


def _marked(marker: str) -> list[int]:
    """The host's processes whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


async def _none_left(marker: str) -> bool:
    """Whether every process marked ``marker`` is gone (within a second: the dead are reaped)."""
    for _ in range(50):
        if not _marked(marker):
            return True
        await anyio.sleep(0.02)
    return False


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique number to tag processes with (``sleep`` adds it to its seconds); any process
    still holding it after the test is killed."""
    mark = f"0.000{uuid.uuid4().int % 10**12:012d}"
    yield mark
    for pid in _marked(mark):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _tool(sandboxed: bool, tmp_path: Path, **options: object) -> ShellCommandTool:
    options.setdefault("allow", [PY, f"{PY} -c"])
    options.setdefault("sandbox", sandboxed)
    return ShellCommandTool(cwd=tmp_path, **options)  # type: ignore[arg-type]


# --- limits: timeout, environment, charset, descendants ---------------------------------------


@pytest.mark.parametrize("sandboxed", MODES)
async def test_the_operators_timeout_wins_over_the_models(sandboxed: bool, tmp_path: Path) -> None:
    tool = _tool(sandboxed, tmp_path, timeout=2)
    started = time.monotonic()
    result = await _run(tool, _py("import time; time.sleep(8)"), timeout=3600)
    assert time.monotonic() - started < 6
    assert _out(result)["timed_out"] is True
    assert "exceeded the timeout of 2 seconds" in result.content
    # a model may still shorten it
    quick = await _run(
        _tool(sandboxed, tmp_path, allow=["sleep"], timeout=30), "sleep 5", timeout=1
    )
    assert "timeout of 1 seconds" in quick.content
    assert "most: 2)" in str(tool.spec.parameters_json)


@pytest.mark.parametrize("sandboxed", MODES)
async def test_host_secrets_are_not_in_the_environment(
    sandboxed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ferrotool-test-secret")
    monkeypatch.setenv("FERROTOOL_TEST_SECRET", "hunter2-ferrotool")
    monkeypatch.setenv("LC_TIME", "C")
    tool = _tool(sandboxed, tmp_path, allow=["env"])
    result = await _run(tool, "env")
    assert result.state is ToolResultState.SUCCESS
    assert "sk-ferrotool-test-secret" not in result.content
    assert "hunter2-ferrotool" not in result.content
    assert "OPENAI_API_KEY" not in result.content
    assert f"PATH={os.environ['PATH']}\n" in result.content
    assert "LC_TIME=C\n" in result.content  # LC_* is allowed
    # the operator names what else goes through, and adds variables of its own
    named = _tool(
        sandboxed,
        tmp_path,
        allow=["env"],
        inherit_env=["FERROTOOL_TEST_*"],
        env={"GREETING": "hi", "PATH": os.environ["PATH"]},
    )
    shown = await _run(named, "env")
    assert "FERROTOOL_TEST_SECRET=hunter2-ferrotool\n" in shown.content
    assert "GREETING=hi\n" in shown.content
    assert "sk-ferrotool-test-secret" not in shown.content


def test_command_env_is_an_allow_list() -> None:
    host = {"PATH": "/bin", "LC_ALL": "C", "AWS_SECRET_ACCESS_KEY": "k", "HOME": "/h", "X": "1"}
    assert command_env(environ=host) == {"PATH": "/bin", "LC_ALL": "C", "HOME": "/h"}
    assert command_env(["X"], {"HOME": "/other"}, host) == {
        "PATH": "/bin",
        "LC_ALL": "C",
        "HOME": "/other",
        "X": "1",
    }
    assert command_env(["*"], environ=host) == host
    assert "PATH" in ENV_ALLOW
    assert not any("KEY" in name or "TOKEN" in name for name in ENV_ALLOW)


@pytest.mark.parametrize(
    ("env", "inherit"), [({"A=B": "x"}, ()), ({"": "x"}, ()), ({"A": "\x00"}, ()), ({}, ("A*B",))]
)
def test_bad_environments_are_refused(env: dict[str, str], inherit: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="env"):
        ShellCommandTool(env=env, inherit_env=inherit, sandbox=False)


@pytest.mark.parametrize(
    "charset", ["rot13", "base64", "hex", "zlib_codec", "nonsense", "idna", "", "utf-8"]
)
@pytest.mark.parametrize("sandboxed", MODES)
async def test_a_bad_charset_never_loses_the_output(
    sandboxed: bool, charset: str, tmp_path: Path
) -> None:
    tool = _tool(sandboxed, tmp_path, allow=["echo"])
    result = await _run(tool, "echo héllo", charset=charset)
    assert result.state is ToolResultState.SUCCESS
    assert result.content == ("<returncode>0</returncode><stdout>héllo\n</stdout><stderr></stderr>")


@linux_only
async def test_without_a_sandbox_the_process_group_ends_with_the_call(
    tmp_path: Path, marker: str
) -> None:
    # the child keeps the command's output open, in the command's process group
    code = f"import subprocess; subprocess.Popen(['sleep', '27', '{marker}'])"
    tool = _tool(False, tmp_path, timeout=8)
    started = time.monotonic()
    result = await _run(tool, _py(code))
    assert time.monotonic() - started < 5
    assert result.state is ToolResultState.SUCCESS
    assert await _none_left(marker)


# --- the sandbox ----------------------------------------------------------------------------------


def _setsid_then_wait(marker: str) -> str:
    return (
        "import subprocess, time; "
        f"subprocess.Popen(['setsid', 'sleep', '27', '{marker}']); time.sleep(30)"
    )


@needs_sandbox
async def test_setsid_does_not_outlive_the_call(tmp_path: Path, marker: str) -> None:
    # In the sandbox the command is not a process group leader: setsid runs sleep itself,
    # which the timeout ends.
    tool = _tool(True, tmp_path, allow=["sleep"], timeout=2)
    started = time.monotonic()
    result = await _run(tool, f"setsid sleep 27 {marker}")
    assert time.monotonic() - started < 6
    assert _out(result)["timed_out"] is True
    assert await _none_left(marker)
    # forked into a session of its own, it ends with the command
    started = time.monotonic()
    forked = await _run(tool, f"setsid --fork sleep 27 {marker}")
    assert time.monotonic() - started < 2
    assert forked.state is ToolResultState.SUCCESS
    assert await _none_left(marker)
    # and with the call when the command is still running at the timeout
    timed_out = await _run(_tool(True, tmp_path, timeout=1), _py(_setsid_then_wait(marker)))
    assert _out(timed_out)["timed_out"] is True
    assert await _none_left(marker)


@needs_sandbox
async def test_a_cancelled_call_ends_every_process_of_the_sandbox(
    tmp_path: Path, marker: str
) -> None:
    code = _setsid_then_wait(marker)
    tool = _tool(True, tmp_path)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(_run, tool, _py(code))
            while not _marked(marker):
                await anyio.sleep(0.02)
            group.cancel_scope.cancel()
    assert await _none_left(marker)


@needs_sandbox
async def test_only_the_working_folders_are_writable(tmp_path: Path) -> None:
    work, extra, outside = tmp_path / "work", tmp_path / "extra", tmp_path / "outside"
    for folder in (work, extra, outside, work / ".git"):
        folder.mkdir()
    sandbox = Sandbox(writable=[extra], read_only=[work / ".git"])
    tool = ShellCommandTool(allow=[PY, f"{PY} -c"], cwd=work, sandbox=sandbox)
    write = "import sys; open(sys.argv[1], 'w').write('x')"
    inside = await _run(tool, _py(write, "inside.txt"))
    assert inside.state is ToolResultState.SUCCESS, inside.content
    assert (work / "inside.txt").read_text() == "x"
    assert (await _run(tool, _py(write, str(extra / "e.txt")))).state is ToolResultState.SUCCESS
    assert (extra / "e.txt").exists()
    for target in (outside / "o.txt", work / ".git" / "hooks", Path.home() / "ferrotool-x"):
        result = await _run(tool, _py(write, str(target)))
        assert result.state is ToolResultState.ERROR
        assert "Read-only file system" in result.content or (
            "No such file or directory" in result.content  # /tmp is the sandbox's own
        )
        assert not target.exists()
    # /tmp is the sandbox's own
    name = f"ferrotool-sandbox-{uuid.uuid4().hex}"
    private = await _run(tool, _py(write, f"/tmp/{name}"))
    assert private.state is ToolResultState.SUCCESS
    assert not (Path("/tmp") / name).exists()


@needs_sandbox
async def test_a_working_folder_of_root_leaves_the_system_read_only() -> None:
    name = f"/ferrotool-sandbox-{uuid.uuid4().hex}"
    tool = ShellCommandTool(allow=["touch"], cwd="/")
    result = await _run(tool, f"touch {name}")
    assert "Read-only file system" in result.content
    assert not os.path.exists(name)


@needs_sandbox
async def test_hidden_paths_are_empty(tmp_path: Path) -> None:
    work, secrets = tmp_path / "work", tmp_path / "work" / "secrets"
    secrets.mkdir(parents=True)
    (secrets / "key").write_text("private")
    (work / ".env").write_text("TOKEN=private")
    (work / "notes.txt").write_text("public")
    sandbox = Sandbox(hidden=[secrets, work / ".env", tmp_path / "missing"])
    tool = ShellCommandTool(allow=["ls", "cat", PY, f"{PY} -c"], cwd=work, sandbox=sandbox)
    shown = await _run(tool, "cat notes.txt .env secrets/key")
    assert "public" in shown.content
    assert "private" not in shown.content
    listed = await _run(tool, "ls -A secrets")
    assert listed.content == "<returncode>0</returncode><stdout></stdout><stderr></stderr>"
    # hidden stays hidden, even inside the writable folder
    write = "import sys; open(sys.argv[1], 'w').write('x')"
    for target in (".env", "secrets/new"):
        assert (await _run(tool, _py(write, target))).state is ToolResultState.ERROR
    assert (work / ".env").read_text() == "TOKEN=private"
    assert not (secrets / "new").exists()


@needs_sandbox
async def test_no_connection_to_a_loopback_server(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        connect = (
            f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); "
            "print('connected')"
        )
        refused = await _run(_tool(True, tmp_path), _py(connect))
        assert refused.state is ToolResultState.ERROR
        assert "connected" not in _out(refused)["stdout"]  # type: ignore[operator]
        allowed = await _run(_tool(True, tmp_path, sandbox=Sandbox(network=True)), _py(connect))
        assert allowed.state is ToolResultState.SUCCESS, allowed.content
        assert _out(allowed)["stdout"] == "connected\n"


COUNT_FORKS = """
import os, sys, time
made = 0
for _ in range(60):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    made += 1
print(made)
"""


@needs_sandbox
async def test_the_number_of_processes_is_bounded(tmp_path: Path) -> None:
    tool = _tool(True, tmp_path, sandbox=Sandbox(processes=16), timeout=20)
    result = await _run(tool, _py(COUNT_FORKS))
    assert result.state is ToolResultState.SUCCESS, result.content
    assert 0 < int(str(_out(result)["stdout"])) < 16


@needs_sandbox
async def test_a_fork_bomb_is_bounded_and_ends_with_the_call(tmp_path: Path, marker: str) -> None:
    probe = await _run(_tool(True, tmp_path, sandbox=Sandbox(processes=16)), _py(COUNT_FORKS))
    if not int(str(_out(probe)["stdout"]) or 60) < 16:  # never run an unbounded bomb
        pytest.fail(f"the process count is not bounded: {probe.content}")
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    tool = _tool(True, tmp_path, sandbox=Sandbox(processes=16), timeout=2)
    most = 0

    async def watch() -> None:
        nonlocal most
        while True:
            most = max(most, len(_marked(marker)))
            await anyio.sleep(0.05)

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        result = await _run(tool, _py(bomb, marker))
        group.cancel_scope.cancel()
    assert time.monotonic() - started < 15
    assert _out(result)["timed_out"] is True
    assert 0 < most <= 16 + 2  # bubblewrap's two processes hold the command line too
    assert await _none_left(marker)


@needs_sandbox
async def test_cpu_file_size_and_memory_limits(tmp_path: Path) -> None:
    spin = await _run(
        _tool(True, tmp_path, sandbox=Sandbox(cpu_seconds=1), timeout=30), _py("while True: pass")
    )
    assert spin.state is ToolResultState.ERROR
    assert _out(spin)["timed_out"] is False  # the CPU limit ended it, not the timeout
    big = "import sys; open('big', 'wb').write(b'x' * 50_000)"
    written = await _run(_tool(True, tmp_path, sandbox=Sandbox(file_size=10_000)), _py(big))
    assert written.state is ToolResultState.ERROR
    assert "File too large" in written.content
    assert (tmp_path / "big").stat().st_size <= 10_000
    hog = "b = bytearray(1_000_000_000); print(len(b))"
    memory = await _run(_tool(True, tmp_path, sandbox=Sandbox(memory=300 << 20)), _py(hog))
    assert memory.state is ToolResultState.ERROR
    assert "MemoryError" in memory.content


def test_sandbox_configuration() -> None:
    sandbox = Sandbox(writable=["out"], read_only=[Path("/srv/x")], network=True)
    assert sandbox.writable == (Path.cwd() / "out",)
    assert sandbox.read_only == (Path("/srv/x"),)
    assert hash(sandbox) == hash(
        Sandbox(writable=[Path("out")], read_only=["/srv/x"], network=True)
    )
    with pytest.raises(ValueError, match="processes"):
        Sandbox(processes=0)
    with pytest.raises(TypeError, match="sequence of paths"):
        Sandbox(writable="out")
    assert ShellCommandTool(sandbox=False).sandbox is None
    assert ShellCommandTool(sandbox=None).sandbox is None
    assert ShellCommandTool(sandbox=Sandbox(enabled=False)).sandbox is None


# --- where no sandbox can start -------------------------------------------------------------------


def _unavailable(**options: object) -> ShellCommandTool:
    with pytest.warns(
        SandboxWarning, match="bubblewrap .* is not installed.*every command will ask"
    ):
        return ShellCommandTool(sandbox=MISSING_BWRAP, **options)  # type: ignore[arg-type]


async def test_without_a_sandbox_every_command_asks_even_in_bypass(tmp_path: Path) -> None:
    tool = _unavailable(allow=["echo"], deny=["rm"], cwd=tmp_path)
    assert tool.sandbox_problem is not None
    bypass = PermissionContext(state=PermissionContextState(mode=PermissionMode.BYPASS))
    asked = await tool.check_permissions({"command": "echo hi"}, bypass)
    assert asked.behavior is PermissionBehavior.ASK
    assert (asked.reason or "").startswith("safety: no sandbox")
    denied = await tool.check_permissions({"command": "rm x"}, bypass)
    assert denied.behavior is PermissionBehavior.DENY
    view = await _view(tool, PermissionMode.BYPASS)
    waits = await view.call_tool(ToolUseBlock.of("1", SHELL_TOOL, {"command": "echo hi"}))
    assert waits.needs_approval
    assert not list(tmp_path.iterdir())


async def test_an_explicit_opt_out_runs_without_asking(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tool = ShellCommandTool(allow=["echo"], cwd=tmp_path, sandbox=False)
        disabled = ShellCommandTool(
            allow=["echo"], sandbox=Sandbox(bwrap=MISSING_BWRAP.bwrap, enabled=False)
        )
    bypass = PermissionContextState(mode=PermissionMode.BYPASS)
    for item in (tool, disabled):
        decision = await item.check_permissions(
            {"command": "echo hi"}, PermissionContext(state=bypass)
        )
        assert decision.behavior is PermissionBehavior.ALLOW
    view = await _view(tool, PermissionMode.BYPASS)
    runs = await view.call_tool(ToolUseBlock.of("1", SHELL_TOOL, {"command": "echo hi"}))
    assert runs.content == "<returncode>0</returncode><stdout>hi\n</stdout><stderr></stderr>"


async def test_an_approved_command_runs_without_the_missing_sandbox(tmp_path: Path) -> None:
    toolkit = Toolkit()
    toolkit.register(_unavailable(allow=["echo"], cwd=tmp_path))
    store = InMemorySessionStore()
    registry = toolkit.snapshot()
    view = await registry.open_view(CONTEXT, store)
    call = ToolUseBlock.of("1", SHELL_TOOL, {"command": "echo approved"})
    first = await view.call_tools([call], CONTEXT)
    assert first.suspension is not None
    (result,) = (await registry.resume(CONTEXT, store, [Confirmation("1", True)])).results
    assert (
        result.content == "<returncode>0</returncode><stdout>approved\n</stdout><stderr></stderr>"
    )
