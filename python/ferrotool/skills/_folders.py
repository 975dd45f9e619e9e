"""Generated skill folders: counted users, deletion off the caller's thread, cleanup at exit.

A `SkillViews` box writes its skills to a folder of its own. `BoxFolder` counts the folder's
users and deletes it when the count reaches zero; what is left is deleted at exit.

Deleting is slow next to everything else a request does (a box of 20 skills is about 80 files:
hundreds of milliseconds on a busy disk), and the last user often lets go on an event loop's
thread. So the folder is first renamed, in its own parent, to a hidden name (one cheap atomic
step: the box's path is gone at once, and nothing new can open a file under it), then deleted
by one background thread. `settle` waits for that thread (tests, graceful shutdowns).
"""

from __future__ import annotations

import atexit
import os
import queue
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, final

TRASH_PREFIX: Final = ".deleting-"
"""A released folder's hidden name, in its parent, until the background thread deletes it."""


@final
class BoxFolder:
    """A box's generated folder and how many users it has; deleted when they reach zero.

    It starts with one user, the box itself (its owner releases it when nothing can reach the
    box any more); each running load holds one more (`held`). The count has its own lock, so
    threads and tasks may share it.
    """

    __slots__ = ("_lock", "path", "removed", "users")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.users = 1
        self.removed = False
        self._lock = threading.Lock()
        LIVE.add(path)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the folder for a block (a running call reading its files)."""
        with self._lock:
            self.users += 1
        try:
            yield
        finally:
            self.release()

    def release(self) -> None:
        """One user fewer; the last one deletes the folder."""
        with self._lock:
            self.users -= 1
            if self.users > 0 or self.removed:
                return
            self.removed = True
        delete(self.path)


@final
class LiveFolders:
    """The folders generated and not yet deleted: deleted at exit, whatever their users."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: dict[Path, None] = {}

    def add(self, path: Path) -> None:
        with self._lock:
            self._paths[path] = None

    def discard(self, path: Path) -> None:
        with self._lock:
            self._paths.pop(path, None)

    def __contains__(self, path: object) -> bool:
        with self._lock:
            return path in self._paths

    def remove_all(self) -> None:
        """Delete every folder left (box folders first, then the work folders made for them)."""
        with self._lock:
            paths = list(self._paths)
            self._paths.clear()
        for path in reversed(paths):
            shutil.rmtree(path, ignore_errors=True)


LIVE: Final = LiveFolders()
atexit.register(LIVE.remove_all)


class _Deleter:
    """One daemon thread deleting released folders, started on first use (and after a fork)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: queue.Queue[Path] = queue.Queue()
        self._thread: threading.Thread | None = None

    def put(self, path: Path) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="ferrotool-skill-folders", daemon=True
                )
                self._thread.start()
        self._queue.put(path)

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            try:
                shutil.rmtree(path, ignore_errors=True)
                LIVE.discard(path)
            finally:
                self._queue.task_done()

    def settle(self) -> None:
        self._queue.join()

    def forked(self) -> None:
        """In a forked child: the parent's thread and queue are not ours."""
        self._lock = threading.Lock()
        self._queue = queue.Queue()
        self._thread = None


_DELETER: Final = _Deleter()
os.register_at_fork(after_in_child=_DELETER.forked)


def delete(path: Path, *, rename: bool = True) -> None:
    """Delete ``path`` in the background; with ``rename``, first take it away at once.

    The new name is hidden and in the same parent (an atomic rename on one file system).
    """
    trash = path
    if rename:
        trash = path.with_name(f"{TRASH_PREFIX}{path.name}")
        try:
            path.rename(trash)
        except OSError:  # gone already, or not renamable: deleted where it is
            trash = path
        else:
            LIVE.add(trash)
            LIVE.discard(path)
    _DELETER.put(trash)


def settle() -> None:
    """Wait until every folder released so far is deleted."""
    _DELETER.settle()


__all__ = ["LIVE", "TRASH_PREFIX", "BoxFolder", "LiveFolders", "delete", "settle"]
