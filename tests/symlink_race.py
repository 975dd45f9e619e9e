"""Symlink races for the confinement tests: two names exchanged in one step, in a loop."""

from __future__ import annotations

import ctypes
import os
import platform
import threading
from pathlib import Path

import pytest

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_RENAMEAT2 = {"x86_64": 316, "aarch64": 276}


def exchange(first: Path, second: Path) -> None:
    """Swap two names in one step (``renameat2(RENAME_EXCHANGE)``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    number = _RENAMEAT2.get(platform.machine())
    if number is None:
        pytest.skip(f"renameat2's number on {platform.machine()} is not known here")
    result = libc.syscall(
        ctypes.c_long(number),
        ctypes.c_int(_AT_FDCWD),
        ctypes.c_char_p(os.fsencode(first)),
        ctypes.c_int(_AT_FDCWD),
        ctypes.c_char_p(os.fsencode(second)),
        ctypes.c_uint(_RENAME_EXCHANGE),
    )
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


class Swapper:
    """A thread exchanging two names in a tight loop until stopped."""

    def __init__(self, first: Path, second: Path) -> None:
        self.first, self.second = first, second
        self.swaps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            exchange(self.first, self.second)
            self.swaps += 1

    def assert_raced(self, worked: int, total: int) -> None:
        """Check the race was real: many swaps, and some calls worked between them.

        The share that works depends on how the two shared cores are scheduled (a busy
        machine gives the swapping thread most of them, and 8% of loads worked in one run),
        so the floor is one call in a hundred: enough to show the calls were not all refused.
        """
        assert self.swaps > 100, f"only {self.swaps} swaps: the race did not run"
        assert worked > total // 100, f"{worked} of {total} worked: the calls never got through"

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.swaps % 2:  # the real folder back in its place
            exchange(self.first, self.second)
