r"""Docstring parsing for tool and parameter descriptions: Google, NumPy and Sphinx styles.

`parse_docstring` turns a docstring into a `Docstring`: a summary, a free-text description, the
documented parameters (`DocParam`), the return description and the documented exceptions.
`check_documented` compares the documented parameters with a signature's, so that a parameter
description that could not be matched is reported instead of silently lost.

Choices (where the styles leave room):

* The input is cleaned with `inspect.cleandoc` (so raw, indented ``__doc__`` and cleaned text
  parse alike; tabs become 8 columns), after Windows and old Mac newlines become ``\n``.
  Trailing whitespace is ignored. Parsing never raises, whatever the text.
* Section headers sit at the docstring's base indentation. Google headers need their colon
  (``Args:``; ``Returns the weather.`` is prose), NumPy headers their dashed underline, Sphinx
  fields their leading colon (``:param x:``). ``Returns: text`` and ``Yields: text`` on one line
  are Google headers too, except on the docstring's first line (which is the summary then).
* ``description`` is the text before the first section header: the summary (its lines joined by
  spaces), then the following paragraphs as written, separated by ``\n\n``. Free-text
  sections (``Examples:``, ``Notes``...) and any text after the first section are left out.
* Parameter descriptions join wrapped lines with a space and keep paragraph breaks as
  ``\n\n``. Types are kept as written (``int, optional`` included). ``*args`` / ``**kwargs``
  (also escaped, ``\*args``) are recorded as the name without stars and the count of stars.
* An entry that does not parse as a parameter is not dropped: it becomes a `DocParam` named
  after its text (before the colon, if any), which `check_documented` then reports as
  documented but not in the signature. In a Google section, a line at the entry indentation
  always starts an entry (``name`` alone is an entry with an empty description); only deeper
  lines continue the entry above. NumPy's ``x, y : int`` gives two parameters with the same
  description. A Sphinx ``:type x:`` sets the type of ``x``; without a ``:param x:`` it still
  gives a parameter, with an empty description.
* ``Attributes`` sections are not parameters. Parameters from several parameter sections
  (``Args``, ``Keyword Args``, ``Other Parameters``...) are concatenated in docstring order.
  A parameter documented twice is listed twice; `Docstring.param` and
  `Docstring.param_descriptions` take the first.
* ``returns`` is the description of the returned value: Google drops a leading ``type:`` when the
  text before the colon looks like a type (``str: The weather.`` gives ``The weather.``);
  NumPy takes each entry's description, or its ``name : type`` line when it has none; Sphinx
  takes ``:returns:``, or ``:rtype:`` when there is no ``:returns:``. Without a returns section,
  a yields section is used. Exception names in ``raises`` are kept as written (a Sphinx
  ``:raises:`` without a name gives ``""``).
* A missing or blank docstring gives the style ``"plain"``, even when a style is forced.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, final

ParsedStyle = Literal["google", "numpy", "sphinx", "plain"]
"""The style a docstring was read as."""

DocstringStyle = Literal["auto", "google", "numpy", "sphinx", "plain"]
"""How to read a docstring: ``"auto"`` detects the style."""
"""The docstring conventions `parse_docstring` understands; ``plain`` has no sections."""

_STYLES: Final = frozenset({"google", "numpy", "sphinx", "plain", "auto"})


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


@final
@dataclass(frozen=True, slots=True)
class Docstring:
    r"""A parsed docstring.

    Attributes:
        summary: The first paragraph, its lines joined by spaces.
        description: The summary followed by the other free-text paragraphs before the first
            section header, paragraphs separated by ``"\n\n"``.
        params: The documented parameters, in docstring order.
        returns: The description of the returned value.
        raises: ``(exception name, description)`` pairs, in docstring order.
        style: The style the docstring was parsed as.
    """

    summary: str | None
    description: str | None
    params: tuple[DocParam, ...]
    returns: str | None
    raises: tuple[tuple[str, str], ...]
    style: ParsedStyle

    def param(self, name: str) -> DocParam | None:
        """The first parameter documented under ``name``.

        Args:
            name: The parameter's name; leading ``*`` / ``**`` are ignored.

        Returns:
            The parameter, or ``None`` when it is not documented.
        """
        key = _split_stars(name)[1]
        for param in self.params:
            if param.name == key:
                return param
        return None

    @property
    def param_descriptions(self) -> dict[str, str]:
        """A fresh mapping of parameter name to description (the first entry of a name wins)."""
        descriptions: dict[str, str] = {}
        for param in self.params:
            descriptions.setdefault(param.name, param.description)
        return descriptions


_EMPTY: Final = Docstring(
    summary=None, description=None, params=(), returns=None, raises=(), style="plain"
)


def parse_docstring(doc: str | None, *, style: DocstringStyle = "auto") -> Docstring:
    """Parse a Google, NumPy or Sphinx docstring (or plain text).

    Never raises on any docstring text: what cannot be parsed as a section entry stays in the
    result under a name taken from its text (see the module documentation).

    Args:
        doc: A docstring, raw (``__doc__``, indented) or cleaned; ``None`` for none.
        style: The style to parse as; ``"auto"`` detects it: Sphinx if a line is a ``:param``,
            ``:type``, ``:returns:``, ``:rtype:``, ``:raises``... field, else NumPy if a known
            section header is underlined with dashes, else Google if a known section header
            (``Args:``, ``Returns:``...) starts a line at the base indentation, else plain.

    Returns:
        The parsed docstring. A missing or blank docstring gives every field ``None`` or empty
        and the style ``"plain"``.

    Raises:
        ValueError: If ``style`` is not a known style.
    """
    if style not in _STYLES:
        raise ValueError(f"unknown docstring style {style!r}")
    if doc is None or not doc.strip():
        return _EMPTY
    lines = _lines(doc)
    chosen: ParsedStyle = _detect(lines) if style == "auto" else style
    if chosen == "google":
        sections = _parse_google(lines)
    elif chosen == "numpy":
        sections = _parse_numpy(lines)
    elif chosen == "sphinx":
        sections = _parse_sphinx(lines)
    else:
        sections = _Sections(len(lines), [], None, [])
    summary, description = _free_text(lines[: sections.free_end])
    return Docstring(
        summary=summary,
        description=description,
        params=tuple(sections.params),
        returns=sections.returns,
        raises=tuple(sections.raises),
        style=chosen,
    )


def check_documented(
    doc: Docstring, parameters: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Compare the documented parameters with a signature's parameter names.

    A plain, order-preserving set difference on names (duplicates reported once). Documented
    ``*args`` / ``**kwargs`` are compared by their name without stars, so they count as
    documented only if ``parameters`` includes ``"args"`` / ``"kwargs"`` (as
    ``inspect.signature`` names them).

    Args:
        doc: A parsed docstring.
        parameters: The signature's parameter names, in order.

    Returns:
        The names documented but not in ``parameters`` (in docstring order), and the names in
        ``parameters`` but not documented (in ``parameters`` order).

    Raises:
        TypeError: If ``parameters`` is a single string rather than a sequence of names.
    """
    if isinstance(parameters, str):
        raise TypeError("parameters must be a sequence of names, not a single string")
    documented = list(dict.fromkeys(param.name for param in doc.params))
    signature = list(dict.fromkeys(parameters))
    in_signature = set(signature)
    in_doc = set(documented)
    return (
        tuple(name for name in documented if name not in in_signature),
        tuple(name for name in signature if name not in in_doc),
    )


