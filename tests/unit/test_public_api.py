"""The public face: `ferrotool.__all__`, its lazy-load table, and what public classes report.

`__init__.py` names every public name three times, for three readers: the `TYPE_CHECKING`
imports (type checkers), `_LAZY` (the PEP 562 `__getattr__`) and `__all__` (star imports,
documentation tools). These tests hold the three to one list; the deprecated old names
(`_DEPRECATED`) are in none of them.

Public classes keep the module they are defined in as ``__module__`` (docs/architecture.md
says why: rewriting it to ``"ferrotool"``, as httpx does, breaks `typing.get_type_hints`); they
pickle by that module, and ``ferrotool.X`` is the same object.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import itertools
import pickle
import typing
from pathlib import Path
from typing import Final

import pytest

import ferrotool
from ferrotool import errors

INIT: Final = Path(ferrotool.__file__)
WINGS: Final = ("agent", "builtins", "mcp", "providers", "skills", "testing")


def _type_checking_imports() -> dict[str, tuple[str, str]]:
    """The names the ``if TYPE_CHECKING:`` block of ``__init__.py`` imports: (module, name)."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    found: dict[str, tuple[str, str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom)
        assert node.module is not None
        for alias in node.names:
            found[alias.asname or alias.name] = (node.module, alias.name)
    return found


def _eager() -> set[str]:
    """The public names bound by ``import ferrotool`` itself (the errors and the extension)."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        and node.module in ("ferrotool._core", "ferrotool.errors")
        for alias in node.names
    }


def test_all_has_each_name_once_and_only_names_the_package_gives() -> None:
    assert len(ferrotool.__all__) == len(set(ferrotool.__all__))
    eager = _eager()
    lazy = set(ferrotool._WHERE)
    assert not eager & lazy
    assert set(ferrotool.__all__) == eager | lazy


def test_the_lazy_table_and_the_type_checking_imports_agree() -> None:
    table = {
        name: (module, ferrotool._RENAMED.get(name, name))
        for name, module in ferrotool._WHERE.items()
    }
    assert _type_checking_imports() == table
    assert set(ferrotool._RENAMED) <= set(ferrotool._WHERE)


@pytest.mark.parametrize(("old", "new"), sorted(ferrotool._DEPRECATED.items()))
def test_a_deprecated_name_is_its_replacement_with_a_warning_and_listed_nowhere(
    old: str, new: str
) -> None:
    assert new in ferrotool.__all__
    assert old not in {*ferrotool.__all__, *ferrotool._WHERE, *_type_checking_imports()}
    assert old not in dir(ferrotool)
    with pytest.warns(errors.FerrotoolDeprecationWarning, match=f"use ferrotool.{new}"):
        value = getattr(ferrotool, old)
    assert value is getattr(ferrotool, new)
    assert old not in vars(ferrotool)  # not cached: every use warns
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        ferrotool.Nothing  # noqa: B018


def test_all_is_grouped_by_layer_in_the_lazy_tables_order() -> None:
    # Each package of `_LAZY` (a layer) is one group of `__all__`, in the same order.
    def package(name: str) -> str:
        return ferrotool._WHERE[name].rsplit(".", 1)[0]

    order = list(dict.fromkeys(module.rsplit(".", 1)[0] for module in ferrotool._LAZY))
    packages = [package(n) for n in ferrotool.__all__ if n in ferrotool._WHERE]
    assert [key for key, _ in itertools.groupby(packages)] == order


def _public_classes() -> list[tuple[str, str, type]]:
    """Every public class: (where it is public, its name there, the class)."""
    found = [
        ("ferrotool", name, value)
        for name in ferrotool.__all__
        if inspect.isclass(value := getattr(ferrotool, name))
    ]
    for wing in WINGS:
        module = importlib.import_module(f"ferrotool.{wing}")
        found += [
            (module.__name__, name, value)
            for name in module.__all__
            if inspect.isclass(value := getattr(module, name))
        ]
    return found


@pytest.mark.parametrize(("public", "name", "cls"), _public_classes(), ids=lambda x: str(x))
def test_a_public_class_reports_the_module_it_is_defined_in(
    public: str, name: str, cls: type
) -> None:
    assert getattr(importlib.import_module(public), name) is cls
    if not cls.__module__.startswith("ferrotool."):  # `object` (`ToolReturn`), the MCP SDK's
        return
    # What pickle does to find a class: import its module, walk its qualified name.
    found: object = importlib.import_module(cls.__module__)
    for part in cls.__qualname__.split("."):
        found = getattr(found, part)
    assert found is cls
    assert pickle.loads(pickle.dumps(cls)) is cls


@pytest.mark.parametrize(
    "name", [n for n in ferrotool.__all__ if inspect.isclass(getattr(ferrotool, n))]
)
def test_the_type_hints_of_every_top_level_class_resolve(name: str) -> None:
    # What rewriting `__module__` to "ferrotool" would break: string annotations are evaluated
    # in the namespace of the module a class reports.
    cls = getattr(ferrotool, name)
    if cls.__module__ not in ("builtins", "ferrotool._core"):
        typing.get_type_hints(cls)


def test_public_values_pickle_and_copy() -> None:
    values: list[object] = [
        ferrotool.ToolUseBlock(id="c1", name="add", arguments='{"a": 1}'),
        ferrotool.ToolResultState.SUCCESS,
        ferrotool.ToolGroup(name="maths", description="Sums."),
        ferrotool.ExecutionConfig(timeout=2.0),
        ferrotool.PermissionRule(tool_name="add", behavior=ferrotool.PermissionBehavior.ALLOW),
        ferrotool.PermissionDecision.allow(),
        ferrotool.Limits(),
        ferrotool.TextBlock(text="hi"),
    ]
    for value in values:
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.deepcopy(value) == value
    # Values holding a read-only mapping (`types.MappingProxyType`) copy, but do not pickle:
    # they have `to_json`.
    for value in (
        ferrotool.ToolResultBlock.text("3", id="c1", name="add"),
        ferrotool.EMPTY_STATE,
        ferrotool.EMPTY_PERMISSIONS,
        *values,
    ):
        assert copy.copy(value) == value


def test_errors_pickle_with_their_class() -> None:
    for error in (
        errors.SuspendTool("later"),
        errors.SchemaError("bad"),
        errors.ValidationError("x"),
    ):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error)
        assert back.args == error.args
