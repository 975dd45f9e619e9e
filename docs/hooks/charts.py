"""Benchmark charts, tables and figures for the documentation, drawn at build time.

A page names what it shows by a placeholder, which ``on_page_markdown`` replaces with what the
benchmark results files (``benches/results*.json``, written by ``benches/run.py``) hold:

- ``<!-- chart: NAME -->``: a bar chart as inline SVG (one bar per measured result), on a line of
  its own. ``NAME`` is one of :data:`CHARTS`.
- ``<!-- table: targets -->``: the targets table (target, measured, asked, verdict).
- ``<!-- value: KIND | FILE | ... -->``: one number in the prose, e.g.
  ``<!-- value: target | results | S4 validate + call: call_json / floor -->`` (see
  :func:`value`).

A placeholder that names no chart, table or figure the files hold stops the build with a
``PluginError``. The output depends on the files alone: the build is offline and reproducible.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from mkdocs.exceptions import PluginError

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

PLACEHOLDER: Final = re.compile(r"<!--\s*(?P<kind>chart|table|value):\s*(?P<name>.*?)\s*-->")
RESULT_FILES: Final = ("results", "results-targets", "results-engine", "results-sandbox")
PEERS: Final = ("pydantic", "msgspec", "jsonschema-rs", "openai-agents", "mcp", "langchain")

Role = Literal["ferrotool", "floor", "peer"]


@dataclass(frozen=True)
class Result:
    """The median of one implementation on one case of a group."""

    group: str
    case: str
    impl: str
    median_us: float


@dataclass(frozen=True)
class Derived:
    """A figure computed from a group's medians (e.g. a cost per call)."""

    group: str
    case: str
    name: str
    value_us: float
    how: str


@dataclass(frozen=True)
class Target:
    """A target of the spec, evaluated on one run."""

    name: str
    measured: float
    limit: float
    higher_is_better: bool
    met: bool

    @property
    def asked(self) -> str:
        """The limit as the table shows it, e.g. ``≤ 1.2x``."""
        return f"{'≥' if self.higher_is_better else '≤'} {self.limit:g}x"

    @property
    def verdict(self) -> str:
        """``met``, or by how much the target is missed."""
        if self.met:
            return "met"
        if self.higher_is_better:
            return f"missed: {self.measured:.2f}x of the {self.limit:g}x asked"
        return f"missed by {(self.measured / self.limit - 1) * 100:.0f}%"


@dataclass(frozen=True)
class Run:
    """One results file: the machine, the repeats, and what was measured."""

    file: str
    repeats: int
    repeat_ms: float
    elapsed_s: float
    machine: tuple[tuple[str, str], ...]
    results: tuple[Result, ...]
    derived: tuple[Derived, ...]
    targets: tuple[Target, ...]

    @classmethod
    def load(cls, path: Path) -> Run:
        """Read a results file written by ``benches/run.py``."""
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            file=path.name,
            repeats=int(data["repeats"]),
            repeat_ms=float(data["target_ms"]),
            elapsed_s=float(data["elapsed_s"]),
            machine=tuple((str(k), str(v)) for k, v in data["machine"].items()),
            results=tuple(
                Result(r["group"], r["case"], r["impl"], float(r["median_us"]))
                for r in data["results"]
            ),
            derived=tuple(
                Derived(d["group"], d["case"], d["name"], float(d["value_us"]), d["how"])
                for d in data.get("derived", [])
            ),
            targets=tuple(
                Target(
                    t["name"],
                    float(t["measured"]),
                    float(t["limit"]),
                    bool(t["higher_is_better"]),
                    bool(t["met"]),
                )
                for t in data["targets"]
            ),
        )

    def group(self, group: str) -> tuple[Result, ...]:
        """The results of one group, in the order measured."""
        return tuple(r for r in self.results if r.group == group)

    def median(self, group: str, case: str, impl: str) -> float:
        """The median of one implementation on one case (``PluginError`` if not measured)."""
        for r in self.results:
            if (r.group, r.case, r.impl) == (group, case, impl):
                return r.median_us
        raise PluginError(f"{self.file} has no result {group} / {case} / {impl}")

    def target(self, name: str) -> Target:
        """The target of that name (``PluginError`` if the run has none)."""
        for t in self.targets:
            if t.name == name:
                return t
        raise PluginError(f"{self.file} has no target {name!r}")

    def derived_value(self, group: str, case: str, name: str) -> Derived:
        """The derived figure of that name (``PluginError`` if the run has none)."""
        for d in self.derived:
            if (d.group, d.case, d.name) == (group, case, name):
                return d
        raise PluginError(f"{self.file} has no derived figure {group} / {case} / {name}")

    @property
    def machine_text(self) -> str:
        """E.g. ``2 CPUs, AMD EPYC, Python 3.11.7``."""
        info = dict(self.machine)
        return f"{info['cpus']} CPUs, {info['cpu_model']}, Python {info['python']}"


