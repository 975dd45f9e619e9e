"""File tools confined to base folders: view, list, write and insert.

Every path is resolved (relative paths against the first base folder, every symlink followed)
and must end inside a base folder; a path that leaves them is refused, whether by ``..``, an
absolute path or a symlink. The file is then opened *beneath* that base folder's descriptor by
the part of its real path below the folder, no symlink followed on the way (``openat2`` with
``RESOLVE_BENEATH`` on Linux, a component walk elsewhere: see `ferrotool._permissions.confine`), so
a folder swapped for a symlink after the check cannot lead a call out of its base. A path that
is a dangerous file or lies in a dangerous folder (``.env``, ``.git/``, ``.ssh/``...) asks
first, with a safety reason that no mode or allow rule overrides; one that reaches a dangerous
path only through a symlink is refused (the call must name it), when it is checked and again
when it runs.

Writes are atomic: the new text goes to a temporary file created in the target's folder
descriptor, is flushed to disk, and replaces the target in one rename between that descriptor
and itself; a crash at any point leaves the old file whole. Every failure of a call, an
`OSError` included, is that call's error result.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final

import anyio.to_thread

from ferrotool._permissions.confine import (
    Refused,
    has_nul,
    is_inside,
    list_beneath,
    opened_root,
    read_beneath,
    real,
    write_beneath,
    write_in,
)
from ferrotool._permissions.decisions import (
    PermissionBehavior,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)
from ferrotool._permissions.paths import is_dangerous_path
from ferrotool._permissions.state import PermissionContext
from ferrotool._tools.base import ToolBase, ToolCallParam
from ferrotool._values.calls import ToolResultBlock
from ferrotool._values.json import JsonValue

VIEW_TEXT_FILE: Final = "view_text_file"
LIST_DIRECTORY: Final = "list_directory"
WRITE_TEXT_FILE: Final = "write_text_file"
INSERT_TEXT_FILE: Final = "insert_text_file"

DEFAULT_MAX_FILE: Final = 8 * 1024 * 1024
"""Bytes a file may hold to be read or written."""
DEFAULT_MAX_OUTPUT: Final = 256 * 1024
"""Characters of a file's content returned at most (the rest: view a range)."""
MAX_ENTRIES: Final = 1000
"""Entries of a folder listed at most."""

_GLOB: Final = re.compile(r"[*?\[]")
_SYMLINK_ERRORS: Final = frozenset({errno.ELOOP, errno.EXDEV, errno.ENOTDIR})
"""What opening beneath a base answers when a symlink lies on the way."""

_RANGE: Final = re.compile(r"^\s*\[?\s*(-?\d+)\s*,\s*(-?\d+)\s*\]?\s*$")
_RANGES: Final[JsonValue] = {
    "description": "Lines to use, 1-based and inclusive: '[start,end]' or 'start,end'; "
    "negative numbers count from the end ('-2,-1': the last two lines).",
    "anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
    ],
}


class _Failed(Exception):
    """A call that ends with an error result (the message is the model's)."""


