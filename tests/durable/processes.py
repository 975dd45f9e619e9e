"""Worker processes for the crash tests: forked from one server that imported the workers once.

DBOS takes seconds to import; the fork server imports the worker modules (and DBOS) once, and
each worker is a fresh process forked from it. The server finds the workers through
``PYTHONPATH`` (Python 3.11's fork server does not take its parent's ``sys.path``), set while it
starts.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from dataclasses import dataclass
from multiprocessing import forkserver
from pathlib import Path
from typing import Final

LIMIT: Final = 60.0  # seconds: a safety net, never reached when things work
WORKERS: Final = ("worker", "agent_worker")
"""The modules the fork server imports."""


def fork_server() -> multiprocessing.context.ForkServerContext:
    """The fork server's context (started once per test process)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(WORKERS))
    before = os.environ.get("PYTHONPATH")
    here = str(Path(__file__).parent)
    os.environ["PYTHONPATH"] = here if before is None else os.pathsep.join([here, before])
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before
    return context


def kill_when(process: multiprocessing.process.BaseProcess, log: Path, line: str) -> float:
    """SIGKILL ``process`` as soon as ``line`` is in ``log``.

    Returns:
        When the line was seen (`time.monotonic`).
    """
    deadline = time.monotonic() + LIMIT
    while line not in (log.read_text(encoding="utf-8") if log.exists() else ""):
        assert process.is_alive(), f"the worker ended before {line!r}"
        assert time.monotonic() < deadline, f"no {line!r} in {LIMIT} s"
        time.sleep(0.002)
    seen = time.monotonic()
    process.kill()
    process.join(LIMIT)
    assert process.exitcode == -9
    return seen


@dataclass(frozen=True)
class Lines:
    """The side-effect log's lines of one process (its phase: ``run``, ``recover``...)."""

    started: Counter[str]  # how often each call started
    ended: Counter[str]  # how often each call ended
    asked: Counter[int]  # how often the model was asked each turn (``model <turn>`` lines)
    order: list[str]  # the calls in the order they started


def read(log: Path, phase: str) -> Lines:
    """The lines ``<phase> start|end <call>`` and ``<phase> model <turn>`` of ``log``."""
    started: Counter[str] = Counter()
    ended: Counter[str] = Counter()
    asked: Counter[int] = Counter()
    order: list[str] = []
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    for line in text.splitlines():
        who, what, item = line.split()
        if who != phase:
            continue
        if what == "model":
            asked[int(item)] += 1
        elif what == "start":
            started[item] += 1
            order.append(item)
        else:
            ended[item] += 1
    return Lines(started, ended, asked, order)
