"""Docstring parsing: Google, NumPy and Sphinx styles, detection, and never raising."""

from __future__ import annotations

import dataclasses
import inspect
import textwrap
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ferrotool._schema import docstrings as _docstrings
from ferrotool._schema.docstrings import (
    DocParam,
    Docstring,
    check_documented,
    parse_docstring,
)


def parse(text: str, **kwargs: object) -> Docstring:
    return parse_docstring(textwrap.dedent(text), **kwargs)  # type: ignore[arg-type]


def params(doc: Docstring) -> list[tuple[str, str, str | None, int]]:
    return [(p.name, p.description, p.type, p.stars) for p in doc.params]


EMPTY = Docstring(summary=None, description=None, params=(), returns=None, raises=(), style="plain")


# -- Empty and plain ---------------------------------------------------------------------------


@pytest.mark.parametrize("doc", [None, "", "   ", "\n\n", " \t\r\n  \r\n"])
def test_missing_or_blank_docstring_is_all_none_plain(doc: str | None) -> None:
    assert parse_docstring(doc) == EMPTY
    assert parse_docstring(doc, style="google") == EMPTY


def test_plain_summary_and_description() -> None:
    doc = parse(
        """\
        Get the weather
        for a city.

        Uses the public API;
          indented line kept.


        Last paragraph.
        """
    )
    assert doc.style == "plain"
    assert doc.summary == "Get the weather for a city."
    assert doc.description == (
        "Get the weather for a city.\n\nUses the public API;\n  indented line kept.\n\n"
        "Last paragraph."
    )
    assert doc.params == ()
    assert doc.returns is None
    assert doc.raises == ()


def test_section_word_in_prose_is_not_a_header() -> None:
    doc = parse_docstring("Returns the weather for a city.\n\nRaises an alarm when it rains.")
    assert doc.style == "plain"
    assert doc.summary == "Returns the weather for a city."
    assert doc.returns is None
    assert doc.raises == ()


def test_inline_returns_on_first_line_is_the_summary() -> None:
    doc = parse_docstring("Returns: the weather for a city.")
    assert doc.style == "plain"
    assert doc.summary == "Returns: the weather for a city."
    assert doc.returns is None


def test_prose_with_colon_is_not_a_header() -> None:
    doc = parse_docstring("Get the weather.\n\nNote: the city must exist.\nExample::\n\n  f()")
    assert doc.style == "plain"
    assert doc.description is not None
    assert "Note: the city must exist." in doc.description
    assert "Example::" in doc.description


def test_unicode() -> None:
    doc = parse(
        """\
        Météo pour une ville — ☀️.

        Args:
            ville (str): Le nom de la ville, p. ex. « Zürich ».
            größe: 日本語の説明
                続き。
        """
    )
    assert doc.summary == "Météo pour une ville — ☀️."
    assert params(doc) == [
        ("ville", "Le nom de la ville, p. ex. « Zürich ».", "str", 0),
        ("größe", "日本語の説明 続き。", None, 0),
    ]


# -- Google ------------------------------------------------------------------------------------


def get_weather(city: str, days: int = 1, *args: str, unit: str = "c", **kwargs: str) -> str:
    """Get the weather forecast for a city.

    The forecast comes from the public API
    and is cached.

    Args:
        city (str): The city's name,
            in English.

            Or its IATA code.
        days (int, optional): How many days. Defaults to 1.
        *args: Extra words.
        unit: The unit:
            ``c`` or ``f``.
        **kwargs (str): Passed on.

    Returns:
        str: The forecast, one line a day.

    Raises:
        ValueError: If the city is unknown.
        TimeoutError: If the API is
            too slow.
    """
    return city


def test_google_real_function() -> None:
    doc = parse_docstring(get_weather.__doc__)
    assert doc.style == "google"
    assert doc.summary == "Get the weather forecast for a city."
    assert doc.description == (
        "Get the weather forecast for a city.\n\nThe forecast comes from the public API\n"
        "and is cached."
    )
    assert params(doc) == [
        ("city", "The city's name, in English.\n\nOr its IATA code.", "str", 0),
        ("days", "How many days. Defaults to 1.", "int, optional", 0),
        ("args", "Extra words.", None, 1),
        ("unit", "The unit: ``c`` or ``f``.", None, 0),
        ("kwargs", "Passed on.", "str", 2),
    ]
    assert doc.returns == "The forecast, one line a day."
    assert doc.raises == (
        ("ValueError", "If the city is unknown."),
        ("TimeoutError", "If the API is too slow."),
    )
    signature = list(inspect.signature(get_weather).parameters)
    assert check_documented(doc, signature) == ((), ())