class FileToolBase(ToolBase[dict[str, JsonValue]]):
    """What the file tools share: base folders, path resolution, permission, caps.

    Args:
        base_dirs: The folders the tool may reach (relative paths start in the first).
        max_file_bytes: Bytes a file may hold to be read or written.
        max_output: Characters of content returned at most.
        dangerous_files: File names that ask first, added to the defaults.
        dangerous_directories: Folder names that ask first, added to the defaults.
        durable: Flush a written file (and its folder) to disk before the call returns; off,
            a write is still atomic but may be lost (never torn) by a machine crash.
    """

    path_field: str = "file_path"

    def __init__(
        self,
        base_dirs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE,
        max_output: int = DEFAULT_MAX_OUTPUT,
        dangerous_files: tuple[str, ...] = (),
        dangerous_directories: tuple[str, ...] = (),
        durable: bool = True,
    ) -> None:
        dirs = [base_dirs] if isinstance(base_dirs, (str, os.PathLike)) else list(base_dirs)
        if not dirs:
            raise ValueError("a file tool needs at least one base folder")
        self.base_dirs: Final[tuple[Path, ...]] = tuple(Path(d).absolute() for d in dirs)
        self._roots = tuple(real(d) for d in self.base_dirs)
        self.max_file_bytes = max_file_bytes
        self.max_output = max_output
        self.durable = durable
        super().__init__(
            dangerous_files=dangerous_files, dangerous_directories=dangerous_directories
        )

    # - paths -

    def resolve(self, path: str) -> str:
        """The real path ``path`` names, inside a base folder.

        A path that reaches a dangerous file or folder only through a symlink (``notes.txt``
        pointing to ``.aws/credentials``, ``hooks`` to ``.git/hooks``) is refused: the call
        must name it directly, so that its permission check and its run see the same danger
        even if the link is changed between the two.

        Raises:
            _Failed: It is empty, holds a NUL, leaves every base folder, or reaches a dangerous
                path through a symlink.
        """
        if not path.strip():
            raise _Failed(f"Missing or empty required parameter: {self.path_field}")
        if has_nul(path):
            raise _Failed(f"The path {path!r} holds a NUL character.")
        try:
            resolved = real(os.path.join(self.base_dirs[0], path))
        except (OSError, ValueError) as error:  # too long, not encodable, changing meanwhile
            raise _Failed(f"The path {path!r} cannot be resolved: {_reason(error)}.") from None
        if not any(is_inside(resolved, root) for root in self._roots):
            raise _Failed(
                f"Access denied: The file path '{path}' is outside the allowed base "
                f"directory '{self.base_dirs[0]}'."
            )
        if self._through_link(path, resolved):
            raise _Failed(
                f"Access denied: '{path}' leads to a sensitive file or folder through a "
                "symlink; name that file itself."
            )
        return resolved

    def locate(self, resolved: str) -> tuple[str, str]:
        """The base folder (its real path) holding ``resolved``, and the path below it."""
        for root in self._roots:
            if is_inside(resolved, root):
                return root, os.path.relpath(resolved, root).replace(os.sep, "/")
        raise _Failed(f"Access denied: '{resolved}' is outside the allowed base directories.")

    def spellings(self, path: str, resolved: str) -> list[str]:
        """The ways the call's path is written: real, below a base, with a base as configured.

        A rule written with a base folder's configured path matches even when that path holds
        a symlink: the file's path is also spelled with the configured base, and as the call
        wrote it (made absolute, ``..`` folded).
        """
        out = [resolved]
        for base, root in zip(self.base_dirs, self._roots, strict=True):
            if is_inside(resolved, root):
                below = os.path.relpath(resolved, root)
                out.append(below.replace(os.sep, "/"))
                out.append(os.path.normpath(os.path.join(base, below)))
        out.append(os.path.normpath(os.path.join(self.base_dirs[0], path)))
        return list(dict.fromkeys(out))

    def _path_of(self, tool_input: Mapping[str, JsonValue]) -> str:
        return str(tool_input.get(self.path_field, ""))

    # - permission -

    async def check_permissions(
        self, tool_input: dict[str, JsonValue], context: PermissionContext
    ) -> PermissionDecision:
        """A dangerous path: a safety ask; else no opinion.

        A path outside the base folders is let through: nothing is touched, and the call
        answers with the error the model can correct. A write inside a session working folder
        in ``accept_edits`` mode is allowed.
        """
        path = self._path_of(tool_input)
        try:
            resolved = self.resolve(path)
        except _Failed as failure:
            return PermissionDecision.allow(f"nothing will be touched: {failure}")
        if self._dangerous(path, resolved):
            return PermissionDecision.ask(
                f"'{path}' is a sensitive file or folder: approve access explicitly",
                reason=f"safety: dangerous path '{path}'",
            )
        if not self.read_only and context.mode is PermissionMode.ACCEPT_EDITS:
            for directory in context.working_directories.values():
                if is_inside(resolved, real(directory.path)):
                    return PermissionDecision.allow(
                        f"edits in {directory.path} are accepted in this session"
                    )
        return PermissionDecision.passthrough(self.name)

    def _through_link(self, path: str, resolved: str) -> bool:
        spelled = os.path.normpath(os.path.join(self.base_dirs[0], path))
        if spelled == resolved:
            return False
        reached = [
            os.path.join(base, os.path.relpath(resolved, root))
            for base, root in zip(self.base_dirs, self._roots, strict=True)
            if is_inside(resolved, root)
        ]
        return any(map(self._textually_dangerous, reached)) and not self._textually_dangerous(
            spelled
        )

    def _textually_dangerous(self, path: str) -> bool:
        return is_dangerous_path(
            path, self.dangerous_files, self.dangerous_directories, resolve=False
        )

    def _dangerous(self, path: str, resolved: str) -> bool:
        # Every spelling on its text: the real path is one of them, resolved already.
        return any(map(self._textually_dangerous, self.spellings(path, resolved)))

    def match_rule(self, rule_content: str | None, tool_input: dict[str, JsonValue]) -> bool:
        """A rule's content is a glob over the path: real, below a base, or as configured.

        The path is spelled every way `spellings` gives; an absolute rule is also read with
        the folders it names before its first wildcard resolved, so ``/link/secret/*`` matches
        a file of ``/real/secret`` when ``/link`` points there. A path that cannot be resolved
        matches no rule (the call then fails without touching anything).
        """
        if not rule_content:
            return True
        path = self._path_of(tool_input)
        try:
            resolved = self.resolve(path)
        except _Failed:
            return False
        patterns = [rule_content, *_resolved_rule(rule_content)]
        return any(
            fnmatch.fnmatchcase(candidate, pattern)
            for candidate in self.spellings(path, resolved)
            for pattern in patterns
        )

    def generate_suggestions(self, tool_input: dict[str, JsonValue]) -> tuple[PermissionRule, ...]:
        """Allow this tool in the folder of the path."""
        try:
            resolved = self.resolve(self._path_of(tool_input))
        except _Failed:
            return ()
        folder = resolved if os.path.isdir(resolved) else os.path.dirname(resolved)
        return (
            PermissionRule(
                tool_name=self.name,
                behavior=PermissionBehavior.ALLOW,
                rule_content=os.path.join(folder, "*"),
                source="suggested",
            ),
        )

    # - reading -

    def read_text(self, resolved: str, shown: str) -> str:
        """A file's text (UTF-8).

        Raises:
            _Failed: Missing, not a regular file, too large, or not UTF-8.
        """
        root, below = self.locate(resolved)
        try:
            with opened_root(root) as descriptor:
                data = read_beneath(descriptor, below, self.max_file_bytes)
        except FileNotFoundError:
            raise _Failed(f"The file {shown} does not exist.") from None
        except Refused as refused:
            raise _Failed(f"The file {shown} cannot be read: {refused}.") from None
        except OSError as error:
            raise _Failed(f"The file {shown} cannot be read: {_reason(error)}.") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise _Failed(f"The file {shown} is not a UTF-8 text file.") from None

    async def call(self, param: ToolCallParam[dict[str, JsonValue]]) -> ToolResultBlock:
        """Run the tool; every refusal, and every failure of the file system, is an error result."""
        try:  # file access blocks: on a worker thread, never on the event loop
            return ToolResultBlock.success(await anyio.to_thread.run_sync(self.run, param.input))
        except _Failed as failure:
            return ToolResultBlock.error(str(failure))
        except (OSError, ValueError) as error:  # Refused, UnicodeError: raised nowhere else
            shown = self._path_of(param.input)
            return ToolResultBlock.error(f"{self.name} failed on {shown!r}: {_reason(error)}.")

    def run(self, tool_input: Mapping[str, JsonValue]) -> str:
        """The tool's work (implemented by each tool)."""
        raise NotImplementedError