# --------------------------------------------------------------------------------------------
# Lines, paragraphs and entries


@dataclass(frozen=True, slots=True)
class _Line:
    indent: int
    text: str  # stripped; "" for a blank line
    raw: str  # as cleaned, trailing whitespace removed


class _Sections(NamedTuple):
    free_end: int  # index of the first section line: free text is before it
    params: list[DocParam]
    returns: str | None
    raises: list[tuple[str, str]]


def _lines(doc: str) -> list[_Line]:
    text = inspect.cleandoc(doc.replace("\r\n", "\n").replace("\r", "\n"))
    lines: list[_Line] = []
    for raw in text.split("\n"):
        content = raw.strip()
        if content:
            lines.append(_Line(len(raw) - len(raw.lstrip()), content, raw.rstrip()))
        else:
            lines.append(_Line(0, "", ""))
    return lines


def _free_text(lines: Sequence[_Line]) -> tuple[str | None, str | None]:
    paragraphs: list[list[_Line]] = []
    current: list[_Line] = []
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


def _join(parts: Iterable[str]) -> str:
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


def _entries(body: Iterable[_Line]) -> list[tuple[str, list[str]]]:
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


def _split_stars(text: str) -> tuple[int, str]:
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


def _closing(text: str, start: int) -> int:
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


def _colon_outside_brackets(text: str) -> int:
    depth = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == ":" and depth == 0:
            return index
    return -1


def _param(name_text: str, description: str, type_text: str | None) -> DocParam:
    stars, name = _split_stars(name_text)
    return DocParam(name=name, description=description, type=type_text or None, stars=stars)


# --------------------------------------------------------------------------------------------
# Google


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


def _google_header(lines: Sequence[_Line], index: int) -> tuple[str, str] | None:
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


def _google_body(lines: Sequence[_Line], start: int) -> tuple[list[_Line], int]:
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
        first < len(lines) and lines[first].indent == 0 and _google_header(lines, first) is None
    )
    to_header = unindented and start == 1
    index = start
    while index < len(lines):
        line = lines[index]
        if line.text and line.indent == 0:
            if _google_header(lines, index) is not None:
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
            close = _closing(rest, 0)
            if close > 0:
                type_text = rest[1:close].strip()
                rest = rest[close + 1 :].lstrip()
            else:
                rest = "("  # unbalanced: not an entry of the usual shape
        if not rest:
            return text[: match.end()], type_text, ""
        if rest.startswith(":"):
            return text[: match.end()], type_text, rest[1:].strip()
    colon = _colon_outside_brackets(text)
    if colon < 0:
        colon = text.find(":")
    if colon < 0:
        return text, None, ""
    return text[:colon].strip(), None, text[colon + 1 :].strip()


