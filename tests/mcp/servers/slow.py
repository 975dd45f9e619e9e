"""A toolkit whose slow tools record how each call ends: ``slow:toolkit``.

Each call of ``slow`` appends ``TAG started`` to the file ``$FERROTOOL_TEST_CALL_LOG`` names, then
``TAG finished`` when its sleep ends or ``TAG cancelled`` when it is cancelled: a test in another
process reads there what the tool saw. ``blocked``, a sync tool, runs on a worker thread until
the file `released` names exists, then records ``TAG finished``. ``shielded`` records
``TAG shielded`` on entering a section shielded from cancellation, which lasts until the file
`released` names exists, then ``TAG shielded-done``, and then sleeps like ``slow``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio

from ferrotool import Toolkit, tool

LOG_ENV = "FERROTOOL_TEST_CALL_LOG"


def _record(tag: str, event: str) -> None:
    with Path(os.environ[LOG_ENV]).open("a", encoding="utf-8") as log:
        log.write(f"{tag} {event}\n")


def released(log: Path, tag: str) -> Path:
    """The file whose existence ends the ``blocked`` call tagged ``tag``."""
    return log.with_name(f"{log.name}.{tag}.released")


@tool
async def slow(tag: str, seconds: float = 30.0) -> str:
    """Sleep, recording the start and how the call ended.

    Args:
        tag: The call's name in the log.
        seconds: How long to sleep.
    """
    _record(tag, "started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _record(tag, "cancelled")
        raise
    _record(tag, "finished")
    return f"{tag} slept"


@tool
async def shielded(tag: str, seconds: float = 60.0) -> str:
    """Run a section shielded from cancellation, then sleep, recording each step and the end.

    The shielded section starts once the call has run a tenth of a second and lasts until the
    file `released` names exists (a minute at most).

    Args:
        tag: The call's name in the log.
        seconds: How long to sleep after the shielded section.
    """
    _record(tag, "started")
    release = released(Path(os.environ[LOG_ENV]), tag)
    try:
        await anyio.sleep(0.1)
        with anyio.CancelScope(shield=True):
            _record(tag, "shielded")
            with anyio.move_on_after(60):
                while not release.exists():
                    await anyio.sleep(0.02)
            _record(tag, "shielded-done")
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _record(tag, "cancelled")
        raise
    _record(tag, "finished")
    return f"{tag} slept"


@tool
def blocked(tag: str) -> str:
    """Block a worker thread until released (a minute at most), recording start and end.

    Args:
        tag: The call's name in the log.
    """
    _record(tag, "started")
    release = released(Path(os.environ[LOG_ENV]), tag)
    deadline = time.monotonic() + 60
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    _record(tag, "finished")
    return f"{tag} released"


@tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def toolkit() -> Toolkit:
    """The toolkit served."""
    kit = Toolkit()
    kit.register(slow)
    kit.register(shielded)
    kit.register(blocked)
    kit.register(add)
    return kit
