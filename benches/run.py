"""Run every benchmark case side by side and report median per-call times.

Usage::

    python -m benches.run                 # full run: prints Markdown, writes benches/results.json
    python -m benches.run --quick         # a few short repeats, no JSON written (a smoke test)
    python -m benches.run --markdown benches/RESULTS-table.md

Every measurement is a `timeit`-style loop: the loop count is calibrated once per
implementation so that one repeat takes about ``--target-ms``, then every implementation of a
group is timed in turn, repeat after repeat (interleaved, so that drift on a noisy machine hits
all of them alike). The median over the repeats is reported, with ratios against the floor or
the peer measured in the same run. The garbage collector is off while a loop runs, as in
`timeit`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benches import cases as c

HERE = Path(__file__).resolve().parent


@dataclass
class Measurement:
    """The timings of one implementation on one case."""

    group: str
    case: str
    impl: str
    loops: int
    times_us: list[float] = field(default_factory=list)

    @property
    def median_us(self) -> float:
        return statistics.median(self.times_us)

    @property
    def min_us(self) -> float:
        return min(self.times_us)

    @property
    def spread(self) -> float:
        """The interquartile range of the repeats, as a fraction of the median."""
        if len(self.times_us) < 2:
            return 0.0
        low, _, high = statistics.quantiles(self.times_us, n=4)
        return (high - low) / self.median_us


@dataclass(frozen=True)
class Target:
    """One target of the spec, checked against the measurements of this run."""

    name: str
    measured: float
    limit: float
    higher_is_better: bool

    @property
    def met(self) -> bool:
        if self.higher_is_better:
            return self.measured >= self.limit
        return self.measured <= self.limit

    def verdict(self) -> str:
        if self.met:
            return "met"
        if self.higher_is_better:
            return f"missed: {self.measured:.2f}x of the {self.limit:g}x asked"
        return f"missed by {(self.measured / self.limit - 1) * 100:.0f}%"


# --- timing ----------------------------------------------------------------------------------


def _time_loop(fn: Callable[[], object], loops: int) -> float:
    """Seconds per call over ``loops`` calls, with the garbage collector off."""
    timer = timeit.Timer("fn()", globals={"fn": fn})
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return timer.timeit(loops) / loops
    finally:
        if gc_was_enabled:
            gc.enable()


def _calibrate(fn: Callable[[], object], target_s: float) -> int:
    """The loop count that makes one repeat last about ``target_s``."""
    fn()  # warm up
    loops = 1
    while True:
        elapsed = _time_loop(fn, loops) * loops
        if elapsed >= target_s / 4 or loops >= 10_000_000:
            break
        loops *= 4 if elapsed < target_s / 40 else 2
    return max(1, round(loops * target_s / max(elapsed, 1e-9)))


def measure_group(
    group: str,
    case: str,
    impls: dict[str, Callable[[], object]],
    repeats: int,
    target_s: float,
) -> list[Measurement]:
    """Time each implementation ``repeats`` times, interleaved."""
    results = [
        Measurement(group, case, name, _calibrate(fn, target_s)) for name, fn in impls.items()
    ]
    for _ in range(repeats):
        for result, fn in zip(results, impls.values(), strict=True):
            result.times_us.append(_time_loop(fn, result.loops) * 1e6)
        gc.collect()
    return results


def measure_fresh(
    group: str,
    case: str,
    impls: dict[str, Callable[[Callable[..., Any]], object]],
    factory: Callable[[], Callable[..., Any]],
    repeats: int,
    target_s: float,
) -> list[Measurement]:
    """Time one-shot work on fresh functions: each call gets a function never seen before.

    The functions (and their classes) are built before the clock starts; only the loop over
    them is timed.
    """

    def run_once(derive: Callable[[Callable[..., Any]], object], count: int) -> float:
        functions = [factory() for _ in range(count)]
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            for fn in functions:
                derive(fn)
            return (time.perf_counter() - start) / count
        finally:
            gc.enable()

    results: list[Measurement] = []
    for name, derive in impls.items():
        per_call = run_once(derive, 3)
        results.append(Measurement(group, case, name, max(3, round(target_s / per_call))))
    for _ in range(repeats):
        for result, derive in zip(results, impls.values(), strict=True):
            result.times_us.append(run_once(derive, result.loops) * 1e6)
    return results


# --- the benchmarks --------------------------------------------------------------------------


def bench_call(repeats: int, target_s: float) -> list[Measurement]:
    """Validate raw JSON into typed arguments and call the function: S1 to S5."""
    out: list[Measurement] = []
    builders = c.call_implementations()
    for case in c.CASES:
        fn = case.factory()
        raw = case.raw
        impls: dict[str, Callable[[], object]] = {}
        for name, build in builders.items():
            run = build(fn)
            impls[name] = _bind(run, raw)
        out += measure_group("call", case.name, impls, repeats, target_s)
    return out


def _bind(run: Callable[[bytes], object], raw: bytes) -> Callable[[], object]:
    return lambda: run(raw)


def bench_derive(repeats: int, target_s: float) -> list[Measurement]:
    """Derive a schema and a validator from a fresh function: S1 to S3."""
    out: list[Measurement] = []
    impls = c.derive_implementations()
    for case in c.CASES[:3]:
        out += measure_fresh("derive", case.name, impls, case.factory, repeats, target_s)
    return out


def bench_compile(repeats: int, target_s: float) -> list[Measurement]:
    """Compile a validator from S2's ready JSON Schema."""
    schema = c.derived_schema(c.CASES_BY_NAME["S2"])
    impls = {
        name: _bind_method(compile_, schema)
        for name, compile_ in c.compile_implementations().items()
    }
    if not impls:
        return []
    return measure_group("compile", "S2", impls, repeats, target_s)


