"""Every example of the documentation runs, prints what its page shows, and passes mypy --strict."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs.blocks import ROOT, Example, examples, shell_commands

README = ROOT / "README.md"


@pytest.mark.parametrize("example", examples(), ids=lambda example: example.name)
def test_the_example_runs_and_prints_its_output(
    example: Example, capsys: pytest.CaptureFixture[str]
) -> None:
    exec(compile(example.code, str(example.page), "exec"), {"__name__": "docs_example"})
    printed = capsys.readouterr().out
    if example.output is not None:
        assert printed == example.output


def test_every_page_with_code_has_an_example() -> None:
    assert len(examples()) >= 3
    assert any(example.output is not None for example in examples())


def test_the_examples_pass_mypy_strict(tmp_path: Path) -> None:
    paths = []
    for example in examples():
        path = tmp_path / f"{re.sub(r'[^a-z0-9_]', '_', example.name)}.py"
        path.write_text(example.code, encoding="utf-8")
        paths.append(str(path))
    deliberate = tmp_path / "deliberate_error.py"
    deliberate.write_text('count: int = "three"\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", *paths, str(deliberate)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line for line in errors if "deliberate_error.py" not in line] == [], done.stdout
    assert len(errors) == 1, done.stdout + done.stderr  # the checker read the files


def test_the_shell_commands_are_the_readmes_which_are_checked() -> None:
    readme = README.read_text(encoding="utf-8")
    commands = shell_commands()
    assert commands
    assert [command for command in commands if command not in readme] == []
