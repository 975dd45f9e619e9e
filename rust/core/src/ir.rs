//! The type IR: what a Python annotation means, as plain data.
//!
//! Python (`ferrotool._schema.introspect`) reads annotations and emits this IR as JSON (version
//! [`IR_VERSION`]); [`crate::derive`] turns it into a JSON Schema and the binding compiles it into
//! a typed validator. Python objects (record constructors, enum classes, pydantic models) never
//! enter the IR: they are looked up by name in a side table owned by the binding.
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bumped on any incompatible change of the IR's JSON form.
pub const IR_VERSION: u32 = 1;

/// Documentation and examples attached to a type or a field; never affects validation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deprecated: bool,
}

impl Meta {
    pub fn is_empty(&self) -> bool {
        self.title.is_none()
            && self.description.is_none()
            && self.examples.is_empty()
            && !self.deprecated
    }
}

/// Bounds on a number. Values are JSON numbers (integers stay integers in the schema).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NumberBounds {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ge: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gt: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub le: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lt: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiple_of: Option<serde_json::Number>,
}

/// Bounds on a string. Lengths count Unicode code points, as JSON Schema does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StringBounds {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// An ECMA-262 regular expression, unanchored (JSON Schema's `pattern`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

/// Bounds on a collection's size (items of an array, properties of an object).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizeBounds {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
}

/// Standard-library values sent as JSON strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StringValue {
    /// `datetime.datetime`: RFC 3339 `date-time` (an offset is required).
    Datetime,
    /// `datetime.date`: RFC 3339 `full-date`.
    Date,
    /// `datetime.time`: RFC 3339 `full-time` (an offset is required).
    Time,
    /// `datetime.timedelta`: ISO 8601 duration in days, hours, minutes and (fractional) seconds.
    Timedelta,
    /// `uuid.UUID`: the hyphenated 8-4-4-4-12 form.
    Uuid,
    /// `decimal.Decimal`: a JSON-number-like decimal string.
    Decimal,
    /// `pathlib.Path` and its pure variants: any string.
    Path,
}

/// One Python type, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Type {
    /// `object` / `typing.Any`: any JSON value, passed through.
    Any,
    /// `None`.
    Null,
    Bool,
    Int {
        #[serde(default, flatten)]
        bounds: NumberBounds,
    },
    Float {
        #[serde(default, flatten)]
        bounds: NumberBounds,
    },
    Str {
        #[serde(default, flatten)]
        bounds: StringBounds,
    },
    /// A standard-library value carried as a string (see [`StringValue`]).
    StrValue {
        value: StringValue,
    },
    /// `Literal[...]`: JSON scalars (strings, integers, booleans, null).
    Literal {
        values: Vec<Value>,
    },
    /// An `enum.Enum` subclass with str or int values; `name` keys the side table.
    Enum {
        name: String,
        values: Vec<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// `list[T]`, `Sequence[T]`, `tuple[T, ...]` (`container` says which Python value to build),
    /// `set[T]` and `frozenset[T]` (`unique`).
    List {
        items: Box<Type>,
        #[serde(default)]
        container: Container,
        #[serde(default, flatten)]
        size: SizeBounds,
    },
    /// `tuple[A, B, C]`: a fixed-length tuple.
    Tuple {
        items: Vec<Type>,
    },
    /// `dict[str, T]` / `Mapping[str, T]`.
    Dict {
        values: Box<Type>,
        #[serde(default, flatten)]
        size: SizeBounds,
    },
    /// `A | B | ...` (with `Optional[A]` as `A | None`). Variants are tried in order.
    Union {
        variants: Vec<Type>,
    },
    /// A record defined in [`Root::defs`].
    Ref {
        name: String,
    },
    /// A pydantic model: its schema is its own, it validates itself; `name` keys the side table.
    Model {
        name: String,
        schema: Value,
    },
    /// `Annotated[T, ...]` documentation on a nested type.
    Annotated {
        inner: Box<Type>,
        meta: Meta,
    },
}

/// How a list-like value is built in Python.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Container {
    #[default]
    List,
    Tuple,
    Set,
    Frozenset,
}

impl Container {
    /// Sets forbid duplicates in the JSON form (`uniqueItems`).
    pub const fn unique(self) -> bool {
        matches!(self, Self::Set | Self::Frozenset)
    }
}

/// One named field of a record or one parameter of a function.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: Type,
    pub required: bool,
    /// The default as JSON, shown in the schema. A missing optional field is left out of the
    /// built value, so Python applies its own default. A `null` default is `Some(Value::Null)`;
    /// only a missing key means "no default shown".
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub default: Option<Value>,
    #[serde(default, skip_serializing_if = "Meta::is_empty")]
    pub meta: Meta,
}

/// A record: a dataclass, `TypedDict`, `NamedTuple`, or a function's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub fields: Vec<Field>,
    /// When true (the default), properties not listed are rejected (`additionalProperties: false`).
    #[serde(default = "default_true")]
    pub closed: bool,
}

/// A present key, `null` included, is `Some` (plain `Option` would read `null` as `None`).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

const fn default_true() -> bool {
    true
}

/// A complete IR document: the top-level record (a function's parameters, or a wrapper around a
/// single type) and the records it references.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Root {
    pub version: u32,
    pub root: RootType,
    #[serde(default)]
    pub defs: IndexMap<String, Record>,
}

/// What the document describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RootType {
    /// A function's parameters: validated into a `dict` of keyword arguments.
    Function {
        record: Record,
        /// How many of the record's leading fields are parameters that may be passed by
        /// position (positional-or-keyword, in order, none skipped before them).
        #[serde(default, skip_serializing_if = "is_zero")]
        positional: usize,
    },
    /// A single type (used by `type_schema`).
    Type {
        #[serde(rename = "type")]
        ty: Type,
    },
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(value: &usize) -> bool {
    *value == 0
}
