"""`Param`: documentation and constraints for one parameter or field, used inside `Annotated`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from ferrotool._values.json import JsonValue


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """Documentation and constraints for a tool parameter, a record field or a nested type.

    Used as ``Annotated[int, Param(description="How many days", ge=1, le=14)]``. Several markers
    in one ``Annotated`` merge, later ones overriding earlier ones, together with the
    ``annotated_types`` markers (``Ge``, ``MinLen``, ``Interval``, ...) and pydantic's
    ``Field(...)``. Plain strings in ``Annotated`` metadata are ignored (other libraries use them
    for their own purposes); use ``description`` instead.

    Attributes:
        description: Shown to the model as the parameter's description.
        title: A short human-readable title.
        examples: Example values, shown in the schema.
        ge: The number must be greater than or equal to this (``minimum``).
        gt: The number must be greater than this (``exclusiveMinimum``).
        le: The number must be less than or equal to this (``maximum``).
        lt: The number must be less than this (``exclusiveMaximum``).
        multiple_of: The number must be a multiple of this (``multipleOf``, positive).
        min_length: The minimum length of a string, in code points (also accepted for
            collections, as ``len()``).
        max_length: The maximum length of a string, in code points (also accepted for
            collections).
        pattern: An ECMA-262 regular expression the string must match somewhere (unanchored,
            as JSON Schema's ``pattern``; add ``^...$`` to match the whole string).
        min_items: The minimum number of items of a list, set, tuple or dict.
        max_items: The maximum number of items of a list, set, tuple or dict.
        deprecated: Marks the parameter as deprecated in the schema.
    """

    description: str | None = None
    title: str | None = None
    examples: tuple[JsonValue, ...] = ()
    ge: int | float | None = None
    gt: int | float | None = None
    le: int | float | None = None
    lt: int | float | None = None
    multiple_of: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    min_items: int | None = None
    max_items: int | None = None
    deprecated: bool = False


__all__ = ["Param"]