def parse_range(raw: JsonValue, count: int) -> tuple[int, int]:
    """A 1-based inclusive line range over ``count`` lines (negative: from the end).

    Raises:
        _Failed: Not a range, or its start lies after its end.
    """
    if isinstance(raw, list) and len(raw) == 2 and all(isinstance(x, int) for x in raw):
        first, last = int(raw[0]), int(raw[1])  # type: ignore[arg-type]
    else:
        match = _RANGE.match(str(raw))
        if match is None:
            raise _Failed(
                f"Invalid range format. Expected '[start,end]' or 'start,end', but got {raw}."
            )
        first, last = int(match.group(1)), int(match.group(2))
    start = first if first > 0 else count + first + 1 if first < 0 else 1
    end = last if last > 0 else count + last + 1 if last < 0 else count
    start, end = max(start, 1), min(end, count)
    if start > end and count:
        raise _Failed(f"Invalid range: start line {start} is greater than end line {end}.")
    return start, end


def numbered(lines: Iterable[str], first: int) -> str:
    """Lines as ``<n>: <line>``."""
    return "\n".join(f"{number}: {line}" for number, line in enumerate(lines, first))


_VIEW_SCHEMA: Final[Mapping[str, JsonValue]] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The file to view."},
        "ranges": _RANGES,
    },
    "required": ["file_path"],
}


