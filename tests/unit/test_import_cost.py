"""What ``import ferrotool`` loads: no wing and no optional or heavy dependency until used.

Each check runs in a fresh interpreter, so that nothing this test session imported counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ferrotool

WINGS = ("skills", "builtins", "mcp", "agent", "interop", "providers", "cli")
HEAVY = ("yaml", "ssl", "email", "http", "urllib", "xml", "asyncio")


def _loaded(program: str) -> list[str]:
    """The modules loaded after ``program`` runs in a fresh interpreter."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(ferrotool.__file__).parent.parent), env.get("PYTHONPATH")) if p
    )
    code = f"{program}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return modules


def _wings(modules: list[str]) -> list[str]:
    return [m for m in modules if m.startswith("ferrotool.") and m.split(".")[1] in WINGS]


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in HEAVY]


def test_a_bare_import_loads_no_wing_and_no_heavy_dependency() -> None:
    modules = _loaded("import ferrotool")
    assert _wings(modules) == []
    assert _heavy(modules) == []
    assert [m for m in modules if m.startswith("ferrotool")] == [
        "ferrotool",
        "ferrotool._core",
        "ferrotool.errors",
    ]


@pytest.mark.parametrize(
    "program",
    [
        "from ferrotool import Toolkit, tool",
        "import ferrotool\nfor name in ferrotool.__all__:\n    getattr(ferrotool, name)",
    ],
)
def test_the_core_names_load_no_wing_and_no_heavy_dependency(program: str) -> None:
    modules = _loaded(program)
    # What the dependencies load on their own is theirs (anyio before 4.11 imports asyncio, before
    # 4.15 ssl); ferrotool adds nothing heavy to it.
    floor = set(_loaded("import anyio, orjson, pydantic_core, typing_extensions"))
    assert [module for module in _heavy(modules) if module not in floor] == []
    assert _wings(modules) == (
        ["ferrotool.providers", "ferrotool.providers.streaming"] if "__all__" in program else []
    )


def test_a_wing_loads_when_used() -> None:
    modules = _loaded("from ferrotool import ToolCallStream")
    assert "ferrotool.providers.streaming" in modules
    assert "ferrotool.skills" not in modules


def test_every_public_name_is_there_and_listed() -> None:
    listed = dir(ferrotool)
    for name in ferrotool.__all__:
        assert name in listed
        assert getattr(ferrotool, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ferrotool.nope  # type: ignore[attr-defined]  # noqa: B018
