"""What ``ferrotool`` commands run against: a toolkit named ``MODULE:OBJECT``, and a call context.

`load_toolkit` is shared by the ``schema``, ``call`` and ``serve`` commands (and
`ferrotool.cli.serve`, for the workers it starts); `parse_context` reads ``--context``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
import types
import typing
from collections.abc import Callable
from typing import Final, cast

import orjson

from ferrotool._registry.registry import Registry
from ferrotool._registry.toolkit import Toolkit
from ferrotool._schema.schema import type_schema
from ferrotool._values.context import RuntimeContext
from ferrotool.errors import CliError, SchemaError, ValidationError

_PLAIN: Final = (types.FunctionType, types.MethodType, functools.partial)
"""What `Toolkit.register` makes a tool of: the callables that may instead be factories."""
_CONTEXT_KEYS: Final = ("user_id", "session_id", "values")


def load_toolkit(target: str) -> Toolkit | Registry:
    """Import ``MODULE:OBJECT`` and make a toolkit of it.

    The object may be a `Toolkit` or `Registry` (used as is); a factory, called: a function
    annotated to return a `Toolkit` or `Registry`, or a plain function with no return
    annotation that takes no arguments (what it returns is used like the object itself); a
    tool, a function, or an object with ``@tool`` methods (registered into a new toolkit).

    Raises:
        CliError: The target cannot be imported or holds no tools.
    """
    return load_target(target)[1]


def load_target(target: str) -> tuple[types.ModuleType, Toolkit | Registry]:
    """The target's module and its toolkit."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise CliError(f"expected MODULE:OBJECT, got {target!r}")
    module = _import(module_name)
    obj = _attribute(module, attribute)
    factory = _is_factory(obj)
    if factory:
        obj = cast("Callable[[], object]", obj)()
    if isinstance(obj, (Toolkit, Registry)):
        return module, obj
    toolkit = Toolkit()
    try:
        toolkit.register(obj)
    except (TypeError, ValueError) as exc:
        if factory:
            raise CliError(
                f"{target} was called as a toolkit factory (a function with no arguments and no"
                f" return annotation) and returned {type(obj).__name__}, which holds no tools"
            ) from exc
        raise CliError(f"{target}: {exc}") from exc
    return module, toolkit


def _import(module_name: str) -> types.ModuleType:
    sys.path.insert(0, ".")
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"cannot import {module_name!r}: {exc}") from exc
    finally:
        sys.path.remove(".")


def _attribute(module: types.ModuleType, attribute: str) -> object:
    obj: object = module
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise CliError(f"{module.__name__!r} has no attribute {attribute!r}") from None
    return obj


def _is_factory(obj: object) -> bool:
    """Whether ``obj`` is called to make the toolkit rather than registered as a tool.

    A callable annotated to return a `Toolkit` or `Registry`, or a plain function without a
    return annotation that takes no arguments (a tool without parameters is annotated, or
    decorated with ``@tool``).
    """
    if not callable(obj) or isinstance(obj, type):
        return False
    if isinstance(obj, _PLAIN):
        try:
            signature = inspect.signature(obj)
        except (TypeError, ValueError):  # no signature to read: not a factory we can recognise
            return False
        if signature.return_annotation is inspect.Signature.empty:
            return all(
                parameter.default is not inspect.Parameter.empty
                or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
                for parameter in signature.parameters.values()
            )
    try:
        returns = typing.get_type_hints(obj).get("return")
    except Exception:  # unresolvable annotations: not a factory we can recognise
        return False
    return isinstance(returns, type) and issubclass(returns, (Toolkit, Registry))


def parse_context(text: str, module: types.ModuleType) -> RuntimeContext:
    """The `RuntimeContext` that ``--context`` describes (see ``ferrotool call --help``).

    Args:
        text: A JSON object with the optional keys ``user_id``, ``session_id`` (strings) and
            ``values``: an object mapping a class (``NAME`` in ``module``, or ``MODULE:NAME``)
            to the JSON its instance is validated from.
        module: Where bare class names are looked up (the target's module).

    Raises:
        CliError: The text is not such an object, or a value cannot be built.
    """
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise CliError(f"--context is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise CliError(f"--context must be a JSON object, got {text!r:.80}")
    unknown = [key for key in data if key not in _CONTEXT_KEYS]
    if unknown:
        raise CliError(f"--context: unknown keys {unknown}; expected some of {_CONTEXT_KEYS}")
    ids: dict[str, str | None] = {}
    for key in ("user_id", "session_id"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise CliError(f"--context: {key} must be a string, got {value!r:.80}")
        ids[key] = value
    raw_values = data.get("values", {})
    if not isinstance(raw_values, dict):
        raise CliError(f"--context: values must be an object of TYPE: JSON, got {raw_values!r:.80}")
    values: dict[type, object] = {}
    for name, raw in raw_values.items():
        tp = _context_type(name, module)
        try:
            values[tp] = type_schema(tp).validate_python(raw)
        except SchemaError as exc:
            raise CliError(f"--context: {name} cannot be built from JSON: {exc}") from None
        except ValidationError as exc:
            raise CliError(f"--context: {name}: {exc}") from None
    return RuntimeContext(
        user_id=ids["user_id"],
        session_id=ids["session_id"],
        values=types.MappingProxyType(values),
    )


def _context_type(name: str, module: types.ModuleType) -> type:
    module_name, colon, attribute = name.rpartition(":")
    if colon and (not module_name or not attribute):
        raise CliError(f"--context: expected NAME or MODULE:NAME, got {name!r}")
    try:
        found = _attribute(_import(module_name) if colon else module, attribute)
    except CliError as exc:
        raise CliError(f"--context: {exc}") from None
    if not isinstance(found, type):
        raise CliError(f"--context: {name} is not a class")
    return found


__all__ = ["load_target", "load_toolkit", "parse_context"]
