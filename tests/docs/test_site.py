"""The documentation site builds with ``mkdocs build --strict``, and documents every public name."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="the `docs` dependency group is not installed")

ROOT = Path(__file__).parents[2]
# Every public module, as the API reference's pages show it.
MODULES = (
    "ferrotool",
    "ferrotool.errors",
    "ferrotool.mcp",
    "ferrotool.mcp.server",
    "ferrotool.skills",
    "ferrotool.builtins",
    "ferrotool.agent",
    "ferrotool.providers",
    "ferrotool.providers.openai_chat",
    "ferrotool.providers.openai_responses",
    "ferrotool.providers.anthropic",
    "ferrotool.providers.gemini",
    "ferrotool.providers.streaming",
    "ferrotool.interop.pydantic_ai",
    "ferrotool.interop.openai_agents",
    "ferrotool.interop.langchain",
    "ferrotool.interop.mcp",
    "ferrotool.testing",
    "ferrotool.redis",
    "ferrotool.durable",
    "ferrotool.telemetry",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


@pytest.fixture(scope="module")
def documented(site: Path) -> set[str]:
    """The anchors of the site's pages: one per documented object, by its full name."""
    found: set[str] = set()
    for page in site.rglob("*.html"):
        found |= set(re.findall(r'id="(ferrotool[\w.]*)"', page.read_text(encoding="utf-8")))
    return found


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_has_an_entry(documented: set[str], module: str) -> None:
    names: list[str] = importlib.import_module(module).__all__
    assert names
    assert [name for name in names if f"{module}.{name}" not in documented] == []


def test_the_rust_extensions_names_are_documented_from_its_stubs(documented: set[str]) -> None:
    assert {"ferrotool.JsonSchemaValidator", "ferrotool.ErrorDetail"} <= documented


def test_every_public_subpackage_has_a_page() -> None:
    pages = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for module in MODULES:
        top = ".".join(module.split(".")[:2])
        assert top in pages, module