def _strip_return_type(text: str) -> str:
    colon = _colon_outside_brackets(text)
    if colon <= 0:
        return text
    prefix = re.sub(r"\s*([,|\[\]()])\s*", r"\1", text[:colon].strip())
    description = text[colon + 1 :].strip()
    if description and _TYPE_LIKE.fullmatch(prefix):
        return description
    return text


def _parse_google(lines: Sequence[_Line]) -> _Sections:
    free_end = len(lines)
    params: list[DocParam] = []
    returns: list[str] = []
    yields: list[str] = []
    raises: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        header = _google_header(lines, index)
        if header is None:
            index += 1
            continue
        kind, inline = header
        free_end = min(free_end, index)
        body, index = _google_body(lines, index + 1)
        if kind == "params":
            for head, rest in _entries(body):
                name, type_text, first = _google_entry(head)
                params.append(_param(name, _join([first, *rest]), type_text))
        elif kind in ("returns", "yields"):
            text = _strip_return_type(_join([inline, *(line.text for line in body)]))
            if text:
                (returns if kind == "returns" else yields).append(text)
        elif kind == "raises":
            for head, rest in _entries(body):
                colon = head.find(":")
                name, first = (head, "") if colon < 0 else (head[:colon], head[colon + 1 :])
                raises.append((name.strip(), _join([first, *rest])))
    return _Sections(free_end, params, "\n\n".join(returns or yields) or None, raises)


# --------------------------------------------------------------------------------------------
# NumPy


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


def _numpy_header(lines: Sequence[_Line], index: int, *, known_only: bool) -> str | None:
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


def _parse_numpy(lines: Sequence[_Line]) -> _Sections:
    headers: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        kind = _numpy_header(lines, index, known_only=False)
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
        entries = _entries(lines[start + 2 : end])
        if kind == "params":
            for head, rest in entries:
                description = _join(rest)
                colon = head.find(":")
                names, type_text = (head, None) if colon < 0 else (head[:colon], head[colon + 1 :])
                params.extend(
                    _param(name, description, type_text and type_text.strip())
                    for name in _numpy_names(names)
                )
        elif kind in ("returns", "yields"):
            for head, rest in entries:
                (returns if kind == "returns" else yields).append(_join(rest) or head)
        elif kind == "raises":
            raises.extend((head, _join(rest)) for head, rest in entries)
    free_end = headers[0][0] if headers else len(lines)
    return _Sections(free_end, params, "\n\n".join(returns or yields) or None, raises)


# --------------------------------------------------------------------------------------------
# Sphinx


_FIELD: Final = re.compile(r":([A-Za-z_][\w-]*)(\s[^:]*)?:(\s.*)?")
_SPHINX_PARAM: Final = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})
_SPHINX_RAISES: Final = frozenset({"raises", "raise", "except", "exception"})
_SPHINX_FIELDS: Final = _SPHINX_PARAM | _SPHINX_RAISES | {"type", "returns", "return", "rtype"}


def _field(line: _Line) -> re.Match[str] | None:
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


def _parse_sphinx(lines: Sequence[_Line]) -> _Sections:
    free_end = len(lines)
    params: list[_SphinxParam] = []
    by_name: dict[str, _SphinxParam] = {}
    returns: list[str] = []
    yields: list[str] = []
    rtypes: list[str] = []
    raises: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        match = _field(lines[index])
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
                and (_field(line) is not None or (not to_field and not lines[index - 1].text))
            ):
                break
            body.append(line.text)
            index += 1
        kind = match.group(1).lower()
        argument = (match.group(2) or "").strip()
        text = _join(body)
        if kind in _SPHINX_PARAM:
            words = argument.split()
            stars, name = _split_stars(words[-1] if words else "")
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
            stars, name = _split_stars(argument)
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
    return _Sections(
        free_end,
        [DocParam(p.name, p.description, p.type, p.stars) for p in params],
        "\n\n".join(returns or yields or rtypes) or None,
        raises,
    )


# --------------------------------------------------------------------------------------------
# Detection


def _detect(lines: Sequence[_Line]) -> ParsedStyle:
    for line in lines:
        match = _field(line)
        if match is not None and match.group(1).lower() in _SPHINX_FIELDS:
            return "sphinx"
    if any(_numpy_header(lines, index, known_only=True) for index in range(len(lines))):
        return "numpy"
    if any(_google_header(lines, index) for index in range(len(lines))):
        return "google"
    return "plain"


__all__ = [
    "DocParam",
    "Docstring",
    "DocstringStyle",
    "ParsedStyle",
    "check_documented",
    "parse_docstring",
]