def test_google_raw_and_cleaned_docstrings_agree() -> None:
    raw = get_weather.__doc__
    assert raw is not None
    assert parse_docstring(raw) == parse_docstring(inspect.cleandoc(raw))
    assert parse_docstring(raw) == parse_docstring(inspect.getdoc(get_weather))


def test_google_description_on_the_next_line() -> None:
    doc = parse(
        """\
        Summary.

        Args:
            city:
                The city.
            days (int):
                How many
                days.
        """
    )
    assert params(doc) == [("city", "The city.", None, 0), ("days", "How many days.", "int", 0)]


def test_google_name_alone_is_an_entry() -> None:
    doc = parse(
        """\
        Summary.

        Args:
            city
            days (int)
            unit: The unit.
        """
    )
    assert params(doc) == [
        ("city", "", None, 0),
        ("days", "", "int", 0),
        ("unit", "The unit.", None, 0),
    ]


def test_google_lazy_wrap_at_entry_indentation_is_reported_not_dropped() -> None:
    doc = parse(
        """\
        Summary.

        Args:
            city: The name of the
            city in English.
        """
    )
    assert params(doc) == [("city", "The name of the", None, 0), ("city in English.", "", None, 0)]
    assert check_documented(doc, ["city"]) == (("city in English.",), ())


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("x -- the value", ("x -- the value", "", None, 0)),
        ("x the value", ("x the value", "", None, 0)),
        ("the x value: something", ("the x value", "something", None, 0)),
        ("x (int: broken", ("x (int", "broken", None, 0)),
        ("x(int): tight", ("x", "tight", "int", 0)),
        ("x (int):tight", ("x", "tight", "int", 0)),
        ("x (Callable[[int], str]): f", ("x", "f", "Callable[[int], str]", 0)),
        ("x (dict(a, b)): nested", ("x", "nested", "dict(a, b)", 0)),
        ("x (Literal['a:b']): colon in type", ("x", "colon in type", "Literal['a:b']", 0)),
        ("x (): empty type", ("x", "empty type", None, 0)),
        ("x: see https://example.com: ok", ("x", "see https://example.com: ok", None, 0)),
        (r"\*args: escaped", ("args", "escaped", None, 1)),
        (r"\*\*kwargs: escaped", ("kwargs", "escaped", None, 2)),
        ("**kwargs", ("kwargs", "", None, 2)),
    ],
)
def test_google_entry_shapes(line: str, expected: tuple[str, str, str | None, int]) -> None:
    doc = parse_docstring(f"Summary.\n\nArgs:\n    {line}\n")
    assert params(doc) == [expected]


@pytest.mark.parametrize("indent", ["  ", "    ", "        ", "\t"])
def test_google_any_consistent_indentation(indent: str) -> None:
    text = f"Summary.\n\nArgs:\n{indent}a: A\n{indent}  more.\n{indent}b (int): B.\n"
    assert params(parse_docstring(text)) == [("a", "A more.", None, 0), ("b", "B.", "int", 0)]


def test_google_mixed_tabs_and_spaces() -> None:
    text = "Summary.\n\nArgs:\n    a: A\n\tcontinued.\n    b: B\n  \t  still b.\n"
    assert params(parse_docstring(text)) == [
        ("a", "A continued.", None, 0),
        ("b", "B still b.", None, 0),
    ]


def test_google_windows_and_old_mac_newlines_and_trailing_whitespace() -> None:
    lines = ["Summary.  ", "", "Args:\t", "    a: A  ", "        more. \t", "    b: B", ""]
    for newline in ("\r\n", "\r"):
        doc = parse_docstring(newline.join(lines))
        assert doc.style == "google"
        assert doc.summary == "Summary."
        assert params(doc) == [("a", "A more.", None, 0), ("b", "B", None, 0)]


def test_google_header_on_the_first_line_of_a_raw_docstring() -> None:
    # inspect.cleandoc dedents everything after a first-line header to the header's column.
    raw = "Args:\n        a: A\n            more.\n        b: B\n    "
    doc = parse_docstring(raw)
    assert doc.summary is None
    assert doc.description is None
    assert params(doc) == [("a", "A more.", None, 0), ("b", "B", None, 0)]
    assert parse_docstring("Returns:\n        The weather.\n    ").returns == "The weather."


def test_google_first_line_header_of_a_raw_docstring_runs_to_the_next_header() -> None:
    raw = (
        "Args:\n\n        a: A\n            more.\n\n        b: B\n\n    Returns:\n        R.\n    "
    )
    doc = parse_docstring(raw)
    assert params(doc) == [("a", "A more.", None, 0), ("b", "B", None, 0)]
    assert doc.returns == "R."


def test_google_unindented_body_is_taken_not_dropped() -> None:
    doc = parse_docstring("Summary.\n\nArgs:\n\na: A\n  more.\nb: B\n\nProse after.\nc: C\n")
    assert doc.description == "Summary."
    assert params(doc) == [("a", "A more.", None, 0), ("b", "B", None, 0)]


