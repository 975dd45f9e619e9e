"""The cost of ``import ferrotool`` against the floor of its own dependencies.

Each run is a fresh interpreter (``python -c``) that times one import statement with
``time.perf_counter`` around it and prints the seconds: ``import ferrotool`` against the floor
``import anyio, orjson, pydantic_core`` (its dependencies, which any use of a toolkit loads).
The target is on the bare ``import ferrotool`` (at most `TARGET` times the floor); the import
of the names a program starts with (``from ferrotool import Toolkit, tool``: the registry, the
execution engine, schema derivation) is reported beside it. The statements run in turn, repeat
after repeat, so that drift on a noisy machine hits all alike; the medians and their ratios to
the floor are reported. The interpreter's own start-up is not counted.

Usage::

    python -m benches.imports            # 15 runs of each, prints the medians and the ratio
    python -m benches.imports --runs 31
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Final

CASE: Final = "a fresh interpreter, one import statement"
FLOOR: Final = "floor: import anyio, orjson, pydantic_core"
FERROTOOL: Final = "import ferrotool"
FIRST_USE: Final = "from ferrotool import Toolkit, tool"
STATEMENTS: Final = {
    FLOOR: "import anyio, orjson, pydantic_core",
    FERROTOOL: "import ferrotool",
    FIRST_USE: "from ferrotool import Toolkit, tool",
}
TARGET: Final = 1.5
"""``import ferrotool`` may take at most this many times the floor."""

_PROGRAM: Final = (
    "import time\nstart = time.perf_counter()\n{statement}\nprint(time.perf_counter() - start)\n"
)


def _environment() -> dict[str, str]:
    """This process's environment, with the package this file's checkout holds importable."""
    env = dict(os.environ)
    python = str(Path(__file__).resolve().parent.parent / "python")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (python, env.get("PYTHONPATH")) if p)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def time_import(statement: str, env: dict[str, str] | None = None) -> float:
    """Seconds one import statement takes in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM.format(statement=statement)],
        capture_output=True,
        text=True,
        check=True,
        env=env or _environment(),
    )
    return float(done.stdout.strip().splitlines()[-1])


def measure(runs: int) -> dict[str, list[float]]:
    """Seconds of each statement over ``runs`` fresh interpreters, interleaved (one warm-up)."""
    env = _environment()
    for statement in STATEMENTS.values():
        time_import(statement, env)  # warm the file system's caches and the bytecode
    times: dict[str, list[float]] = {name: [] for name in STATEMENTS}
    for _ in range(runs):
        for name, statement in STATEMENTS.items():
            times[name].append(time_import(statement, env))
    return times


def ratio(times: dict[str, list[float]], name: str = FERROTOOL) -> float:
    """A statement's median (``import ferrotool``'s by default) over the floor's."""
    return statistics.median(times[name]) / statistics.median(times[FLOOR])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh interpreters per statement")
    args = parser.parse_args(argv)
    times = measure(args.runs)
    for name, seconds in times.items():
        low, _, high = statistics.quantiles(seconds, n=4) if len(seconds) > 1 else (0, 0, 0)
        print(
            f"{name}: median {statistics.median(seconds) * 1e3:.1f} ms "
            f"(IQR {(high - low) * 1e3:.1f} ms, {len(seconds)} runs)"
        )
    measured = ratio(times)
    verdict = "met" if measured <= TARGET else "missed"
    print(f"{FERROTOOL} / floor: {measured:.2f}x (target <= {TARGET}x: {verdict})")
    print(f"{FIRST_USE} / floor: {ratio(times, FIRST_USE):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
