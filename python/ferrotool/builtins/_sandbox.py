"""The shell's confinement: a scrubbed environment and an OS sandbox (bubblewrap, on Linux).

Every command of `ShellCommandTool` gets an environment built from an allow-list
(`ENV_ALLOW`) plus what the operator names, never the host's whole environment: an API key in
the host's environment is not visible to a command unless the operator passes it through.

On Linux the command runs under bubblewrap (``bwrap``, Debian's ``bubblewrap`` package):

* the whole file system read-only (``--ro-bind / /``), a fresh ``/dev`` and ``/proc``, a
  private ``/tmp`` (an empty tmpfs);
* writable: the tool's working folder and `Sandbox.writable` only (`Sandbox.read_only` paths
  are bound read-only again on top, e.g. a repository's ``.git`` inside a writable folder);
* in each writable folder, `Sandbox.protected` paths (git's hooks and config, direnv, editors'
  and agents' settings: what the host runs later) bound read-only where they exist, the
  folders above them pinned (bound onto themselves, so they cannot be moved aside), and moved
  aside after the command where it created or replaced one (see `_guard`);
* `Sandbox.hidden` paths covered last, wherever they are (a folder by an empty tmpfs, a file
  by an empty read-only one): ``~/.ssh``, or a ``.env`` inside the working folder;
* no network (``--unshare-net``: not even the host's loopback) unless `Sandbox.network`;
* no Unix sockets of its own (a seccomp filter, see `seccomp_filter`) unless
  `Sandbox.unix_sockets`: a host socket (``/run/docker.sock``, a database's, a session bus)
  is reached through its path, which the read-only file system shows; abstract sockets belong
  to the network namespace, which ``--unshare-net`` makes the sandbox's own; the host's
  ``/run``, ``/var/run`` and ``$XDG_RUNTIME_DIR`` are empty too (see `_runtime_cover`);
* its own user, PID, IPC, UTS and cgroup namespaces, every capability dropped, no further user
  namespaces (where bubblewrap supports ``--disable-userns``), a new session (no terminal
  injection) and ``--die-with-parent``: when the command ends, or its call is cancelled or
  times out, the PID namespace ends and every process in it is killed, ``setsid`` ones too;
* resource limits set by util-linux ``prlimit`` just before the command is executed inside the
  sandbox: CPU seconds, address space, file size and processes (``RLIMIT_CPU``, ``RLIMIT_AS``,
  ``RLIMIT_FSIZE``, ``RLIMIT_NPROC``). ``prlimit`` is a separate program that sets the limits
  on itself and then executes the command, so nothing runs in the forked child of this
  (possibly multi-threaded) process: ``subprocess``'s ``preexec_fn`` is not safe with threads.

``RLIMIT_NPROC`` is counted per user and user namespace; inside the sandbox's own user
namespace it bounds that sandbox's processes, but the kernel does not apply it to processes of
the host's root user. When the host process runs as root, the process count is therefore bounded
by a ``pids`` cgroup created for the call (``pids.max``), where the cgroup file system is
writable; a small shell trampoline moves itself into that cgroup before it executes bubblewrap,
so every process of the sandbox is counted from the first. Without a writable cgroup, a fork
bomb started by root is still ended by the call's timeout and its CPU limit, and the PID
namespace dies with the call.

The sandbox confines writes, the network and processes; it does not hide what the file system
lets the host user read, except the `Sandbox.hidden` paths.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import itertools
import os
import platform
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Concatenate, Final, ParamSpec, Protocol, TypeVar, final

from ferrotool._permissions.decisions import PermissionBehavior, PermissionDecision
from ferrotool.errors import SandboxWarning

ENV_ALLOW: Final[tuple[str, ...]] = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "TZ",
    "TMPDIR",
)
"""Host variables every command sees (a trailing ``*`` matches a prefix): what programs need to
find themselves, their user and their locale, and nothing that holds a credential."""

DEFAULT_CPU_SECONDS: Final = 600
"""CPU seconds a sandboxed process may use (``RLIMIT_CPU``)."""
DEFAULT_MEMORY: Final = 8 << 30
"""Bytes of address space a sandboxed process may map (``RLIMIT_AS``): virtual, not resident,
so runtimes that reserve large areas (the JVM, Go, Node) still start."""
DEFAULT_PROCESSES: Final = 512
"""Processes (and threads) a sandbox may hold at once."""
DEFAULT_FILE_SIZE: Final = 1 << 30
"""Bytes a sandboxed process may write to one file (``RLIMIT_FSIZE``)."""
DEFAULT_PROTECTED: Final[tuple[str, ...]] = (
    ".git/config",
    ".git/hooks",
    ".git/commondir",
    ".husky",
    ".pre-commit-config.yaml",
    ".envrc",
    ".vscode",
    ".idea",
    ".github/workflows",
    ".claude",
    ".cursor",
    ".codex",
    ".gemini",
    ".mcp.json",
)
"""Paths, relative to each writable folder, that the host runs or obeys later: git's hooks and
config (``core.hooksPath``, ``core.fsmonitor``, ``commondir`` which moves both elsewhere),
hook managers, direnv, editors' tasks and agents' settings, CI workflows."""
BLOCKED_SUFFIX: Final = ".ferrotool-blocked"
"""Appended to a protected path a command created or replaced, when it is moved aside."""

_PROBE_TIMEOUT: Final = 15.0
_CGROUP_ROOTS: Final = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")
# Moves the shell into the cgroup whose ``cgroup.procs`` is $0 (when given), then becomes the
# sandbox, with the seccomp filter at $1 (when given) open as descriptor 3.
_TRAMPOLINE: Final = (
    'if [ -n "$0" ]; then echo "$$" > "$0" || exit 126; fi; f=$1; shift; '
    'if [ -n "$f" ]; then exec "$@" 3<"$f"; fi; exec "$@"'
)
_names = itertools.count()


PathArg = str | os.PathLike[str]


@final
@dataclass(frozen=True)
class Sandbox:
    """How `ShellCommandTool` confines its commands (see the module).

    Pass ``sandbox=False`` (or ``Sandbox(enabled=False)``) to the tool to run commands without
    a sandbox; they then run unasked only as the permission rules allow.

    Attributes:
        writable: Folders a command may write besides the tool's working folder.
        read_only: Paths bound read-only again over the writable ones (``repo/.git``); those
            that do not exist are skipped.
        hidden: Folders and files shown empty (``~/.ssh``, ``~/.aws``, ``work/.env``), even
            inside a writable folder; those that do not exist are skipped.
        protected: Paths relative to each writable folder (default `DEFAULT_PROTECTED`) that a
            command may not change: those that exist are bound read-only, and the folders
            above them in the writable folder cannot be moved; one a command creates (or
            replaces, a symlink say) is moved aside when the command has ended (see
            `Launch.sweep`). ``()`` protects nothing.
        network: Keep the host's network (default: none at all, loopback included).
        unix_sockets: Let commands reach the host's Unix sockets (default: a seccomp filter
            refuses them ``AF_UNIX`` sockets, see `seccomp_filter`).
        cpu_seconds: CPU seconds per process (``None``: no limit).
        memory: Bytes of address space per process (``None``: no limit).
        processes: Processes at once in one sandbox (``None``: no limit).
        file_size: Bytes per file written (``None``: no limit).
        bwrap: The bubblewrap program (a name looked up on ``PATH``, or a path).
        enabled: ``False`` runs commands without a sandbox.
    """

    writable: Sequence[PathArg] = ()
    read_only: Sequence[PathArg] = ()
    hidden: Sequence[PathArg] = ()
    protected: Sequence[str] = DEFAULT_PROTECTED
    network: bool = False
    unix_sockets: bool = False
    cpu_seconds: int | None = DEFAULT_CPU_SECONDS
    memory: int | None = DEFAULT_MEMORY
    processes: int | None = DEFAULT_PROCESSES
    file_size: int | None = DEFAULT_FILE_SIZE
    bwrap: str = "bwrap"
    enabled: bool = True

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory", "processes", "file_size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or value <= 0):
                raise ValueError(f"Sandbox.{name} must be a positive integer or None")
        for name in ("writable", "read_only", "hidden"):
            paths = getattr(self, name)
            if isinstance(paths, (str, os.PathLike)):
                raise TypeError(f"Sandbox.{name} is a sequence of paths, not one path")
            object.__setattr__(self, name, tuple(Path(os.path.abspath(p)) for p in paths))
        if isinstance(self.protected, (str, os.PathLike)):
            raise TypeError("Sandbox.protected is a sequence of relative paths, not one path")
        object.__setattr__(self, "protected", tuple(map(_relative, self.protected)))


def _relative(name: str) -> str:
    """A protected path, checked to stay inside the folder it is relative to."""
    if not _is_text(name) or not name or "\x00" in name:
        raise ValueError(f"Sandbox.protected: {name!r} is not a path")
    clean = os.path.normpath(name)
    if os.path.isabs(clean) or clean == "." or clean.split(os.sep)[0] == "..":
        raise ValueError(f"Sandbox.protected: {name!r} is not a path inside a folder")
    return clean


def sandbox_of(sandbox: Sandbox | bool | None) -> Sandbox | None:
    """The sandbox a tool asks for: ``None`` when the operator opted out."""
    if sandbox is None or sandbox is False:
        return None
    if sandbox is True:
        return Sandbox()
    if not isinstance(sandbox, Sandbox):
        raise TypeError("sandbox must be a Sandbox, True, False or None")
    return sandbox if sandbox.enabled else None


# - environment -


def command_env(
    inherit: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A command's environment: the host's `ENV_ALLOW` and ``inherit`` variables, then ``extra``.

    Names in ``inherit`` (and `ENV_ALLOW`) may end in ``*`` to match a prefix (``"*"`` passes the
    whole host environment through).
    """
    host = os.environ if environ is None else environ
    patterns = (*ENV_ALLOW, *inherit)
    exact = {p for p in patterns if not p.endswith("*")}
    prefixes = tuple(p[:-1] for p in patterns if p.endswith("*"))
    env = {k: v for k, v in host.items() if k in exact or (prefixes and k.startswith(prefixes))}
    env.update(extra or {})
    return env