def test_large_inputs_parse_in_linear_time() -> None:
    entries = "".join(f"    p{i} (int): The {i}.\n" for i in range(20_000))
    doc = parse_docstring("Summary.\n\nArgs:\n" + entries)
    assert len(doc.params) == 20_000
    for text in ("(" * 100_000, "Args:\n" + "    x (" * 20_000, ":a " * 50_000 + ":"):
        for style in STYLES:
            check_shape(parse_docstring(text, style=style))  # type: ignore[arg-type]


def test_google_blank_lines_between_entries_and_paragraphs() -> None:
    doc = parse(
        """\
        Summary.

        Args:
            a: First.

                Second paragraph.


                Third.

            b: B.
        """
    )
    assert params(doc) == [
        ("a", "First.\n\nSecond paragraph.\n\nThird.", None, 0),
        ("b", "B.", None, 0),
    ]


def test_google_sections_concatenate_and_free_text_sections_are_excluded() -> None:
    doc = parse(
        """\
        Summary.

        Details.

        Args:
            a: A.

        Example:
            >>> f(1)

        Keyword Args:
            b: B.

        Other Parameters:
            c: C.

        Attributes:
            d: Not a parameter.

        Note:
            A note.

        Trailing text after the sections.
        """
    )
    assert doc.description == "Summary.\n\nDetails."
    assert [p.name for p in doc.params] == ["a", "b", "c"]


def test_google_section_without_blank_line_before_it() -> None:
    doc = parse(
        """\
        Summary.
        Args:
            a: A.
        Returns:
            Stuff.
        """
    )
    assert doc.summary == "Summary."
    assert params(doc) == [("a", "A.", None, 0)]
    assert doc.returns == "Stuff."


@pytest.mark.parametrize("header", ["Args:", "Arguments:", "Parameters:", "Params:", "ARGS :"])
def test_google_parameter_headers(header: str) -> None:
    doc = parse_docstring(f"Summary.\n\n{header}\n    a: A.\n")
    assert doc.style == "google"
    assert params(doc) == [("a", "A.", None, 0)]


def test_google_header_indented_under_prose_is_not_a_section() -> None:
    doc = parse_docstring("Summary.\n\n  Some text\n    Args:\n      a: A.\n")
    # After cleandoc the header is still deeper than the base indentation.
    assert doc.style == "plain"
    assert doc.params == ()


def test_google_empty_section_and_header_only() -> None:
    doc = parse_docstring("Args:")
    assert doc == Docstring(None, None, (), None, (), "google")
    doc = parse_docstring("Summary.\n\nArgs:\n\nReturns:\n")
    assert doc.params == ()
    assert doc.returns is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("    str: The weather.", "The weather."),
        ("    dict[str, int]: Counts.", "Counts."),
        ("    str | None: Maybe.", "Maybe."),
        ("    The weather: sunny or not.", "The weather: sunny or not."),
        ("    The weather\n    for the city.", "The weather for the city."),
        ("    str", "str"),
        ("    First.\n\n    Second.", "First.\n\nSecond."),
    ],
)
def test_google_returns(body: str, expected: str) -> None:
    assert parse_docstring(f"Summary.\n\nReturns:\n{body}\n").returns == expected


def test_google_inline_returns_and_yields() -> None:
    doc = parse_docstring("Summary.\n\nReturns: The weather\n    for a city.\n")
    assert doc.style == "google"
    assert doc.description == "Summary."
    assert doc.returns == "The weather for a city."
    assert parse_docstring("Summary.\n\nYields:\n    Lines.\n").returns == "Lines."
    both = parse_docstring("Summary.\n\nYields:\n    Lines.\nReturns:\n    Count.\n")
    assert both.returns == "Count."


def test_google_raises_without_colon() -> None:
    doc = parse_docstring("Summary.\n\nRaises:\n    ValueError\n        When bad.\n    KeyError\n")
    assert doc.raises == (("ValueError", "When bad."), ("KeyError", ""))


def test_google_explicit_style_on_other_docstrings() -> None:
    numpy = "Summary.\n\nParameters\n----------\nx : int\n    X.\n"
    doc = parse_docstring(numpy, style="google")
    assert doc.style == "google"
    assert doc.params == ()
    assert doc.description == "Summary.\n\nParameters\n----------\nx : int\n    X."


# -- NumPy -------------------------------------------------------------------------------------


def numpy_weather(city: str, days: int, *args: str, **kwargs: str) -> str:
    """
    Get the weather forecast for a city.

    Longer text.

    Parameters
    ----------
    city : str
        The city's name,
        in English.

        Or its IATA code.
    days : int, optional
        How many days.
    *args
        Extra words.
    **kwargs : dict
        Passed on.

    Returns
    -------
    str
        The forecast.

    Raises
    ------
    ValueError
        If the city is unknown.
    TimeoutError

    Examples
    --------
    >>> numpy_weather("Paris", 1)
    """
    return city


