"""The README's examples run and print what the README says they print."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ferrotool.builtins import Sandbox
from ferrotool.builtins._sandbox import sandbox_problem
from providers.payloads import completion  # tests/ is on the path (its conftest.py)
from providers.wire import ModelServer, Reply

README = Path(__file__).parents[2] / "README.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def block_with(text: str) -> str:
    """The one example that holds ``text``."""
    (found,) = [block for block in blocks() if text in block]
    return found


def run(block: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    return capsys.readouterr().out.splitlines()


def test_the_first_example_is_the_two_line_round_trip_with_the_openai_sdk(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = blocks()[0]
    assert len([line for line in first.splitlines() if line.strip()]) <= 21
    calls = (
        ("call_1", "get_weather", '{"city": "Paris", "days": 3}'),
        ("call_2", "get_weather", '{"city": "Oslo", "days": 30}'),
    )
    with ModelServer([Reply(completion(*calls))]) as server:  # the model, on 127.0.0.1
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        lines = run(first, capsys)
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


def test_the_multi_tenant_example_keeps_sessions_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = run(block_with("async def handle("), capsys)
    assert lines == [
        "(['search', 'reset_tools', 'geolocate'], ['error', 'running'])",
        "(['search', 'reset_tools'], ['success'])",
        "(['search', 'reset_tools', 'db_query'], ['success'])",
        "(['search', 'reset_tools'], ['error'])",
    ]


def test_the_agent_loop_example_pauses_for_the_client_and_resumes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = run(block_with("run_agent("), capsys)
    assert lines == [
        "ModelResponded",
        "ToolCallStarted",
        "ToolCallFinished",
        "ExternalExecutionRequired",
        "RunSuspended",
        "Sunny in Paris.",
    ]


def test_the_model_turn_example_suspends_and_resumes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(block_with("view.call_tools(calls, context)"), capsys) == [
        "['success', 'running', 'running'] confirm",
        "[('c2', 'deployed to prod'), ('c3', 'Paris')] True",
    ]


@pytest.mark.skipif(
    sandbox_problem(Sandbox()) is not None, reason="bubblewrap cannot start a sandbox here"
)
def test_the_security_example_hides_refuses_and_asks(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(block_with("Sandbox(hidden="), capsys) == [
        "cat .env: error",
        "touch notes.txt: success",
        "touch /etc/motd: error",
        "env rm -rf /: running",
    ]


# The examples above (and the skills example of tests/skills/test_readme_skills.py, the MCP one
# of tests/mcp/test_mcp_readme.py) are complete programs: each is also type-checked as a user's
# editor would check it.
PROGRAMS = (
    "async def handle(",
    "run_agent(",
    "view.call_tools(calls, context)",
    "from ferrotool.skills import",
    "Sandbox(hidden=",
    "register_mcp(toolkit, weather",  # run by tests/mcp/test_mcp_readme.py
)
# One error on purpose, so that a checker that reads no file (or reports nothing) fails the test.
DELIBERATE = 'count: int = "three"\n'


def programs(folder: Path) -> list[Path]:
    """The README's complete programs, and the deliberate error, as files in ``folder``."""
    sources = [blocks()[0], *(block_with(text) for text in PROGRAMS), DELIBERATE]
    paths = []
    for index, source in enumerate(sources):
        name = "deliberate_error" if source is DELIBERATE else f"readme_example_{index}"
        path = folder / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        paths.append(path)
    return paths


def test_the_examples_pass_mypy_strict(tmp_path: Path) -> None:
    paths = programs(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
        cwd=README.parent,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert errors, done.stdout + done.stderr  # the deliberate one, at least
    assert [line for line in errors if "deliberate_error.py" not in line] == [], done.stdout
    assert len(errors) == 1, done.stdout


def test_the_examples_pass_pyright(tmp_path: Path) -> None:
    paths = programs(tmp_path)
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


# - every block is checked: the shell commands, the extras named -

PYPROJECT = README.parent / "pyproject.toml"


def test_every_python_block_is_run_and_type_checked() -> None:
    checked = [blocks()[0], *(block_with(text) for text in PROGRAMS)]
    assert [block for block in blocks() if block not in checked] == []


def shell_commands() -> list[str]:
    """Every command of the README's ``bash`` blocks (continuations joined, ``&&`` split)."""
    text = README.read_text(encoding="utf-8")
    found = re.findall(r"^([ ]*)```bash\n(.*?)^\1```", text, re.DOTALL | re.MULTILINE)
    commands: list[str] = []
    for _, body in found:
        joined = re.sub(r"\\\n\s*", " ", body)
        for line in joined.splitlines():
            commands.extend(part.strip() for part in line.split("&&") if part.strip())
    return commands


def test_the_shell_blocks_run_or_name_real_options() -> None:
    commands = shell_commands()
    assert "bash .ci/run" in commands
    assert (README.parent / ".ci" / "run").is_file()
    maturin_help = subprocess.run(
        ["maturin", "develop", "--help"], capture_output=True, text=True, check=True
    ).stdout
    ran = 0
    for command in commands:
        words = shlex.split(command)
        if words[:2] == ["maturin", "develop"]:
            for option in (word for word in words if word.startswith("--")):
                assert re.search(rf"\s{re.escape(option)}\b", maturin_help), command
        elif words[0] == "ferrotool":  # run, from the project's root, as a reader would
            done = subprocess.run(
                [sys.executable, "-m", "ferrotool", *words[1:]],
                capture_output=True,
                text=True,
                check=False,
                cwd=README.parent,
                timeout=120,
            )
            assert done.returncode == 0, (command, done.stderr)
            assert done.stdout.strip(), command
            ran += 1
        else:
            known = ("python3 -m venv", ". .venv/bin/activate", "pip install", "bash .ci/run")
            assert command.startswith(known), f"unchecked command in the README: {command}"
    assert ran >= 2  # the demo of the install line, and the call with an injected shop


def extras() -> dict[str, list[str]]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    found: dict[str, list[str]] = project["optional-dependencies"]
    return found


def test_the_install_section_names_every_extra_and_only_real_ones() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Install and run") :]
    section = section[: section.index("\n## ", 3)]
    assert [name for name in extras() if f"`{name}`" not in section] == []
    named = re.findall(r"-E ([\w,-]+)|ferrotool\[([\w,-]+)\]", text)
    assert named
    for option, brackets in named:
        for name in (option or brackets).split(","):
            assert name in extras(), name
