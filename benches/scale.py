"""Scale-out of ``ferrotool serve --workers N``, each worker held to the same CPU quota.

On a machine with few cores the load generator, redis-server and the workers share the same
cores, and a second worker has little left to run on. Here each server process runs in a cgroup
of its own (cgroup v1's cpu controller, ``/sys/fs/cgroup/cpu``) limited to `QUOTA` of a CPU;
the load generator (this process) and redis-server stay outside. Three set-ups serve
``benches.mcp_bench:ferrotool_toolkit``'s ``add`` with their sessions in Redis, under the same
load (`benches.mcp_bench.load`: `CONNECTIONS` keep-alive connections, each making 2026-07-28
``tools/call`` one after another, opened together):

* `ONE`: ``ferrotool serve --store redis://...``, one process;
* `TWO`: ``ferrotool serve --store redis://... --workers 2``, each worker process in its own
  cgroup (the supervising parent, idle, outside);
* `PORTS`: two one-process servers on two ports, each in its own cgroup, the load splitting its
  connections between them: what two workers reach when nothing decides which takes a
  connection.

Two cases: `PLAIN` calls (no session: nothing is read from Redis), and `SESSION` calls, each
naming its connection's session in ``_meta`` (``io.ferrotool/session``; the sessions are stored
beforehand, a small state each), whose state every call loads from Redis. The set-ups are
timed in turn, round after round; each run records the calls per second and the CPU each server
process got (CPU seconds per second, from ``/proc/PID/stat``). The cgroups are removed after.

Where cgroups are not writable (not root, cgroup v2 only) or no Redis server answers, nothing
is measured and the reason is printed and kept as a ``skipped: ...`` note.

It is the ``scale`` group of `benches.run`: ``python -m benches.run --only scale --json
benches/results-scale.json`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import anyio

from benches import mcp_bench as mb
from ferrotool._session.state import SessionKey, update_session
from ferrotool.mcp.serve import store_from_url
from ferrotool.redis import RedisSessionStore

CGROUP_CPU: Final = Path("/sys/fs/cgroup/cpu")
QUOTA: Final = 0.4
"""The CPU each server process may use (cfs quota over period)."""
PERIOD_US: Final = 100_000
CONNECTIONS: Final = 50

ONE: Final = "1 worker"
TWO: Final = "2 workers (--workers 2)"
PORTS: Final = "2 servers on 2 ports (reference)"
SETUPS: Final = (ONE, TWO, PORTS)
PLAIN: Final = "plain 2026-07-28 calls"
SESSION: Final = "calls loading their session from Redis"
CASES: Final = (PLAIN, SESSION)


def case_name(case: str, calls: int) -> str:
    """The benchmark case of ``case`` at ``calls`` calls a run."""
    return f"{case}, {calls} calls, {CONNECTIONS} connections, {QUOTA:g} CPU a process"


def cgroup_problem() -> str | None:
    """Why no CPU quota can be set here (``None``: it can)."""
    procs = CGROUP_CPU / "cgroup.procs"
    if not (procs.exists() and (CGROUP_CPU / "cpu.cfs_quota_us").exists()):
        return f"cgroups not writable: no cgroup v1 cpu controller at {CGROUP_CPU}"
    probe = CGROUP_CPU / f"ferrotool-bench-probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError as exc:
        return f"cgroups not writable: {exc}"
    return None


@dataclass
class CpuQuota:
    """A cgroup limited to `QUOTA` of a CPU, holding some processes; `remove` undoes it."""

    path: Path
    pids: list[int] = field(default_factory=list)

    @classmethod
    def create(cls, name: str) -> CpuQuota:
        path = CGROUP_CPU / f"ferrotool-bench-{name}-{os.getpid()}"
        path.mkdir()
        (path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (path / "cpu.cfs_quota_us").write_text(str(round(QUOTA * PERIOD_US)))
        return cls(path)

    def add(self, pid: int) -> None:
        """Move process ``pid`` (all its threads) into the cgroup."""
        (self.path / "cgroup.procs").write_text(str(pid))
        self.pids.append(pid)

    def remove(self) -> None:
        """Move what is left back to the root cgroup and remove this one."""
        for pid in (self.path / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):  # it has exited meanwhile
                (CGROUP_CPU / "cgroup.procs").write_text(pid)
        self.path.rmdir()


@contextmanager
def quotas(pids: Sequence[int], name: str) -> Iterator[None]:
    """Each of ``pids`` in a cgroup of its own, for the block."""
    groups: list[CpuQuota] = []
    try:
        for index, pid in enumerate(pids):
            groups.append(CpuQuota.create(f"{name}-{index}"))
            groups[-1].add(pid)
        yield
    finally:
        for group in groups:
            group.remove()


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used (user and system, all threads)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int, count: int, seconds: float = 60) -> list[int]:
    """The ``count`` child processes of ``pid``, once it has started them."""
    deadline = time.monotonic() + seconds
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
        if len(found) >= count:
            return sorted(found)
        if time.monotonic() > deadline:
            raise TimeoutError(f"process {pid} started {len(found)} of {count} workers")
        time.sleep(0.1)


@dataclass(frozen=True)
class Setup:
    """A set-up being measured: the ports the load spreads over, the server processes."""

    name: str
    ports: list[int]
    pids: list[int]


@dataclass(frozen=True)
class Run:
    """One load against one set-up: calls per second, and the CPU each server process got."""

    throughput: float
    cpu: tuple[float, ...]


@dataclass
class Figures:
    """Every run of one set-up on one case."""

    runs: list[Run] = field(default_factory=list)

    @property
    def throughput(self) -> float:
        return statistics.median(run.throughput for run in self.runs)

    @property
    def cpu(self) -> list[float]:
        """The median CPU of each server process."""
        return [statistics.median(run.cpu[i] for run in self.runs) for i in range(self._width)]

    @property
    def per_cpu_second(self) -> float:
        """The median over the runs of calls per CPU second, all server processes together."""
        return statistics.median(run.throughput / sum(run.cpu) for run in self.runs)

    @property
    def _width(self) -> int:
        return len(self.runs[0].cpu)


@contextmanager
def setups(store: str) -> Iterator[list[Setup]]:
    """The three set-ups, started, each server process under its quota."""
    with ExitStack() as stack:
        one, one_port = stack.enter_context(mb.process("ferrotool", store=store))
        two, two_port = stack.enter_context(mb.process("ferrotool", workers=2, store=store))
        first, port_a = stack.enter_context(mb.process("ferrotool", store=store))
        second, port_b = stack.enter_context(mb.process("ferrotool", store=store))
        out = [
            Setup(ONE, [one_port], [one.pid]),
            Setup(TWO, [two_port], children(two.pid, 2)),
            Setup(PORTS, [port_a, port_b], [first.pid, second.pid]),
        ]
        for index, setup in enumerate(out):
            stack.enter_context(quotas(setup.pids, f"s{index}"))
        yield out


def measure_once(setup: Setup, calls: int, sessions: Sequence[str]) -> Run:
    """One load on ``setup``, with the CPU its processes got meanwhile."""
    before = [cpu_seconds(pid) for pid in setup.pids]
    started = time.perf_counter()
    mb.run_load(setup.ports, calls, CONNECTIONS, sessions)
    elapsed = time.perf_counter() - started
    used = [cpu_seconds(pid) - was for pid, was in zip(setup.pids, before, strict=True)]
    throughput = calls / elapsed
    return Run(throughput, tuple(seconds / elapsed for seconds in used))


@contextmanager
def stored_sessions(url: str, count: int) -> Iterator[list[str]]:
    """``count`` sessions with a state stored in Redis (as the servers keep them); deleted after."""
    names = [f"bench-scale-{uuid.uuid4().hex}-{index}" for index in range(count)]

    async def each(store_them: bool) -> None:
        store = store_from_url(url)
        if not isinstance(store, RedisSessionStore):
            raise ValueError(f"not a Redis store: {url!r}")
        try:
            for name in names:
                key = SessionKey("", name)
                if store_them:
                    await update_session(store, key, lambda state: state.with_data("seen", True))
                else:
                    await store.delete(key)
        finally:
            await store.aclose()

    anyio.run(each, True)
    try:
        yield names
    finally:
        anyio.run(each, False)


def measure(url: str, rounds: int, calls: int) -> dict[tuple[str, str], Figures]:
    """Every set-up on every case, ``rounds`` times, interleaved; keyed by (case, set-up)."""
    figures = {(case, name): Figures() for case in CASES for name in SETUPS}
    with setups(url) as started, stored_sessions(url, CONNECTIONS) as sessions:
        for setup in started:  # warm every process: imports, first connections to Redis
            for case_sessions in ((), sessions):
                mb.run_load(setup.ports, 4 * CONNECTIONS, CONNECTIONS, case_sessions)
        for _ in range(rounds):
            for case in CASES:
                for setup in started:
                    run = measure_once(setup, calls, sessions if case == SESSION else ())
                    figures[case, setup.name].runs.append(run)
    return figures


def summary(figures: dict[tuple[str, str], Figures]) -> list[str]:
    """One line per case and set-up, then the ratios against one worker."""
    lines = []
    for case in CASES:
        one = figures[case, ONE].throughput
        for name in SETUPS:
            figure = figures[case, name]
            cpu = ", ".join(f"{value:.2f}" for value in figure.cpu)
            ratio = figure.throughput / one
            lines.append(
                f"{case}: {name}: {figure.throughput:,.0f} calls/s ({ratio:.2f}x one worker;"
                f" CPU each process got: {cpu}; {figure.per_cpu_second:,.0f} calls per CPU"
                " second)"
            )
    return lines