def test_numpy_real_function() -> None:
    doc = parse_docstring(numpy_weather.__doc__)
    assert doc.style == "numpy"
    assert doc.summary == "Get the weather forecast for a city."
    assert doc.description == "Get the weather forecast for a city.\n\nLonger text."
    assert params(doc) == [
        ("city", "The city's name, in English.\n\nOr its IATA code.", "str", 0),
        ("days", "How many days.", "int, optional", 0),
        ("args", "Extra words.", None, 1),
        ("kwargs", "Passed on.", "dict", 2),
    ]
    assert doc.returns == "The forecast."
    assert doc.raises == (("ValueError", "If the city is unknown."), ("TimeoutError", ""))
    assert check_documented(doc, list(inspect.signature(numpy_weather).parameters)) == ((), ())
    assert doc == parse_docstring(inspect.getdoc(numpy_weather))


def test_numpy_shared_entry_and_name_alone() -> None:
    doc = parse(
        """\
        Summary.

        Parameters
        ----------
        x, y : float
            Coordinates.
        z
        flag:bool
            Tight colon.
        """
    )
    assert params(doc) == [
        ("x", "Coordinates.", "float", 0),
        ("y", "Coordinates.", "float", 0),
        ("z", "", None, 0),
        ("flag", "Tight colon.", "bool", 0),
    ]


def test_numpy_other_parameters_and_keyword_arguments() -> None:
    doc = parse(
        """\
        Summary.

        Parameters
        ----------
        a : int
            A.
        Other Parameters
        ----------------
        b : int
            B.
        Keyword Arguments
        -----------------
        c
            C.
        """
    )
    assert [p.name for p in doc.params] == ["a", "b", "c"]


def test_numpy_indented_entries() -> None:
    doc = parse_docstring(
        "Summary.\n\nParameters\n----------\n  a : int\n      A.\n  b\n      B.\n"
    )
    assert params(doc) == [("a", "A.", "int", 0), ("b", "B.", None, 0)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("str\n    The forecast.", "The forecast."),
        ("forecast : str\n    The forecast.", "The forecast."),
        ("str", "str"),
        ("a : int\n    First.\nb : str\n    Second.", "First.\n\nSecond."),
    ],
)
def test_numpy_returns(body: str, expected: str) -> None:
    doc = parse_docstring(f"Summary.\n\nReturns\n-------\n{body}\n")
    assert doc.returns == expected


def test_numpy_header_needs_its_dashes() -> None:
    doc = parse_docstring("Returns the weather.\n\nParameters\nx : int\n    X.\n")
    assert doc.style == "plain"
    assert doc.params == ()
    doc = parse_docstring("Summary.\n\nParameters:\n---\nx : int\n")
    assert doc.style == "numpy"
    assert params(doc) == [("x", "", "int", 0)]


def test_numpy_unknown_dashed_header_ends_the_description() -> None:
    doc = parse_docstring(
        "Summary.\n\nMy Section\n----------\nText.\n\nParameters\n----------\nx\n"
    )
    assert doc.description == "Summary."
    assert [p.name for p in doc.params] == ["x"]
    assert parse_docstring("Summary.\n\nMy Section\n----------\nText.\n").style == "plain"


def test_numpy_windows_newlines_and_tabs() -> None:
    text = "Summary.\r\n\r\nParameters\r\n----------\r\nx : int \r\n\tThe x.\r\n\tMore.\r\n"
    assert params(parse_docstring(text)) == [("x", "The x. More.", "int", 0)]


def test_numpy_description_line_of_dashes_is_not_an_underline() -> None:
    doc = parse_docstring("Summary.\n\nParameters\n----------\nx : int\n    ---\ny\n")
    assert params(doc) == [("x", "---", "int", 0), ("y", "", None, 0)]


# -- Sphinx ------------------------------------------------------------------------------------


def sphinx_weather(city: str, days: int, *args: str, **kwargs: str) -> str:
    """Get the weather forecast for a city.

    Longer text.

    :param city: The city's name,
        in English.

        Or its IATA code.
    :type city: str
    :param int days: How many days.
    :param \\*args: Extra words.
    :parameter \\*\\*kwargs: Passed on.
    :returns: The forecast.
    :rtype: str
    :raises ValueError: If the city is unknown.
    :raises: Anything else.
    """
    return city


