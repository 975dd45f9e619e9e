"""NumPy-style docstrings: section headers underlined with dashes, ``name : type`` entries."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from ferrotool._schema.doc_lines import (
    DocParam,
    Line,
    Sections,
    join_wrapped,
    make_param,
    split_entries,
)

_NUMPY_SECTIONS: Final = {
    **dict.fromkeys(
        [
            "parameters",
            "params",
            "arguments",
            "args",
            "other parameters",
            "keyword arguments",
            "keyword args",
            "keyword parameters",
        ],
        "params",
    ),
    **dict.fromkeys(["returns", "return"], "returns"),
    **dict.fromkeys(["yields", "yield"], "yields"),
    **dict.fromkeys(["raises", "raise"], "raises"),
    **dict.fromkeys(
        [
            "attributes",
            "examples",
            "example",
            "methods",
            "notes",
            "note",
            "receives",
            "references",
            "see also",
            "warns",
            "warnings",
            "warning",
            "todo",
        ],
        "other",
    ),
}


def numpy_header(lines: Sequence[Line], index: int, *, known_only: bool) -> str | None:
    """The kind of the NumPy section header (a line underlined with dashes) at ``index``."""
    line = lines[index]
    if not line.text or line.indent != 0 or index + 1 >= len(lines):
        return None
    underline = lines[index + 1]
    if underline.indent != 0 or len(underline.text) < 3 or underline.text.strip("-"):
        return None
    kind = _NUMPY_SECTIONS.get(" ".join(line.text.rstrip(":").split()).lower())
    if kind is None and not known_only:
        return "other"
    return kind


def _numpy_names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if len(names) > 1 and all(name and not re.search(r"[\s()\[\]]", name) for name in names):
        return names
    return [text.strip()]


def parse_numpy(lines: Sequence[Line]) -> Sections:
    """The sections of a NumPy-style docstring."""
    headers: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        kind = numpy_header(lines, index, known_only=False)
        if kind is None:
            index += 1
        else:
            headers.append((index, kind))
            index += 2
    params: list[DocParam] = []
    returns: list[str] = []
    yields: list[str] = []
    raises: list[tuple[str, str]] = []
    for number, (start, kind) in enumerate(headers):
        end = headers[number + 1][0] if number + 1 < len(headers) else len(lines)
        entries = split_entries(lines[start + 2 : end])
        if kind == "params":
            for head, rest in entries:
                description = join_wrapped(rest)
                colon = head.find(":")
                names, type_text = (head, None) if colon < 0 else (head[:colon], head[colon + 1 :])
                params.extend(
                    make_param(name, description, type_text and type_text.strip())
                    for name in _numpy_names(names)
                )
        elif kind in ("returns", "yields"):
            for head, rest in entries:
                (returns if kind == "returns" else yields).append(join_wrapped(rest) or head)
        elif kind == "raises":
            raises.extend((head, join_wrapped(rest)) for head, rest in entries)
    free_end = headers[0][0] if headers else len(lines)
    return Sections(free_end, params, "\n\n".join(returns or yields) or None, raises)


__all__ = ["numpy_header", "parse_numpy"]