@dataclass(frozen=True)
class Chart:
    """A chart a page can name: the group of a results file it draws, and how."""

    name: str
    file: str
    group: str
    title: str
    derived: bool = False


CHARTS: Final = (
    Chart("call-json", "results", "call", "Validate raw JSON into typed arguments and call"),
    Chart("derive", "results", "derive", "Derive schema and validator from a fresh function"),
    Chart("compile", "results", "compile", "Compile a validator from S2's JSON Schema"),
    Chart("mapping", "results", "mapping", "Validate a parsed mapping against a JSON Schema"),
    Chart("tool-call-async", "results", "tool_async", "Tool call, async tools"),
    Chart("tool-call-inline", "results", "tool_inline", "Tool call, sync tools inline"),
    Chart("tool-call-thread", "results", "tool_thread", "Tool call, sync tools on a thread"),
    Chart("tool-schemas", "results", "tool_schemas", "Provider tool list of 100 tools"),
    Chart("view-build", "results", "view_build", "Build a request view"),
    Chart("view-schemas", "results", "view_schemas", "A request view's provider tool list"),
    Chart("reset-tools", "results", "reset_tools", "Session round trip"),
    Chart("batch-wait", "results-targets", "batch_wait", "Batch of 10 calls waiting 10 ms"),
    Chart("batch-overhead", "results-targets", "batch_overhead", "Batch of 100 trivial calls"),
    Chart(
        "batch-overhead-per-call",
        "results-targets",
        "batch_overhead",
        "Overhead per call in a batch of 100",
        derived=True,
    ),
    Chart("middleware-cost", "results-targets", "middleware_cost", "Cost of middleware"),
    Chart(
        "approval-round-trip",
        "results-engine",
        "approval_round_trip",
        "Approval round trip",
    ),
    Chart("sandbox", "results-sandbox", "sandbox", "Run one shell command"),
)
CHARTS_BY_NAME: Final = {chart.name: chart for chart in CHARTS}


@dataclass(frozen=True)
class Bar:
    """One bar: the case it belongs to, its label and its value in µs."""

    case: str
    label: str
    value_us: float


def load_runs(benches: Path) -> dict[str, Run]:
    """Every results file of ``benches``, by stem (``results``, ``results-targets``, ...)."""
    runs: dict[str, Run] = {}
    for stem in RESULT_FILES:
        path = benches / f"{stem}.json"
        if not path.is_file():
            raise PluginError(f"benchmark results file not found: {path}")
        runs[stem] = Run.load(path)
    return runs


def bars(chart: Chart, runs: dict[str, Run]) -> tuple[Bar, ...]:
    """The bars of a chart, in the order the run measured them."""
    run = runs[chart.file]
    if chart.derived:
        found = tuple(
            Bar(d.case, d.name, d.value_us) for d in run.derived if d.group == chart.group
        )
    else:
        found = tuple(Bar(r.case, r.impl, r.median_us) for r in run.group(chart.group))
    if not found:
        raise PluginError(f"{run.file} holds nothing for the chart {chart.name!r}")
    return found


def role(label: str) -> Role:
    """Whether a bar is ferrotool's, a floor (what checks nothing), or a peer library's."""
    lowered = label.lower()
    if lowered.startswith(("floor", "bwrap")):
        return "floor"
    if lowered.startswith(PEERS):
        return "peer"
    return "ferrotool"


# --- SVG ---------------------------------------------------------------------------------------

WIDTH: Final = 900
CHAR_W: Final = 6.6  # average advance of a 12 px sans-serif character
ROW_H: Final = 18
PANEL_H: Final = 22
TOP: Final = 30
AXIS_H: Final = 44
VALUE_W: Final = 80
COLORS: Final[dict[Role, str]] = {"ferrotool": "#e8590c", "floor": "#868e96", "peer": "#4c6ef5"}
LEGEND: Final[dict[Role, str]] = {
    "ferrotool": "ferrotool",
    "floor": "floor, reference",
    "peer": "peer",
}


