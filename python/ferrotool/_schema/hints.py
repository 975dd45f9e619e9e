"""Reading a function's parameters and annotations, cheaply where that changes nothing.

The type IR (`ferrotool._schema.introspect`) needs each parameter's name, kind, default and
resolved annotation. `inspect.signature` and `typing.get_type_hints` give them, but cost more than
the whole derivation otherwise: plain functions are read from their code object, and string
annotations of the common shapes are evaluated by a small parser (`_simple_eval`) instead of
`compile`. Anything unusual takes the exact path, so the answers are the same.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final, TypeAlias, cast

from ferrotool.errors import SchemaError

KIND_REASONS: Final[Mapping[inspect._ParameterKind, str]] = MappingProxyType(
    {
        inspect.Parameter.VAR_POSITIONAL: "*args cannot be passed as JSON keyword arguments",
        inspect.Parameter.VAR_KEYWORD: "**kwargs has no fixed schema",
        inspect.Parameter.POSITIONAL_ONLY: (
            "a positional-only parameter cannot be passed as a keyword argument"
        ),
    }
)


def function_parts(fn: Callable[..., object]) -> tuple[str, object, object]:
    """The name, the object to read annotations from, and the object to read the docstring from."""
    if isinstance(fn, functools.partial):
        inner = cast("Callable[..., object]", fn.func)
        return function_parts(inner)
    if inspect.isfunction(fn) or inspect.ismethod(fn) or isinstance(fn, type):
        name = cast("str", getattr(fn, "__name__", None) or type(fn).__name__)
        return name, fn, fn
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - the unbound method is wanted
    return type(fn).__name__, call if call is not None else fn, fn


Parameter: TypeAlias = tuple[str, inspect._ParameterKind, object]
POSITIONAL_ONLY: Final = inspect.Parameter.POSITIONAL_ONLY
POSITIONAL_OR_KEYWORD: Final = inspect.Parameter.POSITIONAL_OR_KEYWORD
VAR_POSITIONAL: Final = inspect.Parameter.VAR_POSITIONAL
KEYWORD_ONLY: Final = inspect.Parameter.KEYWORD_ONLY
VAR_KEYWORD: Final = inspect.Parameter.VAR_KEYWORD


class Unresolved(Exception):
    """The fast path met a forward reference it does not resolve itself."""


def read_parameters(fn: Callable[..., object], name: str) -> tuple[list[Parameter], bool]:
    """Each parameter's ``(name, kind, default)``, and whether a call binds exactly these.

    The parameters come in signature order. Plain functions and methods are read from their code
    object: `inspect.signature` costs more than everything else here together. Anything else
    (wrapped, partial, callable objects, builtins) goes through `inspect.signature`, whose answer
    may be declared rather than bound (a ``__signature__``, a wrapper taking ``**kwargs``): such
    calls pass arguments by name.
    """
    func: object = fn
    bound = False
    if type(fn) is types.MethodType:
        func, bound = fn.__func__, True
    if (
        type(func) is types.FunctionType
        and "__wrapped__" not in func.__dict__
        and "__signature__" not in func.__dict__
    ):
        code = func.__code__
        positional = code.co_argcount
        if not (bound and positional == 0):
            return _code_parameters(func, code, positional, skip_first=bound), True
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"cannot read the signature of {name}: {exc}") from exc
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()], False


def _code_parameters(
    func: types.FunctionType, code: types.CodeType, positional: int, *, skip_first: bool
) -> list[Parameter]:
    empty = inspect.Parameter.empty
    names = code.co_varnames
    defaults = func.__defaults__ or ()
    first_default = positional - len(defaults)
    only = code.co_posonlyargcount
    out: list[Parameter] = [
        (
            names[i],
            POSITIONAL_ONLY if i < only else POSITIONAL_OR_KEYWORD,
            defaults[i - first_default] if i >= first_default else empty,
        )
        for i in range(1 if skip_first else 0, positional)
    ]
    keyword_only = code.co_kwonlyargcount
    index = positional + keyword_only
    if code.co_flags & inspect.CO_VARARGS:
        out.append((names[index], VAR_POSITIONAL, empty))
        index += 1
    kwdefaults = func.__kwdefaults__ or {}
    out.extend(
        (names[i], KEYWORD_ONLY, kwdefaults.get(names[i], empty))
        for i in range(positional, positional + keyword_only)
    )
    if code.co_flags & inspect.CO_VARKEYWORDS:
        out.append((names[index], VAR_KEYWORD, empty))
    return out


def function_hints(target: object, label: str) -> dict[str, object] | None:
    """A function's annotations, evaluated cheaply; ``None`` to ask `typing.get_type_hints`.

    `typing.get_type_hints` compiles each string annotation on its own; evaluating all of them
    as one tuple expression costs one compile. Results match for the annotations a tool can use;
    anything unusual (a failed evaluation, a non-function) takes the exact path.
    """
    func = target.__func__ if type(target) is types.MethodType else target
    if type(func) is not types.FunctionType or "__wrapped__" in func.__dict__:
        # `get_type_hints` evaluates a wrapper's copied annotations in the wrapped module.
        return None
    annotations = func.__annotations__
    strings = [key for key, value in annotations.items() if type(value) is str]
    if not strings:
        return annotations
    namespace: dict[str, object] = func.__globals__
    resolved: dict[str, object] = {}
    hard: list[str] = []
    for key in strings:
        value = _simple_eval(annotations[key], namespace)
        if value is _UNPARSED:
            hard.append(key)
        else:
            resolved[key] = value
    if hard:
        source = "(" + ",".join(f"({annotations[key]})" for key in hard) + ",)"
        try:
            values = eval(source, namespace)
        except Exception:  # the exact path reports it with the annotation's name
            return None
        resolved.update(zip(hard, values, strict=True))
    hints = dict(annotations)
    hints.update(resolved)
    return hints


_UNPARSED: Final = object()
_Token: TypeAlias = tuple[str, str, str, str, str]
# Tokens of the annotation subset `_simple_eval` understands: (dotted) names, string and integer
# literals, `...`, brackets, commas and `|`.
_TOKEN: Final = re.compile(
    r"\s*(?:([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|('[^'\\\n]*'|\"[^\"\\\n]*\")|(-?[0-9]+)|(\.\.\.|[\[\],|])|(\S))"
)
_CONSTANTS: Final[Mapping[str, object]] = MappingProxyType(
    {"None": None, "True": True, "False": False}
)


def _simple_eval(source: str, namespace: Mapping[str, object]) -> object:
    """Evaluate a common annotation string without `compile` (which costs microseconds each).

    Handles names, attribute access, subscripts, ``|`` and literals, e.g.
    ``"dict[str, list[Item]] | None"`` or ``"Literal['c', 'f']"``; returns `_UNPARSED` for anything
    else (calls such as ``Param(...)``, keywords, nested brackets on results), which is then
    evaluated by Python itself.
    """
    # Any other character is a token of its own (the last group) that the parser rejects.
    tokens: list[_Token] = _TOKEN.findall(source)
    try:
        value, end = _parse_union(tokens, 0, namespace)
    except (LookupError, AttributeError, TypeError, ValueError):
        return _UNPARSED
    return value if end == len(tokens) else _UNPARSED


def _parse_union(
    tokens: list[_Token], pos: int, namespace: Mapping[str, object]
) -> tuple[object, int]:
    value, pos = _parse_primary(tokens, pos, namespace)
    while pos < len(tokens) and tokens[pos][3] == "|":
        right, pos = _parse_primary(tokens, pos + 1, namespace)
        value = value | right  # type: ignore[operator]
    return value, pos


def _parse_primary(
    tokens: list[_Token], pos: int, namespace: Mapping[str, object]
) -> tuple[object, int]:
    name, text, number, op, _ = tokens[pos]
    pos += 1
    value: object
    if name:
        value = _lookup(name, namespace)
    elif text:
        value = text[1:-1]
    elif number:
        value = int(number)
    elif op == "...":
        value = Ellipsis
    else:
        raise ValueError(op)
    if pos < len(tokens) and tokens[pos][3] == "[":
        args: list[object] = []
        pos += 1
        while tokens[pos][3] != "]":
            arg, pos = _parse_union(tokens, pos, namespace)
            args.append(arg)
            if tokens[pos][3] == ",":
                pos += 1
            elif tokens[pos][3] != "]":
                raise ValueError(tokens[pos])
        pos += 1
        value = value[tuple(args) if len(args) != 1 else args[0]]  # type: ignore[index]
        if pos < len(tokens) and tokens[pos][3] == "[":
            raise ValueError("chained subscript")
    return value, pos


def _lookup(dotted: str, namespace: Mapping[str, object]) -> object:
    head, *rest = dotted.split(".")
    if head in _CONSTANTS and not rest:
        return _CONSTANTS[head]
    if head in namespace:
        value = namespace[head]
    else:
        builtins = namespace.get("__builtins__")
        value = builtins[head] if isinstance(builtins, dict) else getattr(builtins, head)
    for attr in rest:
        value = getattr(value, attr)
    return value


def resolve_hints(target: object, label: str) -> dict[str, object]:
    """`typing.get_type_hints` with extras, failures reported as `SchemaError`."""
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # NameError, TypeError, SyntaxError from string annotations
        raise SchemaError(f"cannot resolve the annotations of {label}: {exc}") from exc


__all__ = [
    "KEYWORD_ONLY",
    "KIND_REASONS",
    "POSITIONAL_OR_KEYWORD",
    "Parameter",
    "Unresolved",
    "function_hints",
    "function_parts",
    "read_parameters",
    "resolve_hints",
]
