"""The ``ferrotool`` command line."""

from __future__ import annotations

import importlib.metadata
import io
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from packaging.version import Version

import ferrotool
from ferrotool.cli import main
from ferrotool.errors import CliError, FerrotoolError

DEMO = "ferrotool.cli.demo"
ORDER = '{"items": [{"sku": "A1", "qty": 2, "price": 9.5}]}'
SHOP = '{"values": {"Shop": {"name": "Corner", "currency": "EUR"}}}'


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    status = main(list(argv), out)
    return status, out.getvalue()


def test_schema_of_a_toolkit_factory_a_function_and_strict() -> None:
    status, text = run("schema", f"{DEMO}:demo_toolkit")
    assert status == 0
    names = [entry["function"]["name"] for entry in orjson.loads(text)]
    assert names == ["get_weather", "place_order", "convert", "pick"]
    status, text = run("schema", f"{DEMO}:get_weather", "--format", "anthropic", "--strict")
    (definition,) = orjson.loads(text)
    assert definition["name"] == "get_weather"
    assert definition["input_schema"]["additionalProperties"] is False


def test_call_prints_the_result_as_json() -> None:
    status, text = run("call", f"{DEMO}:demo_toolkit", "pick", '{"option": "b"}')
    assert status == 0
    result = orjson.loads(text)
    assert (result["state"], result["output"]) == (
        "success",
        [{"type": "text", "text": "picked b"}],
    )
    status, text = run("call", f"{DEMO}:demo_toolkit", "pick", '{"option": "c"}')
    assert status == 1
    assert orjson.loads(text)["state"] == "error"


def test_bad_targets_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("schema", "no_such_module:x")[0] == 2
    assert "cannot import" in capsys.readouterr().err
    assert run("schema", f"{DEMO}:nothing")[0] == 2
    assert run("schema", "justamodule")[0] == 2


def test_cli_errors_are_ferrotool_errors() -> None:
    assert issubclass(CliError, FerrotoolError)


def test_version_is_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"ferrotool {ferrotool.__version__}\n"
    # One version: Cargo.toml's, in the extension and (spelled the PEP 440 way) the metadata.
    assert Version(ferrotool.__version__) == Version(importlib.metadata.version("ferrotool"))
    assert ferrotool.__version__ == ferrotool._core.__version__


# -- the call's context ---------------------------------------------------------------------------


def test_a_tool_needing_a_context_value_gets_it_from_context() -> None:
    status, text = run("call", f"{DEMO}:demo_toolkit", "place_order", ORDER, "--context", SHOP)
    assert status == 0, text
    assert orjson.loads(text)["structured"] == {
        "shop": "Corner",
        "total": 19.0,
        "currency": "EUR",
        "note": None,
    }
    # A class from anywhere, as MODULE:NAME; the options may also come before the arguments.
    context = SHOP.replace('"Shop"', f'"{DEMO}:Shop"')
    status, text = run("call", f"{DEMO}:demo_toolkit", "place_order", "--context", context, ORDER)
    assert status == 0, text
    assert orjson.loads(text)["structured"]["shop"] == "Corner"


def test_a_missing_context_value_says_how_to_give_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("call", f"{DEMO}:demo_toolkit", "place_order", ORDER)[0] == 2
    error = capsys.readouterr().err
    assert "needs Shop" in error
    assert "--context" in error


def test_the_context_carries_user_and_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = write_module(
        tmp_path,
        monkeypatch,
        """
        import enum
        from ferrotool import Injected, RuntimeContext, tool

        class Mood(enum.Enum):
            GOOD = "good"

        @tool
        def whoami(context: RuntimeContext, mood: Injected[Mood]) -> str:
            return f"{context.user_id} {context.session_id} {mood.value}"
        """,
    )
    context = '{"user_id": "u1", "session_id": "s1", "values": {"Mood": "good"}}'
    status, text = run("call", f"{module}:whoami", "whoami", "{}", "--context", context)
    assert status == 0, text
    assert orjson.loads(text)["output"][0]["text"] == "u1 s1 good"


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ("{", "--context is not JSON"),
        ("[1]", "--context must be a JSON object"),
        ('{"user": "u1"}', "unknown keys ['user']"),
        ('{"user_id": 1}', "user_id must be a string"),
        ('{"values": [1]}', "values must be an object"),
        ('{"values": {"Nothing": {}}}', "has no attribute 'Nothing'"),
        ('{"values": {"no_such_module:Shop": {}}}', "cannot import 'no_such_module'"),
        ('{"values": {":Shop": {}}}', "expected NAME or MODULE:NAME"),
        ('{"values": {"DEMO_CALLS": {}}}', "DEMO_CALLS is not a class"),
        ('{"values": {"Emitter": {}}}', "Emitter cannot be built from JSON"),
        ('{"values": {"Shop": {"name": 1}}}', "name: expected string"),
    ],
)
def test_a_bad_context_is_reported(
    context: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("call", f"{DEMO}:demo_toolkit", "pick", "--context", context)[0] == 2
    assert message in capsys.readouterr().err


def test_dash_reads_the_arguments_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"option": "a"}\n'))
    status, text = run("call", f"{DEMO}:demo_toolkit", "pick", "-")
    assert status == 0
    assert orjson.loads(text)["output"][0]["text"] == "picked a"


def test_arguments_default_to_an_empty_object_and_extra_words_are_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, text = run("call", f"{DEMO}:demo_toolkit", "pick")
    assert status == 1
    assert "missing_property" in orjson.loads(text)["output"][0]["text"]
    with pytest.raises(SystemExit):
        run("call", f"{DEMO}:demo_toolkit", "pick", "--id", "x", "{}", "extra")
    assert "unrecognized arguments: {} extra" in capsys.readouterr().err


