"""Sphinx-style docstrings: ``:param x:``, ``:type x:``, ``:returns:``, ``:raises E:`` fields."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ferrotool._schema.doc_lines import DocParam, Line, Sections, join_wrapped, split_stars

_FIELD: Final = re.compile(r":([A-Za-z_][\w-]*)(\s[^:]*)?:(\s.*)?")
_SPHINX_PARAM: Final = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})
_SPHINX_RAISES: Final = frozenset({"raises", "raise", "except", "exception"})
SPHINX_FIELDS: Final = _SPHINX_PARAM | _SPHINX_RAISES | {"type", "returns", "return", "rtype"}


def sphinx_field(line: Line) -> re.Match[str] | None:
    """The ``:name arg: text`` field a base-level line holds, if any."""
    if line.indent != 0 or not line.text.startswith(":"):
        return None
    return _FIELD.fullmatch(line.text)


@dataclass(slots=True)
class _SphinxParam:
    name: str
    description: str
    type: str | None
    stars: int
    placeholder: bool  # made by a ``:type:`` field before any ``:param:`` field


def parse_sphinx(lines: Sequence[Line]) -> Sections:
    """The sections of a Sphinx-style docstring."""
    free_end = len(lines)
    params: list[_SphinxParam] = []
    by_name: dict[str, _SphinxParam] = {}
    returns: list[str] = []
    yields: list[str] = []
    rtypes: list[str] = []
    raises: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        match = sphinx_field(lines[index])
        if match is None:
            index += 1
            continue
        free_end = min(free_end, index)
        body = [match.group(3) or ""]
        # A field on the docstring's first line: `inspect.cleandoc` dedents its body to the
        # field's column, so the body runs to the next field.
        to_field = index == 0
        index += 1
        # The body: deeper lines, blank lines, and unindented lines straight after a body line.
        while index < len(lines):
            line = lines[index]
            if (
                line.text
                and line.indent == 0
                and (sphinx_field(line) is not None or (not to_field and not lines[index - 1].text))
            ):
                break
            body.append(line.text)
            index += 1
        kind = match.group(1).lower()
        argument = (match.group(2) or "").strip()
        text = join_wrapped(body)
        if kind in _SPHINX_PARAM:
            words = argument.split()
            stars, name = split_stars(words[-1] if words else "")
            type_text = " ".join(words[:-1]) or None
            existing = by_name.get(name)
            if existing is not None and existing.placeholder:
                existing.description, existing.stars = text, stars
                existing.type = type_text or existing.type
                existing.placeholder = False
            else:
                param = _SphinxParam(name, text, type_text, stars, placeholder=False)
                params.append(param)
                by_name.setdefault(name, param)
        elif kind == "type":
            stars, name = split_stars(argument)
            existing = by_name.get(name)
            if existing is None:
                param = _SphinxParam(name, "", text or None, stars, placeholder=True)
                params.append(param)
                by_name[name] = param
            elif existing.type is None:
                existing.type = text or None
        elif kind in ("returns", "return"):
            if text:
                returns.append(text)
        elif kind in ("yields", "yield"):
            if text:
                yields.append(text)
        elif kind == "rtype":
            if text:
                rtypes.append(text)
        elif kind in _SPHINX_RAISES:
            raises.append((argument, text))
    return Sections(
        free_end,
        [DocParam(p.name, p.description, p.type, p.stars) for p in params],
        "\n\n".join(returns or yields or rtypes) or None,
        raises,
    )


__all__ = ["SPHINX_FIELDS", "parse_sphinx", "sphinx_field"]
