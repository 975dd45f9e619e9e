"""The Rust extension: schema derivation and compiled validators."""

from collections.abc import Callable, Mapping
from typing import final

__version__: str

class ValidationError(ValueError):
    """Input did not match a schema.

    Attributes:
        errors: One `ErrorDetail` per problem found, in input order (capped by the validator's
            ``max_errors``).
    """

    errors: tuple[ErrorDetail, ...]

@final
class ErrorDetail:
    """One problem found in an input."""

    @property
    def code(self) -> str:
        """The stable snake_case code, e.g. ``"wrong_type"`` or ``"missing_property"``."""
    @property
    def path(self) -> tuple[str | int, ...]:
        """Where the value is: object keys and array indices, outermost first."""
    @property
    def pointer(self) -> str:
        """The same location as a JSON Pointer (``""`` for the whole input)."""
    @property
    def expected(self) -> str:
        """What the schema expected, e.g. ``"integer"`` or ``"at least 1"``."""
    @property
    def found(self) -> str:
        """A short rendering of what was found, e.g. ``'string "three"'``."""
    @property
    def message(self) -> str:
        """A one-line message: ``items/2/qty: expected integer, found string "three" (wrong_type)``."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

@final
class TypedValidator:
    """A validator compiled from the type IR, building typed Python values."""

    def __new__(
        cls,
        ir: bytes,
        objects: Mapping[str, tuple[str, object]],
        *,
        function: Callable[..., object] | None = None,
        lenient: bool = False,
        max_depth: int = 128,
        max_bytes: int = 8388608,
        max_errors: int = 20,
    ) -> TypedValidator: ...
    def validate_json(self, data: str | bytes, /) -> dict[str, object]:
        """Parse and validate raw JSON in one pass; return the typed value."""
    def validate_python(self, data: object, /) -> dict[str, object]:
        """Validate an already parsed value; return the typed value."""
    def call_json(self, data: str | bytes, /) -> object:
        """Validate raw JSON arguments and call the function with them."""
    @property
    def lenient(self) -> bool: ...
    @property
    def max_depth(self) -> int: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def max_errors(self) -> int: ...

def derive_schema(ir: bytes, /) -> bytes:
    """Derive the JSON Schema (draft 2020-12) of a type IR document, as JSON bytes."""
