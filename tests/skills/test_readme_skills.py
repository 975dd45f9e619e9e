"""The README's skills example runs and prints what the README says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).parents[2] / "README.md"


def test_the_skills_example(capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text(encoding="utf-8")
    block = next(
        code
        for code in re.findall(r"```python\n(.*?)```", text, re.DOTALL)
        if "from ferrotool.skills import" in code
    )
    exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.splitlines() == [
        "('todo_write', 'execute_shell_command', 'load_skill_through_path')",
        "Successfully loaded skill: csv-report_local",
        "('chart', 'todo_write', 'execute_shell_command', 'load_skill_through_path')",
    ]
