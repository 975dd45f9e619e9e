"""The adapters' values fit their SDKs' parameters: ``sdk_fit.py`` passes mypy and pyright.

``sdk_fit.py`` hands each provider adapter's and each framework bridge's values to its SDK as a
user would (``GenerateContentConfig(tools=...)``, ``agents.Agent(tools=...)``,
``responses.create(tools=..., input=...)``...). Both checkers run with the project's
configuration over the package this test session imports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ferrotool

ROOT = Path(__file__).resolve().parents[2]
FIT = Path(__file__).with_name("sdk_fit.py")
PACKAGE_DIR = str(Path(ferrotool.__file__).parent.parent)


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    for variable in ("PYTHONPATH", "MYPYPATH"):
        env[variable] = os.pathsep.join(p for p in (PACKAGE_DIR, env.get(variable)) if p)
    return subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=ROOT)


def test_sdk_fit_passes_mypy_strict() -> None:
    pytest.importorskip("mypy")
    done = _run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", "pyproject.toml", str(FIT)]
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in 1 source file" in done.stdout, done.stdout


def test_sdk_fit_passes_pyright() -> None:
    pytest.importorskip("pyright")
    done = _run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable, str(FIT)]
    )
    report = json.loads(done.stdout) if done.stdout.startswith("{") else {}
    diagnostics = [
        f"{Path(d['file']).name}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report.get("generalDiagnostics", [])
    ]
    assert done.returncode == 0, "\n".join(diagnostics) or done.stdout + done.stderr
    assert report["summary"]["filesAnalyzed"] == 1, done.stdout


def test_the_documented_responses_recipe_is_the_one_checked() -> None:
    from ferrotool.providers import openai_responses

    doc = openai_responses.__doc__ or ""
    recipe = doc[doc.index("::") + 2 : doc.index("`tool_calls`")].split("\n")
    lines = [line.strip().replace("openai_responses.", "") for line in recipe if line.strip()]
    fit = FIT.read_text(encoding="utf-8").replace("openai_responses.", "")
    assert len(lines) == 2
    assert all(line in fit for line in lines), lines
