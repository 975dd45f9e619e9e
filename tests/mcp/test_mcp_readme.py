"""The README's MCP "Consume" example runs as written, its weather server a local stand-in."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_support import SERVERS, free_port, start, stop

README = Path(__file__).parents[2] / "README.md"
WEATHER_URL = "https://weather.example/mcp"


def consume_example() -> str:
    text = README.read_text(encoding="utf-8")
    blocks: list[str] = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    (block,) = [block for block in blocks if "register_mcp(toolkit, weather" in block]
    return block


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
    source = consume_example()
    assert WEATHER_URL in source
    program = source.replace(WEATHER_URL, weather_url)
    exec(compile(program, str(README), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.splitlines() == ["success True", "Oslo: 4 °C, for Bearer u1"]