def bench_mapping(repeats: int, target_s: float) -> list[Measurement]:
    """Validate an already parsed mapping against a JSON Schema: S1 to S5."""
    out: list[Measurement] = []
    for case in c.CASES:
        schema = c.derived_schema(case)
        validators = c.mapping_validators(schema)
        mapping = case.payload
        impls: dict[str, Callable[[], object]] = {}
        for name, validator in validators.items():
            if case.valid:
                impls[f"{name} is_valid"] = _bind_method(validator.is_valid, mapping)
                impls[f"{name} validate"] = _bind_method(validator.validate, mapping)
            else:
                impls[f"{name} is_valid"] = _bind_method(validator.is_valid, mapping)
                impls[f"{name} errors"] = _errors_of(name, validator, mapping)
        if impls:
            out += measure_group("mapping", case.name, impls, repeats, target_s)
    return out


def _bind_method(method: Callable[[Any], object], value: object) -> Callable[[], object]:
    return lambda: method(value)


def _errors_of(name: str, validator: Any, mapping: object) -> Callable[[], object]:
    if name == c.JSONSCHEMA_RS:
        return lambda: list(validator.iter_errors(mapping))
    return lambda: validator.errors(mapping)


# --- report ----------------------------------------------------------------------------------


def _find(results: list[Measurement], group: str, case: str, impl: str) -> Measurement | None:
    for m in results:
        if (m.group, m.case, m.impl) == (group, case, impl):
            return m
    return None


def targets(results: list[Measurement]) -> list[Target]:
    """The spec's targets, evaluated on this run's medians."""
    out: list[Target] = []

    def ratio(group: str, case: str, num: str, den: str) -> float | None:
        a, b = _find(results, group, case, num), _find(results, group, case, den)
        if a is None or b is None:
            return None
        return a.median_us / b.median_us

    for case, limit in (("S1", 1.2), ("S2", 1.5), ("S3", 1.5), ("S4", 1.1), ("S5", 3.0)):
        r = ratio("call", case, c.FT_CALL, c.FLOOR)
        if r is not None:
            what = "full error list" if case == "S5" else "validate + call"
            out.append(Target(f"{case} {what}: call_json / floor", r, limit, False))
    for case in ("S1", "S2", "S3"):
        r = ratio("derive", case, c.PYDANTIC_DERIVE, c.FT_DERIVE)
        if r is not None:
            out.append(Target(f"{case} derive: pydantic / ferrotool", r, 10.0, True))
    r = ratio("compile", "S2", c.JSONSCHEMA_RS_COMPILE, c.FT_COMPILE)
    if r is not None:
        out.append(Target("S2 compile: jsonschema-rs / ferrotool", r, 2.0, True))
    for case in ("S1", "S2", "S3", "S4"):
        for method in ("is_valid", "validate"):
            r = ratio("mapping", case, f"{c.FT_COMPILE} {method}", f"{c.JSONSCHEMA_RS} {method}")
            if r is not None:
                out.append(
                    Target(f"{case} mapping {method}: ferrotool / jsonschema-rs", r, 1.0, False)
                )
    return out


def machine() -> dict[str, str]:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for module in ("ferrotool", "pydantic", "msgspec", "jsonschema_rs", "orjson"):
        try:
            versions[module] = __import__(module).__version__
        except (ImportError, AttributeError):
            from importlib import metadata

            try:
                versions[module] = metadata.version(module.replace("_", "-"))
            except metadata.PackageNotFoundError:
                versions[module] = "not installed"
    core = Path(sys.modules["ferrotool._core"].__file__ or "")
    return {
        "ferrotool_path": str(core.parent),
        "cpus": str(os.cpu_count()),
        "core_extension_bytes": str(core.stat().st_size) if core.is_file() else "?",
        "cpu_model": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        **{f"version_{k}": v for k, v in versions.items()},
    }


