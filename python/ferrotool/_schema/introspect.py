"""Python annotations -> the type IR (``rust/core/src/ir.rs``), serialized as JSON bytes.

`function_ir` describes a function's parameters, `type_ir` a single type. Both return the IR as
orjson bytes and a side table mapping every record, enum and model name used in the IR to its
style and Python class, so that the binding can build Python values from validated JSON.

Choices (where Python typing leaves room):

* Every parameter and field must be annotated: a missing annotation is a `SchemaError`, not
  ``Any``, because a tool's schema is its contract with the model.
* ``*args``, ``**kwargs`` and positional-only parameters are a `SchemaError` unless ``skip``
  leaves them out: a tool is called with keyword arguments built from a JSON object.
* ``Annotated`` metadata: `Param`, ``annotated_types`` markers (``Ge``, ``Interval``,
  ``MinLen``, ``Len``, ``doc``...), ``typing_extensions.Doc`` and pydantic's ``Field(...)`` are
  read and merged in order (later ones win). An ``annotated_types`` constraint that a JSON Schema
  cannot express (``Predicate``, ``Timezone``, ...) is a `SchemaError`; any other object,
  including a plain string, is ignored, as typing asks of unknown metadata.
* Documentation (description, title, examples, deprecated) on a parameter's or field's own
  ``Annotated`` goes into the field; on a nested type it becomes an ``annotated`` IR node. An
  explicit description in the annotation wins over ``descriptions`` (the docstring's).
* Record names are the class ``__name__``; a second, different class with a taken name becomes
  ``Name_2``, ``Name_3``... in the order the classes are met, so the names are deterministic for
  a given signature. Records, enums and models share one namespace.
* Defaults are shown when JSON can carry them (enums as their value, date/times as ISO 8601,
  tuples and sets as arrays, ``Decimal`` and paths as strings); any other default is left out of
  the schema, and the parameter is still optional. ``default_factory`` is never called.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import decimal
import enum
import functools
import inspect
import math
import pathlib
import re
import sys
import types
import typing
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, TypeAlias, cast

import orjson
import typing_extensions

from ferrotool._schema.ir import (
    IR_VERSION,
    ContainerName,
    EnumIR,
    FieldIR,
    FunctionRootIR,
    MetaIR,
    RecordIR,
    RootIR,
    StringValueName,
    TypeIR,
)
from ferrotool._schema.params import Param
from ferrotool._values.json import JsonValue
from ferrotool.errors import SchemaError

Objects: TypeAlias = Mapping[str, tuple[str, object]]
"""Side table: record, enum or model name -> (style, Python class).

