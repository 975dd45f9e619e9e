"""How a shell command of the README or of a page is checked: run, or its options read."""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
import sys

from docs.blocks import ROOT

# Commands that are only named: setting up a virtualenv, installing, the CI script (its own job).
NAMED = ("python3 -m venv", ". .venv/bin/activate", "pip install", "bash .ci/run")


@functools.cache
def _maturin_help() -> str:
    return subprocess.run(
        ["maturin", "develop", "--help"], capture_output=True, text=True, check=True
    ).stdout


def check(command: str) -> bool:
    """Check one command; `True` when it was run (a ``ferrotool`` command), `False` when read.

    ``maturin develop`` must name only real options, a ``ferrotool`` command must run from the
    project's root with exit status 0 and print something, and anything else must be one of
    the commands that are only named (`NAMED`, with ``bash .ci/run`` an existing script).
    """
    words = shlex.split(command)
    if words[:2] == ["maturin", "develop"]:
        for option in (word for word in words if word.startswith("--")):
            assert re.search(rf"\s{re.escape(option)}\b", _maturin_help()), command
        return False
    if words[0] == "ferrotool":  # run, from the project's root, as a reader would
        done = subprocess.run(
            [sys.executable, "-m", "ferrotool", *words[1:]],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
            timeout=120,
        )
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.strip(), command
        return True
    assert command.startswith(NAMED), f"unchecked command: {command}"
    if command.startswith("bash "):
        assert (ROOT / command.split()[1]).is_file(), command
    return False
