"""The shell sandbox's cost: a command's start-up with and without bubblewrap.

Every row runs ``true`` once per call, awaited in one event loop:

* the floor: ``anyio.open_process(["true"])`` and its exit, nothing else;
* the sandbox alone: the same spawn of the argv the shell tool starts under its sandbox
  (``bwrap`` with its namespaces and mounts, then ``prlimit``, then ``true``), with the pids
  cgroup a call as root gets, and (as root) without that cgroup (``Sandbox(processes=None)``):
  moving a process into a cgroup waits for an RCU grace period on cgroup v1;
* ``execute_shell_command`` through ``Toolkit.call_tool``, with ``sandbox=False`` and with the
  default sandbox: what a model's command costs before it does anything.

The sandbox's cost is the sandboxed call's median less the unsandboxed one's; both rows and
the floor are printed, and the figure under the table. Where no sandbox can start, the
sandboxed rows are left out with the reason in the notes.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

import anyio

from ferrotool import Toolkit, ToolResultBlock, ToolResultState, ToolUseBlock
from ferrotool.builtins import Sandbox
from ferrotool.builtins._sandbox import command_env, launch, sandbox_problem
from ferrotool.builtins.shell import SHELL_TOOL, ShellCommandTool

CASE: Final = "true, one command"
FLOOR: Final = "floor: anyio.open_process(true)"
BARE_SANDBOX: Final = "bwrap + prlimit spawn of true"
BARE_NO_CGROUP: Final = "bwrap + prlimit spawn of true, no pids cgroup"
TOOL_PLAIN: Final = "execute_shell_command, sandbox=False"
TOOL_SANDBOXED: Final = "execute_shell_command, sandboxed"


async def spawn(argv: list[str], env: dict[str, str] | None = None) -> int:
    """Start ``argv``, wait for it, and return its exit status."""
    async with await anyio.open_process(argv, env=env) as process:
        return await process.wait()


@contextmanager
def work_dir() -> Iterator[Path]:
    """The commands' working folder."""
    with tempfile.TemporaryDirectory(prefix="ferrotool-bench-sandbox-") as folder:
        yield Path(folder)


def problem() -> str | None:
    """Why the sandboxed rows cannot run here (``None``: they can)."""
    return sandbox_problem(Sandbox())


def implementations(work: Path) -> dict[str, Callable[[], Awaitable[object]]]:
    """The rows that can run here, each a call to await (see the module)."""
    true = shutil.which("true") or "/bin/true"
    impls: dict[str, Callable[[], Awaitable[object]]] = {FLOOR: lambda: spawn([true])}
    plain = _call(ShellCommandTool(allow=["true"], cwd=work, sandbox=False))
    if problem() is None:
        sandbox = Sandbox()
        impls[BARE_SANDBOX] = _bare(sandbox, true, work)
        if launch(Sandbox(processes=None), [true], work, {}).cgroup is None:
            probe = launch(sandbox, [true], work, {})
            anyio.run(probe.close)
            if probe.cgroup is not None:
                impls[BARE_NO_CGROUP] = _bare(Sandbox(processes=None), true, work)
        impls[TOOL_PLAIN] = plain
        impls[TOOL_SANDBOXED] = _call(ShellCommandTool(allow=["true"], cwd=work, sandbox=sandbox))
    else:
        impls[TOOL_PLAIN] = plain
    return impls


def _bare(sandbox: Sandbox, true: str, work: Path) -> Callable[[], Awaitable[int]]:
    async def bare() -> int:
        started = launch(sandbox, [true], work, command_env())
        try:
            return await spawn(started.argv, started.env)
        finally:
            await started.close()

    return bare


def _call(tool: ShellCommandTool) -> Callable[[], Awaitable[ToolResultBlock]]:
    toolkit = Toolkit()
    toolkit.register(tool)
    call = ToolUseBlock.of("bench", SHELL_TOOL, {"command": "true"})

    async def run() -> ToolResultBlock:
        return await toolkit.call_tool(call)

    return run


def ok(result: object) -> bool:
    """Whether a row's call ran ``true`` to its end (exit status 0, or a successful result)."""
    if isinstance(result, ToolResultBlock):
        return result.state is ToolResultState.SUCCESS and result.content.startswith(
            "<returncode>0</returncode>"
        )
    return result == 0


def sandbox_cost(medians: dict[str, float]) -> tuple[float, float] | None:
    """The sandboxed call's extra microseconds over the unsandboxed one, and their ratio."""
    if TOOL_SANDBOXED not in medians or TOOL_PLAIN not in medians:
        return None
    plain, sandboxed = medians[TOOL_PLAIN], medians[TOOL_SANDBOXED]
    return sandboxed - plain, sandboxed / plain
