"""ferrotool: strictly typed, functional tools for LLM agents, with a Rust core.

The schema core: derive a JSON Schema (draft 2020-12) and a compiled validator from a typed
function or type, or compile a validator from any JSON Schema document.
"""

from ferrotool._core import ErrorDetail, JsonSchemaValidator, ValidationError
from ferrotool._errors import SchemaError
from ferrotool._json import JsonValue
from ferrotool._params import Param
from ferrotool._schema import (
    DEFAULT_LIMITS,
    FunctionSchema,
    Limits,
    TypeSchema,
    function_schema,
    type_schema,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_LIMITS",
    "ErrorDetail",
    "FunctionSchema",
    "JsonSchemaValidator",
    "JsonValue",
    "Limits",
    "Param",
    "SchemaError",
    "TypeSchema",
    "ValidationError",
    "function_schema",
    "type_schema",
]