def check_env(env: Mapping[str, str] | None, inherit: Iterable[str]) -> None:
    """Refuse names and values no environment can hold.

    Raises:
        ValueError: An empty name, or one holding ``=`` or NUL, or a value holding NUL.
    """
    for name, value in (env or {}).items():
        if not _is_text(name) or not _is_text(value):
            raise ValueError("env names and values must be strings")
        if not name or "=" in name or "\x00" in name or "\x00" in value:
            raise ValueError(f"invalid environment variable {name!r}")
    for pattern in inherit:
        if not _is_text(pattern) or not pattern or "=" in pattern or "\x00" in pattern:
            raise ValueError(f"invalid inherit_env name {pattern!r}")
        if "*" in pattern[:-1]:
            raise ValueError(f"inherit_env {pattern!r}: '*' may only end a name")


def _is_text(value: object) -> bool:
    return isinstance(value, str)


# - availability -


@dataclass(frozen=True)
class _Host:
    """What this machine offers a sandbox: the programs, or why there is none."""

    problem: str | None
    bwrap: str = ""
    prlimit: str = ""
    disable_userns: bool = False


def sandbox_problem(sandbox: Sandbox) -> str | None:
    """Why no sandbox can start here (``None``: it can). Probed once per bubblewrap program."""
    return _host(sandbox.bwrap).problem