class ViewTextFile(FileToolBase):
    """``view_text_file``: a text file's lines, numbered, or a range of them."""

    name = VIEW_TEXT_FILE
    description = (
        "View a text file with numbered lines, whole or a range of lines. Paths are relative "
        "to the base folder."
    )
    input_schema: Mapping[str, JsonValue] | type | None = _VIEW_SCHEMA
    read_only = True

    def run(self, tool_input: Mapping[str, JsonValue]) -> str:
        """The file's content, numbered."""
        shown = self._path_of(tool_input)
        text = self.read_text(self.resolve(shown), shown)
        lines = text.splitlines()
        ranges = tool_input.get("ranges")
        if ranges is None or ranges == "":
            header, first, chosen = f"The content of {shown}:", 1, lines
        else:
            start, end = parse_range(ranges, len(lines))
            header, first = f"The content of {shown} in lines [{start}, {end}]:", start
            chosen = lines[start - 1 : end]
        body = numbered(chosen, first)
        if len(body) > self.max_output:
            body = body[: self.max_output] + "\n[... truncated: view a range of lines]"
        return f"{header}\n```\n{body}\n```"


_LIST_SCHEMA: Final[Mapping[str, JsonValue]] = {
    "type": "object",
    "properties": {"dir_path": {"type": "string", "description": "The folder to list."}},
    "required": ["dir_path"],
}


class ListDirectory(FileToolBase):
    """``list_directory``: a folder's entries (folders end with ``/``)."""

    name = LIST_DIRECTORY
    description = "List the entries of a folder; folders end with '/'."
    input_schema: Mapping[str, JsonValue] | type | None = _LIST_SCHEMA
    read_only = True
    path_field = "dir_path"

    def run(self, tool_input: Mapping[str, JsonValue]) -> str:
        """The folder's entries, sorted."""
        shown = self._path_of(tool_input)
        root, below = self.locate(self.resolve(shown))
        try:
            with opened_root(root) as descriptor:
                entries = list_beneath(descriptor, below)
        except (FileNotFoundError, NotADirectoryError):
            raise _Failed(f"The directory {shown} does not exist.") from None
        except OSError as error:
            raise _Failed(f"The directory {shown} cannot be listed: {_reason(error)}.") from None
        names = sorted(name + ("/" if folder else "") for name, folder in entries)
        more = len(names) - MAX_ENTRIES
        lines = names[:MAX_ENTRIES] + ([f"... and {more} more"] if more > 0 else [])
        return f"The content of {shown}:\n" + ("\n".join(lines) if lines else "(empty)")


def atomic_write(resolved: str, text: str, *, durable: bool = True) -> None:
    """Replace a file's text in one rename (see the module); the file's mode is kept.

    The file's folder is opened by its path, and the file written inside that folder's
    descriptor (`ferrotool._permissions.confine.write_in`). With ``durable``, the new file and the
    rename are flushed to disk before returning.

    Raises:
        OSError: It cannot be written (a ``Refused`` one is not a regular file).
    """
    folder = os.open(os.path.dirname(resolved) or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        write_in(folder, os.path.basename(resolved), text.encode("utf-8"), durable=durable)
    finally:
        os.close(folder)


class _Writer(FileToolBase):
    read_only = False

    def _write(self, resolved: str, shown: str, text: str) -> None:
        data = text.encode("utf-8")
        if len(data) > self.max_file_bytes:
            raise _Failed(f"The new content of {shown} is larger than {self.max_file_bytes} bytes.")
        root, below = self.locate(resolved)
        try:
            with opened_root(root) as descriptor:
                write_beneath(descriptor, below, data, durable=self.durable)
        except Refused:
            raise _Failed(f"{shown} is not a regular file.") from None
        except OSError as error:
            raise _Failed(f"The file {shown} cannot be written: {_reason(error)}.") from None


def _reason(error: OSError | ValueError) -> str:
    """What went wrong, in a few words (a symlink met on the way says so)."""
    if isinstance(error, OSError):
        if error.errno in _SYMLINK_ERRORS:
            return "a symlink or a changed folder lies on the way"
        return error.strerror or str(error)
    if isinstance(error, UnicodeError):
        return "the path is not valid text"
    return str(error)


def _resolved_rule(rule: str) -> list[str]:
    """``rule`` with the folders before its first wildcard resolved, when that changes it."""
    if not os.path.isabs(rule):
        return []
    parts = rule.split("/")
    literal = 0
    while literal < len(parts) - 1 and not _GLOB.search(parts[literal]):
        literal += 1
    prefix = "/".join(parts[:literal]) or "/"
    try:
        resolved = real(prefix)
    except (OSError, ValueError):
        return []
    if resolved == os.path.normpath(prefix):
        return []
    return [os.path.join(resolved, *parts[literal:])]


_WRITE_SCHEMA: Final[Mapping[str, JsonValue]] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The file to write."},
        "content": {"type": "string", "description": "The text to write."},
        "ranges": _RANGES,
    },
    "required": ["file_path", "content"],
}


