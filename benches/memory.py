"""Memory per registered tool: ferrotool against pydantic-ai and the floor.

Each pair of figures comes from a fresh interpreter: it makes ``count`` distinct functions
(`benches.tools.distinct_functions`, the "Register 1,000 distinct tools" case's shape), starts
``tracemalloc``, builds what holds them as tools, collects garbage and reads the bytes still
traced. The bytes per tool are the slope from 1,000 to 4,000 tools,
``(bytes(4,000) - bytes(1,000)) / 3,000``: what the holder, the imports and the first use cost
once cancels out.

- floor: the plain functions in a dict, by name;
- ferrotool: ``tool(fn)`` for each, registered in a fresh `Toolkit`;
- pydantic-ai: a ``FunctionToolset`` of the same functions (each ``Tool`` derives its schema and
  validator as it is made).

Two cases: the holder as built, and after listing its ``openai_chat`` tool definitions once
(ferrotool keeps each tool's definition and the joined list in its caches; pydantic-ai builds
its ``ToolDefinition`` values on each listing and keeps none).

``tracemalloc`` sees what Python's allocators hand out (every object, the bytes inside them),
not what native code allocates on its own heap: ferrotool's Rust validators and pydantic-core's
are both left out alike.

Usage::

    python -m benches.memory              # every figure, and the ratios
    python -m benches.memory --top 15     # also where ferrotool's bytes go, by line
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

COUNTS: Final = (1000, 4000)
QUICK_COUNTS: Final = (100, 400)
"""The counts of a quick run (a smoke test of the harness)."""
FRESH: Final = "registered"
LISTED: Final = "registered, openai_chat tool list built once"
CASES: Final = (FRESH, LISTED)
FLOOR: Final = "floor: the functions in a dict"
FERROTOOL: Final = "ferrotool tool(fn) + Toolkit.register"
PYDANTIC_AI: Final = "pydantic-ai FunctionToolset"
IMPLS: Final = (FLOOR, FERROTOOL, PYDANTIC_AI)


def _floor(functions: list[Callable[..., Any]], listed: bool) -> object:
    del listed
    return {fn.__name__: fn for fn in functions}


def _ferrotool(functions: list[Callable[..., Any]], listed: bool) -> object:
    from benches import tools as t

    toolkit = t.register_all(functions)
    if listed:
        toolkit.schemas_json("openai_chat")
    return toolkit


def _pydantic_ai(functions: list[Callable[..., Any]], listed: bool) -> object:
    from pydantic_ai.toolsets import FunctionToolset

    toolset: FunctionToolset[None] = FunctionToolset(functions)
    if listed:
        definitions = [tool.tool_def for tool in toolset.tools.values()]
        assert len(definitions) == len(functions)
    return toolset


_BUILDERS: Final[dict[str, Callable[[list[Callable[..., Any]], bool], object]]] = {
    FLOOR: _floor,
    FERROTOOL: _ferrotool,
    PYDANTIC_AI: _pydantic_ai,
}


def _warm(impl: str, listed: bool) -> None:
    """Build a small holder first: imports and first-use caches are not the tools' cost."""
    from benches import tools as t

    _BUILDERS[impl](t.distinct_functions(3, tag="w"), listed)


def traced_bytes(impl: str, case: str, count: int, top: int = 0) -> int:
    """The bytes still traced after building ``impl``'s holder of ``count`` tools (this process).

    With ``top``, also prints the lines that allocated the most of them.
    """
    from benches import tools as t

    listed = case == LISTED
    _warm(impl, listed)
    functions = t.distinct_functions(count, tag="m")
    gc.collect()
    tracemalloc.start(1 if not top else 8)
    before = tracemalloc.take_snapshot() if top else None
    start = tracemalloc.get_traced_memory()[0]
    holder = _BUILDERS[impl](functions, listed)
    gc.collect()
    size = tracemalloc.get_traced_memory()[0] - start
    if before is not None:
        after = tracemalloc.take_snapshot()
        for stat in after.compare_to(before, "traceback")[:top]:
            frames = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in stat.traceback)
            print(f"{stat.size_diff / count:8.0f} B/tool {stat.count_diff:7d} objects  {frames}")
    tracemalloc.stop()
    del holder
    return size


def measure_one(impl: str, case: str, counts: tuple[int, ...]) -> list[int]:
    """`traced_bytes` for each count, in turn, in one fresh interpreter."""
    env = dict(os.environ)
    root = Path(__file__).resolve().parent.parent
    paths = (str(root / "python"), str(root), env.get("PYTHONPATH"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    done = subprocess.run(
        [sys.executable, "-m", "benches.memory", "--one", impl, case, *map(str, counts)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=root,
    )
    return [int(line) for line in done.stdout.split()[-len(counts) :]]


def per_tool(impl: str, case: str, runs: int = 1, counts: tuple[int, int] = COUNTS) -> list[float]:
    """Bytes per tool, the slope between the two counts (1,000 and 4,000 tools), once per run."""
    low, high = counts
    slopes = []
    for _ in range(runs):
        at_low, at_high = measure_one(impl, case, counts)
        slopes.append((at_high - at_low) / (high - low))
    return slopes


def available(impl: str) -> str | None:
    """Why ``impl`` cannot be measured here, or ``None``."""
    if impl != PYDANTIC_AI:
        return None
    try:
        import pydantic_ai.toolsets  # noqa: F401
    except ImportError as exc:
        return f"unavailable: {exc}"
    return None


def measure(runs: int = 1, counts: tuple[int, int] = COUNTS) -> dict[tuple[str, str], list[float]]:
    """Bytes per tool of every available implementation, per case."""
    return {
        (case, impl): per_tool(impl, case, runs, counts)
        for case in CASES
        for impl in IMPLS
        if available(impl) is None
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="slopes per figure")
    parser.add_argument("--top", type=int, default=0, help="ferrotool's largest allocations")
    parser.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        impl, case, *counts = args.one
        for count in counts:
            print(traced_bytes(impl, case, int(count)))
        return 0
    if args.top:
        for case in CASES:
            print(f"{FERROTOOL}, {case}, {COUNTS[-1]:,} tools:")
            traced_bytes(FERROTOOL, case, COUNTS[-1], args.top)
    figures = measure(args.runs)
    for (case, impl), values in figures.items():
        median = sorted(values)[len(values) // 2]
        print(f"{case} | {impl}: {median:,.0f} bytes per tool")
    for case in CASES:
        ours = figures.get((case, FERROTOOL))
        peer = figures.get((case, PYDANTIC_AI))
        if ours and peer:
            ratio = sorted(ours)[len(ours) // 2] / sorted(peer)[len(peer) // 2]
            print(f"{case}: ferrotool / pydantic-ai {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