@functools.cache
def _host(bwrap: str) -> _Host:
    if not sys.platform.startswith("linux"):
        return _Host(f"the sandbox needs Linux and bubblewrap; this is {sys.platform}")
    program = shutil.which(bwrap)
    if program is None:
        return _Host(
            f"bubblewrap ({bwrap!r}) is not installed (Debian and Ubuntu: apt-get install "
            "bubblewrap)"
        )
    prlimit = shutil.which("prlimit")
    true = shutil.which("true")
    if prlimit is None or true is None:
        return _Host("util-linux's prlimit is not installed")
    try:
        usage = subprocess.run(
            [program, "--help"], capture_output=True, timeout=_PROBE_TIMEOUT, check=False
        )
        host = _Host(None, program, prlimit, b"--disable-userns" in usage.stdout)
        argv = _command(host, Sandbox(), Path("/"), [prlimit, "--nproc=64", "--", true], None)
        probe = subprocess.run(
            argv,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
            env=command_env(),
        )
    except (OSError, subprocess.SubprocessError) as error:
        return _Host(f"bubblewrap cannot run: {error}")
    if probe.returncode != 0:
        said = probe.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = said[-1] if said else f"exit status {probe.returncode}"
        return _Host(f"bubblewrap cannot start a sandbox here: {detail}")
    return host