def fmt_us(value: float) -> str:
    """Three significant figures, as the benchmark tables print them."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _num(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def _ticks(low: float, high: float, log: bool) -> list[float]:
    if log:
        return [
            10.0**k for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
        ]
    step = 10.0 ** math.floor(math.log10(high / 4))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if high / (step * factor) <= 6:
            step *= factor
            break
    return [step * i for i in range(math.ceil(high / step) + 1)]


def _tick_text(value: float) -> str:
    if value >= 1:
        return f"{value:,.0f}"
    return f"{value:g}"


def svg(chart: Chart, runs: dict[str, Run]) -> str:
    """The chart as an accessible inline SVG: title, description, axis, labels and values."""
    run = runs[chart.file]
    found = bars(chart, runs)
    cases = list(dict.fromkeys(bar.case for bar in found))
    values = [bar.value_us for bar in found]
    low, high = min(values), max(values)
    log = low > 0 and high / low > 20
    ticks = _ticks(low, high, log)
    axis_low, axis_high = (ticks[0], ticks[-1]) if log else (0.0, ticks[-1])
    label_w = min(440.0, 16 + CHAR_W * max(len(bar.label) for bar in found))
    plot_x = label_w
    plot_w = WIDTH - label_w - VALUE_W

    def x_of(value: float) -> float:
        if log:
            span = math.log10(axis_high) - math.log10(axis_low)
            return plot_x + plot_w * (math.log10(value) - math.log10(axis_low)) / span
        return plot_x + plot_w * (value - axis_low) / (axis_high - axis_low)

    show_cases = len(cases) > 1 or chart.derived
    height = TOP + len(found) * ROW_H + (len(cases) * PANEL_H if show_cases else 0) + AXIS_H
    ident = f"chart-{chart.name}"
    measure = "overhead per call, µs" if chart.derived else "median time, µs"
    scale = "log scale" if log else "linear scale"
    desc = (
        f"{measure.capitalize()} ({scale}), from the medians of benches/{run.file}, "
        f"{run.repeats} repeats, "
        f"{run.machine_text}. Group {chart.group}: {len(found)} results; shorter is faster."
    )
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="ft-chart" role="img" '
        f'viewBox="0 0 {WIDTH} {height}" width="100%" '
        f'aria-labelledby="{ident}-title {ident}-desc" font-family="sans-serif" font-size="12">',
        f'<title id="{ident}-title">{html.escape(chart.title)}</title>',
        f'<desc id="{ident}-desc">{html.escape(desc)}</desc>',
    ]
    legend_x = plot_x
    roles = {role(bar.label) for bar in found}
    for name, color in ((name, color) for name, color in COLORS.items() if name in roles):
        out.append(
            f'<rect x="{_num(legend_x)}" y="8" width="12" height="12" fill="{color}"/>'
            f'<text x="{_num(legend_x + 16)}" y="18" fill="currentColor">{LEGEND[name]}</text>'
        )
        legend_x += 140
    y = float(TOP)
    plot_top = y
    for case in cases:
        if show_cases:
            out.append(
                f'<text class="case" x="4" y="{_num(y + 16)}" font-weight="bold" '
                f'fill="currentColor">{html.escape(case)}</text>'
            )
            y += PANEL_H
        for bar in (b for b in found if b.case == case):
            end = x_of(max(bar.value_us, axis_low)) if log else x_of(max(bar.value_us, 0.0))
            start = x_of(axis_low) if log else x_of(0.0)
            value = fmt_us(bar.value_us)
            out.append(
                f'<text class="label" x="{_num(plot_x - 6)}" y="{_num(y + 13)}" '
                f'text-anchor="end" fill="currentColor">{html.escape(bar.label)}</text>'
                f'<rect class="bar" data-case="{html.escape(case)}" '
                f'data-label="{html.escape(bar.label)}" x="{_num(start)}" y="{_num(y + 3)}" '
                f'width="{_num(max(end - start, 1.0))}" height="{ROW_H - 5}" '
                f'fill="{COLORS[role(bar.label)]}"><title>{html.escape(bar.label)}: '
                f"{value} µs</title></rect>"
                f'<text class="value" x="{_num(max(end, start + 1) + 4)}" y="{_num(y + 13)}" '
                f'fill="currentColor">{value}</text>'
            )
            y += ROW_H
    for tick in ticks:
        tx = x_of(tick)
        out.append(
            f'<line x1="{_num(tx)}" y1="{_num(plot_top)}" x2="{_num(tx)}" y2="{_num(y + 4)}" '
            f'stroke="currentColor" stroke-opacity="0.2"/>'
            f'<text class="tick" x="{_num(tx)}" y="{_num(y + 18)}" text-anchor="middle" '
            f'fill="currentColor">{_tick_text(tick)}</text>'
        )
    out.append(
        f'<text class="axis-label" x="{_num(plot_x + plot_w / 2)}" y="{_num(y + 36)}" '
        f'text-anchor="middle" fill="currentColor">{measure} ({scale})</text>'
    )
    out.append("</svg>")
    return "".join(out)


def figure(chart: Chart, runs: dict[str, Run]) -> str:
    """The chart in a ``<figure>`` with its caption, as one raw HTML block of Markdown."""
    run = runs[chart.file]
    caption = (
        f"{html.escape(chart.title)}: median of {run.repeats} repeats, "
        f"<code>benches/{run.file}</code>."
    )
    return (
        f'<figure class="ft-chart" id="chart-{chart.name}">{svg(chart, runs)}'
        f"<figcaption>{caption}</figcaption></figure>"
    )


# --- tables and values -------------------------------------------------------------------------


def targets_table(run: Run) -> str:
    """The targets of a run as a Markdown table."""
    lines = ["| target | measured | asked | verdict |", "|---|---:|---:|---|"]
    lines.extend(f"| {t.name} | {t.measured:.2f}x | {t.asked} | {t.verdict} |" for t in run.targets)
    return "\n".join(lines)


def value(spec: str, runs: dict[str, Run]) -> str:
    """One figure of the prose, named by fields separated by ``|``.

    Kinds, with what they give:

    - ``target | FILE | NAME``: a target's measured ratio (``1.38x``); ``asked | FILE | NAME``
      its limit (``≤ 1.1x``); ``verdict | FILE | NAME`` its verdict.
    - ``median | FILE | GROUP | CASE | IMPL``: a median (``60.0 µs``).
    - ``ratio | FILE | GROUP | CASE | IMPL | BASE``: IMPL's median over BASE's (``1.38x``).
    - ``derived | FILE | GROUP | CASE | NAME``: a derived figure (``32.9 µs``).
    - ``met | FILE``: the targets met (``24 of 25``).
    - ``repeats | FILE``, ``repeat-ms | FILE``, ``elapsed | FILE`` (seconds), ``machine | FILE``.
    """
    kind, *fields = [field.strip() for field in spec.split("|")]
    file, rest = (fields[0], fields[1:]) if fields else ("", [])
    if file not in runs:
        raise PluginError(f"unknown results file {file!r} in value placeholder {spec!r}")
    run = runs[file]
    match kind, rest:
        case "target", [name]:
            return f"{run.target(name).measured:.2f}x"
        case "verdict", [name]:
            return run.target(name).verdict
        case "asked", [name]:
            return run.target(name).asked
        case "median", [group, case, impl]:
            return f"{fmt_us(run.median(group, case, impl))} µs"
        case "ratio", [group, case, impl, base]:
            return f"{run.median(group, case, impl) / run.median(group, case, base):.2f}x"
        case "derived", [group, case, name]:
            return f"{fmt_us(run.derived_value(group, case, name).value_us)} µs"
        case "met", []:
            return f"{sum(t.met for t in run.targets)} of {len(run.targets)}"
        case "repeats", []:
            return str(run.repeats)
        case "repeat-ms", []:
            return f"{run.repeat_ms:g}"
        case "elapsed", []:
            return f"{run.elapsed_s:.0f}"
        case "machine", []:
            return run.machine_text
    raise PluginError(f"unknown value placeholder {spec!r}")


def render(markdown: str, benches: Path) -> str:
    """Replace every placeholder of a page (``PluginError`` on one that names nothing)."""
    if not PLACEHOLDER.search(markdown):
        return markdown
    runs = load_runs(benches)

    def replace(match: re.Match[str]) -> str:
        kind, name = match["kind"], match["name"]
        if kind == "chart":
            if name not in CHARTS_BY_NAME:
                known = ", ".join(CHARTS_BY_NAME)
                raise PluginError(f"unknown chart {name!r} (known: {known})")
            return figure(CHARTS_BY_NAME[name], runs)
        if kind == "table":
            if name != "targets":
                raise PluginError(f"unknown table {name!r} (known: targets)")
            return targets_table(runs["results-targets"])
        return value(name, runs)

    return PLACEHOLDER.sub(replace, markdown)


def on_page_markdown(markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files) -> str:
    """MkDocs hook: draw the page's charts, tables and figures from ``benches/``."""
    benches = Path(config.config_file_path).parent / "benches"
    try:
        return render(markdown, benches)
    except PluginError as error:
        raise PluginError(f"{page.file.src_uri}: {error}") from error
