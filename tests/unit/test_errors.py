"""The error tree and the warning tree, both in `ferrotool.errors`."""

from __future__ import annotations

import inspect
import warnings

import pytest

import ferrotool
import ferrotool.builtins
import ferrotool.providers
from ferrotool import errors
from ferrotool._definitions import formats
from ferrotool._tools import function
from ferrotool.builtins import _sandbox


def _classes(base: type) -> list[type]:
    return [
        value
        for _, value in inspect.getmembers(errors, inspect.isclass)
        if issubclass(value, base) and value.__module__ == errors.__name__
    ]


def test_every_exception_but_the_suspension_is_a_ferrotool_error() -> None:
    exceptions = {cls for cls in _classes(Exception) if not issubclass(cls, Warning)}
    outside = {cls for cls in exceptions if not issubclass(cls, errors.FerrotoolError)}
    assert outside == {errors.SuspendTool}


def test_every_warning_is_a_ferrotool_warning_of_its_builtin_category() -> None:
    found = set(_classes(Warning))
    assert found == {
        errors.FerrotoolWarning,
        errors.FerrotoolDeprecationWarning,
        errors.DocumentationWarning,
        errors.SandboxWarning,
        errors.StrictSchemaWarning,
        errors.StuckToolWarning,
    }
    assert not issubclass(errors.FerrotoolWarning, errors.FerrotoolError)
    assert issubclass(errors.FerrotoolDeprecationWarning, DeprecationWarning)
    assert issubclass(errors.DocumentationWarning, UserWarning)
    assert issubclass(errors.StrictSchemaWarning, UserWarning)
    assert issubclass(errors.StuckToolWarning, UserWarning)
    assert issubclass(errors.SandboxWarning, RuntimeWarning)
    for cls in found:
        assert issubclass(cls, errors.FerrotoolWarning)
        assert cls.__name__ in errors.__all__


def test_the_warnings_old_homes_still_name_them() -> None:
    assert formats.StrictSchemaWarning is errors.StrictSchemaWarning
    assert ferrotool.providers.StrictSchemaWarning is errors.StrictSchemaWarning
    assert function.DocumentationWarning is errors.DocumentationWarning
    assert _sandbox.SandboxWarning is errors.SandboxWarning
    assert ferrotool.builtins.SandboxWarning is errors.SandboxWarning
    assert ferrotool.StrictSchemaWarning is errors.StrictSchemaWarning
    assert ferrotool.DocumentationWarning is errors.DocumentationWarning
    assert ferrotool.FerrotoolWarning is errors.FerrotoolWarning


def test_one_filter_silences_every_ferrotool_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=errors.FerrotoolWarning)

        @ferrotool.tool
        def documented(a: int) -> int:
            """Do it.

            Args:
                ghost: Not a parameter.
            """
            return a

        warnings.warn("other", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["other"]
    with pytest.warns(errors.FerrotoolWarning, match="ghost"):

        @ferrotool.tool
        def again(a: int) -> int:
            """Do it.

            Args:
                ghost: Not a parameter.
            """
            return a
