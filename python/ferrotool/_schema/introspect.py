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
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, TypeAlias, cast

import orjson
import typing_extensions

from ferrotool._schema.hints import (
    KEYWORD_ONLY,
    KIND_REASONS,
    POSITIONAL_OR_KEYWORD,
    Unresolved,
    function_hints,
    function_parts,
    read_parameters,
    resolve_hints,
)
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
from ferrotool._schema.jsonable import INT_MAX, INT_MIN, set_default
from ferrotool._schema.marks import constrain, read_marks
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
        decimal.Decimal: "decimal",
    }
)


# Classes of modules `import ferrotool` does not load: an annotation can name one only once its
# module is loaded, so they are looked up by name, then checked to be that very class.
_STRING_CLASSES: Final[Mapping[tuple[str, str], StringValueName]] = MappingProxyType(
    {
        ("uuid", "UUID"): "uuid",
        ("pathlib", "Path"): "path",
        ("pathlib", "PurePath"): "path",
        ("pathlib", "PosixPath"): "path",
        ("pathlib", "PurePosixPath"): "path",
        ("pathlib", "WindowsPath"): "path",
        ("pathlib", "PureWindowsPath"): "path",
    }
)


def _string_value(tp: object) -> StringValueName | None:
    """The string-encoded value ``tp`` is, if any (a date, a UUID, a path...)."""
    value = _STRING_VALUES.get(tp)
    if value is None and isinstance(tp, type):
        for (module, name), late in _STRING_CLASSES.items():
            if name == tp.__name__ and getattr(sys.modules.get(module), name, None) is tp:
                return late
    return value


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
    except Unresolved:
        # A forward reference nested in a generic: let `typing.get_type_hints` resolve everything.
        return _function_ir(fn, skip, descriptions, fast=False)


def _function_ir(
    fn: Callable[..., object],
    skip: Callable[[str, object], bool] | None,
    descriptions: Mapping[str, str] | None,
    *,
    fast: bool,
) -> tuple[bytes, Objects]:
    name, hints_target, doc_target = function_parts(fn)
    parameters, bound_by_code = read_parameters(fn, name)
    hints = function_hints(hints_target, name) if fast else None
    if hints is None:
        hints = resolve_hints(hints_target, name)
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
        if leading and kind is POSITIONAL_OR_KEYWORD:
            positional += 1
        else:
            leading = False
        if kind is not POSITIONAL_OR_KEYWORD and kind is not KEYWORD_ONLY:
            raise SchemaError(
                f"cannot derive a schema for parameter {pname!r} of {name}: {KIND_REASONS[kind]}"
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
            set_default(field, default)
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
class _Builder:
    """State of one `function_ir` / `type_ir` call: the records met so far and their names."""

    function: str | None
    root_label: str = ""
    # True while annotations may still hold unresolved forward references (see `Unresolved`).
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
            marks = read_marks(tp.__metadata__, path, self.fail)  # type: ignore[attr-defined]
            inner = self.convert(tp.__origin__, path)  # type: ignore[attr-defined]
            return constrain(inner, marks, path, self.fail), marks.meta()
        return self.convert(tp, path), {}

    def convert(self, tp: object, path: str) -> TypeIR:
        """One annotation -> one IR node."""
        try:
            scalar = _SCALARS.get(tp)
            value = _string_value(tp) if scalar is None else None
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
                raise Unresolved
            raise self.fail(path, f"unresolved forward reference {tp!r}")
        raise self.fail(path, f"unsupported type {tp!r}")

    def generic(self, tp: object, origin: object, args: tuple[object, ...], path: str) -> TypeIR:
        if origin is typing.Annotated:
            metadata: tuple[object, ...] = tp.__metadata__  # type: ignore[attr-defined]
            marks = read_marks(metadata, path, self.fail)
            inner = constrain(self.convert(args[0], path), marks, path, self.fail)
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
        if kind is int and INT_MIN <= cast("int", value) <= INT_MAX:
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
            set_default(field, default)
        if meta:
            field["meta"] = meta
        return field

    def class_hints(self, cls: type) -> dict[str, object]:
        """A record class's annotations, read directly when that changes nothing.

        While `fast`: the class's own annotations, none a string, no base class with annotations
        of its own (otherwise `typing.get_type_hints`). A forward reference nested in one raises
        `Unresolved` later, which redoes the whole derivation the exact way.
        """
        own = inspect.get_annotations(cls)
        if (
            self.fast
            and all(type(value) is not str for value in own.values())
            and all("__annotations__" not in base.__dict__ for base in cls.__mro__[1:])
        ):
            return {key: _NoneType if value is None else value for key, value in own.items()}
        return resolve_hints(cls, cls.__qualname__)

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
        hints = resolve_hints(cls, cls.__qualname__)
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


__all__ = ["Objects", "docstring_summary", "function_ir", "type_ir"]