class _Guarded(Protocol):
    sandbox: Sandbox | None
    sandbox_problem: str | None


_G = TypeVar("_G", bound=_Guarded)
_P = ParamSpec("_P")


def asks_without_sandbox(
    check: Callable[Concatenate[_G, _P], Coroutine[Any, Any, PermissionDecision]],
) -> Callable[Concatenate[_G, _P], Coroutine[Any, Any, PermissionDecision]]:
    """Wrap a tool's ``check_permissions``: without the sandbox it wants, nothing runs unasked.

    A denial stands; any other decision becomes a safety ask naming why no sandbox starts
    (which no mode or allow rule overrides), unless the operator opted out of the sandbox.
    """

    @functools.wraps(check)
    async def checked(self: _G, /, *args: _P.args, **kwargs: _P.kwargs) -> PermissionDecision:
        decision = await check(self, *args, **kwargs)
        problem = self.sandbox_problem
        if self.sandbox is None or problem is None:
            return decision
        if decision.behavior is PermissionBehavior.DENY:
            return decision
        if decision.behavior is PermissionBehavior.ASK and "safety" in (decision.reason or ""):
            return PermissionDecision.ask(
                f"{decision.message} (and it would run without a sandbox: {problem})",
                reason=f"{decision.reason}; no sandbox",
                suggested_rules=decision.suggested_rules,
            )
        return PermissionDecision.ask(
            f"The command would run without a sandbox ({problem}): approve it explicitly",
            reason=f"safety: no sandbox: {problem}",
        )

    return checked


# - launching -


def _command(
    host: _Host,
    sandbox: Sandbox,
    cwd: Path,
    inner: Sequence[str],
    cgroup: PidsCgroup | None,
    guard: Sequence[str] = (),
) -> list[str]:
    """The argv starting ``inner`` in the sandbox.

    Bubblewrap itself, or the trampoline when there is a cgroup to join or a seccomp filter to
    hand over.
    """
    program = seccomp_filter(sandbox)
    argv = _bwrap_argv(host, sandbox, cwd, inner, guard, seccomp=program is not None)
    if program is None and cgroup is None:
        return argv
    procs = "" if cgroup is None else str(cgroup.path / "cgroup.procs")
    where = "" if program is None else _filter_path(program)
    return ["/bin/sh", "-c", _TRAMPOLINE, procs, where, *argv]


