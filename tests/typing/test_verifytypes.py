"""The public API's types are complete: ``pyright --verifytypes ferrotool`` scores at least 98%.

A symbol whose type a checker must infer (an unannotated attribute, an override that does not
say its type) reads differently in mypy, pyright and an editor; ``--verifytypes`` counts them
over every public module of the package, the one this test session imports.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ferrotool

pytest.importorskip("pyright")

MIN_SCORE = 0.98
PYRIGHT = (sys.executable, "-m", "pyright", "--pythonpath", sys.executable)
PACKAGE = Path(ferrotool.__file__).parent
# The public modules whose `__all__` names are all walked (the root's are loaded lazily).
MODULES = (
    "ferrotool",
    "ferrotool.agent",
    "ferrotool.builtins",
    "ferrotool.interop.langchain",
    "ferrotool.interop.mcp",
    "ferrotool.interop.openai_agents",
    "ferrotool.interop.pydantic_ai",
    "ferrotool.mcp",
    "ferrotool.providers",
    "ferrotool.providers.anthropic",
    "ferrotool.providers.gemini",
    "ferrotool.providers.openai_chat",
    "ferrotool.providers.openai_responses",
    "ferrotool.redis",
    "ferrotool.skills",
    "ferrotool.telemetry",
    "ferrotool.testing",
)


@pytest.fixture(scope="module")
def completeness() -> dict[str, Any]:
    """``typeCompleteness`` of ``pyright --verifytypes ferrotool --outputjson``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PACKAGE.parent), env.get("PYTHONPATH")) if p
    )
    done = subprocess.run(
        [*PYRIGHT, "--verifytypes", "ferrotool", "--ignoreexternal", "--outputjson"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=PACKAGE.parent,
    )
    assert done.stdout.startswith("{"), done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)["typeCompleteness"]
    return report


def _incomplete(report: dict[str, Any]) -> list[str]:
    """Each exported symbol of unknown or ambiguous type, with pyright's reasons."""
    return [
        f"{symbol['name']}: {' / '.join(d['message'] for d in symbol['diagnostics'])}"
        for symbol in report["symbols"]
        if symbol["isExported"] and (not symbol["isTypeKnown"] or symbol["isTypeAmbiguous"])
    ]


def test_verifytypes_reads_this_package(completeness: dict[str, Any]) -> None:
    assert Path(completeness["packageRootDirectory"]) == PACKAGE


def test_every_public_name_is_verified(completeness: dict[str, Any]) -> None:
    verified = {symbol["name"] for symbol in completeness["symbols"]}
    walked = {module["name"] for module in completeness["modules"]}
    missing = {
        name: [n for n in importlib.import_module(name).__all__ if f"{name}.{n}" not in verified]
        for name in MODULES
    }
    assert set(MODULES) <= walked, sorted(set(MODULES) - walked)
    assert {name: names for name, names in missing.items() if names} == {}


def test_type_completeness_score(completeness: dict[str, Any]) -> None:
    score = completeness["completenessScore"]
    assert score >= MIN_SCORE, f"{score:.1%}:\n" + "\n".join(_incomplete(completeness))
