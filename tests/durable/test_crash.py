"""A worker killed with SIGKILL in the middle of a durable batch; a new process recovers it.

Each round runs a batch of ``record`` (idempotent) and ``pay`` (not idempotent) calls, one at a
time, in a real process (`worker`), watches the calls' side-effect log and kills the process with
SIGKILL when the call at a random index ``k`` has started (it is in flight) or ended (its result
may or may not be recorded yet). A second process launches DBOS on the same database, which
recovers the workflow, and gives the batch's results. Each test runs on a SQLite file and on a
Postgres database (see `conftest`), the same rounds on each. The checks are the guarantees of
`ferrotool.durable`:

* the results are complete, one per call, in call order;
* every call before the one in flight ran once, in the killed process, and is not run again;
* every call after it ran once, in the recovering process;
* the call in flight ran again only if it is idempotent; a non-idempotent one ran at most once,
  and its result is its own (recorded) or the ``not_retried`` error.

On Postgres, where processes on several hosts share the database, a last test keeps the same
guarantees with two live processes: the one that runs the batch is killed, and the other, which
was running already, takes the batch over and ends it.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed")

import worker
from processes import LIMIT, Lines, kill_when, read

from ferrotool.durable import NOT_RETRIED

ROUNDS = 8
OVERLAPPING = 3
TAKEOVERS = 4
SEED = 20261205


@dataclass
class Seen:
    """What the rounds exercised, so that the test cannot pass without testing the guarantees."""

    not_retried: int = 0  # a non-idempotent call in flight ended with the error
    ran_again: int = 0  # an idempotent call in flight ran again on recovery
    recovered: int = 0  # calls that ran only in the recovering process


def crash(
    forks: multiprocessing.context.ForkServerContext,
    database: str,
    folder: Path,
    number: int,
    kinds: str,
    kill_at: str,
    hold: str = "",
) -> tuple[list[dict[str, object]], Lines, Lines]:
    """Run the batch ``kinds`` on ``database``, kill it at the log line ``kill_at``, recover it.

    The calls ``hold`` (comma-separated ids) never end in the killed process. The side-effect
    logs and the results go to ``folder``.

    Returns:
        The recovered batch's results, and the log's lines of each process.
    """
    log = folder / f"log-{number}"
    out = folder / f"out-{number}"
    args = (database, str(log), f"batch-{number}", kinds)

    running = forks.Process(target=worker.main, args=("run", *args, "", hold))
    running.start()
    kill_when(running, log, f"run {kill_at}\n")

    recovering = forks.Process(target=worker.main, args=("recover", *args, str(out)))
    recovering.start()
    recovering.join(LIMIT)
    assert recovering.exitcode == 0
    return results_of(out, kinds), read(log, "run"), read(log, "recover")


def results_of(out: Path, kinds: str) -> list[dict[str, object]]:
    """The results a worker wrote: one per call of the batch ``kinds``, in call order."""
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["name"]) for r in results] == [
        (f"c{i}", worker.TOOLS[kind]) for i, kind in enumerate(kinds)
    ]
    return results


def check_each(
    kinds: str, results: list[dict[str, object]], first: Lines, second: Lines, seen: Seen
) -> None:
    """The guarantees every call keeps, whatever ran when: see the module's docstring."""
    for index, (kind, result) in enumerate(zip(kinds, results, strict=True)):
        call = f"c{index}"
        runs = (first.started[call], second.started[call])
        assert max(runs) <= 1
        if result["state"] == "success":
            assert result["output"] == [{"type": "text", "text": f"{call}:{index}"}]
            assert first.ended[call] + second.ended[call] >= 1
        else:  # only a non-idempotent call, never run in the recovering process
            assert kind not in worker.IDEMPOTENT
            assert result["metadata"] == {"durable": NOT_RETRIED}, result
            assert second.started[call] == 0
            seen.not_retried += 1
        if kind not in worker.IDEMPOTENT:
            assert sum(runs) <= 1  # never twice
        elif runs == (1, 1):
            assert first.ended[call] + second.ended[call] >= 1
            seen.ran_again += 1
        if runs == (0, 1):
            seen.recovered += 1


def one_round(
    forks: multiprocessing.context.ForkServerContext,
    database: str,
    folder: Path,
    rng: random.Random,
    number: int,
    seen: Seen,
) -> None:
    """A batch of calls that run one at a time, killed at call ``k``."""
    n = rng.randint(3, 7)
    plan = [rng.choice("iin") for _ in range(n)]
    k = rng.randrange(n)
    # Alternately a pay and a record call in flight at the kill (held there: it never ends);
    # every third round, killed just after a call's effect, when its result may or may not be
    # recorded yet.
    plan[k] = "n" if number % 2 else "i"
    at = "end" if number % 3 == 2 else "start"
    kinds = "".join(plan)
    hold = f"c{k}" if at == "start" else ""
    results, first, second = crash(forks, database, folder, number, kinds, f"{at} c{k}", hold)
    check_each(kinds, results, first, second, seen)
    # One call at a time: the killed process ran the calls up to the one in flight, in order.
    flight = int(first.order[-1].removeprefix("c"))  # the last call the killed process started
    assert first.order == [f"c{i}" for i in range(flight + 1)]
    for index, kind in enumerate(kinds):
        call = f"c{index}"
        if index < flight:  # finished and recorded: once, in the killed process
            assert (first.started[call], first.ended[call], second.started[call]) == (1, 1, 0)
        elif index > flight:  # not started before the kill
            assert first.started[call] == 0
            # It runs in the recovering process, but for a pay call whose start was recorded an
            # instant before the kill, which ends with the error.
            if second.started[call] == 0:
                assert (kind, index) == ("n", flight + 1)


