"""A skill's resources: which paths are acceptable, reading them, listing them.

A model names a resource by its exact path relative to the skill folder. Only plain relative
paths are read: no ``.``, ``./``, ``..`` or empty segment, no absolute or drive path, no hidden
segment, no NUL, nothing that percent-decodes to one of these. What passes is read from memory,
else from the skill's folder: its real path must stay inside the folder (a symlink pointing out
is refused), and it is opened beneath the folder's descriptor with no symlink followed on the
way (`ferrotool._permissions.confine`), so a folder swapped for a symlink meanwhile is refused too.
"""

from __future__ import annotations

import base64
import itertools
import os
import re
import stat
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import orjson

from ferrotool._permissions.confine import Refused, is_inside, opened_root, read_beneath, real
from ferrotool.skills.skill import BASE64_PREFIX, SKILL_FILE, AgentSkill

MAX_RESOURCE_BYTES: Final = 4 * 1024 * 1024
"""The largest resource read from disk (bytes)."""
MAX_LISTED: Final = 200
"""Resources named at most in a listing (the rest are counted)."""
MAX_WALKED: Final = 10_000
"""Files looked at, at most, when a skill folder is listed."""
_DRIVE: Final = re.compile(r"^[A-Za-z]:")


def clean_path(path: str) -> str | None:
    """The resource path ``path`` names, or ``None`` when it is not an acceptable one.

    Backslashes count as slashes; the path must be relative and plain (see the module).
    """
    if not path or "\x00" in path:
        return None
    decoded = path
    for _ in range(3):  # encoded traversal: %2e%2e%2f, and the same encoded twice
        once = urllib.parse.unquote(decoded)
        if once == decoded:
            break
        decoded = once
    for candidate in {path, decoded}:
        text = candidate.replace("\\", "/")
        if "\x00" in text or text.startswith("/") or _DRIVE.match(text):
            return None
        for segment in text.split("/"):
            if segment in ("", ".", "..") or segment.startswith("."):
                return None
    return path.replace("\\", "/")


def text_of(data: bytes) -> str:
    """Resource bytes as text: UTF-8, else ``base64:`` and their base64."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return BASE64_PREFIX + base64.b64encode(data).decode("ascii")


def read_from_disk(skill: AgentSkill, path: str, root: str | None = None) -> str | None:
    """A resource read from the skill's folder, or ``None`` (no folder, refused, missing).

    Args:
        skill: The skill.
        path: The resource's path in the skill's folder (a `clean_path`).
        root: The real path of the skill's folder, resolved once beforehand (the loader does
            so when it is made); else resolved now.
    """
    origin = skill.origin
    if origin is None:
        return None
    try:
        root = root or real(origin)
        target = real(os.path.join(root, path))
    except (OSError, ValueError):  # too long, not encodable, changing meanwhile
        return None
    if not is_inside(target, root) or target == root:
        return None
    relative = os.path.relpath(target, root).replace(os.sep, "/")
    if relative == SKILL_FILE or any(part.startswith(".") for part in relative.split("/")):
        return None
    try:
        with opened_root(root) as descriptor:
            return text_of(read_beneath(descriptor, relative, MAX_RESOURCE_BYTES))
    except (OSError, Refused):
        return None


def skill_markdown(skill: AgentSkill) -> str:
    """The skill's ``SKILL.md``: front matter (its name and description), then its instructions."""
    # JSON's string syntax is valid YAML (a double-quoted scalar).
    name, description = orjson.dumps(skill.name).decode(), orjson.dumps(skill.description).decode()
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{skill.content}\n"


def disk_files(origin: Path) -> Iterator[str]:
    """The resource paths under a skill folder: regular, non-hidden files, symlinks skipped.

    Sorted per folder, folders walked depth first; ``SKILL.md`` at the top is left out. The
    walk goes through folder descriptors (`os.fwalk`), so a folder swapped for a symlink while
    it runs is not entered.
    """
    try:
        root = real(origin)
    except (OSError, ValueError):
        return
    for folder, dirs, files, descriptor in os.fwalk(root, follow_symlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            try:
                info = os.stat(name, dir_fd=descriptor, follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            relative = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
            if relative != SKILL_FILE:
                yield relative


def listing(skill: AgentSkill) -> tuple[list[str], int]:
    """The resources to name in an error, and how many more there are beyond `MAX_LISTED`.

    ``SKILL.md`` comes first, then the resources in memory, then the files on disk (a walk
    bounded to `MAX_WALKED` files).
    """
    names: dict[str, None] = {SKILL_FILE: None}
    for key in sorted(skill.resources):
        names.setdefault(key, None)
    if skill.origin is not None:
        for key in itertools.islice(disk_files(skill.origin), MAX_WALKED):
            names.setdefault(key, None)
    ordered = list(names)
    return ordered[:MAX_LISTED], max(0, len(ordered) - MAX_LISTED)


__all__ = [
    "MAX_LISTED",
    "MAX_RESOURCE_BYTES",
    "clean_path",
    "disk_files",
    "listing",
    "read_from_disk",
    "skill_markdown",
    "text_of",
]