def test_sphinx_real_function() -> None:
    doc = parse_docstring(sphinx_weather.__doc__)
    assert doc.style == "sphinx"
    assert doc.description == "Get the weather forecast for a city.\n\nLonger text."
    assert params(doc) == [
        ("city", "The city's name, in English.\n\nOr its IATA code.", "str", 0),
        ("days", "How many days.", "int", 0),
        ("args", "Extra words.", None, 1),
        ("kwargs", "Passed on.", None, 2),
    ]
    assert doc.returns == "The forecast."
    assert doc.raises == (("ValueError", "If the city is unknown."), ("", "Anything else."))
    assert check_documented(doc, list(inspect.signature(sphinx_weather).parameters)) == ((), ())


@pytest.mark.parametrize("field", ["param", "parameter", "arg", "argument", "key", "keyword"])
def test_sphinx_parameter_fields(field: str) -> None:
    doc = parse_docstring(f"Summary.\n\n:{field} x: The x.\n")
    assert doc.style == "sphinx"
    assert params(doc) == [("x", "The x.", None, 0)]


def test_sphinx_type_before_param_and_type_alone() -> None:
    doc = parse(
        """\
        :type a: list of str
        :param a: A.
        :param b: B.
        :type c: int
        :type b: dict[str, int]
        :param list of str d: D.
        """
    )
    assert params(doc) == [
        ("a", "A.", "list of str", 0),
        ("b", "B.", "dict[str, int]", 0),
        ("c", "", "int", 0),
        ("d", "D.", "list of str", 0),
    ]
    assert check_documented(doc, ["a", "b", "d"]) == (("c",), ())


def test_sphinx_body_on_following_lines_and_lazy_continuation() -> None:
    doc = parse(
        """\
        Summary.

        :param a:
            The a.
        :param b: The b
        continued lazily.
        :return: Stuff.
        """
    )
    assert params(doc) == [("a", "The a.", None, 0), ("b", "The b continued lazily.", None, 0)]
    assert doc.returns == "Stuff."


def test_sphinx_rtype_when_no_returns() -> None:
    assert parse_docstring(":param a: A.\n:rtype: int\n").returns == "int"


def test_sphinx_roles_and_unknown_fields() -> None:
    doc = parse_docstring(":class:`Weather` for a city.\n\n:meta private:\n:param a: A.\n")
    assert doc.style == "sphinx"
    assert doc.summary == ":class:`Weather` for a city."
    assert params(doc) == [("a", "A.", None, 0)]
    assert parse_docstring(":class:`Weather` for a city.").style == "plain"


def test_sphinx_raw_indented_docstring() -> None:
    raw = "Summary.\n\n    :param a: The a\n        more.\n    :param b: B.\n    "
    assert params(parse_docstring(raw)) == [("a", "The a more.", None, 0), ("b", "B.", None, 0)]
    raw = ":param a: The a\n        more.\n    "
    assert params(parse_docstring(raw)) == [("a", "The a more.", None, 0)]


def test_sphinx_free_text_after_fields_is_excluded() -> None:
    doc = parse_docstring("Summary.\n\n:param a: A.\n\nAfterwards.\n")
    assert doc.description == "Summary."
    assert params(doc) == [("a", "A.", None, 0)]


# -- Detection and forced styles ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "style"),
    [
        ("Summary.", "plain"),
        ("Summary.\n\nArgs:\n    a: A.", "google"),
        ("Summary.\n\nExamples:\n    >>> f()", "google"),
        ("Summary.\n\nSee Also:\n    g", "google"),
        ("Summary.\n\nParameters\n----------\na : int", "numpy"),
        ("Summary.\n\nNotes\n-----\nText.", "numpy"),
        ("Summary.\n\n:returns: A.", "sphinx"),
        ("Summary.\n\n:raises ValueError: A.", "sphinx"),
        ("Summary.\n\n:rtype: int", "sphinx"),
        # Precedence: Sphinx, then NumPy, then Google.
        ("Args:\n    a: A.\n\n:param b: B.", "sphinx"),
        ("Args:\n    a: A.\n\nParameters\n----------\nb", "numpy"),
    ],
)
def test_detection(text: str, style: str) -> None:
    assert parse_docstring(text).style == style


def test_forced_plain_keeps_everything_as_text() -> None:
    text = "Summary.\n\nArgs:\n    a: A."
    doc = parse_docstring(text, style="plain")
    assert doc.style == "plain"
    assert doc.params == ()
    assert doc.description == text


def test_forced_sphinx_on_a_google_docstring() -> None:
    doc = parse_docstring("Summary.\n\nArgs:\n    a: A.", style="sphinx")
    assert doc.style == "sphinx"
    assert doc.params == ()


def test_unknown_style_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown docstring style"):
        parse_docstring("x", style="epytext")  # type: ignore[arg-type]


# -- API ---------------------------------------------------------------------------------------