def test_a_killed_batch_recovers_running_every_finished_call_once(
    forks: multiprocessing.context.ForkServerContext, system_database: str, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    seen = Seen()
    for number in range(ROUNDS):
        one_round(forks, system_database, tmp_path, rng, number, seen)
    # A call held at the kill is in flight: half of them pay calls, half record calls.
    assert seen.not_retried >= ROUNDS // 3
    assert seen.ran_again >= ROUNDS // 3
    assert seen.recovered > 0
    if not worker.on_postgres(system_database):
        assert os.listdir(system_database)  # the SQLite file


def test_a_killed_batch_of_overlapping_calls_runs_no_pay_twice(
    forks: multiprocessing.context.ForkServerContext, system_database: str, tmp_path: Path
) -> None:
    """Concurrency-safe calls run as overlapping steps; the kill comes after ``k`` ended."""
    rng = random.Random(SEED + 1)
    seen = Seen()
    for number in range(OVERLAPPING):
        kinds = "".join(rng.choice("sp") for _ in range(rng.randint(3, 6)))
        # The calls start together; those from ``k`` on are held (in flight at the kill), the
        # others end, their results recorded or not when the last call starts.
        k = rng.randrange(len(kinds))
        hold = ",".join(f"c{i}" for i in range(k, len(kinds)))
        last = f"start c{len(kinds) - 1}"
        results, first, second = crash(forks, system_database, tmp_path, number, kinds, last, hold)
        check_each(kinds, results, first, second, seen)
    assert seen.not_retried > 0
    assert seen.ran_again > 0


def test_a_live_process_takes_over_the_batch_of_another_killed_beside_it(
    forks: multiprocessing.context.ForkServerContext, postgres_database: str, tmp_path: Path
) -> None:
    """Two live processes on one Postgres database; one runs a batch, is killed; the other ends it.

    The second process (`worker`'s ``adopt``) is launched, with an executor id of its own,
    before the first starts the batch. DBOS's launch recovers only its own executor's pending
    workflows, so the batch waits until the second process, once the first is dead, moves the
    dead executor's pending workflows to itself (`ferrotool.durable.adopt`: DBOS's listing of
    workflows by status and executor, and its resume of each).
    """
    rng = random.Random(SEED + 2)
    seen = Seen()
    for number in range(TAKEOVERS):
        n = rng.randint(3, 6)
        plan = [rng.choice("iin") for _ in range(n)]
        k = rng.randrange(n)
        plan[k] = "n" if number % 2 else "i"  # held in flight at the kill
        kinds = "".join(plan)
        log = tmp_path / f"log-{number}"
        out = tmp_path / f"out-{number}"
        args = (postgres_database, str(log), f"batch-{number}", kinds, str(out))

        adopting = forks.Process(target=worker.main, args=("adopt", *args, "", "runner"))
        adopting.start()
        ready = Path(f"{out}.ready")
        deadline = time.monotonic() + LIMIT
        while not ready.exists():
            assert adopting.is_alive(), "the second process ended before it launched"
            assert time.monotonic() < deadline, f"no {ready} in {LIMIT} s"
            time.sleep(0.01)

        running = forks.Process(target=worker.main, args=("run", *args, f"c{k}", "runner"))
        running.start()
        kill_when(running, log, f"run start c{k}\n")
        # Both were live while the batch ran: the second process took none of it on its own.
        assert read(log, "adopt").order == []
        Path(f"{out}.go").touch()
        adopting.join(LIMIT)
        assert adopting.exitcode == 0

        first, second = read(log, "run"), read(log, "adopt")
        check_each(kinds, results_of(out, kinds), first, second, seen)
        # The calls before the one in flight ran once, in the killed process; those after it
        # once, in the second.
        assert first.order == [f"c{i}" for i in range(k + 1)]
        for index in range(n):
            call = f"c{index}"
            if index < k:
                assert (first.started[call], first.ended[call], second.started[call]) == (1, 1, 0)
            elif index > k:
                assert (first.started[call], second.started[call], second.ended[call]) == (0, 1, 1)
    assert seen.not_retried > 0
    assert seen.ran_again > 0
    assert seen.recovered > 0
