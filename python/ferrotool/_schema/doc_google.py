"""Google-style docstrings: ``Args:`` headers with their colon, entries indented below them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ferrotool._schema.doc_lines import (
    DocParam,
    Line,
    Sections,
    closing,
    colon_outside_brackets,
    join_wrapped,
    make_param,
    split_entries,
)

_GOOGLE_SECTIONS: Final = {
    **dict.fromkeys(
        [
            "args",
            "arguments",
            "parameters",
            "params",
            "keyword args",
            "keyword arguments",
            "keyword parameters",
            "kwargs",
            "other args",
            "other arguments",
            "other parameters",
            "other params",
        ],
        "params",
    ),
    **dict.fromkeys(["returns", "return"], "returns"),
    **dict.fromkeys(["yields", "yield"], "yields"),
    **dict.fromkeys(["raises", "raise", "exceptions", "except"], "raises"),
    **dict.fromkeys(
        [
            "attention",
            "attributes",
            "caution",
            "danger",
            "error",
            "example",
            "examples",
            "hint",
            "important",
            "methods",
            "note",
            "notes",
            "receives",
            "references",
            "see also",
            "tip",
            "todo",
            "warning",
            "warnings",
            "warns",
        ],
        "other",
    ),
}

_NAME: Final = re.compile(r"[^\s:(]+")
_TYPE_LIKE: Final = re.compile(r"[\w.\[\]()|,'\"`~*-]+")


def google_header(lines: Sequence[Line], index: int) -> tuple[str, str] | None:
    """The kind of the Google section header at ``index`` and its inline text, or None."""
    line = lines[index]
    if not line.text or line.indent != 0:
        return None
    colon = line.text.find(":")
    if colon <= 0:
        return None
    kind = _GOOGLE_SECTIONS.get(" ".join(line.text[:colon].split()).lower())
    if kind is None:
        return None
    inline = line.text[colon + 1 :].strip()
    if inline and (index == 0 or kind not in ("returns", "yields")):
        return None
    return kind, inline


def _google_body(lines: Sequence[Line], start: int) -> tuple[list[Line], int]:
    """The lines of the section whose header is just before ``start``, and the index after them.

    A section ends at a non-blank line at the base indentation. Two exceptions, for bodies that
    start at the base indentation: when the header is the docstring's first line (whose body
    `inspect.cleandoc` dedents to the header's column), the section ends at the next header;
    otherwise it ends at a header or at a base-indentation line after a blank line. (Text after
    the first section is not part of the description anyway, so nothing is lost by taking it.)
    """
    first = start
    while first < len(lines) and not lines[first].text:
        first += 1
    unindented = (
        first < len(lines) and lines[first].indent == 0 and google_header(lines, first) is None
    )
    to_header = unindented and start == 1
    index = start
    while index < len(lines):
        line = lines[index]
        if line.text and line.indent == 0:
            if google_header(lines, index) is not None:
                break
            if not to_header and (not unindented or (index > first and not lines[index - 1].text)):
                break
        index += 1
    return list(lines[start:index]), index


def _google_entry(text: str) -> tuple[str, str | None, str]:
    """``name (type): description`` -> (name with stars, type, first description line)."""
    stars = len(text) - len(text.lstrip("*\\"))
    match = _NAME.match(text, stars)
    if match is not None:
        position = match.end()
        rest = text[position:].lstrip()
        type_text: str | None = None
        if rest.startswith("("):
            close = closing(rest, 0)
            if close > 0:
                type_text = rest[1:close].strip()
                rest = rest[close + 1 :].lstrip()
            else:
                rest = "("  # unbalanced: not an entry of the usual shape
        if not rest:
            return text[: match.end()], type_text, ""
        if rest.startswith(":"):
            return text[: match.end()], type_text, rest[1:].strip()
    colon = colon_outside_brackets(text)
    if colon < 0:
        colon = text.find(":")
    if colon < 0:
        return text, None, ""
    return text[:colon].strip(), None, text[colon + 1 :].strip()


def _strip_return_type(text: str) -> str:
    colon = colon_outside_brackets(text)
    if colon <= 0:
        return text
    prefix = re.sub(r"\s*([,|\[\]()])\s*", r"\1", text[:colon].strip())
    description = text[colon + 1 :].strip()
    if description and _TYPE_LIKE.fullmatch(prefix):
        return description
    return text


def parse_google(lines: Sequence[Line]) -> Sections:
    """The sections of a Google-style docstring."""
    free_end = len(lines)
    params: list[DocParam] = []
    returns: list[str] = []
    yields: list[str] = []
    raises: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        header = google_header(lines, index)
        if header is None:
            index += 1
            continue
        kind, inline = header
        free_end = min(free_end, index)
        body, index = _google_body(lines, index + 1)
        if kind == "params":
            for head, rest in split_entries(body):
                name, type_text, first = _google_entry(head)
                params.append(make_param(name, join_wrapped([first, *rest]), type_text))
        elif kind in ("returns", "yields"):
            text = _strip_return_type(join_wrapped([inline, *(line.text for line in body)]))
            if text:
                (returns if kind == "returns" else yields).append(text)
        elif kind == "raises":
            for head, rest in split_entries(body):
                colon = head.find(":")
                name, first = (head, "") if colon < 0 else (head[:colon], head[colon + 1 :])
                raises.append((name.strip(), join_wrapped([first, *rest])))
    return Sections(free_end, params, "\n\n".join(returns or yields) or None, raises)


__all__ = ["google_header", "parse_google"]
