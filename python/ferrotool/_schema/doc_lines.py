"""A docstring's text as lines and entries: what the style parsers of `docstrings` share.

The helpers every style shares: cleaning and splitting the text, the free text before the
first section, wrapped lines joined, section bodies split into entries, ``*args`` stars, and
the `DocParam` an entry becomes.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, final


@final
@dataclass(frozen=True, slots=True)
class DocParam:
    r"""One documented parameter.

    Attributes:
        name: The name as written, without leading ``*`` / ``**`` (see ``stars``).
        description: The description; wrapped lines joined with a space, paragraphs separated
            by ``"\n\n"``; empty when the entry has none.
        type: The type text if the docstring gives one, as written.
        stars: 1 for ``*args``, 2 for ``**kwargs``, 0 otherwise.
    """

    name: str
    description: str
    type: str | None
    stars: int = 0


@dataclass(frozen=True, slots=True)
class Line:
    indent: int
    text: str  # stripped; "" for a blank line
    raw: str  # as cleaned, trailing whitespace removed


class Sections(NamedTuple):
    free_end: int  # index of the first section line: free text is before it
    params: list[DocParam]
    returns: str | None
    raises: list[tuple[str, str]]


def split_lines(doc: str) -> list[Line]:
    """The cleaned docstring's lines, each with its indentation."""
    text = inspect.cleandoc(doc.replace("\r\n", "\n").replace("\r", "\n"))
    lines: list[Line] = []
    for raw in text.split("\n"):
        content = raw.strip()
        if content:
            lines.append(Line(len(raw) - len(raw.lstrip()), content, raw.rstrip()))
        else:
            lines.append(Line(0, "", ""))
    return lines


def free_text(lines: Sequence[Line]) -> tuple[str | None, str | None]:
    """The summary and the description: the paragraphs of ``lines``."""
    paragraphs: list[list[Line]] = []
    current: list[Line] = []
    for line in lines:
        if line.text:
            current.append(line)
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    if not paragraphs:
        return None, None
    summary = " ".join(line.text for line in paragraphs[0])
    rest = ["\n".join(line.raw for line in paragraph) for paragraph in paragraphs[1:]]
    return summary, "\n\n".join([summary, *rest])


def join_wrapped(parts: Iterable[str]) -> str:
    """Wrapped lines joined with a space; blank lines become paragraph breaks."""
    paragraphs: list[str] = []
    current: list[str] = []
    for part in parts:
        text = part.strip()
        if text:
            current.append(text)
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return "\n\n".join(paragraphs)


def split_entries(body: Iterable[Line]) -> list[tuple[str, list[str]]]:
    """Split a section body into (entry line, continuation lines): deeper lines continue."""
    entries: list[tuple[str, list[str]]] = []
    entry_indent = -1
    for line in body:
        if not line.text:
            if entries:
                entries[-1][1].append("")
        elif not entries or line.indent <= entry_indent:
            entries.append((line.text, []))
            entry_indent = line.indent
        else:
            entries[-1][1].append(line.text)
    return entries


def split_stars(text: str) -> tuple[int, str]:
    """The count of leading ``*`` (escaped or not, at most 2) and the name after them."""
    stars = 0
    rest = text.strip()
    while stars < 2:
        if rest.startswith("\\*"):
            rest = rest[2:]
        elif rest.startswith("*"):
            rest = rest[1:]
        else:
            break
        stars += 1
    return stars, rest


def closing(text: str, start: int) -> int:
    """The index of the bracket closing the one at ``start``, or -1."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def colon_outside_brackets(text: str) -> int:
    """The index of the first colon outside brackets, or -1."""
    depth = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == ":" and depth == 0:
            return index
    return -1


def make_param(name_text: str, description: str, type_text: str | None) -> DocParam:
    """The `DocParam` of an entry: its name without stars, and their count."""
    stars, name = split_stars(name_text)
    return DocParam(name=name, description=description, type=type_text or None, stars=stars)


__all__ = [
    "DocParam",
    "Line",
    "Sections",
    "closing",
    "colon_outside_brackets",
    "free_text",
    "join_wrapped",
    "make_param",
    "split_entries",
    "split_lines",
    "split_stars",
]
