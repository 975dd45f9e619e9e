"""Structured output's cost per call: a tool with an output schema against the same without.

Each pair is one function made a tool twice, ``@tool`` (the output schema derived from the
return type) and ``@tool(output_schema=False)`` (text only), registered in one toolkit:

- ``record``: returns a dataclass (an object schema: the structured value is the record's JSON,
  which the text-only tool computes too);
- ``scalar``: returns an ``int`` (wrapped: ``{"result": n}``, which takes the Python conversion
  instead of the direct call's own);
- ``list``: returns a ``list[int]`` (wrapped).

Each is timed as a sync call (``call_tool_sync``, the Rust direct call) and as an ``async def``
tool awaited in a loop (``call_tool``). The figure is the median of several repeats of a block
of calls, per call; the overhead is structured against text only. `benches.run` times the
same pairs as its group ``structured_output`` (`implementations`), with a target each; run it
alone for the table only::

    python -m benches.structured [--calls 20000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import anyio

from benches import tools as t
from ferrotool import Toolkit, ToolResultBlock, ToolResultState, ToolUseBlock, tool


@dataclass(frozen=True)
class Receipt:
    """A receipt."""

    sku: str
    qty: int
    total: float


def record(sku: str, qty: int) -> Receipt:
    """A receipt for qty of sku."""
    return Receipt(sku, qty, qty * 2.5)


async def record_async(sku: str, qty: int) -> Receipt:
    """A receipt for qty of sku."""
    return Receipt(sku, qty, qty * 2.5)


def scalar(sku: str, qty: int) -> int:
    """Twice qty."""
    return 2 * qty


async def scalar_async(sku: str, qty: int) -> int:
    """Twice qty."""
    return 2 * qty


def numbers(sku: str, qty: int) -> list[int]:
    """The numbers up to qty."""
    return list(range(qty))


async def numbers_async(sku: str, qty: int) -> list[int]:
    """The numbers up to qty."""
    return list(range(qty))


CASES: Final = {
    "record": (record, record_async),
    "scalar": (scalar, scalar_async),
    "list": (numbers, numbers_async),
}
ARGUMENTS: Final = '{"sku": "A1", "qty": 5}'


def toolkit() -> Toolkit:
    """Every case twice: ``<case>_<kind>_structured`` and ``<case>_<kind>_text``."""
    kit = Toolkit()
    for case, (sync, async_) in CASES.items():
        for kind, fn in (("sync", sync), ("async", async_)):
            inline = kind == "sync"
            kit.register(tool(fn, name=f"{case}_{kind}_structured", inline=inline))
            kit.register(tool(fn, name=f"{case}_{kind}_text", inline=inline, output_schema=False))
    return kit


TEXT: Final = "text only"
STRUCTURED: Final = "structured"
KINDS: Final = ("sync", "async")
GROUP_CASES: Final = tuple(f"{case} {kind}" for case in CASES for kind in KINDS)
"""The cases of the ``structured_output`` group: each function, sync and async."""


def _read(result: ToolResultBlock) -> t.Outcome:
    return t.Outcome(result.state is ToolResultState.SUCCESS, result.structured)


def implementations(case: str) -> dict[str, t.Built]:
    """The two tools of one ``GROUP_CASES`` case, text only and structured, for `benches.run`.

    A sync case is one ``call_tool_sync`` (the Rust direct call), an async one an awaited
    ``call_tool``; the structured row is checked to give a structured value, the text row none.
    """
    name, kind = case.split()
    kit = toolkit()
    out = {}
    for row, suffix in ((TEXT, "text"), (STRUCTURED, "structured")):
        call = ToolUseBlock("c1", f"{name}_{kind}_{suffix}", ARGUMENTS)
        run = kit.call_tool_sync if kind == "sync" else kit.call_tool
        out[row] = t.Built(functools.partial(run, call), kind == "async", _read)
    return out


def _sync_block(kit: Toolkit, name: str, calls: int) -> Callable[[], float]:
    call = ToolUseBlock("c1", name, ARGUMENTS)
    run = kit.call_tool_sync

    def block() -> float:
        start = time.perf_counter()
        for _ in range(calls):
            run(call)
        return (time.perf_counter() - start) / calls

    return block


def _async_block(kit: Toolkit, name: str, calls: int) -> Callable[[], float]:
    call = ToolUseBlock("c1", name, ARGUMENTS)

    async def timed() -> float:
        run = kit.call_tool
        start = time.perf_counter()
        for _ in range(calls):
            await run(call)
        return (time.perf_counter() - start) / calls

    return lambda: anyio.run(timed)


def medians(
    text: Callable[[], float], structured: Callable[[], float], repeats: int
) -> tuple[float, float]:
    """The median per-call times of ``repeats`` blocks of each, interleaved (after a warm-up)."""
    text()
    structured()
    texts, structureds = [], []
    for _ in range(repeats):
        texts.append(text())
        structureds.append(structured())
    return statistics.median(texts), statistics.median(structureds)


def measure(calls: int, repeats: int) -> list[tuple[str, float, float, float]]:
    """Each case and kind: text-only and structured seconds per call, and the overhead (%)."""
    kit = toolkit()
    rows = []
    for case in CASES:
        for kind, make in (("sync", _sync_block), ("async", _async_block)):
            text, structured = medians(
                make(kit, f"{case}_{kind}_text", calls),
                make(kit, f"{case}_{kind}_structured", calls),
                repeats,
            )
            rows.append((f"{case} {kind}", text, structured, (structured / text - 1) * 100))
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    print(f"{'case':<14} {'text µs':>9} {'structured µs':>14} {'overhead':>9}")
    for label, text, structured, overhead in measure(args.calls, args.repeats):
        print(f"{label:<14} {text * 1e6:>9.2f} {structured * 1e6:>14.2f} {overhead:>8.1f}%")


if __name__ == "__main__":
    main()