def _bwrap_argv(
    host: _Host,
    sandbox: Sandbox,
    cwd: Path,
    argv: Sequence[str],
    guard: Sequence[str],
    *,
    seccomp: bool,
) -> list[str]:
    args = [
        host.bwrap,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
    if not sandbox.network:
        args.append("--unshare-net")
    if host.disable_userns:
        args.append("--disable-userns")
    if seccomp:
        args += ["--seccomp", str(_SECCOMP_FD)]
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if not sandbox.unix_sockets:
        args += _runtime_cover()
    for path in _roots(cwd, sandbox):
        args += ["--bind", path, path]
    args += guard
    for path in map(os.path.realpath, sandbox.read_only):
        args += ["--ro-bind-try", path, path]
    for path in map(os.path.realpath, sandbox.hidden):  # last: nothing is bound over them
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.lexists(path):
            args += ["--ro-bind", "/dev/null", path]
    args += ["--chdir", os.path.realpath(cwd), "--", *argv]
    return args


def _runtime_cover(environ: Mapping[str, str] | None = None) -> list[str]:
    """Empty tmpfs over the host's runtime folders, where its services keep their sockets.

    ``/run``, ``/var/run`` and ``$XDG_RUNTIME_DIR`` (a session's bus, agents, rootless Docker):
    defence in depth behind `seccomp_filter`, and the only defence where it is not known. What
    a command needs from them stays: the real ``/etc/resolv.conf`` (often under
    ``/run/systemd/resolve``) and the folders of ``PATH`` (NixOS keeps its programs under
    ``/run``), read-only. The operator's own paths there are bound after, and show.
    """
    env = os.environ if environ is None else environ
    covered: list[str] = []
    for folder in ("/run", "/var/run", env.get("XDG_RUNTIME_DIR", "")):
        if not folder or not os.path.isabs(folder) or not os.path.isdir(folder):
            continue
        real = os.path.realpath(folder)
        if real != "/" and not any(_within(real, c) for c in covered):
            covered = [c for c in covered if not _within(c, real)] + [real]
    args: list[str] = []
    for folder in covered:
        args += ["--tmpfs", folder]
    keep = [(os.path.realpath("/etc/resolv.conf"),) * 2]
    keep += [(os.path.realpath(p), p) for p in env.get("PATH", "").split(os.pathsep)]
    for source, target in keep:
        if os.path.isabs(target) and any(_within(target, c) for c in covered):
            args += ["--ro-bind-try", source, target]
    return args


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _roots(cwd: Path, sandbox: Sandbox) -> list[str]:
    """The writable folders, real paths (a working folder of / leaves the system read-only)."""
    return [p for p in map(os.path.realpath, (cwd, *sandbox.writable)) if p != "/"]


_Identity = tuple[int, int] | None  # st_dev and st_ino of a path itself, None when missing


def _identity(path: str) -> _Identity:
    try:
        stat = os.lstat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _guard(sandbox: Sandbox, roots: Sequence[str]) -> tuple[list[str], dict[str, _Identity]]:
    """Bubblewrap's arguments protecting `Sandbox.protected`, and what each path is now.

    An existing protected path is bound read-only, and every folder between it and its writable
    folder is bound onto itself: a mount point cannot be renamed or removed (``EBUSY``), so a
    command cannot move ``.git`` aside and build another. Where a folder on the way is a file
    (a worktree's ``.git`` link), that file is what decides, and is protected instead.

    A missing path cannot be kept from being created without making its parent read-only (a
    repository without hooks could then not commit) or making a mount point for it, which
    would create it on the host. So missing ones are watched instead: `Launch.sweep` moves
    aside what a command created, once every process of the sandbox has ended.
    """
    depth: dict[str, str] = {}  # real path -> "pin" (bound writable onto itself) or "lock"
    watched: dict[str, _Identity] = {}
    for root in roots:
        for name in sandbox.protected:
            path = _stand_in(root, name)
            watched[path] = _identity(path)
            if not os.path.exists(path):
                continue
            real = os.path.realpath(path)
            owner = next((r for r in roots if real == r or real.startswith(r + os.sep)), None)
            if owner is None or real == owner:  # read-only already, or the folder itself
                continue
            depth[real] = "lock"
            parent = os.path.dirname(real)
            while parent != owner and parent.startswith(owner + os.sep):
                depth.setdefault(parent, "pin")
                parent = os.path.dirname(parent)
    args: list[str] = []
    for path in sorted(depth, key=lambda p: p.count(os.sep)):  # parents first
        args += ["--bind" if depth[path] == "pin" else "--ro-bind", path, path]
    return args, watched


def _stand_in(root: str, name: str) -> str:
    """``root/name``, or the first existing non-folder on its way (a ``.git`` file)."""
    path = root
    parts = name.split(os.sep)
    for part in parts[:-1]:
        path = os.path.join(path, part)
        if not os.path.lexists(path):
            break
        if not os.path.isdir(path):
            return path
    return os.path.join(root, name)


def _move_aside(path: str) -> str | None:
    """Rename ``path`` to an unused name ending `BLOCKED_SUFFIX` (``None``: it cannot be)."""
    for n in range(100):
        target = f"{path}{BLOCKED_SUFFIX}" + (f"-{n}" if n else "")
        if os.path.lexists(target):
            continue
        try:
            os.rename(path, target)
        except OSError:
            return None
        return target
    return None


def _limits(sandbox: Sandbox) -> list[str]:
    out = []
    for flag, value in (
        ("--cpu", sandbox.cpu_seconds),
        ("--as", sandbox.memory),
        ("--nproc", sandbox.processes),
        ("--fsize", sandbox.file_size),
    ):
        if value is not None:
            out.append(f"{flag}={value}")
    return out


@final
class Launch:
    """A command ready to start.

    Its argv and environment, the cgroup to remove after, and the protected paths to check when
    it has ended.
    """

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        cgroup: PidsCgroup | None,
        watched: Mapping[str, _Identity] | None = None,
    ) -> None:
        self.argv = argv
        self.env = env
        self.cgroup = cgroup
        self.watched = dict(watched or {})

    def sweep(self) -> list[tuple[str, str | None]]:
        """Move aside each protected path the command created or replaced (once).

        Call it when the sandbox has ended: its PID namespace is gone with its last process,
        so nothing can change the paths after they are checked. Returns each path moved and
        where to (``None``: it could not be moved).
        """
        moved = []
        for path, before in self.watched.items():
            now = _identity(path)
            if now is not None and now != before:
                moved.append((path, _move_aside(path)))
        self.watched.clear()
        return moved

    async def close(self) -> None:
        """End what is left in the call's cgroup and remove it, and check the protected paths."""
        if self.cgroup is not None:
            await self.cgroup.close()
        self.sweep()


