"""The performance page's charts, tables and figures, drawn from the benchmark results files."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Protocol, cast

import pytest

pytest.importorskip("mkdocs", reason="the `docs` dependency group is not installed")

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).parents[2]
HOOK = ROOT / "docs" / "hooks" / "charts.py"


def _load_hook() -> ModuleType:
    """The build hook, loaded from its file as MkDocs loads it (it is no package's module)."""
    spec = importlib.util.spec_from_file_location("charts", HOOK)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


charts = _load_hook()


class Chart(Protocol):
    """What the tests read of a chart the hook defines."""

    name: str
    file: str
    group: str
    title: str
    derived: bool


BENCHES = ROOT / "benches"
PAGE = ROOT / "docs" / "performance.md"
SVG = "{http://www.w3.org/2000/svg}"
ANY_PLACEHOLDER = re.compile(r"<!--\s*(chart|table|value):")
CHART_PLACEHOLDER = re.compile(r"<!--\s*chart:\s*(\S+)\s*-->")


def _rows(stem: str, key: str) -> list[dict[str, object]]:
    """The rows under ``key`` of a results file, read without the hook."""
    data: dict[str, list[dict[str, object]]] = json.loads(
        (BENCHES / f"{stem}.json").read_text(encoding="utf-8")
    )
    return data[key]


def _expected(chart: Chart) -> list[tuple[str, str, float]]:
    """(case, label, µs) of every result (or derived figure) of the chart's group, in order."""
    key, label, number = (
        ("derived", "name", "value_us") if chart.derived else ("results", "impl", "median_us")
    )
    return [
        (str(row["case"]), str(row[label]), float(cast(float, row[number])))
        for row in _rows(chart.file, key)
        if row["group"] == chart.group
    ]


def _svg(chart: Chart) -> ET.Element:
    return ET.fromstring(charts.svg(chart, charts.load_runs(BENCHES)))


def _texts(root: ET.Element, cls: str) -> list[str]:
    return [el.text or "" for el in root.iter(f"{SVG}text") if el.get("class") == cls]


CHART_NAMES: list[str] = [chart.name for chart in charts.CHARTS]


@pytest.mark.parametrize("name", CHART_NAMES)
def test_a_chart_has_one_bar_per_result_in_its_file(name: str) -> None:
    chart: Chart = charts.CHARTS_BY_NAME[name]
    expected = _expected(chart)
    assert expected, f"{chart.file}.json holds no {chart.group}"
    root = _svg(chart)
    found = [
        (rect.get("data-case"), rect.get("data-label"))
        for rect in root.iter(f"{SVG}rect")
        if rect.get("class") == "bar"
    ]
    assert found == [(case, label) for case, label, _ in expected]


@pytest.mark.parametrize("name", CHART_NAMES)
def test_a_charts_labels_and_values_are_the_benchmarks(name: str) -> None:
    chart: Chart = charts.CHARTS_BY_NAME[name]
    expected = _expected(chart)
    root = _svg(chart)
    assert _texts(root, "label") == [label for _, label, _ in expected]
    shown = [float(text.replace(",", "")) for text in _texts(root, "value")]
    assert len(shown) == len(expected)
    for value, (_, _, measured) in zip(shown, expected, strict=True):
        # Three significant figures, as the tables print them.
        assert value == pytest.approx(measured, rel=0.006, abs=0.006)
    cases = list(dict.fromkeys(case for case, _, _ in expected))
    if len(cases) > 1:
        assert _texts(root, "case") == cases


@pytest.mark.parametrize("name", CHART_NAMES)
def test_a_chart_is_accessible(name: str) -> None:
    chart: Chart = charts.CHARTS_BY_NAME[name]
    root = _svg(chart)
    assert root.get("role") == "img"
    title = root.find(f"{SVG}title")
    desc = root.find(f"{SVG}desc")
    assert title is not None
    assert desc is not None
    assert title.text == chart.title
    assert f"benches/{chart.file}.json" in (desc.text or "")
    assert (root.get("aria-labelledby") or "").split() == [title.get("id"), desc.get("id")]
    (axis,) = _texts(root, "axis-label")
    assert axis.startswith("overhead per call, µs" if chart.derived else "median time, µs")
    assert len(_texts(root, "tick")) >= 2


def test_every_chart_is_on_the_page_and_every_placeholder_is_replaced() -> None:
    source = PAGE.read_text(encoding="utf-8")
    named = CHART_PLACEHOLDER.findall(source)
    assert sorted(named) == sorted(CHART_NAMES)
    assert "<!-- table: targets -->" in source
    rendered = charts.render(source, BENCHES)
    assert not ANY_PLACEHOLDER.search(rendered)
    assert rendered.count('<figure class="ft-chart"') == len(named)


@pytest.mark.parametrize(
    "placeholder",
    [
        "<!-- chart: no-such-chart -->",
        "<!-- table: no-such-table -->",
        "<!-- value: target | results | no such target -->",
        "<!-- value: median | results | call | S9 | floor -->",
        "<!-- value: median | no-such-file | call | S1 | floor -->",
        "<!-- value: no-such-kind | results -->",
        "<!-- value: ratio | results | call | S1 | floor -->",
    ],
)
def test_an_unknown_placeholder_fails_the_build(placeholder: str) -> None:
    with pytest.raises(PluginError):
        charts.render(f"# Page\n\n{placeholder}\n", BENCHES)


def test_the_hook_names_the_page_whose_placeholder_is_unknown() -> None:
    page = SimpleNamespace(file=SimpleNamespace(src_uri="performance.md"))
    config = SimpleNamespace(config_file_path=str(ROOT / "mkdocs.yml"))
    files = None
    with pytest.raises(PluginError, match=r"performance\.md: unknown chart 'nope'"):
        charts.on_page_markdown("<!-- chart: nope -->", page=page, config=config, files=files)
    done: str = charts.on_page_markdown(
        "<!-- chart: compile -->", page=page, config=config, files=files
    )
    assert done.startswith('<figure class="ft-chart" id="chart-compile">')


def test_an_unknown_chart_stops_a_real_build(tmp_path: Path) -> None:
    """A one-page site with the hook: the build aborts, naming the page and the chart."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "benches").mkdir()
    for stem in charts.RESULT_FILES:
        shutil.copy(BENCHES / f"{stem}.json", tmp_path / "benches")
    (tmp_path / "mkdocs.yml").write_text(f"site_name: t\nhooks:\n  - {HOOK}\n", encoding="utf-8")
    (tmp_path / "docs" / "index.md").write_text("# T\n\n<!-- chart: nope -->\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
        timeout=120,
    )
    assert done.returncode != 0
    assert "index.md: unknown chart 'nope'" in done.stdout + done.stderr
    assert not (tmp_path / "site" / "index.html").exists()


def test_a_missing_results_file_fails_the_build(tmp_path: Path) -> None:
    with pytest.raises(PluginError, match="not found"):
        charts.render("<!-- chart: compile -->", tmp_path)


def test_a_page_without_placeholders_is_left_alone(tmp_path: Path) -> None:
    text = "# Page\n\n<!-- an ordinary comment -->\n"
    assert charts.render(text, tmp_path) == text


def test_the_targets_table_rows_are_the_files_targets() -> None:
    table = charts.render("<!-- table: targets -->", BENCHES)
    header, rule, *rows = table.splitlines()
    assert header == "| target | measured | asked | verdict |"
    assert rule == "|---|---:|---:|---|"
    targets = _rows("results-targets", "targets")
    assert len(rows) == len(targets)
    for row, target in zip(rows, targets, strict=True):
        name, measured, asked, verdict = (cell.strip() for cell in row.strip("|").split(" | "))
        assert name == target["name"]
        assert float(measured.removesuffix("x")) == pytest.approx(target["measured"], abs=0.005)
        sign = "≥" if target["higher_is_better"] else "≤"
        assert asked == f"{sign} {target['limit']:g}x"
        assert (verdict == "met") is target["met"]


def test_the_prose_figures_come_from_the_files() -> None:
    targets = {str(t["name"]): t for t in _rows("results", "targets")}
    s4 = "S4 validate + call: call_json / floor"
    assert charts.render(f"<!-- value: target | results | {s4} -->", BENCHES) == (
        f"{cast(float, targets[s4]['measured']):.2f}x"
    )
    met = sum(bool(t["met"]) for t in targets.values())
    assert charts.render("<!-- value: met | results -->", BENCHES) == f"{met} of {len(targets)}"
    medians = {
        str(r["impl"]): cast(float, r["median_us"])
        for r in _rows("results", "results")
        if (r["group"], r["case"]) == ("call", "S4")
    }
    ratio = charts.render("<!-- value: ratio | results | call | S4 | pydantic | floor -->", BENCHES)
    assert ratio == f"{medians['pydantic'] / medians['floor']:.2f}x"


def test_the_hook_is_registered() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^hooks:\n  - docs/hooks/charts\.py$", config, re.MULTILINE)
