"""Durable agent runs across real processes: killed with SIGKILL, recovered, approved elsewhere.

Each test runs `agent_worker` processes on one DBOS system database, a SQLite file and a fresh
Postgres database (`conftest.system_database`). The checks are the
guarantees of `ferrotool.durable`:

* a killed run, recovered by a new process, ends as one run: every result in call order, each
  finished call run once (an idempotent call in flight at most once more, a non-idempotent one
  never again), and the model not asked again for a turn whose reply was recorded;
* a call's timeout is a deadline that the crash does not reset;
* a run whose call waits for approval is approved by another process, and completes once, also
  when the process that started it was killed while it waited.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("dbos", reason="the `dbos` extra is not installed")

import agent_worker as worker
from processes import LIMIT, Lines, kill_when, read

from ferrotool import SessionKey
from ferrotool.durable import NOT_RETRIED
from ferrotool.redis import RedisSessionStore

ROUNDS = 6
SEED = 20261205


def start(
    forks: multiprocessing.context.ForkServerContext, **spec: Any
) -> multiprocessing.process.BaseProcess:
    process = forks.Process(target=worker.main, args=(json.dumps(spec),))
    process.start()
    return process


def finish(process: multiprocessing.process.BaseProcess) -> None:
    process.join(LIMIT)
    assert process.exitcode == 0


def outcome(out: Path) -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return recorded


@dataclass
class Seen:
    """What the rounds exercised, so that the test cannot pass without testing the guarantees."""

    not_retried: int = 0  # a non-idempotent call in flight ended with the error
    ran_again: int = 0  # an idempotent call in flight ran again on recovery
    recovered: int = 0  # calls that ran only in the recovering process
    model_kept: int = 0  # model turns recorded before the kill, not asked again


def check_run(plan: str, recorded: dict[str, Any], first: Lines, second: Lines, seen: Seen) -> None:
    kinds = plan.replace("/", "")
    results = recorded["results"]
    assert [(r["id"], r["name"]) for r in results] == [
        (f"c{i}", worker.TOOLS[kind]) for i, kind in enumerate(kinds)
    ]
    for index, (kind, result) in enumerate(zip(kinds, results, strict=True)):
        call = f"c{index}"
        runs = (first.started[call], second.started[call])
        assert max(runs) <= 1
        if result["state"] == "success":
            assert result["output"] == [{"type": "text", "text": f"{call}:{index}"}]
            assert first.ended[call] + second.ended[call] >= 1
        else:  # only a non-idempotent call, never run in the recovering process
            assert kind not in worker.IDEMPOTENT, result
            assert result["metadata"] == {"durable": NOT_RETRIED}, result
            assert second.started[call] == 0
            seen.not_retried += 1
        if kind not in worker.IDEMPOTENT:
            assert sum(runs) <= 1  # never twice
        elif runs == (1, 1):
            seen.ran_again += 1
        if runs == (0, 1):
            seen.recovered += 1
    # The model's turns: a turn whose calls started in the killed process had its reply
    # recorded, and is never asked again; every turn is asked, and the answer lists every result.
    first_call = 0
    for turn, calls in enumerate(plan.split("/"), start=1):
        ids = [f"c{first_call + i}" for i in range(len(calls))]
        first_call += len(calls)
        assert first.asked[turn] + second.asked[turn] >= 1
        if any(first.started[call] for call in ids):
            assert (first.asked[turn], second.asked[turn]) == (1, 0)
            seen.model_kept += 1
    texts = [r["output"][0]["text"] for r in results]
    assert recorded["text"] == " | ".join(texts)


def test_a_killed_run_recovers_without_asking_or_running_again(
    forks: multiprocessing.context.ForkServerContext, system_database: str, tmp_path: Path
) -> None:
    rng = random.Random(SEED)
    seen = Seen()
    for number in range(ROUNDS):
        turns = [[rng.choice("iin") for _ in range(rng.randint(1, 3))] for _ in range(2)]
        kinds = [kind for turn in turns for kind in turn]
        k = rng.randrange(len(kinds))
        # Alternately a pay and a record call in flight at the kill (held: it never ends);
        # every third round killed just after a call's effect, its result recorded or not.
        kinds[k] = "n" if number % 2 else "i"
        at = "end" if number % 3 == 2 else "start"
        plan = "/".join(
            "".join(kinds[sum(map(len, turns[:t])) : sum(map(len, turns[: t + 1]))])
            for t in range(len(turns))
        )
        log, out = tmp_path / f"log-{number}", tmp_path / f"out-{number}"
        common = {
            "database": system_database,
            "log": str(log),
            "plan": plan,
            "workflow_id": f"run-{number}",
        }
        hold = [f"c{k}"] if at == "start" else []
        running = start(forks, mode="run", hold=hold, **common)
        kill_when(running, log, f"run {at} c{k}\n")
        finish(start(forks, mode="recover", out=str(out), **common))
        check_run(plan, outcome(out), read(log, "run"), read(log, "recover"), seen)
    assert seen.not_retried >= ROUNDS // 3
    assert seen.ran_again >= ROUNDS // 3
    assert seen.recovered > 0
    assert seen.model_kept >= ROUNDS


@pytest.mark.parametrize(
    ("waited", "ends"),
    [
        (0.0, "success"),  # most of its time is left: it runs again and ends in time
        (2.5, "ran out"),  # started again with what is left of its time, not enough
        (4.5, "not started"),  # its time ran out while no process ran it
    ],
)
def test_a_timeout_is_a_deadline_the_crash_does_not_reset(
    forks: multiprocessing.context.ForkServerContext,
    system_database: str,
    tmp_path: Path,
    waited: float,
    ends: str,
) -> None:
    log, out = tmp_path / "log", tmp_path / "out"
    common = {"database": system_database, "log": str(log), "plan": "t", "workflow_id": "deadline"}
    running = start(forks, mode="run", hold=["c0"], **common)
    seen = kill_when(running, log, "run start c0\n")
    time.sleep(max(0.0, seen + waited - time.monotonic()))
    finish(start(forks, mode="recover", out=str(out), **common))
    (result,) = outcome(out)["results"]
    second = read(log, "recover")
    if ends == "success":
        assert result["state"] == "success"
        assert (second.started["c0"], second.ended["c0"]) == (1, 1)
        return
    assert result["state"] == "error"
    assert result["output"] == [
        {"type": "text", "text": f"Error: Tool execution timed out after {worker.TIMEOUT:g} s"}
    ]
    assert second.ended["c0"] == 0  # a fresh timeout would have let it end (it takes 2 s of 4)
    assert second.started["c0"] == (1 if ends == "ran out" else 0)


def test_a_run_is_approved_by_another_process_and_completes_once(
    forks: multiprocessing.context.ForkServerContext,
    system_database: str,
    redis_url: str,
    redis_prefix: str,
    tmp_path: Path,
) -> None:
    log, out = tmp_path / "log", tmp_path / "out"
    common = {
        "database": system_database,
        "log": str(log),
        "plan": "id",
        "workflow_id": "approved",
        "redis": redis_url,
        "prefix": redis_prefix,
    }
    serving = start(forks, mode="serve", executor="a", out=str(out), **common)
    finish(start(forks, mode="reply", executor="b", out=f"{out}-reply", **common))
    finish(serving)
    assert outcome(Path(f"{out}-reply")) == outcome(out)
    assert outcome(out)["text"] == "c0:0 | c1:1"
    first = read(log, "serve")
    assert (first.started, first.ended) == (Counter(c0=1, c1=1), Counter(c0=1, c1=1))
    assert read(log, "reply").started == Counter()


async def waiting_in(redis_url: str, prefix: str) -> list[str]:
    """The ids of the calls waiting in the runs' session."""
    store = RedisSessionStore.from_url(redis_url, prefix=prefix)
    try:
        state = await store.load(SessionKey("", worker.SESSION))
    finally:
        await store.aclose()
    return [pending.id for pending in state.pending_calls]


