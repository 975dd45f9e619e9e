"""Confinement to a folder: the one place the path checks of skills and file tools live.

A path is inside a root when its real path (every symlink resolved) is the root's real path or
below it. The check is made on the real path, and the file is then opened by that real path
with ``O_NOFOLLOW``, so a symlink swapped in after the check is refused rather than followed.
"""

from __future__ import annotations

import os
import stat
from typing import Final

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)


class Refused(ValueError):
    """A path that is not read or written: outside its root, not a regular file, too large."""


def real(path: str | os.PathLike[str]) -> str:
    """The real path: absolute, normalised, every symlink that exists resolved."""
    return os.path.realpath(os.fspath(path))


def is_inside(real_path: str, real_root: str) -> bool:
    """Whether ``real_path`` is ``real_root`` or lies below it (both real paths)."""
    try:
        return os.path.commonpath((real_path, real_root)) == real_root
    except ValueError:  # different drives, or a relative path mixed in
        return False


def read_regular(real_path: str, max_bytes: int) -> bytes:
    """The bytes of a regular file, opened without following a symlink.

    Raises:
        Refused: Not a regular file (a folder, a device, a symlink swapped in), or larger
            than ``max_bytes``.
        OSError: It cannot be read.
    """
    fd = os.open(real_path, os.O_RDONLY | _NOFOLLOW | _BINARY | _CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not a regular file")
        if info.st_size > max_bytes:
            raise Refused(f"larger than {max_bytes} bytes")
        chunks = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise Refused(f"larger than {max_bytes} bytes")
        return data
    finally:
        os.close(fd)


def has_nul(path: str) -> bool:
    """Whether ``path`` holds a NUL character (no file system accepts one)."""
    return "\x00" in path


__all__ = ["Refused", "has_nul", "is_inside", "read_regular", "real"]