def launch(sandbox: Sandbox, argv: Sequence[str], cwd: Path, env: dict[str, str]) -> Launch:
    """The command to start for ``argv`` under ``sandbox`` (which must be available).

    Raises:
        RuntimeError: The sandbox cannot start here (see `sandbox_problem`).
    """
    host = _host(sandbox.bwrap)
    if host.problem is not None:
        raise RuntimeError(host.problem)
    env = {**env, "TMPDIR": "/tmp"}  # the sandbox's own /tmp
    inner = [host.prlimit, *_limits(sandbox), "--", *argv]
    cgroup = None
    if sandbox.processes is not None and os.geteuid() == 0:
        # RLIMIT_NPROC does not apply to root's processes: count them in a cgroup instead.
        # bubblewrap's two processes (the trampoline becomes one of them) count too.
        cgroup = PidsCgroup.create(sandbox.processes + 2)
    guard, watched = _guard(sandbox, _roots(cwd, sandbox))
    return Launch(_command(host, sandbox, cwd, inner, cgroup, guard), env, cgroup, watched)


@final
class PidsCgroup:
    """A ``pids`` cgroup of one call (cgroup v1 or v2), bounding its number of processes."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, limit: int) -> PidsCgroup | None:
        """A new cgroup holding at most ``limit`` processes (``None``: none can be made)."""
        for root in _cgroup_roots():
            path = root / f"ferrotool-{os.getpid()}-{next(_names)}"
            try:
                path.mkdir()
            except OSError:
                continue
            try:  # the file exists in a cgroup with the pids controller, never created here
                with open(path / "pids.max", "r+") as limits:
                    limits.write(str(limit))
            except OSError:
                _remove(path)
                continue
            return cls(path)
        return None

    def pids(self) -> list[int]:
        try:
            return [int(line) for line in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    async def close(self) -> None:
        """Kill what is left in the cgroup, and remove it.

        The removal waits for the kernel to release the dead (milliseconds on cgroup v1), so
        it is retried on a daemon thread, off the call's path.
        """
        for pid in self.pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if not _remove(self.path):
            threading.Thread(
                target=self._remove_later, name="ferrotool-cgroup", daemon=True
            ).start()

    def _remove_later(self) -> None:
        delay = 0.001
        while delay < 2.0:
            time.sleep(delay)
            for pid in self.pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if _remove(self.path):
                return
            delay *= 2


@functools.cache
def _cgroup_roots() -> tuple[Path, ...]:
    """The writable cgroup roots with the pids controller: v1's ``pids``, or v2's root."""
    roots = []
    for root in map(Path, _CGROUP_ROOTS):
        if not os.access(root, os.W_OK | os.X_OK) or not (root / "cgroup.procs").exists():
            continue
        control = root / "cgroup.subtree_control"
        try:
            if control.exists() and "pids" not in control.read_text().split():
                continue
        except OSError:
            continue
        roots.append(root)
    return tuple(roots)


def _remove(path: Path) -> bool:
    try:
        path.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


# - the seccomp filter -


@dataclass(frozen=True)
class _Abi:
    """One system-call ABI a process of this machine may use, and its numbers for sockets."""

    arch: int  # AUDIT_ARCH_* as in seccomp_data.arch
    socket: int
    socketpair: int
    socketcall: int | None = None  # the i386 multiplexer, whose arguments a filter cannot read
    x32: bool = False  # x86_64's x32 calls share its arch, their numbers carry bit 30


_ABIS: Final[dict[str, tuple[_Abi, ...]]] = {
    "x86_64": (_Abi(0xC000003E, 41, 53, x32=True), _Abi(0x40000003, 359, 360, socketcall=102)),
    "aarch64": (_Abi(0xC00000B7, 198, 199), _Abi(0x40000028, 281, 288)),
}
"""Each machine's ABIs: its own and the 32-bit one its kernel may also run (i386, arm)."""
_IO_URING_SETUP: Final = 425  # the same number on every ABI
_AF_UNIX: Final = 1
_SOCK_DGRAM: Final = 2
_SOCK_TYPE_MASK: Final = 0xF  # the type without SOCK_NONBLOCK and SOCK_CLOEXEC
_X32_BIT: Final = 0x40000000
# classic BPF (linux/filter.h) and seccomp (linux/seccomp.h)
_LD_ABS: Final = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ: Final = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JSET: Final = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_AND: Final = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET: Final = 0x06  # BPF_RET | BPF_K
_ALLOW: Final = 0x7FFF0000
_KILL: Final = 0x80000000  # SECCOMP_RET_KILL_PROCESS
_ERRNO: Final = 0x00050000
_SECCOMP_FD: Final = 3
"""The descriptor bubblewrap reads the filter from (the trampoline opens it there)."""

