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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, final

from ferrotool._schema.doc_google import google_header, parse_google
from ferrotool._schema.doc_lines import (
    DocParam,
    Line,
    Sections,
    free_text,
    split_lines,
    split_stars,
)
from ferrotool._schema.doc_numpy import numpy_header, parse_numpy
from ferrotool._schema.doc_sphinx import SPHINX_FIELDS, parse_sphinx, sphinx_field

ParsedStyle = Literal["google", "numpy", "sphinx", "plain"]
"""The style a docstring was read as."""

DocstringStyle = Literal["auto", "google", "numpy", "sphinx", "plain"]
"""How to read a docstring: ``"auto"`` detects the style."""
"""The docstring conventions `parse_docstring` understands; ``plain`` has no sections."""

_STYLES: Final = frozenset({"google", "numpy", "sphinx", "plain", "auto"})


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
        key = split_stars(name)[1]
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
    lines = split_lines(doc)
    chosen: ParsedStyle = _detect(lines) if style == "auto" else style
    if chosen == "google":
        sections = parse_google(lines)
    elif chosen == "numpy":
        sections = parse_numpy(lines)
    elif chosen == "sphinx":
        sections = parse_sphinx(lines)
    else:
        sections = Sections(len(lines), [], None, [])
    summary, description = free_text(lines[: sections.free_end])
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
# Detection


def _detect(lines: Sequence[Line]) -> ParsedStyle:
    for line in lines:
        match = sphinx_field(line)
        if match is not None and match.group(1).lower() in SPHINX_FIELDS:
            return "sphinx"
    if any(numpy_header(lines, index, known_only=True) for index in range(len(lines))):
        return "numpy"
    if any(google_header(lines, index) for index in range(len(lines))):
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