The style is one of ``"dataclass"``, ``"namedtuple"``, ``"typeddict"``, ``"enum"``, ``"model"``.
"""

_NoneType: Final = type(None)

# Read-only lookup tables, keyed by the annotation object itself: one dict probe answers the
# common cases before any `typing.get_origin` call.
_SCALARS: Final[Mapping[object, str]] = MappingProxyType(
    {
        str: "str",
        int: "int",
        float: "float",
        bool: "bool",
        _NoneType: "null",
        None: "null",
        object: "any",
        typing.Any: "any",
        typing_extensions.Any: "any",
    }
)
_STRING_VALUES: Final[Mapping[object, StringValueName]] = MappingProxyType(
    {
        dt.datetime: "datetime",
        dt.date: "date",
        dt.time: "time",
        dt.timedelta: "timedelta",
        uuid.UUID: "uuid",
        decimal.Decimal: "decimal",
        pathlib.Path: "path",
        pathlib.PurePath: "path",
        pathlib.PosixPath: "path",
        pathlib.PurePosixPath: "path",
        pathlib.WindowsPath: "path",
        pathlib.PureWindowsPath: "path",
    }
)
_LISTS: Final[Mapping[object, ContainerName]] = MappingProxyType(
    {
        list: "list",
        cabc.Sequence: "list",
        cabc.MutableSequence: "list",
        set: "set",
        cabc.MutableSet: "set",
        frozenset: "frozenset",
        cabc.Set: "frozenset",
    }
)
_DICTS: Final = frozenset({dict, cabc.Mapping, cabc.MutableMapping})
_UNIONS: Final = frozenset({typing.Union, types.UnionType})
_LITERALS: Final = frozenset({typing.Literal, typing_extensions.Literal})
_TD_WRAPPERS: Final = frozenset(
    {
        typing.Required,
        typing.NotRequired,
        typing_extensions.Required,
        typing_extensions.NotRequired,
        typing_extensions.ReadOnly,
    }
)
_CLASSVARS: Final = frozenset({typing.ClassVar, typing_extensions.ClassVar})
_PARAGRAPH: Final = re.compile(r"\n[ \t]*\n")
# JSON numbers that orjson (and the IR) can carry as integers.
_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**64 - 1


def function_ir(
    fn: Callable[..., object],
    *,
    skip: Callable[[str, object], bool] | None = None,
    descriptions: Mapping[str, str] | None = None,
) -> tuple[bytes, Objects]:
    """Describe a function's parameters as the type IR.

    Args:
        fn: A function, bound method, `functools.partial` or callable object.
        skip: Called with each parameter's name and resolved annotation (or
            ``inspect.Parameter.empty``); a true result leaves the parameter out of the schema
            (for values injected at call time). ``self``/``cls`` of unbound methods are always
            left out.
        descriptions: Parameter descriptions, e.g. from the docstring; a description given in
            the parameter's annotation wins.

    Returns:
        The IR document as JSON bytes, and the side table of the records, enums and models it
        names.

    Raises:
        SchemaError: A parameter's annotation cannot become a JSON Schema, is missing, or the
            parameter cannot be passed by keyword.
    """
    try:
        return _function_ir(fn, skip, descriptions, fast=True)
    except _Unresolved:
        # A forward reference nested in a generic: let `typing.get_type_hints` resolve everything.
        return _function_ir(fn, skip, descriptions, fast=False)


def _function_ir(
    fn: Callable[..., object],
    skip: Callable[[str, object], bool] | None,
    descriptions: Mapping[str, str] | None,
    *,
    fast: bool,
) -> tuple[bytes, Objects]:
    name, hints_target, doc_target = _function_parts(fn)
    parameters, bound_by_code = _parameters(fn, name)
    hints = _function_hints(hints_target, name) if fast else None
    if hints is None:
        hints = _hints(hints_target, name)
    builder = _Builder(function=name, fast=fast)
    fields: list[FieldIR] = []
    empty = inspect.Parameter.empty
    # Leading fields that a call may pass by position: none may be left out before them, and
    # the parameters must be the ones the call binds.
    positional = 0
    leading = bound_by_code
    for index, (pname, kind, default) in enumerate(parameters):
        annotation = hints.get(pname, empty)
        if index == 0 and annotation is empty and pname in ("self", "cls"):
            leading = False
            continue
        if skip is not None and skip(pname, annotation):
            leading = False
            continue
        if leading and kind is _POSITIONAL_OR_KEYWORD:
            positional += 1
        else:
            leading = False
        if kind is not _POSITIONAL_OR_KEYWORD and kind is not _KEYWORD_ONLY:
            raise SchemaError(
                f"cannot derive a schema for parameter {pname!r} of {name}: {_KIND_REASONS[kind]}"
            )
        if annotation is empty:
            raise SchemaError(
                f"cannot derive a schema for parameter {pname!r} of {name}: "
                "the parameter has no annotation (tool parameters must be typed)"
            )
        ty, meta = builder.field_type(annotation, f"{name}.{pname}")
        if descriptions is not None and "description" not in meta:
            described = descriptions.get(pname)
            if described is not None:
                meta["description"] = described
        field: FieldIR = {"name": pname, "type": ty, "required": default is empty}
        if default is not empty:
            _set_default(field, default)
        if meta:
            field["meta"] = meta
        fields.append(field)
    record: RecordIR = {"name": name, "fields": fields}
    description = docstring_summary(inspect.getdoc(doc_target))
    if description is not None:
        record["description"] = description
    root: FunctionRootIR = {"kind": "function", "record": record}
    if positional:
        root["positional"] = positional
    document: RootIR = {"version": IR_VERSION, "root": root, "defs": builder.defs}
    return orjson.dumps(document), builder.objects


def type_ir(tp: object) -> tuple[bytes, Objects]:
    """Describe a single type as the type IR.

    Args:
        tp: Any supported annotation (``list[Item]``, a dataclass, ``int | None``...).

    Returns:
        The IR document as JSON bytes, and the side table of the records, enums and models it
        names.

    Raises:
        SchemaError: The type cannot become a JSON Schema.
    """
    builder = _Builder(function=None, root_label=f"type {_type_name(tp)}")
    ty = builder.convert(tp, "")
    document: RootIR = {
        "version": IR_VERSION,
        "root": {"kind": "type", "type": ty},
        "defs": builder.defs,
    }
    return orjson.dumps(document), builder.objects


def docstring_summary(doc: str | None) -> str | None:
    """The first paragraph of a docstring, its lines joined by spaces.

    This is the seam for full docstring parsing: only the summary is used today.

    Args:
        doc: A docstring, cleaned or not.

    Returns:
        The summary, or ``None`` when the docstring is missing or blank.
    """
    if not doc:
        return None
    first = _PARAGRAPH.split(inspect.cleandoc(doc).strip(), maxsplit=1)[0]
    summary = " ".join(line.strip() for line in first.splitlines())
    return summary or None


_KIND_REASONS: Final[Mapping[inspect._ParameterKind, str]] = MappingProxyType(
    {
        inspect.Parameter.VAR_POSITIONAL: "*args cannot be passed as JSON keyword arguments",
        inspect.Parameter.VAR_KEYWORD: "**kwargs has no fixed schema",
        inspect.Parameter.POSITIONAL_ONLY: (
            "a positional-only parameter cannot be passed as a keyword argument"
        ),
    }
)


def _function_parts(fn: Callable[..., object]) -> tuple[str, object, object]:
    """The name, the object to read annotations from, and the object to read the docstring from."""
    if isinstance(fn, functools.partial):
        inner = cast("Callable[..., object]", fn.func)
        return _function_parts(inner)
    if inspect.isfunction(fn) or inspect.ismethod(fn) or isinstance(fn, type):
        name = cast("str", getattr(fn, "__name__", None) or type(fn).__name__)
        return name, fn, fn
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - the unbound method is wanted
    return type(fn).__name__, call if call is not None else fn, fn


_Parameter: TypeAlias = tuple[str, inspect._ParameterKind, object]
_POSITIONAL_ONLY: Final = inspect.Parameter.POSITIONAL_ONLY
_POSITIONAL_OR_KEYWORD: Final = inspect.Parameter.POSITIONAL_OR_KEYWORD
_VAR_POSITIONAL: Final = inspect.Parameter.VAR_POSITIONAL
_KEYWORD_ONLY: Final = inspect.Parameter.KEYWORD_ONLY
_VAR_KEYWORD: Final = inspect.Parameter.VAR_KEYWORD


class _Unresolved(Exception):
    """The fast path met a forward reference it does not resolve itself."""


def _parameters(fn: Callable[..., object], name: str) -> tuple[list[_Parameter], bool]:
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
) -> list[_Parameter]:
    empty = inspect.Parameter.empty
    names = code.co_varnames
    defaults = func.__defaults__ or ()
    first_default = positional - len(defaults)
    only = code.co_posonlyargcount
    out: list[_Parameter] = [
        (
            names[i],
            _POSITIONAL_ONLY if i < only else _POSITIONAL_OR_KEYWORD,
            defaults[i - first_default] if i >= first_default else empty,
        )
        for i in range(1 if skip_first else 0, positional)
    ]
    keyword_only = code.co_kwonlyargcount
    index = positional + keyword_only
    if code.co_flags & inspect.CO_VARARGS:
        out.append((names[index], _VAR_POSITIONAL, empty))
        index += 1
    kwdefaults = func.__kwdefaults__ or {}
    out.extend(
        (names[i], _KEYWORD_ONLY, kwdefaults.get(names[i], empty))
        for i in range(positional, positional + keyword_only)
    )
    if code.co_flags & inspect.CO_VARKEYWORDS:
        out.append((names[index], _VAR_KEYWORD, empty))
    return out


def _function_hints(target: object, label: str) -> dict[str, object] | None:
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
_NONE_TYPE: Final = type(None)
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


def _hints(target: object, label: str) -> dict[str, object]:
    """`typing.get_type_hints` with extras, failures reported as `SchemaError`."""
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # NameError, TypeError, SyntaxError from string annotations
        raise SchemaError(f"cannot resolve the annotations of {label}: {exc}") from exc


def _type_name(tp: object) -> str:
    if isinstance(tp, type) and typing.get_origin(tp) is None:
        return tp.__qualname__
    return repr(tp)


def _class_summary(cls: type) -> str | None:
    """A class's own docstring summary, or None (dataclass/NamedTuple auto-docs don't count)."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or doc.startswith(f"{cls.__name__}("):
        return None
    return docstring_summary(doc)


@dataclass(slots=True)
class _Marks:
    """Constraints and documentation gathered from one ``Annotated``'s metadata."""

    description: str | None = None
    title: str | None = None
    examples: list[JsonValue] | None = None
    deprecated: bool = False
    ge: int | float | None = None
    gt: int | float | None = None
    le: int | float | None = None
    lt: int | float | None = None
    multiple_of: int | float | None = None
    min_len: int | None = None
    max_len: int | None = None
    pattern: str | None = None

    def meta(self) -> MetaIR:
        meta: MetaIR = {}
        if self.title is not None:
            meta["title"] = self.title
        if self.description is not None:
            meta["description"] = self.description
        if self.examples:
            meta["examples"] = self.examples
        if self.deprecated:
            meta["deprecated"] = True
        return meta

    def has_numbers(self) -> bool:
        return not (
            self.ge is None
            and self.gt is None
            and self.le is None
            and self.lt is None
            and self.multiple_of is None
        )

    def has_lengths(self) -> bool:
        return self.min_len is not None or self.max_len is not None


@dataclass(slots=True)
class _Builder:
    """State of one `function_ir` / `type_ir` call: the records met so far and their names."""

    function: str | None
    root_label: str = ""
    # True while annotations may still hold unresolved forward references (see `_Unresolved`).
    fast: bool = False
    defs: dict[str, RecordIR] = dataclasses.field(default_factory=dict)
    objects: dict[str, tuple[str, object]] = dataclasses.field(default_factory=dict)
    # Class -> the IR node that refers to it, so each class is read once per call and a
    # recursive reference finds the record already registered.
    seen: dict[type, TypeIR] = dataclasses.field(default_factory=dict)
    # Names in pydantic models' own `$defs`, hoisted next to ours by the schema derivation.
    reserved: set[str] = dataclasses.field(default_factory=set)
    aliases: set[int] = dataclasses.field(default_factory=set)

    # -- errors --------------------------------------------------------------------------------

    def fail(self, path: str, reason: str) -> SchemaError:
        if not path:
            where = self.root_label
        elif self.function is not None and path.count(".") == 1:
            where = f"parameter {path.partition('.')[2]!r} of {self.function}"
        else:
            where = f"field {path!r}"
        return SchemaError(f"cannot derive a schema for {where}: {reason}")

    # -- types ---------------------------------------------------------------------------------

    def field_type(self, tp: object, path: str) -> tuple[TypeIR, MetaIR]:
        """A field's type, with the documentation of its own ``Annotated`` returned apart."""
        if typing.get_origin(tp) is typing.Annotated:
            marks = self.marks(tp.__metadata__, path)  # type: ignore[attr-defined]
            inner = self.convert(tp.__origin__, path)  # type: ignore[attr-defined]
            return self.constrain(inner, marks, path), marks.meta()
        return self.convert(tp, path), {}

    def convert(self, tp: object, path: str) -> TypeIR:
        """One annotation -> one IR node."""
        try:
            scalar = _SCALARS.get(tp)
            value = _STRING_VALUES.get(tp) if scalar is None else None
        except TypeError:  # unhashable metadata inside `Annotated`
            scalar = value = None
        if scalar is not None:
            return cast("TypeIR", {"kind": scalar})
        if value is not None:
            return {"kind": "str_value", "value": value}
        origin = typing.get_origin(tp)
        if origin is not None:
            return self.generic(tp, origin, typing.get_args(tp), path)
        if isinstance(tp, type):
            return self.cls(tp, path)
        if isinstance(tp, typing.NewType):
            return self.convert(tp.__supertype__, path)
        if isinstance(tp, typing_extensions.TypeAliasType):
            if id(tp) in self.aliases:
                raise self.fail(path, f"recursive type alias {tp.__name__} is not supported")
            self.aliases.add(id(tp))
            try:
                return self.convert(tp.__value__, path)
            finally:
                self.aliases.discard(id(tp))
        if isinstance(tp, (str, typing.ForwardRef)):
            if self.fast:
                raise _Unresolved
            raise self.fail(path, f"unresolved forward reference {tp!r}")
        raise self.fail(path, f"unsupported type {tp!r}")

    def generic(self, tp: object, origin: object, args: tuple[object, ...], path: str) -> TypeIR:
        if origin is typing.Annotated:
            metadata: tuple[object, ...] = tp.__metadata__  # type: ignore[attr-defined]
            marks = self.marks(metadata, path)
            inner = self.constrain(self.convert(args[0], path), marks, path)
            meta = marks.meta()
            return {"kind": "annotated", "inner": inner, "meta": meta} if meta else inner
        if origin in _UNIONS:
            return {"kind": "union", "variants": [self.convert(arg, path) for arg in args]}
        if origin in _LITERALS:
            return {"kind": "literal", "values": [self.literal(arg, path) for arg in args]}
        container = _LISTS.get(origin)
        if container is not None:
            items = self.convert(args[0], path) if args else cast("TypeIR", {"kind": "any"})
            return {"kind": "list", "items": items, "container": container}
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return {"kind": "list", "items": self.convert(args[0], path), "container": "tuple"}
            if tp is typing.Tuple:  # noqa: UP006 - the bare alias means tuple[Any, ...]
                return {"kind": "list", "items": {"kind": "any"}, "container": "tuple"}
            return {"kind": "tuple", "items": [self.convert(arg, path) for arg in args]}
        if origin in _DICTS:
            if not args:
                return {"kind": "dict", "values": {"kind": "any"}}
            key = args[0]
            while isinstance(key, typing.NewType):
                key = key.__supertype__
            if key is not str:
                raise self.fail(path, f"dict keys must be str (JSON object keys), not {key!r}")
            return {"kind": "dict", "values": self.convert(args[1], path)}
        raise self.fail(path, f"unsupported type {tp!r}")

    def literal(self, value: object, path: str) -> JsonValue:
        kind = type(value)
        if kind is str or kind is bool or value is None:
            return cast("JsonValue", value)
        if kind is int and _INT_MIN <= cast("int", value) <= _INT_MAX:
            return cast("int", value)
        raise self.fail(
            path, f"unsupported Literal value {value!r} (only str, int, bool and None are)"
        )

    def cls(self, tp: type, path: str) -> TypeIR:
        known = self.seen.get(tp)
        if known is not None:
            return known
        container = _LISTS.get(tp)
        if container is not None:
            return {"kind": "list", "items": {"kind": "any"}, "container": container}
        if tp in _DICTS:
            return {"kind": "dict", "values": {"kind": "any"}}
        if tp is tuple:
            return {"kind": "list", "items": {"kind": "any"}, "container": "tuple"}
        if issubclass(tp, enum.Enum):
            return self.enum(tp, path)
        if _is_model(tp):
            return self.model(tp)
        if dataclasses.is_dataclass(tp):
            return self.record(tp, "dataclass", path, self.dataclass_fields)
        if typing_extensions.is_typeddict(tp):
            return self.record(tp, "typeddict", path, self.typeddict_fields)
        if issubclass(tp, tuple) and hasattr(tp, "_fields"):
            return self.record(tp, "namedtuple", path, self.namedtuple_fields)
        raise self.fail(path, f"unsupported type {tp!r}")

    # -- named things --------------------------------------------------------------------------

    def allocate(self, cls: type, style: str) -> str:
        """A deterministic, unique name for ``cls`` (``Name``, then ``Name_2``, ...)."""
        base = cls.__name__
        name, n = base, 1
        # A model may share a name with a model `$defs` entry (the same model, hoisted twice).
        while name in self.objects or (style != "model" and name in self.reserved):
            n += 1
            name = f"{base}_{n}"
        self.objects[name] = (style, cls)
        return name

    def enum(self, cls: type[enum.Enum], path: str) -> TypeIR:
        values: list[JsonValue] = [member.value for member in cls]
        kinds = {type(value) for value in values}
        if not values:
            raise self.fail(path, f"enum {cls.__qualname__} has no members")
        if kinds != {str} and kinds != {int}:
            raise self.fail(
                path,
                f"enum {cls.__qualname__} must have all-str or all-int values, "
                f"not {', '.join(sorted(kind.__name__ for kind in kinds))}",
            )
        node: EnumIR = {"kind": "enum", "name": self.allocate(cls, "enum"), "values": values}
        description = _class_summary(cls)
        if description is not None:
            node["description"] = description
        self.seen[cls] = node
        return node

    def model(self, cls: type) -> TypeIR:
        name = self.allocate(cls, "model")
        schema = cast("dict[str, JsonValue]", cls.model_json_schema())  # type: ignore[attr-defined]
        own_defs = schema.get("$defs")
        if isinstance(own_defs, dict):
            self.reserved.update(own_defs)
        node: TypeIR = {"kind": "model", "name": name, "schema": schema}
        self.seen[cls] = node
        return node

    def record(
        self,
        cls: type,
        style: str,
        path: str,
        read: Callable[[type, str], Iterable[FieldIR]],
    ) -> TypeIR:
        name = self.allocate(cls, style)
        node: TypeIR = {"kind": "ref", "name": name}
        # Registered before the fields are read, so that a recursive reference resolves to it and
        # `defs` lists records in the order they are first met.
        self.seen[cls] = node
        fields: list[FieldIR] = []
        record: RecordIR = {"name": name}  # type: ignore[typeddict-item]
        description = _class_summary(cls)
        if description is not None:
            record["description"] = description
        record["fields"] = fields
        self.defs[name] = record
        fields.extend(read(cls, path or cls.__name__))
        return node

    def field(
        self, name: str, tp: object, path: str, *, required: bool, default: object
    ) -> FieldIR:
        ty, meta = self.field_type(tp, f"{path}.{name}")
        field: FieldIR = {"name": name, "type": ty, "required": required}
        if default is not dataclasses.MISSING:
            _set_default(field, default)
        if meta:
            field["meta"] = meta
        return field

    def class_hints(self, cls: type) -> dict[str, object]:
        """A record class's annotations, read directly when that changes nothing.

        While `fast`: the class's own annotations, none a string, no base class with annotations
        of its own (otherwise `typing.get_type_hints`). A forward reference nested in one raises
        `_Unresolved` later, which redoes the whole derivation the exact way.
        """
        own = inspect.get_annotations(cls)
        if (
            self.fast
            and all(type(value) is not str for value in own.values())
            and all("__annotations__" not in base.__dict__ for base in cls.__mro__[1:])
        ):
            return {key: _NONE_TYPE if value is None else value for key, value in own.items()}
        return _hints(cls, cls.__qualname__)

    def dataclass_fields(self, cls: type, path: str) -> Iterable[FieldIR]:
        hints = self.class_hints(cls)
        dc_fields: dict[str, dataclasses.Field[object]] = cls.__dataclass_fields__  # type: ignore[attr-defined]
        missing = dataclasses.MISSING
        for name, f in dc_fields.items():
            hint = hints.get(name, f.type)
            if hint in _CLASSVARS or typing.get_origin(hint) in _CLASSVARS:
                continue
            if isinstance(hint, dataclasses.InitVar) or hint is dataclasses.InitVar:
                if f.default is missing:
                    raise self.fail(
                        f"{path}.{name}", "an InitVar without a default cannot be given as JSON"
                    )
                continue
            if not f.init:
                continue
            required = f.default is missing and f.default_factory is missing
            yield self.field(name, hint, path, required=required, default=f.default)

    def typeddict_fields(self, cls: type, path: str) -> Iterable[FieldIR]:
        hints = _hints(cls, cls.__qualname__)
        required_keys: frozenset[str] = cls.__required_keys__  # type: ignore[attr-defined]
        for name, hint in hints.items():
            tp, explicit = _strip_typeddict_wrappers(hint)
            required = explicit if explicit is not None else name in required_keys
            yield self.field(name, tp, path, required=required, default=dataclasses.MISSING)

    def namedtuple_fields(self, cls: type, path: str) -> Iterable[FieldIR]:
        hints = self.class_hints(cls)
        defaults: dict[str, object] = cls._field_defaults  # type: ignore[attr-defined]
        names: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
        for name in names:
            if name not in hints:
                raise self.fail(f"{path}.{name}", "the field has no annotation")
            default = defaults.get(name, dataclasses.MISSING)
            yield self.field(
                name, hints[name], path, required=name not in defaults, default=default
            )

    # -- Annotated -----------------------------------------------------------------------------

    def marks(self, metadata: Iterable[object], path: str) -> _Marks:
        marks = _Marks()
        for item in metadata:
            self.absorb(marks, item, path)
        return marks

    def absorb(self, marks: _Marks, item: object, path: str) -> None:
        """Merge one ``Annotated`` metadata object into ``marks``."""
        if isinstance(item, Param):
            for attr in ("description", "title", "ge", "gt", "le", "lt", "multiple_of", "pattern"):
                value = getattr(item, attr)
                if value is not None:
                    setattr(marks, attr, value)
            if item.examples:
                marks.examples = [_to_json_or_fail(self, value, path) for value in item.examples]
            if item.deprecated:
                marks.deprecated = True
            for lower in (item.min_length, item.min_items):
                if lower is not None:
                    marks.min_len = lower
            for upper in (item.max_length, item.max_items):
                if upper is not None:
                    marks.max_len = upper
            return
        kind = type(item)
        module = kind.__module__
        name = kind.__name__
        if module == "annotated_types":
            if getattr(item, "__is_annotated_types_grouped_metadata__", False) and name != "Len":
                for part in cast("Iterable[object]", item):
                    self.absorb(marks, part, path)
            elif name in ("Ge", "Gt", "Le", "Lt", "MultipleOf"):
                attr = "multiple_of" if name == "MultipleOf" else name.lower()
                setattr(marks, attr, getattr(item, attr))
            elif name == "MinLen":
                marks.min_len = item.min_length  # type: ignore[attr-defined]
            elif name == "MaxLen":
                marks.max_len = item.max_length  # type: ignore[attr-defined]
            elif name == "Len":
                marks.min_len = item.min_length  # type: ignore[attr-defined]
                marks.max_len = item.max_length  # type: ignore[attr-defined]
            elif name == "DocInfo":
                marks.description = item.documentation  # type: ignore[attr-defined]
            else:
                raise self.fail(path, f"the constraint {item!r} cannot be expressed in a schema")
        elif module in ("typing_extensions", "typing") and name == "Doc":
            marks.description = item.documentation  # type: ignore[attr-defined]
        elif module.startswith("pydantic"):
            self.absorb_pydantic(marks, item, name, path)
        # Anything else (plain strings included) belongs to some other library: ignored.

    def absorb_pydantic(self, marks: _Marks, item: object, name: str, path: str) -> None:
        if name == "FieldInfo":
            for attr in ("description", "title"):
                value = getattr(item, attr)
                if value is not None:
                    setattr(marks, attr, value)
            examples = getattr(item, "examples", None)
            if examples:
                marks.examples = [_to_json_or_fail(self, value, path) for value in examples]
            if getattr(item, "deprecated", None):
                marks.deprecated = True
            for part in getattr(item, "metadata", ()):
                self.absorb(marks, part, path)
        elif name == "_PydanticGeneralMetadata":
            for key, value in vars(item).items():
                if key == "pattern":
                    marks.pattern = value if isinstance(value, str) else value.pattern
                elif key != "strict" and value is not None:
                    raise self.fail(path, f"the constraint {key}={value!r} is not supported")
        elif getattr(item, "__is_annotated_types_grouped_metadata__", False):
            for part in cast("Iterable[object]", item):
                self.absorb(marks, part, path)
        elif name != "Strict":  # strictness is the validator's only mode
            raise self.fail(path, f"the constraint {item!r} is not supported")

    def constrain(self, ty: TypeIR, marks: _Marks, path: str) -> TypeIR:
        """Apply ``marks``' constraints to an IR node (a copy; nodes may be shared)."""
        numbers, lengths = marks.has_numbers(), marks.has_lengths()
        if not (numbers or lengths or marks.pattern is not None):
            return ty
        kind = ty["kind"]
        if kind == "union":
            variants = ty["variants"]  # type: ignore[typeddict-item]
            return {
                "kind": "union",
                "variants": [
                    v if v["kind"] == "null" else self.constrain(v, marks, path) for v in variants
                ],
            }
        if kind == "annotated":
            inner = self.constrain(ty["inner"], marks, path)  # type: ignore[typeddict-item]
            return {"kind": "annotated", "inner": inner, "meta": ty["meta"]}  # type: ignore[typeddict-item]
        out = cast("dict[str, object]", dict(ty))
        if kind in ("int", "float") and not lengths and marks.pattern is None:
            for attr in ("ge", "gt", "le", "lt", "multiple_of"):
                value = getattr(marks, attr)
                if value is not None:
                    out[attr] = self.bound(value, attr, path)
        elif kind == "str" and not numbers:
            if marks.min_len is not None:
                out["min_length"] = self.length(marks.min_len, path)
            if marks.max_len is not None:
                out["max_length"] = self.length(marks.max_len, path)
            if marks.pattern is not None:
                out["pattern"] = marks.pattern
        elif kind in ("list", "dict") and not numbers and marks.pattern is None:
            if marks.min_len is not None:
                out["min"] = self.length(marks.min_len, path)
            if marks.max_len is not None:
                out["max"] = self.length(marks.max_len, path)
        else:
            what = ", ".join(
                attr
                for attr in ("ge", "gt", "le", "lt", "multiple_of", "min_len", "max_len", "pattern")
                if getattr(marks, attr) is not None
            )
            raise self.fail(path, f"the constraints ({what}) do not apply to a {kind} value")
        return cast("TypeIR", out)

    def bound(self, value: object, attr: str, path: str) -> int | float:
        kind = type(value)
        if kind is int and _INT_MIN <= cast("int", value) <= _INT_MAX:
            number: int | float = cast("int", value)
        elif kind is float and math.isfinite(cast("float", value)):
            number = cast("float", value)
        else:
            raise self.fail(path, f"the bound {attr}={value!r} must be a finite int or float")
        if attr == "multiple_of" and number <= 0:
            raise self.fail(path, f"multiple_of must be positive, not {value!r}")
        return number

    def length(self, value: object, path: str) -> int:
        if type(value) is not int or not 0 <= value <= _INT_MAX:
            raise self.fail(path, f"a length bound must be a non-negative int, not {value!r}")
        return value


def _strip_typeddict_wrappers(hint: object) -> tuple[object, bool | None]:
    """Remove ``Required``/``NotRequired``/``ReadOnly``; say which of the first two was there.

    The explicit wrapper wins over ``__required_keys__``, which Python 3.11 computes wrongly for
    string annotations (``from __future__ import annotations``).
    """
    explicit: bool | None = None
    while True:
        origin = typing.get_origin(hint)
        if origin in _TD_WRAPPERS:
            if origin in (typing.Required, typing_extensions.Required):
                explicit = True
            elif origin in (typing.NotRequired, typing_extensions.NotRequired):
                explicit = False
            hint = typing.get_args(hint)[0]
        elif origin is typing.Annotated and _origin(typing.get_args(hint)[0]) in _TD_WRAPPERS:
            inner, inner_explicit = _strip_typeddict_wrappers(typing.get_args(hint)[0])
            metadata: tuple[object, ...] = hint.__metadata__  # type: ignore[attr-defined]
            return typing.Annotated[(inner, *metadata)], (
                inner_explicit if inner_explicit is not None else explicit
            )
        else:
            return hint, explicit


def _origin(tp: object) -> object:
    return typing.get_origin(tp)


def _is_model(tp: type) -> bool:
    # A class can only subclass BaseModel if pydantic is already imported: no import needed here.
    pydantic = sys.modules.get("pydantic")
    base = getattr(pydantic, "BaseModel", None) if pydantic is not None else None
    return base is not None and issubclass(tp, base)


def _set_default(field: FieldIR, value: object) -> None:
    """Put ``value`` as JSON into ``field["default"]``, or leave it out if JSON cannot carry it."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        field["default"] = cast("JsonValue", value)
        return
    if kind is int:
        if _INT_MIN <= cast("int", value) <= _INT_MAX:
            field["default"] = cast("int", value)
        return
    if kind is float:
        if math.isfinite(cast("float", value)):
            field["default"] = cast("float", value)
        return
    converted = _to_json(value)
    if converted is not _UNREPRESENTABLE:
        field["default"] = cast("JsonValue", converted)


_UNREPRESENTABLE: Final = object()


def _to_json(value: object) -> object:
    """``value`` as plain JSON data, or `_UNREPRESENTABLE`."""
    try:
        return orjson.loads(orjson.dumps(value, default=_encode_extra))
    except (TypeError, orjson.JSONEncodeError):
        return _UNREPRESENTABLE


def _to_json_or_fail(builder: _Builder, value: object, path: str) -> JsonValue:
    converted = _to_json(value)
    if converted is _UNREPRESENTABLE:
        raise builder.fail(path, f"the example {value!r} cannot be written as JSON")
    return cast("JsonValue", converted)


def _encode_extra(value: object) -> object:
    """Orjson's hook for values it does not serialize natively."""
    if isinstance(value, dt.timedelta):
        return _iso_duration(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise TypeError("not a finite decimal")
        return str(value)
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value)
        except TypeError:
            return list(value)
    if isinstance(value, tuple):
        as_dict = getattr(value, "_asdict", None)
        return as_dict() if as_dict is not None else list(value)
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _iso_duration(value: dt.timedelta) -> str:
    """An ISO 8601 duration (``P1DT2H3M4.5S``), with a leading ``-`` when negative."""
    if value < dt.timedelta(0):
        return "-" + _iso_duration(-value)
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    time = ""
    if hours:
        time += f"{hours}H"
    if minutes:
        time += f"{minutes}M"
    if value.microseconds:
        time += f"{seconds}.{value.microseconds:06d}".rstrip("0") + "S"
    elif seconds:
        time += f"{seconds}S"
    text = "P" + (f"{value.days}D" if value.days else "") + (f"T{time}" if time else "")
    return "PT0S" if text == "P" else text


__all__ = ["Objects", "docstring_summary", "function_ir", "type_ir"]