_Insn = tuple[int, int | str, int | str, int]  # code, jump if true, jump if false, operand


def seccomp_filter(sandbox: Sandbox, machine: str | None = None) -> bytes | None:
    """The seccomp program bubblewrap installs in the sandbox.

    ``None`` when none is needed (``Sandbox.unix_sockets``), or when this machine's system
    calls are not known here (only x86_64 and aarch64 are): Unix sockets then stay unconfined.

    Connecting to a Unix socket needs no more than seeing its path, which the read-only file
    system still shows. So a sandboxed process may not create an ``AF_UNIX`` socket
    (``EACCES``), nor a datagram socket pair (whose sockets may send to any path); stream and
    seqpacket pairs, connected from birth and unable to connect again, stay allowed
    (``subprocess``, ``asyncio`` and many runtimes use them). What needs a Unix socket of its
    own fails: Python's ``multiprocessing`` managers and its ``forkserver`` start method
    (Python 3.14's default on Linux), ``ssh``'s control master, a local database's socket.
    ``io_uring_setup`` fails with ``ENOSYS`` (callers fall back to plain calls), as io_uring's
    operations never pass through seccomp. The i386 ``socketcall`` multiplexer hides its
    arguments, so it is refused whole (``EACCES``): 32-bit x86 programs built to use it have no
    sockets. x32 calls, and any other ABI, end the process.
    """
    abis = _ABIS.get(machine or platform.machine())
    if sandbox.unix_sockets or abis is None:
        return None
    return _assemble(_program(abis))


def unix_sockets_confined(sandbox: Sandbox) -> bool:
    """Whether the sandbox keeps its commands from the host's Unix sockets.

    Not when the operator allows them, nor on an unknown architecture (see `seccomp_filter`).
    """
    return seccomp_filter(sandbox) is not None


