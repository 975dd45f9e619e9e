"""The README's examples run and print what the README says they print."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).parents[2] / "README.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def run(block: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    return capsys.readouterr().out.splitlines()


def test_the_first_example_is_short_and_does_what_it_says(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = blocks()[0]
    assert len([line for line in first.splitlines() if line.strip()]) <= 20
    lines = run(first, capsys)
    assert lines[0] == "['city', 'days']"
    assert lines[1] == "success Paris: sunny for 3 day(s)"
    assert lines[2] == "error Error: Invalid arguments for tool 'get_weather':"
    assert lines[3] == "- days: expected at most 14, found integer 30 (number_too_large)"


def test_the_multi_tenant_example_keeps_sessions_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tenants,) = [block for block in blocks() if "def handle(" in block]
    lines = run(tenants, capsys)
    assert lines == [
        "(['search', 'reset_tools', 'geolocate'], ['error', 'running'])",
        "(['search', 'reset_tools'], ['success'])",
        "(['search', 'reset_tools', 'db_query'], ['success'])",
        "(['search', 'reset_tools'], ['error'])",
    ]


def test_the_model_turn_example_suspends_and_resumes(capsys: pytest.CaptureFixture[str]) -> None:
    (turn,) = [block for block in blocks() if "call_tools" in block]
    assert run(turn, capsys) == [
        "['success', 'running', 'running'] confirm",
        "[('c2', 'deployed to prod'), ('c3', 'Paris')] True",
    ]
