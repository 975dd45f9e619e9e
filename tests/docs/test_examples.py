"""Every example of the documentation and the README runs, prints what its page shows, and passes
mypy --strict and pyright; every shell command of every page is run or checked."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs.blocks import (
    ROOT,
    Example,
    examples,
    page_examples,
    pages,
    plain_examples,
    shell_commands,
)
from docs.commands import check


@pytest.mark.parametrize("example", plain_examples(), ids=lambda example: example.name)
def test_the_example_runs_and_prints_its_output(
    example: Example, capsys: pytest.CaptureFixture[str]
) -> None:
    example.run()
    printed = capsys.readouterr().out
    if example.output is not None:
        assert printed == example.output


def test_every_page_with_code_has_an_example() -> None:
    assert len(plain_examples()) >= 3
    assert any(example.output is not None for example in plain_examples())


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.stem)
def test_every_python_block_is_an_example(page: Path) -> None:
    """A block the pattern misses (indented, say) would run nowhere: there is none."""
    text = page.read_text(encoding="utf-8")
    assert text.count("```python") == len(page_examples(page))
    shown = text.count('```text title="Output"')
    assert shown == len([example for example in page_examples(page) if example.output is not None])


def _strings(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 10
    }


def test_every_marked_example_is_selected_by_the_test_it_names() -> None:
    marked = [example for example in examples() if example.runner is not None]
    assert marked
    for example in marked:
        runner = ROOT / example.runner  # type: ignore[operator]
        assert runner.is_file(), example.name
        source = runner.read_text(encoding="utf-8")
        assert "marked(" in source, example.runner
        siblings = [other for other in marked if other.runner == example.runner]
        selectors = [
            text
            for text in _strings(runner)
            if [other for other in siblings if text in other.code] == [example]
        ]
        assert selectors, f"{example.name} is marked but not selected by {example.runner}"


def _programs(folder: Path) -> list[Path]:
    """Every example, and one deliberate error, as files in ``folder``."""
    paths = []
    for example in examples():
        path = folder / f"{re.sub(r'[^a-zA-Z0-9_]', '_', example.name)}.py"
        path.write_text(example.code, encoding="utf-8")
        paths.append(path)
    deliberate = folder / "deliberate_error.py"
    deliberate.write_text('count: int = "three"\n', encoding="utf-8")
    return [*paths, deliberate]


def test_the_examples_pass_mypy_strict(tmp_path: Path) -> None:
    paths = _programs(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line for line in errors if "deliberate_error.py" not in line] == [], done.stdout
    assert len(errors) == 1, done.stdout + done.stderr  # the checker read the files


def test_the_examples_pass_pyright(tmp_path: Path) -> None:
    paths = _programs(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable]
        + [str(path) for path in paths],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    report = json.loads(done.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert report["summary"]["filesAnalyzed"] == len(paths), done.stdout
    assert [Path(d["file"]).name for d in errors] == ["deliberate_error.py"], errors


def test_every_shell_command_of_every_page_is_run_or_checked() -> None:
    commands = list(dict.fromkeys(command for page in pages() for command in shell_commands(page)))
    assert "bash .ci/run" in commands
    ran = [command for command in commands if check(command)]
    assert len(ran) >= 2  # the demo of the install line, and the call with an injected shop