class WriteTextFile(_Writer):
    """``write_text_file``: create or overwrite a text file, or replace a range of its lines."""

    name = WRITE_TEXT_FILE
    description = (
        "Create or overwrite a text file, or replace a range of its lines with the content. "
        "Missing parent folders are created."
    )
    input_schema: Mapping[str, JsonValue] | type | None = _WRITE_SCHEMA

    def run(self, tool_input: Mapping[str, JsonValue]) -> str:
        """Write the file."""
        shown = self._path_of(tool_input)
        resolved = self.resolve(shown)
        content = str(tool_input.get("content", ""))
        ranges = tool_input.get("ranges")
        if not os.path.lexists(resolved):
            self._write(resolved, shown, content)
            note = " (the ranges were ignored: the file did not exist)" if ranges else ""
            return f"Create and write {shown} successfully.{note}"
        if ranges is None or ranges == "":
            self._write(resolved, shown, content)
            return f"Overwrite {shown} successfully."
        lines = self.read_text(resolved, shown).splitlines(keepends=True)
        start, end = parse_range(ranges, len(lines))
        new = content if content.endswith("\n") or end >= len(lines) else content + "\n"
        self._write(resolved, shown, "".join([*lines[: start - 1], new, *lines[end:]]))
        return f"Write {shown} successfully: lines [{start}, {end}] replaced."


_INSERT_SCHEMA: Final[Mapping[str, JsonValue]] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The file to change."},
        "content": {"type": "string", "description": "The text to insert."},
        "line_number": {"type": "integer", "description": "The 1-based line to insert at."},
    },
    "required": ["file_path", "content", "line_number"],
}


class InsertTextFile(_Writer):
    """``insert_text_file``: insert text before a line of a file (or at its end)."""

    name = INSERT_TEXT_FILE
    description = (
        "Insert content into a text file before the given line; line n+1 appends to a file "
        "of n lines."
    )
    input_schema: Mapping[str, JsonValue] | type | None = _INSERT_SCHEMA

    def run(self, tool_input: Mapping[str, JsonValue]) -> str:
        """Insert the content."""
        shown = self._path_of(tool_input)
        resolved = self.resolve(shown)
        lines = self.read_text(resolved, shown).splitlines(keepends=True)
        raw = tool_input.get("line_number")
        number = raw if isinstance(raw, int) and not isinstance(raw, bool) else 0
        count = len(lines)
        if not 1 <= number <= count + 1:
            raise _Failed(
                f"InvalidArgumentsError: The given line_number ({number}) is not in the valid "
                f"range [1, {count + 1}]."
            )
        content = str(tool_input.get("content", ""))
        if lines and not lines[-1].endswith("\n") and number == count + 1:
            lines[-1] += "\n"
        if not content.endswith("\n") and number <= count:
            content += "\n"
        self._write(resolved, shown, "".join([*lines[: number - 1], content, *lines[number - 1 :]]))
        return f"Insert content into {shown} at line {number} successfully."


def file_tools(
    base_dirs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    write: bool = True,
    max_file_bytes: int = DEFAULT_MAX_FILE,
) -> tuple[FileToolBase, ...]:
    """The file tools over ``base_dirs``: the readers, and the writers unless ``write=False``."""
    kinds: list[type[FileToolBase]] = [ViewTextFile, ListDirectory]
    if write:
        kinds += [WriteTextFile, InsertTextFile]
    return tuple(kind(base_dirs, max_file_bytes=max_file_bytes) for kind in kinds)


__all__ = [
    "DEFAULT_MAX_FILE",
    "DEFAULT_MAX_OUTPUT",
    "INSERT_TEXT_FILE",
    "LIST_DIRECTORY",
    "MAX_ENTRIES",
    "VIEW_TEXT_FILE",
    "WRITE_TEXT_FILE",
    "FileToolBase",
    "InsertTextFile",
    "ListDirectory",
    "ViewTextFile",
    "WriteTextFile",
    "atomic_write",
    "file_tools",
    "numbered",
    "parse_range",
]
