"""The README's first example runs and prints what the README says it prints; its commands run.

The README is a front page: its other examples live on the documentation's pages, where
``tests/docs`` runs them (each one, and every page's shell command).
"""

from __future__ import annotations

import re
import tomllib

import pytest

from docs.blocks import README, marked, page_examples, pages, shell_commands
from docs.commands import check
from providers.payloads import completion  # tests/ is on the path (its conftest.py)
from providers.wire import ModelServer, Reply


def test_the_first_example_is_the_two_line_round_trip_with_the_openai_sdk(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = page_examples(README)[0]
    assert first == marked("tests/unit/test_readme.py", "openai_chat.tool_calls(reply)")
    assert len([line for line in first.code.splitlines() if line.strip()]) <= 21
    calls = (
        ("call_1", "get_weather", '{"city": "Paris", "days": 3}'),
        ("call_2", "get_weather", '{"city": "Oslo", "days": 30}'),
    )
    with ModelServer([Reply(completion(*calls))]) as server:  # the model, on 127.0.0.1
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        first.run()
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "Paris: sunny for 3 day(s)",
        "Error: Invalid arguments for tool 'get_weather':",
        "- days: expected at most 14, found integer 30 (number_too_large)",
        "Correct the arguments and call the tool again.",
    ]
    (request,) = server.bodies()
    (tool,) = request["tools"]
    assert tool["function"]["strict"] is True
    assert tool["function"]["parameters"]["required"] == ["city", "days"]


def test_the_readme_is_a_front_page() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


# - every command is checked, the extras named are real -

PYPROJECT = README.parent / "pyproject.toml"


def test_the_shell_blocks_run_or_name_real_options() -> None:
    commands = shell_commands(README)
    assert "bash .ci/run" in commands
    ran = [command for command in commands if check(command)]
    assert ran == [command for command in commands if command.startswith("ferrotool demo")]
    assert ran  # the demo of the install line


def extras() -> dict[str, list[str]]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    found: dict[str, list[str]] = project["optional-dependencies"]
    return found


def test_the_install_section_names_every_extra_and_every_page_only_real_ones() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Install and run") :]
    section = section[: section.index("\n## ", 3)]
    assert [name for name in extras() if f"`{name}`" not in section] == []
    every_page = "\n".join(page.read_text(encoding="utf-8") for page in pages())
    named = re.findall(r"-E ([\w,-]+)|ferrotool\[([\w,-]+)\]", every_page)
    assert named
    for option, brackets in named:
        for name in (option or brackets).split(","):
            assert name in extras(), name
