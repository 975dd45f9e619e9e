"""A worker killed with SIGKILL in the middle of a durable batch; a new process recovers it.

Each round runs a batch of ``record`` (idempotent) and ``pay`` (not idempotent) calls, one at a
time, in a real process (`worker`), watches the calls' side-effect log and kills the process with
SIGKILL when the call at a random index ``k`` has started (it is in flight) or ended (its result
may or may not be recorded yet). A second process launches DBOS on the same SQLite file, which
recovers the workflow, and gives the batch's results. The checks are the guarantees of
`ferrotool.durable`:

* the results are complete, one per call, in call order;
* every call before the one in flight ran once, in the killed process, and is not run again;
* every call after it ran once, in the recovering process;
* the call in flight ran again only if it is idempotent; a non-idempotent one ran at most once,
  and its result is its own (recorded) or the ``not_retried`` error.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import time
from collections import Counter
from dataclasses import dataclass
from multiprocessing import forkserver
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed")

import worker

from ferrotool.durable import NOT_RETRIED

ROUNDS = 12
SEED = 20261205
LIMIT = 60.0  # seconds: a safety net, never reached when things work


@pytest.fixture(scope="module")
def forks() -> multiprocessing.context.ForkServerContext:
    """Processes forked from a server that has imported the worker (and DBOS) once.

    The server finds the worker through ``PYTHONPATH`` (Python 3.11's fork server does not
    take its parent's ``sys.path``), set while it starts.
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["worker"])
    before = os.environ.get("PYTHONPATH")
    here = str(Path(worker.__file__).parent)
    os.environ["PYTHONPATH"] = here if before is None else os.pathsep.join([here, before])
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before
    return context


@dataclass(frozen=True)
class Lines:
    """The side-effect log's lines of one process: how often each call started and ended."""

    started: Counter[str]
    ended: Counter[str]
    order: list[str]  # the calls in the order they started


def read(log: Path, phase: str) -> Lines:
    started: Counter[str] = Counter()
    ended: Counter[str] = Counter()
    order: list[str] = []
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    for line in text.splitlines():
        who, what, call = line.split()
        if who != phase:
            continue
        if what == "start":
            started[call] += 1
            order.append(call)
        else:
            ended[call] += 1
    return Lines(started, ended, order)


def kill_when(process: multiprocessing.process.BaseProcess, log: Path, line: str) -> None:
    """SIGKILL ``process`` as soon as ``line`` is in ``log``."""
    deadline = time.monotonic() + LIMIT
    while line not in (log.read_text(encoding="utf-8") if log.exists() else ""):
        assert process.is_alive(), f"the worker ended before {line!r}"
        assert time.monotonic() < deadline, f"no {line!r} in {LIMIT} s"
        time.sleep(0.002)
    process.kill()
    process.join(LIMIT)
    assert process.exitcode == -9


@dataclass
class Seen:
    """What the rounds exercised, so that the test cannot pass without testing the guarantees."""

    not_retried: int = 0  # a non-idempotent call in flight ended with the error
    ran_again: int = 0  # an idempotent call in flight ran again on recovery
    recovered: int = 0  # calls that ran only in the recovering process


def one_round(
    forks: multiprocessing.context.ForkServerContext,
    folder: Path,
    rng: random.Random,
    number: int,
    seen: Seen,
) -> None:
    n = rng.randint(3, 7)
    plan = [rng.choice("iin") for _ in range(n)]
    k = rng.randrange(n)
    # Alternately a pay and a record call in flight at the kill; every third round, killed just
    # after a call's effect, when its result may or may not be recorded yet.
    plan[k] = "n" if number % 2 else "i"
    at = "end" if number % 3 == 2 else "start"
    kinds = "".join(plan)
    log = folder / f"log-{number}"
    out = folder / f"out-{number}"
    workflow = f"batch-{number}"
    args = (str(folder), str(log), workflow, kinds)

    running = forks.Process(target=worker.main, args=("run", *args))
    running.start()
    kill_when(running, log, f"run {at} c{k}\n")

    recovering = forks.Process(target=worker.main, args=("recover", *args, str(out)))
    recovering.start()
    recovering.join(LIMIT)
    assert recovering.exitcode == 0

    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    names = {"i": "record", "n": "pay"}
    assert [(r["id"], r["name"]) for r in results] == [
        (f"c{i}", names[kind]) for i, kind in enumerate(kinds)
    ]
    first, second = read(log, "run"), read(log, "recover")
    flight = int(first.order[-1].removeprefix("c"))  # the last call the killed process started
    assert first.order == [f"c{i}" for i in range(flight + 1)]
    for index, (kind, result) in enumerate(zip(kinds, results, strict=True)):
        call = f"c{index}"
        done = result["state"] == "success"
        if done:
            assert result["output"] == [{"type": "text", "text": f"{call}:{index}"}]
        if index < flight:  # finished and recorded: once, in the killed process
            assert (first.started[call], first.ended[call], second.started[call]) == (1, 1, 0)
            assert done
        elif index == flight:
            assert first.started[call] == 1
            if kind == "i":
                assert done
                assert second.started[call] <= 1
                seen.ran_again += second.started[call]
            else:  # never twice: its recorded result, or the error
                assert second.started[call] == 0
                if not done:
                    assert result["metadata"] == {"durable": NOT_RETRIED}, result
                    seen.not_retried += 1
                else:
                    assert first.ended[call] == 1
        else:  # not started before the kill
            assert first.started[call] == 0
            if done:
                assert (second.started[call], second.ended[call]) == (1, 1)
                seen.recovered += 1
            else:  # a pay call whose start was recorded an instant before the kill
                assert (kind, index, second.started[call]) == ("n", flight + 1, 0)
                assert result["metadata"] == {"durable": NOT_RETRIED}


def test_a_killed_batch_recovers_running_every_finished_call_once(
    forks: multiprocessing.context.ForkServerContext, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    seen = Seen()
    for number in range(ROUNDS):
        one_round(forks, tmp_path, rng, number, seen)
    # Kills at a call's start always land mid-call (it waits between its two lines).
    assert seen.not_retried >= ROUNDS // 3
    assert seen.ran_again >= ROUNDS // 3
    assert seen.recovered > 0
    assert os.listdir(tmp_path)