def _fmt_us(us: float) -> str:
    if us >= 100:
        return f"{us:,.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def _rows(results: list[Measurement], group: str) -> Iterator[Measurement]:
    return (m for m in results if m.group == group)


GROUP_TITLES = {
    "call": (
        "Validate raw JSON into typed arguments and call the function",
        c.FLOOR,
        c.FT_CALL,
    ),
    "derive": ("Derive schema and validator from a fresh function", None, c.FT_DERIVE),
    "compile": ("Compile a validator from S2's ready JSON Schema", None, c.FT_COMPILE),
    "mapping": ("Validate a parsed mapping against a JSON Schema", None, None),
}


def markdown(results: list[Measurement], info: dict[str, str], repeats: int) -> str:
    """The results as Markdown tables."""
    lines: list[str] = []
    for group, (title, base, ours) in GROUP_TITLES.items():
        rows = list(_rows(results, group))
        if not rows:
            continue
        lines += [f"### {title}", ""]
        header = ["case", "implementation", "median µs", "IQR"]
        if base:
            header.append("x floor")
        if ours:
            header.append("ferrotool ÷ this")
        if group == "mapping":
            header.append("ferrotool ÷ jsonschema-rs")
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|")
        for m in rows:
            cells = [m.case, m.impl, _fmt_us(m.median_us), f"{m.spread:.0%}"]
            if base:
                b = _find(results, group, m.case, base)
                cells.append(f"{m.median_us / b.median_us:.2f}" if b else "")
            if ours:
                o = _find(results, group, m.case, ours)
                cells.append(f"{o.median_us / m.median_us:.2f}" if o else "")
            if group == "mapping":
                cells.append(_mapping_ratio(results, m))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    checked = targets(results)
    if checked:
        lines += [
            "### Targets",
            "",
            "| target | measured | asked | verdict |",
            "|---|---:|---:|---|",
        ]
        for t in checked:
            sign = "≥" if t.higher_is_better else "≤"
            lines.append(f"| {t.name} | {t.measured:.2f}x | {sign} {t.limit:g}x | {t.verdict()} |")
        lines.append("")
    lines.append(
        f"Medians of {repeats} repeats (IQR: interquartile range of the repeats, relative to "
        f"the median); {info['cpus']} CPUs, {info['cpu_model']}, Python {info['python']}."
    )
    return "\n".join(lines) + "\n"


def _mapping_ratio(results: list[Measurement], m: Measurement) -> str:
    if not m.impl.startswith(c.FT_COMPILE):
        return ""
    method = m.impl.rsplit(" ", 1)[1]
    peer = _find(results, "mapping", m.case, f"{c.JSONSCHEMA_RS} {method}")
    return f"{m.median_us / peer.median_us:.2f}" if peer else ""


# --- main ------------------------------------------------------------------------------------

BENCHES: dict[str, Callable[[int, float], list[Measurement]]] = {
    "call": bench_call,
    "derive": bench_derive,
    "compile": bench_compile,
    "mapping": bench_mapping,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 short repeats: a smoke test")
    parser.add_argument("--repeats", type=int, help="repeats per measurement (default 15)")
    parser.add_argument("--target-ms", type=float, help="length of one repeat (default 40 ms)")
    parser.add_argument("--only", choices=sorted(BENCHES), action="append", help="run a group")
    parser.add_argument("--markdown", type=Path, help="also write the Markdown table here")
    parser.add_argument(
        "--json",
        type=Path,
        help="where to write the results (default benches/results.json; none with --quick)",
    )
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 15)
    target_s = (args.target_ms or (5.0 if args.quick else 40.0)) / 1000

    if not c.HAS_JSONSCHEMA_VALIDATOR:
        print("ferrotool.JsonSchemaValidator is not available: compile and mapping skip it.")
    results: list[Measurement] = []
    started = time.perf_counter()
    for name in args.only or list(BENCHES):
        print(f"running {name}...", file=sys.stderr, flush=True)
        results += BENCHES[name](repeats, target_s)
    elapsed = time.perf_counter() - started

    info = machine()
    if info["core_extension_bytes"].isdigit() and int(info["core_extension_bytes"]) > 16 << 20:
        print("warning: ferrotool._core looks like a debug build; rebuild with --release.")
    table = markdown(results, info, repeats)
    print(table)
    print(f"({elapsed:.0f} s)", file=sys.stderr)
    document = {
        "machine": info,
        "repeats": repeats,
        "target_ms": target_s * 1000,
        "elapsed_s": round(elapsed, 1),
        "results": [
            {**asdict(m), "median_us": m.median_us, "min_us": m.min_us, "iqr_fraction": m.spread}
            for m in results
        ],
        "targets": [{**asdict(t), "met": t.met} for t in targets(results)],
    }
    json_path = args.json or (None if args.quick else HERE / "results.json")
    if json_path:
        json_path.write_text(json.dumps(document, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