# -- what a target may be -------------------------------------------------------------------------


def write_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> str:
    name = f"cli_target_{tmp_path.name}"  # unique: a test's tmp_path is its own
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


FACTORIES = """
from ferrotool import Toolkit, tool

CALLS = []

@tool
def hello(name: str) -> str:
    return f"hello {name}"

class Tools:
    @tool
    def bye(self, name: str) -> str:
        return f"bye {name}"

def make_toolkit(strict=True):
    CALLS.append("make_toolkit")
    toolkit = Toolkit()
    toolkit.register(hello)
    return toolkit

def make_tools():
    return Tools()

def make_nothing():
    return "not tools"

def shout(text: str):
    CALLS.append("shout")
    return text.upper()

def now() -> str:
    CALLS.append("now")
    return "noon"
"""


def test_a_factory_without_a_return_annotation_is_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = write_module(tmp_path, monkeypatch, FACTORIES)
    status, text = run("call", f"{module}:make_toolkit", "hello", '{"name": "Ada"}')
    assert status == 0, text
    assert orjson.loads(text)["output"][0]["text"] == "hello Ada"
    # What a factory returns may also be anything `register` takes.
    status, text = run("schema", f"{module}:make_tools")
    assert [entry["function"]["name"] for entry in orjson.loads(text)] == ["bye"]
    assert run("schema", f"{module}:make_nothing")[0] == 2
    assert "called as a toolkit factory" in capsys.readouterr().err


def test_functions_that_need_arguments_or_are_annotated_are_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = write_module(tmp_path, monkeypatch, FACTORIES)
    status, text = run("call", f"{module}:shout", "shout", '{"text": "hi"}')
    assert status == 0, text
    assert orjson.loads(text)["output"][0]["text"] == "HI"
    status, text = run("schema", f"{module}:now")
    assert [entry["function"]["name"] for entry in orjson.loads(text)] == ["now"]
    assert sys.modules[module].CALLS == ["shout"]


# -- the demo -------------------------------------------------------------------------------------


def test_demo_runs_every_kind_of_call() -> None:
    status, text = run("demo", "--repeats", "5")
    assert status == 0
    for expected in (
        "valid, sync inline",
        "valid, async, injected context",
        "valid, sync on a worker thread",
        "invalid arguments",
        "Tool not found: get_wether. Did you mean: get_weather?",
        "items/0/qty: expected integer",
        "at line 1",
        "column 14 (invalid_json)",
        '"shop":"Corner Shop"',
        "median",
    ):
        assert expected in text


def test_the_demo_ends_with_a_summary_within_80_columns() -> None:
    status, text = run("demo", "--repeats", "3")
    assert status == 0
    lines = text.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    table = lines[lines.index("summary:") + 1 :]
    assert table[0].split() == ["call", "tool", "state", "median", "us", "(3", "runs)"]
    rows = [line.split("  ") for line in table[1:]]
    assert len(rows) == 7
    cells = [[cell.strip() for cell in row if cell.strip()] for row in rows]
    assert cells[0][:3] == ["valid, sync inline", "get_weather", "success"]
    assert cells[-1][:3] == ["unknown tool", "get_wether", "error"]
    assert [row[2] for row in cells] == ["success"] * 3 + ["error"] * 4
    assert all(float(row[3]) > 0 for row in cells)
    status, untimed = run("demo", "--repeats", "0")
    assert status == 0
    assert untimed.splitlines()[-1].split()[-2:] == ["error", "-"]
    assert max(len(line) for line in untimed.splitlines()) <= 80


def test_demo_without_repeats_runs_each_call_once_untimed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, text = run("demo", "--repeats", "0")
    assert status == 0
    assert "median 0" not in text
    assert " us over " not in text
    assert text.count("   state success\n") == 3
    assert "valid, async, injected context" in text
    with pytest.raises(SystemExit):
        run("demo", "--repeats", "-1")
    assert "expected a count (0 or more)" in capsys.readouterr().err


def test_console_script_entry_point() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ferrotool",
            "call",
            f"{DEMO}:get_weather",
            "get_weather",
            "-",
        ],
        input='{"city": "Oslo"}',
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Oslo: sunny" in done.stdout


def test_a_bare_command_prints_its_help() -> None:
    out = io.StringIO()
    assert main([], out) == 0
    text = out.getvalue()
    assert text.startswith("usage: ferrotool")
    for command in ("schema", "call", "demo", "serve"):
        assert command in text


def test_a_bare_command_prints_its_help_from_the_shell() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ferrotool"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert done.stdout.startswith("usage: ferrotool")
    assert done.stderr == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["schema", "ferrotool.cli.demo:demo_toolkit"],
        ["demo", "--repeats", "0"],
        ["demo", "--agent"],
    ],
)
def test_a_reader_that_reads_one_line_and_goes_away_ends_the_output_quietly(
    argv: list[str],
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "ferrotool", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.readline()  # `| head -1`
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    assert stderr == b""
    assert process.returncode in (0, 1)  # 0: everything was written before the reader went


def test_a_reader_that_goes_away_ends_the_output_quietly() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "ferrotool", "schema", "ferrotool.cli.demo:demo_toolkit"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.close()  # `| head -c 0`: the reader is gone before anything is written
    _, stderr = process.communicate(timeout=60)
    assert stderr == b""
    assert process.returncode == 1
