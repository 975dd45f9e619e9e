"""The MCP guide's "Consume" example (docs/mcp.md) runs as written, its weather server a local
stand-in."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_support import SERVERS, free_port, start, stop

from docs.blocks import Example, marked

WEATHER_URL = "https://weather.example/mcp"


def consume_example() -> Example:
    return marked("tests/mcp/test_mcp_readme.py", "register_mcp(toolkit, weather")


@pytest.fixture
def weather_url() -> Iterator[str]:
    port = free_port()
    process = start([str(SERVERS / "weather.py"), str(port)], port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop(process)


def test_the_consume_example_runs_against_local_servers(
    weather_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `mcp-server-time` is found on PATH, as in a user's activated environment.
    path = os.environ.get("PATH", "")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{path}")
    example = consume_example()
    assert WEATHER_URL in example.code
    program = example.code.replace(WEATHER_URL, weather_url)
    example.run(program)
    printed = capsys.readouterr().out
    assert printed.splitlines() == ["success True", "Oslo: 4 °C, for Bearer u1"]
    assert printed == example.output