def _program(abis: Sequence[_Abi]) -> list[_Insn | str]:
    """The filter as instructions whose jumps name labels (strings in the list)."""
    low = 0 if sys.byteorder == "little" else 4  # the low 32 bits of a 64-bit argument
    domain, kind = 16 + low, 24 + low  # seccomp_data.args[0], args[1]
    out: list[_Insn | str] = [(_LD_ABS, 0, 0, 4)]  # seccomp_data.arch
    out += [(_JEQ, f"abi{i}", 0, abi.arch) for i, abi in enumerate(abis)]
    out.append((_RET, 0, 0, _KILL))
    for i, abi in enumerate(abis):
        out += [f"abi{i}", (_LD_ABS, 0, 0, 0)]  # seccomp_data.nr
        if abi.x32:
            out.append((_JSET, "kill", 0, _X32_BIT))
        out += [(_JEQ, "socket", 0, abi.socket), (_JEQ, "socketpair", 0, abi.socketpair)]
        if abi.socketcall is not None:
            out.append((_JEQ, "eacces", 0, abi.socketcall))
        out += [(_JEQ, "enosys", 0, _IO_URING_SETUP), (_RET, 0, 0, _ALLOW)]
    out += ["socket", (_LD_ABS, 0, 0, domain), (_JEQ, "eacces", 0, _AF_UNIX), (_RET, 0, 0, _ALLOW)]
    out += ["socketpair", (_LD_ABS, 0, 0, domain), (_JEQ, 0, "allow", _AF_UNIX)]
    out += [(_LD_ABS, 0, 0, kind), (_AND, 0, 0, _SOCK_TYPE_MASK), (_JEQ, "eacces", 0, _SOCK_DGRAM)]
    out += ["allow", (_RET, 0, 0, _ALLOW)]
    out += ["eacces", (_RET, 0, 0, _ERRNO | errno.EACCES)]
    out += ["enosys", (_RET, 0, 0, _ERRNO | errno.ENOSYS)]
    out += ["kill", (_RET, 0, 0, _KILL)]
    return out


def _assemble(program: Sequence[_Insn | str]) -> bytes:
    """``struct sock_filter`` records, each label jump made relative (forward, under 256)."""
    labels: dict[str, int] = {}
    insns: list[_Insn] = []
    for item in program:
        if isinstance(item, str):
            labels[item] = len(insns)
        else:
            insns.append(item)
    out = bytearray()
    for index, (code, true, false, k) in enumerate(insns):
        jumps = [labels[j] - index - 1 if isinstance(j, str) else j for j in (true, false)]
        if not all(0 <= j < 256 for j in jumps):
            raise AssertionError(f"seccomp jump out of range at {index}")
        out += struct.pack("=HBBI", code, jumps[0], jumps[1], k)
    return bytes(out)


_filter_lock = threading.Lock()
_filter_fds: dict[tuple[int, bytes], tuple[int, int, int]] = {}


def _filter_path(program: bytes) -> str:
    """A path the trampoline opens to read ``program``: a sealed memfd this process holds.

    The filter reaches bubblewrap through the argv alone (``sh`` opens it as descriptor 3), so a
    `Launch` starts with any spawn call, ``pass_fds`` or not. The memfd's seals keep it as
    written; its inode is checked on every use, so a descriptor closed and reused elsewhere in
    this process is never read as the filter.
    """
    pid = os.getpid()
    with _filter_lock:
        held = _filter_fds.get((pid, program))
        if held is not None:
            fd, dev, ino = held
            with contextlib.suppress(OSError):
                stat = os.fstat(fd)
                if (stat.st_dev, stat.st_ino) == (dev, ino):
                    return f"/proc/{pid}/fd/{fd}"
        fd = os.memfd_create("ferrotool-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.write(fd, program)
        seals = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
        stat = os.fstat(fd)
        _filter_fds[(pid, program)] = (fd, stat.st_dev, stat.st_ino)
        return f"/proc/{pid}/fd/{fd}"


__all__ = [
    "BLOCKED_SUFFIX",
    "DEFAULT_CPU_SECONDS",
    "DEFAULT_FILE_SIZE",
    "DEFAULT_MEMORY",
    "DEFAULT_PROCESSES",
    "DEFAULT_PROTECTED",
    "ENV_ALLOW",
    "Launch",
    "PidsCgroup",
    "Sandbox",
    "SandboxWarning",
    "asks_without_sandbox",
    "check_env",
    "command_env",
    "launch",
    "sandbox_of",
    "sandbox_problem",
    "seccomp_filter",
    "unix_sockets_confined",
]
