"""``Annotated`` metadata: documentation and constraints gathered, then applied to an IR node.

`read_marks` merges one ``Annotated``'s metadata in order (later ones win): `Param`,
``annotated_types`` markers, ``typing_extensions.Doc`` and pydantic's ``Field(...)``; anything
else (plain strings included) belongs to some other library and is ignored. `constrain` puts the
constraints on the node they apply to. Both report what they cannot express through ``fail``
(the caller's, which names the parameter or field).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeAlias, cast

from ferrotool._schema.ir import MetaIR, TypeIR
from ferrotool._schema.jsonable import INT_MAX, INT_MIN, UNREPRESENTABLE, to_json
from ferrotool._schema.params import Param
from ferrotool._values.json import JsonValue
from ferrotool.errors import SchemaError

Fail: TypeAlias = Callable[[str, str], SchemaError]
"""Builds the error for a path and a reason (the caller raises it)."""


@dataclass(slots=True)
class Marks:
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


def read_marks(metadata: Iterable[object], path: str, fail: Fail) -> Marks:
    """The documentation and constraints of one ``Annotated``'s metadata, merged in order."""
    marks = Marks()
    for item in metadata:
        _absorb(marks, item, path, fail)
    return marks


def _absorb(marks: Marks, item: object, path: str, fail: Fail) -> None:
    """Merge one ``Annotated`` metadata object into ``marks``."""
    if isinstance(item, Param):
        for attr in ("description", "title", "ge", "gt", "le", "lt", "multiple_of", "pattern"):
            value = getattr(item, attr)
            if value is not None:
                setattr(marks, attr, value)
        if item.examples:
            marks.examples = [_example(value, path, fail) for value in item.examples]
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
                _absorb(marks, part, path, fail)
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
            raise fail(path, f"the constraint {item!r} cannot be expressed in a schema")
    elif module in ("typing_extensions", "typing") and name == "Doc":
        marks.description = item.documentation  # type: ignore[attr-defined]
    elif module.startswith("pydantic"):
        _absorb_pydantic(marks, item, name, path, fail)
    # Anything else (plain strings included) belongs to some other library: ignored.


def _absorb_pydantic(marks: Marks, item: object, name: str, path: str, fail: Fail) -> None:
    if name == "FieldInfo":
        for attr in ("description", "title"):
            value = getattr(item, attr)
            if value is not None:
                setattr(marks, attr, value)
        examples = getattr(item, "examples", None)
        if examples:
            marks.examples = [_example(value, path, fail) for value in examples]
        if getattr(item, "deprecated", None):
            marks.deprecated = True
        for part in getattr(item, "metadata", ()):
            _absorb(marks, part, path, fail)
    elif name == "_PydanticGeneralMetadata":
        for key, value in vars(item).items():
            if key == "pattern":
                marks.pattern = value if isinstance(value, str) else value.pattern
            elif key != "strict" and value is not None:
                raise fail(path, f"the constraint {key}={value!r} is not supported")
    elif getattr(item, "__is_annotated_types_grouped_metadata__", False):
        for part in cast("Iterable[object]", item):
            _absorb(marks, part, path, fail)
    elif name != "Strict":  # strictness is the validator's only mode
        raise fail(path, f"the constraint {item!r} is not supported")


def constrain(ty: TypeIR, marks: Marks, path: str, fail: Fail) -> TypeIR:
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
                v if v["kind"] == "null" else constrain(v, marks, path, fail) for v in variants
            ],
        }
    if kind == "annotated":
        inner = constrain(ty["inner"], marks, path, fail)  # type: ignore[typeddict-item]
        return {"kind": "annotated", "inner": inner, "meta": ty["meta"]}  # type: ignore[typeddict-item]
    out = cast("dict[str, object]", dict(ty))
    if kind in ("int", "float") and not lengths and marks.pattern is None:
        for attr in ("ge", "gt", "le", "lt", "multiple_of"):
            value = getattr(marks, attr)
            if value is not None:
                out[attr] = _bound(value, attr, path, fail)
    elif kind == "str" and not numbers:
        if marks.min_len is not None:
            out["min_length"] = _length(marks.min_len, path, fail)
        if marks.max_len is not None:
            out["max_length"] = _length(marks.max_len, path, fail)
        if marks.pattern is not None:
            out["pattern"] = marks.pattern
    elif kind in ("list", "dict") and not numbers and marks.pattern is None:
        if marks.min_len is not None:
            out["min"] = _length(marks.min_len, path, fail)
        if marks.max_len is not None:
            out["max"] = _length(marks.max_len, path, fail)
    else:
        what = ", ".join(
            attr
            for attr in ("ge", "gt", "le", "lt", "multiple_of", "min_len", "max_len", "pattern")
            if getattr(marks, attr) is not None
        )
        raise fail(path, f"the constraints ({what}) do not apply to a {kind} value")
    return cast("TypeIR", out)


def _bound(value: object, attr: str, path: str, fail: Fail) -> int | float:
    kind = type(value)
    if kind is int and INT_MIN <= cast("int", value) <= INT_MAX:
        number: int | float = cast("int", value)
    elif kind is float and math.isfinite(cast("float", value)):
        number = cast("float", value)
    else:
        raise fail(path, f"the bound {attr}={value!r} must be a finite int or float")
    if attr == "multiple_of" and number <= 0:
        raise fail(path, f"multiple_of must be positive, not {value!r}")
    return number


def _length(value: object, path: str, fail: Fail) -> int:
    if type(value) is not int or not 0 <= value <= INT_MAX:
        raise fail(path, f"a length bound must be a non-negative int, not {value!r}")
    return value


def _example(value: object, path: str, fail: Fail) -> JsonValue:
    converted = to_json(value)
    if converted is UNREPRESENTABLE:
        raise fail(path, f"the example {value!r} cannot be written as JSON")
    return cast("JsonValue", converted)


__all__ = ["Fail", "Marks", "constrain", "read_marks"]
