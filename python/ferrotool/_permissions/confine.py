"""Confinement to a folder: the path checks of the skills and of the file tools, in one place.

A path is inside a root when its real path (every symlink resolved) is the root's real path or
below it. That textual check decides what a call may name; what it then opens is opened
*beneath the root's descriptor*, never by its full path, so a folder swapped for a symlink
after the check cannot lead the call out of the root:

* on Linux (5.6 and later) through ``openat2(2)`` with ``RESOLVE_BENEATH``,
  ``RESOLVE_NO_SYMLINKS`` and ``RESOLVE_NO_MAGICLINKS``, called through `ctypes`;
* elsewhere (or where the system call is missing or filtered) by a walk from the root, one
  component at a time, each opened relative to the previous one with ``O_NOFOLLOW``; ``..``
  and empty components are refused.

Both refuse every symlink on the way, inside the root too. That loses nothing: the path handed
to them is the part below the root of a *real* path, in which no symlink was left when it was
resolved, so a symlink met on the way was put there since, and the call is refused rather than
led somewhere its permission check did not see (``RESOLVE_BENEATH`` alone would follow a link
that stays inside the root, to a dangerous folder say). Symlinks inside a base folder still
work for the tools: the real path is resolved first, and it must lie inside a base.

Writes go to a temporary file created in the target's folder (opened beneath the root) with
``O_CREAT | O_EXCL | O_NOFOLLOW`` under a random name, and replace the target by a rename
between the same folder descriptor. The base folders themselves are trusted: they are opened by
the real path they had when the tool was made.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import secrets
import stat
import sys
from collections.abc import Callable, Iterator
from typing import Final

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)
_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_PATH: Final = getattr(os, "O_PATH", 0)

_SEARCH: Final = (_PATH or os.O_RDONLY) | _DIRECTORY | _CLOEXEC
"""Flags of a folder only walked through (``O_PATH`` where there is one)."""
_LISTED: Final = os.O_RDONLY | _DIRECTORY | _CLOEXEC
"""Flags of a folder read or flushed (listing, ``fsync``)."""

RESOLVE_NO_MAGICLINKS: Final = 0x02
RESOLVE_NO_SYMLINKS: Final = 0x04
RESOLVE_BENEATH: Final = 0x08
_RESOLVE: Final = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
_OPENAT2: Final = 437  # the generic number, shared by x86_64 and aarch64
_RETRIES: Final = 8  # openat2 answers EAGAIN when a rename raced its lookup


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


def has_nul(path: str) -> bool:
    """Whether ``path`` holds a NUL character (no file system accepts one)."""
    return "\x00" in path


# - openat2 -


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


def _load_openat2() -> Callable[..., int] | None:
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64", "arm64"):
        return None
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    syscall.argtypes = (
        ctypes.c_long,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.POINTER(_OpenHow),
        ctypes.c_size_t,
    )
    return syscall


_SYSCALL: Final = _load_openat2()


def _openat2(directory: int, path: bytes, flags: int, mode: int) -> int:
    """``openat2(directory, path, {flags, mode, RESOLVE_*})``; `OSError` on failure."""
    assert _SYSCALL is not None
    how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, _RESOLVE)
    error = errno.EAGAIN
    for _ in range(_RETRIES):
        result = _SYSCALL(_OPENAT2, directory, path, ctypes.byref(how), ctypes.sizeof(how))
        if result >= 0:
            return result
        error = ctypes.get_errno()
        if error not in (errno.EAGAIN, errno.EINTR):
            break
    raise OSError(error, os.strerror(error), os.fsdecode(path))


def _probe() -> bool:
    """Whether ``openat2`` works here (a kernel before 5.6, or a seccomp filter, says no)."""
    if _SYSCALL is None:
        return False
    try:
        root = os.open("/", _SEARCH)
    except OSError:
        return False
    try:
        os.close(_openat2(root, b".", _SEARCH, 0))
    except OSError:
        return False
    finally:
        os.close(root)
    return True


HAS_OPENAT2: Final = _probe()
"""Whether paths are opened through ``openat2`` (else by the component walk)."""


# - opening beneath a root -


def components(relative: str) -> list[str]:
    """The components of a path below a root; ``[]`` for the root itself.

    Raises:
        Refused: An absolute path, or one with ``..``, ``.`` or an empty component inside.
    """
    if relative in ("", "."):
        return []
    if os.path.isabs(relative) or has_nul(relative):
        raise Refused("not a plain path below the folder")
    parts = relative.replace(os.sep, "/").split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise Refused("not a plain path below the folder")
    return parts


def _open_walk(directory: int, parts: list[str], flags: int, mode: int, create: bool) -> int:
    """Open ``parts`` below ``directory`` one component at a time, never following a link.

    With ``create``, missing folders on the way are made (the last component is ``flags``').
    """
    current = os.dup(directory)
    try:
        for part in parts[:-1]:
            try:
                step = os.open(part, _SEARCH | _NOFOLLOW, dir_fd=current)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=current)
                step = os.open(part, _SEARCH | _NOFOLLOW, dir_fd=current)
            os.close(current)
            current = step
        if not parts:
            return os.open(".", flags, dir_fd=current)
        return os.open(parts[-1], flags | _NOFOLLOW, mode, dir_fd=current)
    finally:
        os.close(current)


def open_beneath(root: int, relative: str, flags: int, mode: int = 0o666) -> int:
    """A descriptor of ``relative`` opened beneath the folder descriptor ``root``.

    No component may be a symlink, and nothing above ``root`` is reached (see the module).

    Raises:
        Refused: ``relative`` is not a plain path below the root.
        OSError: It cannot be opened: missing, a symlink on the way (``ELOOP``, ``ENOTDIR``),
            or a way out of the root (``EXDEV``).
    """
    parts = components(relative)
    flags |= _CLOEXEC
    if HAS_OPENAT2:
        return _openat2(root, os.fsencode("/".join(parts) or "."), flags, mode)
    return _open_walk(root, parts, flags, mode, create=False)


def open_folder(root: int, relative: str, *, create: bool = False, search: bool = False) -> int:
    """A descriptor of the folder ``relative`` beneath ``root`` (see `open_beneath`).

    Args:
        root: The root's descriptor.
        relative: The folder's path below the root (``""`` or ``"."``: the root).
        create: Make the missing folders on the way (each made beneath its parent's
            descriptor, then opened without following a link).
        search: Only walked through (``O_PATH``); else readable (listed, flushed).
    """
    flags = _SEARCH if search else _LISTED
    try:
        return open_beneath(root, relative, flags)
    except FileNotFoundError:
        if not create:
            raise
    return _open_walk(root, [*components(relative), "."], flags, 0, create=True)


@contextlib.contextmanager
def opened_root(root: str) -> Iterator[int]:
    """The descriptor of a root folder, by its real path, for a block.

    On POSIX systems the path is opened from ``/`` like any path beneath a root (no symlink
    followed): a real path holds none, so one met on the way was swapped in since the path was
    resolved, and the root is refused rather than followed elsewhere.

    Raises:
        OSError: It cannot be opened (missing, or a symlink on the way).
    """
    if os.name == "posix" and os.path.isabs(root):
        top = os.open("/", _SEARCH)
        try:
            descriptor = open_folder(top, os.path.relpath(root, "/"), search=True)
        finally:
            os.close(top)
    else:
        descriptor = os.open(root, _SEARCH)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


# - reading, writing -


def _read_all(descriptor: int, max_bytes: int) -> bytes:
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        raise Refused("not a regular file")
    if info.st_size > max_bytes:
        raise Refused(f"larger than {max_bytes} bytes")
    chunks = []
    left = max_bytes + 1
    while left > 0:
        chunk = os.read(descriptor, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise Refused(f"larger than {max_bytes} bytes")
    return data


def read_regular(real_path: str, max_bytes: int) -> bytes:
    """The bytes of a regular file, opened without following a symlink in its last component.

    Raises:
        Refused: Not a regular file (a folder, a device, a symlink swapped in), or larger
            than ``max_bytes``.
        OSError: It cannot be read.
    """
    fd = os.open(real_path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY | _CLOEXEC)
    try:
        return _read_all(fd, max_bytes)
    finally:
        os.close(fd)


def read_beneath(root: int, relative: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``relative`` beneath ``root`` (see `open_beneath`).

    The file is opened without blocking (a FIFO does not hang the call) and checked to be a
    regular file on its open descriptor.

    Raises:
        Refused: Not a regular file, larger than ``max_bytes``, not a plain path.
        OSError: It cannot be opened or read.
    """
    fd = open_beneath(root, relative, os.O_RDONLY | _NONBLOCK | _BINARY)
    try:
        return _read_all(fd, max_bytes)
    finally:
        os.close(fd)


def list_beneath(root: int, relative: str) -> list[tuple[str, bool]]:
    """The entries of the folder ``relative`` beneath ``root``: (name, is a folder).

    A symlink counts as a file, whatever it points to.
    """
    fd = open_folder(root, relative)
    try:
        with os.scandir(fd) as entries:
            return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    finally:
        os.close(fd)


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def write_in(folder: int, name: str, data: bytes, *, durable: bool = True) -> None:
    """Replace the file ``name`` of the folder descriptor ``folder`` by ``data``, atomically.

    The data goes to a new file of a random name in the same folder (``O_EXCL``, never a
    symlink followed), which is renamed over ``name`` between the same descriptor. An existing
    file keeps its mode; a new one gets the usual ``0o666`` less the umask. With ``durable``,
    the file and the rename are flushed to disk before returning.

    Raises:
        Refused: ``name`` exists and is not a regular file (a symlink included).
        OSError: It cannot be written.
    """
    if not name or "/" in name or name in (".", ".."):
        raise Refused("not a file name")
    try:
        old = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        mode = None
    else:
        if not stat.S_ISREG(old.st_mode):
            raise Refused("not a regular file")
        mode = stat.S_IMODE(old.st_mode)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY | _CLOEXEC
    for _ in range(_RETRIES):
        temporary = f".ferrotool-{secrets.token_hex(8)}.tmp"
        try:
            # A new file is made with its final mode; an old file's copy stays private until
            # it has that file's mode.
            fd = os.open(temporary, flags, 0o666 if mode is None else 0o600, dir_fd=folder)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name")
    try:
        try:
            _write_all(fd, data)
            if mode is not None:
                os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise
    if durable:
        with contextlib.suppress(OSError):  # the rename itself, on disk
            os.fsync(folder)


def write_beneath(root: int, relative: str, data: bytes, *, durable: bool = True) -> None:
    """Replace the file ``relative`` beneath ``root`` by ``data`` (see `write_in`).

    Missing folders on the way are made, each beneath its parent's descriptor.
    """
    parts = components(relative)
    if not parts:
        raise Refused("not a file name")
    folder = open_folder(root, "/".join(parts[:-1]), create=True)
    try:
        write_in(folder, parts[-1], data, durable=durable)
    finally:
        os.close(folder)


__all__ = [
    "HAS_OPENAT2",
    "Refused",
    "components",
    "has_nul",
    "is_inside",
    "list_beneath",
    "open_beneath",
    "open_folder",
    "opened_root",
    "read_beneath",
    "read_regular",
    "real",
    "write_beneath",
    "write_in",
]
