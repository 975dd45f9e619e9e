"""The skills guide's example (docs/skills.md) runs and prints what the page shows."""

from __future__ import annotations

import pytest

from docs.blocks import marked


def test_the_skills_example(capsys: pytest.CaptureFixture[str]) -> None:
    example = marked("tests/skills/test_readme_skills.py", "from ferrotool.skills import")
    example.run()
    printed = capsys.readouterr().out
    assert printed.splitlines() == [
        "('todo_write', 'execute_shell_command', 'load_skill_through_path')",
        "Successfully loaded skill: csv-report_local",
        "('chart', 'todo_write', 'execute_shell_command', 'load_skill_through_path')",
    ]
    assert printed == example.output