def test_values_are_frozen_and_slotted() -> None:
    doc = parse_docstring(get_weather.__doc__)
    with pytest.raises(dataclasses.FrozenInstanceError):
        doc.summary = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        doc.params[0].name = "x"  # type: ignore[misc]
    assert not hasattr(doc, "__dict__")
    assert not hasattr(doc.params[0], "__dict__")
    assert DocParam("a", "b", None).stars == 0


def test_param_lookup_and_descriptions() -> None:
    doc = parse_docstring("S.\n\nArgs:\n    a: First.\n    *rest: R.\n    a: Second.\n")
    assert doc.param("a") == DocParam("a", "First.", None)
    assert doc.param("*rest") == doc.param("rest") == DocParam("rest", "R.", None, 1)
    assert doc.param("missing") is None
    descriptions = doc.param_descriptions
    assert descriptions == {"a": "First.", "rest": "R."}
    descriptions["a"] = "changed"
    assert doc.param_descriptions["a"] == "First."


def test_check_documented() -> None:
    doc = parse_docstring("S.\n\nArgs:\n    b: B.\n    x: X.\n    *args: A.\n    b: again\n")
    assert check_documented(doc, ["a", "b", "c"]) == (("x", "args"), ("a", "c"))
    assert check_documented(doc, ("b", "x", "args")) == ((), ())
    assert check_documented(doc, ["b", "x", "b"]) == (("args",), ())
    assert check_documented(EMPTY, ["a"]) == ((), ("a",))
    with pytest.raises(TypeError):
        check_documented(doc, "bx")


@pytest.mark.parametrize(
    "obj",
    [
        _docstrings.parse_docstring,
        _docstrings.check_documented,
        _docstrings.Docstring.param,
    ],
)
def test_own_docstrings_document_every_parameter(obj: object) -> None:
    doc = parse_docstring(getattr(obj, "__doc__", None))
    assert doc.style == "google"
    assert doc.summary
    names = [n for n in inspect.signature(obj).parameters if n != "self"]  # type: ignore[arg-type]
    assert check_documented(doc, names) == ((), ())
    assert all(p.description for p in doc.params)


def test_own_class_docstrings_document_every_field() -> None:
    for cls in (DocParam, Docstring):
        doc = parse_docstring(cls.__doc__)
        assert doc.summary
        assert doc.description == doc.summary
        fields = [f.name for f in dataclasses.fields(cls)]
        # Attributes sections are not parameters; parse the section as one to check it.
        assert cls.__doc__ is not None
        as_args = parse_docstring(cls.__doc__.replace("Attributes:", "Args:"))
        assert check_documented(as_args, fields) == ((), ())


# -- Never raises ------------------------------------------------------------------------------

STYLES = ("auto", "google", "numpy", "sphinx", "plain")

FRAGMENTS = st.sampled_from(
    [
        "\n",
        "\r\n",
        "\r",
        " ",
        "    ",
        "\t",
        ":",
        "*",
        "**",
        "\\*",
        "(",
        ")",
        "[",
        "]",
        ",",
        "---",
        "-",
        "x",
        "name",
        "int",
        "Args:",
        "Returns:",
        "Raises:",
        "Yields:",
        "Example:",
        "Parameters",
        "Returns",
        "Raises",
        "Notes",
        ":param",
        ":type",
        ":returns:",
        ":rtype:",
        ":raises",
        ":class:`X`",
        "\u2028",
        "\x0c",
        "\x85",
        "é",
        "日本",
    ]
)


def check_shape(doc: Docstring) -> None:
    assert doc.style in ("google", "numpy", "sphinx", "plain")
    assert all(p.stars in (0, 1, 2) and "\r" not in p.description for p in doc.params)
    assert all(name == name.strip() for name, _ in doc.raises)
    if doc.summary is not None:
        assert doc.description is not None
        assert doc.description.startswith(doc.summary)
    else:
        assert doc.description is None


@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    for style in STYLES:
        check_shape(parse_docstring(text, style=style))  # type: ignore[arg-type]


@given(st.lists(FRAGMENTS | st.text(max_size=3), max_size=60).map("".join))
def test_never_raises_on_docstring_like_text(text: str) -> None:
    for style in STYLES:
        doc = parse_docstring(text, style=style)  # type: ignore[arg-type]
        check_shape(doc)
        assert parse_docstring(text, style=style) == doc  # type: ignore[arg-type]
    names = [p.name for p in parse_docstring(text).params]
    assert check_documented(parse_docstring(text), names)[0] == ()


# -- Round trips: structured docstrings parse back to exactly what they document ---------------

