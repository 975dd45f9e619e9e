"""The ``ferrotool`` command line."""

from __future__ import annotations

import io
import subprocess
import sys

import orjson
import pytest

from ferrotool.cli import main

DEMO = "ferrotool.cli.demo"


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
        "line 1 column",
        '"shop":"Corner Shop"',
        "median",
    ):
        assert expected in text


def test_console_script_entry_point() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ferrotool",
            "call",
            f"{DEMO}:get_weather",
            "get_weather",
            '{"city": "Oslo"}',
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Oslo: sunny" in done.stdout