def test_a_run_killed_while_it_waits_is_approved_and_completed_elsewhere(
    forks: multiprocessing.context.ForkServerContext,
    system_database: str,
    redis_url: str,
    redis_prefix: str,
    tmp_path: Path,
) -> None:
    log, out = tmp_path / "log", tmp_path / "out"
    common = {
        "database": system_database,
        "log": str(log),
        "plan": "id/i",
        "workflow_id": "replaced",
        "redis": redis_url,
        "prefix": redis_prefix,
    }
    running = start(forks, mode="run", executor="a", **common)
    # Killed once the deploy waits: its session holds the waiting call.
    deadline = time.monotonic() + LIMIT
    while not anyio.run(waiting_in, redis_url, redis_prefix):
        assert running.is_alive()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    running.kill()
    running.join(LIMIT)
    # Its replacement (the same executor id) recovers the run; another process approves. Either
    # may be the one that finishes it: DBOS hands a recovered run to the first that dequeues it.
    recovering = start(forks, mode="recover", executor="a", out=str(out), **common)
    replying = start(forks, mode="reply", executor="b", out=f"{out}-reply", **common)
    finish(replying)
    finish(recovering)
    assert outcome(out)["text"] == outcome(Path(f"{out}-reply"))["text"] == "c0:0 | c1:1 | c2:2"
    assert anyio.run(waiting_in, redis_url, redis_prefix) == []  # nothing waits twice
    first, second, third = read(log, "run"), read(log, "recover"), read(log, "reply")
    assert first.started == Counter(c0=1)
    # The approved deploy ran once, after the kill; turn 1's reply was recorded.
    assert second.started + third.started == Counter(c1=1, c2=1)
    assert second.asked + third.asked == Counter({2: 1, 3: 1})