LETTERS = st.characters(categories=("L", "N"))
IDENT = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
    st.text(st.characters(categories=("Ll", "Lu", "Lo")), min_size=1, max_size=6),
).filter(str.isidentifier)
WORD = st.text(LETTERS | st.sampled_from(".,;:!?()'-/`"), min_size=1, max_size=8)
PLAIN_WORD = st.text(LETTERS, min_size=1, max_size=8)
LINE = st.lists(WORD, min_size=1, max_size=5)
PARAGRAPH = st.lists(LINE, min_size=1, max_size=3)
DESCRIPTION = st.lists(PARAGRAPH, max_size=3)
TYPE = st.sampled_from(
    [
        "int",
        "str",
        "int, optional",
        "dict[str, int]",
        "list of str",
        "Callable[[int], str]",
        "Literal['a', 'b']",
        "str | None",
        "dict(str, int)",
    ]
)


@dataclass(frozen=True)
class Entry:
    names: tuple[str, ...]  # NumPy may document several names in one entry
    stars: int
    type: str | None
    description: list[list[list[str]]]  # paragraphs of lines of words

    def expected(self) -> list[DocParam]:
        text = "\n\n".join(" ".join(w for line in para for w in line) for para in self.description)
        return [DocParam(name, text, self.type, self.stars) for name in self.names]


@st.composite
def entries(draw: st.DrawFn, *, groups: bool = False) -> list[Entry]:
    names = draw(st.lists(IDENT, max_size=5, unique=True))
    result: list[Entry] = []
    index = 0
    while index < len(names):
        size = draw(st.integers(1, 2)) if groups else 1
        group = tuple(names[index : index + size])
        index += size
        stars = 0 if len(group) > 1 else draw(st.sampled_from([0, 0, 1, 2]))
        result.append(Entry(group, stars, draw(st.none() | TYPE), draw(DESCRIPTION)))
    return result


INDENT = st.sampled_from(["  ", "    ", "        ", "\t", " \t"])
DEEPER = st.sampled_from([" ", "  ", "    ", "\t"])


def star_text(stars: int, escaped: bool) -> str:
    return ("\\*" if escaped else "*") * stars


@dataclass(frozen=True)
class Built:
    text: str
    expected: list[DocParam]
    summary: str | None
    description: str | None
    returns: str | None
    raises: tuple[tuple[str, str], ...]


@st.composite
def free_text(draw: st.DrawFn) -> tuple[list[str], str | None, str | None]:
    """Summary and free paragraphs (plain words, so they cannot look like headers)."""
    paragraphs = draw(
        st.lists(
            st.lists(st.lists(PLAIN_WORD, min_size=1, max_size=4), min_size=1, max_size=3),
            max_size=3,
        )
    )
    if not paragraphs:
        return [], None, None
    summary = " ".join(w for line in paragraphs[0] for w in line)
    rest = ["\n".join(" ".join(line) for line in para) for para in paragraphs[1:]]
    lines: list[str] = []
    for para in paragraphs:
        lines.extend(" ".join(line) for line in para)
        lines.append("")
    return lines, summary, "\n\n".join([summary, *rest])


def description_lines(
    draw: st.DrawFn, description: list[list[list[str]]], indent: str
) -> list[str]:
    lines: list[str] = []
    for number, para in enumerate(description):
        if number:
            lines.append(draw(st.sampled_from(["", indent, "  "])))
        lines.extend(indent + " ".join(line) for line in para)
    return lines


def finish(draw: st.DrawFn, lines: list[str], has_summary: bool) -> str:
    """Randomly: trailing whitespace, raw ``__doc__`` indentation, Windows newlines."""
    lines = [line + draw(st.sampled_from(["", "", " ", "\t", "  "])) for line in lines]
    if has_summary and draw(st.booleans()):
        base = draw(st.sampled_from(["    ", "        ", "\t"]))
        lines = [lines[0], *(base + line if line.strip() else line for line in lines[1:])]
        if draw(st.booleans()):
            lines = ["", base + lines[0], *lines[1:], base]
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    return newline.join(lines)


@st.composite
def google_docstrings(draw: st.DrawFn) -> Built:
    lines, summary, description = draw(free_text())
    documented = draw(entries())
    split = draw(st.integers(0, len(documented)))
    for section, header in (
        (documented[:split], "Args:"),
        (documented[split:], draw(st.sampled_from(["Keyword Args:", "Other Parameters:"]))),
    ):
        if not section and header != "Args:":
            continue
        lines.append(header)
        indent = draw(INDENT)
        deeper = indent + draw(DEEPER)
        for entry in section:
            (name,) = entry.names
            head = indent + star_text(entry.stars, draw(st.booleans())) + name
            if entry.type is not None:
                head += draw(st.sampled_from([" ", ""])) + f"({entry.type})"
            body = description_lines(draw, entry.description, deeper)
            inline: bool = draw(st.booleans())
            if body and inline:
                lines.append(f"{head}: {body[0].strip()}")
                lines.extend(body[1:])
            else:
                colon: bool = draw(st.booleans())
                lines.append(head + (":" if body or colon else ""))
                lines.extend(body)
            if draw(st.booleans()):
                lines.append("")
        lines.append("")
    returns = draw(st.none() | st.lists(PLAIN_WORD, min_size=1, max_size=5).map(" ".join))
    if returns is not None:
        lines += ["Returns:", "    " + returns, ""]
    raised = draw(
        st.lists(st.tuples(IDENT, st.lists(PLAIN_WORD, max_size=4).map(" ".join)), max_size=3)
    )
    if raised:
        lines.append("Raises:")
        lines += [f"    {name}: {text}" for name, text in raised]
    expected = [p for entry in documented for p in entry.expected()]
    text = finish(draw, lines, summary is not None)
    return Built(text, expected, summary, description, returns, tuple(raised))


