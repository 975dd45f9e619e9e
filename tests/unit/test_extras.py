"""A module whose extra is not installed says how to install it: `MissingExtra`.

Each check runs a fresh interpreter in which the extra's modules cannot be imported (a
``sitecustomize`` puts a finder first on ``sys.meta_path`` that refuses them, as Python does
for a module that is not installed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ferrotool
from ferrotool import FerrotoolError, MissingExtra
from ferrotool._extras import EXTRAS, requires_extra

BLOCKER = textwrap.dedent(
    """
    import os
    import sys

    BLOCKED = frozenset(os.environ.get("BLOCKED_MODULES", "").split(","))


    class Absent:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None


    sys.meta_path.insert(0, Absent)
    """
)
PYTHONPATH = os.pathsep.join([str(Path(ferrotool.__file__).parent.parent), *sys.path])


def run(tmp_path: Path, blocked: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with the modules in ``blocked`` (comma-separated) not importable."""
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = {
        **os.environ,
        "BLOCKED_MODULES": blocked,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), PYTHONPATH]),
    }
    return subprocess.run(
        [sys.executable, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


IMPORT = textwrap.dedent(
    """
    import importlib
    import sys

    import ferrotool

    try:
        importlib.import_module(sys.argv[1])
    except ferrotool.MissingExtra as error:
        assert isinstance(error, ImportError) and isinstance(error, ferrotool.FerrotoolError)
        print(error.feature, error.extra, error.name, sep="|")
        print(error)
        sys.exit(0)
    sys.exit(1)
    """
)

MODULES = [
    ("ferrotool.mcp", "mcp", "mcp"),
    ("ferrotool.mcp", "mcp_types", "mcp"),
    ("ferrotool.mcp.server", "mcp", "mcp"),
    ("ferrotool.mcp.serve", "starlette", "mcp"),
    ("ferrotool.interop.mcp", "mcp", "mcp"),
    ("ferrotool.redis", "redis", "redis"),
    ("ferrotool.durable", "dbos", "dbos"),
    ("ferrotool.telemetry", "opentelemetry", "otel"),
    ("ferrotool.testing", "hypothesis", "testing"),
    ("ferrotool.interop.pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ("ferrotool.interop.openai_agents", "agents", "openai-agents"),
    ("ferrotool.interop.langchain", "langchain_core", "langchain"),
]


@pytest.mark.parametrize(("module", "blocked", "extra"), MODULES)
def test_each_module_names_its_extra(tmp_path: Path, module: str, blocked: str, extra: str) -> None:
    done = run(tmp_path, blocked, "-c", IMPORT, module)
    assert done.returncode == 0, done.stderr
    fields, message = done.stdout.splitlines()
    feature, named, missing = fields.split("|")
    assert (feature, named) == (module.removesuffix(".server").removesuffix(".serve"), extra)
    assert missing.partition(".")[0] == blocked
    assert message.endswith(f": pip install 'ferrotool[{extra}]'")
    assert message.startswith(f"{feature} needs the '{extra}' extra, which is not installed (")


def test_the_uncaught_error_is_one_clear_line(tmp_path: Path) -> None:
    done = run(tmp_path, "redis", "-c", "import ferrotool.redis")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "ferrotool.errors.MissingExtra: ferrotool.redis needs the 'redis' extra, which is not "
        "installed (No module named 'redis'): pip install 'ferrotool[redis]'"
    )


def test_ferrotool_itself_needs_no_extra(tmp_path: Path) -> None:
    every = ",".join(sorted({name for names in EXTRAS.values() for name in names}))
    script = "import ferrotool, ferrotool.skills; print(ferrotool.Toolkit().names())"
    done = run(tmp_path, every, "-c", script)
    assert (done.returncode, done.stdout.strip()) == (0, "()"), done.stderr


@pytest.mark.parametrize("blocked", ["mcp", "uvicorn", "starlette"])
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_serve_without_the_mcp_extra_says_so_on_one_line(
    tmp_path: Path, blocked: str, transport: str
) -> None:
    done = run(tmp_path, blocked, "-m", "ferrotool", "serve", "--transport", transport)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        "ferrotool: ferrotool serve needs the 'mcp' extra, which is not installed (No module named"
    )
    assert line.endswith(": pip install 'ferrotool[mcp]'")


def test_serve_with_a_redis_store_without_the_redis_extra(tmp_path: Path) -> None:
    done = run(tmp_path, "redis", "-m", "ferrotool", "serve", "--store", "redis://127.0.0.1:1/0")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("ferrotool: ferrotool.redis needs the 'redis' extra")
    assert line.endswith(": pip install 'ferrotool[redis]'")


def test_skills_read_front_matter_line_by_line_without_yaml(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        from ferrotool.skills import markdown

        front, body = markdown.split_front_matter("---\\nname: s\\ndescription: a: b\\n---\\nGo.")
        print(markdown.HAVE_YAML, dict(front), body.strip())
        """
    )
    done = run(tmp_path, "yaml", "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False {'name': 's', 'description': 'a: b'} Go."


# - the check itself -


def test_another_modules_import_error_passes_through() -> None:
    with pytest.raises(ModuleNotFoundError) as raised, requires_extra("x", "redis"):
        import ferrotool_no_such_module  # type: ignore[import-not-found]  # noqa: F401
    assert not isinstance(raised.value, MissingExtra)


def test_an_extras_missing_module_becomes_missing_extra() -> None:
    with pytest.raises(MissingExtra) as raised, requires_extra("ferrotool.x", "redis"):
        raise ModuleNotFoundError("No module named 'redis'", name="redis")
    error = raised.value
    assert isinstance(error, ImportError)
    assert isinstance(error, FerrotoolError)
    assert (error.feature, error.extra, error.name) == ("ferrotool.x", "redis", "redis")
    assert str(error) == (
        "ferrotool.x needs the 'redis' extra, which is not installed (No module named 'redis'): "
        "pip install 'ferrotool[redis]'"
    )


def test_a_nested_missing_extra_is_said_for_the_outer_feature() -> None:
    with pytest.raises(MissingExtra) as raised, requires_extra("ferrotool serve", "mcp"):
        raise MissingExtra("ferrotool.mcp", "mcp", "mcp", "No module named 'mcp'")
    assert str(raised.value).startswith("ferrotool serve needs the 'mcp' extra")
    assert raised.value.name == "mcp"