@st.composite
def numpy_docstrings(draw: st.DrawFn) -> Built:
    lines, summary, description = draw(free_text())
    documented = draw(entries(groups=True))
    lines += ["Parameters", "-" * draw(st.integers(3, 12))]
    indent = draw(st.sampled_from(["", "", "  "]))
    deeper = indent + draw(DEEPER)
    for entry in documented:
        head = indent + ", ".join(star_text(entry.stars, False) + n for n in entry.names)
        if entry.type is not None:
            head += draw(st.sampled_from([" : ", ": ", " :"])) + entry.type
        lines.append(head)
        lines.extend(description_lines(draw, entry.description, deeper))
        if draw(st.booleans()):
            lines.append("")
    returns = draw(st.none() | st.lists(PLAIN_WORD, min_size=1, max_size=5).map(" ".join))
    if returns is not None:
        lines += ["", "Returns", "-------", "str", "    " + returns]
    raised = draw(
        st.lists(st.tuples(IDENT, st.lists(PLAIN_WORD, max_size=4).map(" ".join)), max_size=3)
    )
    if raised:
        lines += ["", "Raises", "------"]
        for name, text in raised:
            lines.append(name)
            if text:
                lines.append("    " + text)
    expected = [p for entry in documented for p in entry.expected()]
    text = finish(draw, lines, summary is not None)
    return Built(text, expected, summary, description, returns, tuple(raised))


@st.composite
def sphinx_docstrings(draw: st.DrawFn) -> Built:
    lines, summary, description = draw(free_text())
    documented = draw(entries())
    for entry in documented:
        (name,) = entry.names
        name = star_text(entry.stars, draw(st.booleans())) + name
        type_field = entry.type is not None and draw(st.booleans())
        inline_type = f"{entry.type} " if entry.type is not None and not type_field else ""
        field = draw(st.sampled_from(["param", "parameter", "arg", "key", "keyword"]))
        if type_field and draw(st.booleans()):
            lines.append(f":type {name}: {entry.type}")
            type_field = False
        body = description_lines(draw, entry.description, draw(INDENT))
        head = f":{field} {inline_type}{name}:"
        inline: bool = draw(st.booleans())
        if body and inline:
            lines.append(f"{head} {body[0].strip()}")
            lines.extend(body[1:])
        else:
            lines.append(head)
            lines.extend(body)
        if type_field:
            lines.append(f":type {name}: {entry.type}")
    returns = draw(st.none() | st.lists(PLAIN_WORD, min_size=1, max_size=5).map(" ".join))
    if returns is not None:
        lines.append(f":returns: {returns}")
        lines.append(":rtype: str")
    raised = draw(
        st.lists(st.tuples(IDENT, st.lists(PLAIN_WORD, max_size=4).map(" ".join)), max_size=3)
    )
    lines += [f":raises {name}: {text}" for name, text in raised]
    expected = [p for entry in documented for p in entry.expected()]
    text = finish(draw, lines, summary is not None)
    return Built(text, expected, summary, description, returns, tuple(raised))


def check_round_trip(built: Built, style: str) -> None:
    for requested in ("auto", style):
        doc = parse_docstring(built.text, style=requested)  # type: ignore[arg-type]
        if built.expected or built.returns or built.raises or style != "sphinx":
            assert doc.style == style
        assert list(doc.params) == built.expected
        assert doc.summary == built.summary
        assert doc.description == built.description
        assert doc.returns == built.returns
        assert doc.raises == built.raises
        names = [p.name for p in built.expected]
        assert check_documented(doc, names) == ((), ())


@given(google_docstrings())
def test_google_round_trip(built: Built) -> None:
    check_round_trip(built, "google")


@given(numpy_docstrings())
def test_numpy_round_trip(built: Built) -> None:
    check_round_trip(built, "numpy")


@given(sphinx_docstrings())
def test_sphinx_round_trip(built: Built) -> None:
    check_round_trip(built, "sphinx")
