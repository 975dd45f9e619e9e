//! The type IR → a JSON Schema (draft 2020-12) describing exactly what the typed validator accepts.
//!
//! The output is deterministic and byte-stable: `serde_json` keeps insertion order, and every node
//! is built with its keywords in this fixed order:
//!
//! 1. what the value is: `$ref`, or `type` followed by `const` / `enum`, or `anyOf`;
//! 2. `format`;
//! 3. constraints: `minimum`, `exclusiveMinimum`, `maximum`, `exclusiveMaximum`, `multipleOf`;
//!    `minLength`, `maxLength`, `pattern`; `prefixItems`, `items`, `minItems`, `maxItems`,
//!    `uniqueItems`; `properties`, `required`, `additionalProperties`, `minProperties`,
//!    `maxProperties`;
//! 4. annotations: `title`, `description`, `examples`, `deprecated`, `default`;
//! 5. `$defs`, on the root only, in the order the definitions are first referenced.
//!
//! Records become `$defs` entries referenced with `$ref`; enums are inlined (`enum` + `title`);
//! pydantic models are hoisted into `$defs` under their name, with their own `$defs` merged into
//! the root's (an entry equal to an existing one is shared; a different one is an error).
//!
//! Value mapping (matching the typed validator): `int` → `integer` (JSON integers, `1.0`
//! included); `float` → `number`; `bool` → `boolean`; `str` → `string`; standard-library values
//! → strings with a `format` (`date-time`, `date`, `time`, `duration`, `uuid`, `path`) or, for
//! `Decimal`, a `pattern` accepting JSON-number-like strings ([`DECIMAL_PATTERN`]); sets →
//! `uniqueItems`; fixed tuples → `prefixItems` with `items: false` and an exact length; records →
//! closed objects (`additionalProperties: false`).
use std::collections::HashMap;
use std::fmt;

use indexmap::IndexMap;
use serde_json::{Map, Number, Value};

use crate::duration::DURATION_PATTERN;
use crate::ir::{
    Field, IR_VERSION, Meta, NumberBounds, Record, Root, RootType, SizeBounds, StringBounds,
    StringValue, Type,
};

/// The `pattern` of a `decimal.Decimal` string: a JSON number's syntax (no `NaN`, no infinity).
pub const DECIMAL_PATTERN: &str = r"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$";

/// Why an IR document cannot become a schema. Python emits valid IR, so these mean a bug or a
/// hand-written document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeriveError {
    /// The document's `version` is not [`IR_VERSION`].
    UnsupportedVersion(u32),
    /// A `ref` names a record missing from `defs`.
    UnknownRecord(String),
    /// A union without variants.
    EmptyUnion,
    /// A `Literal` without values.
    EmptyLiteral,
    /// An enum without values.
    EmptyEnum(String),
    /// `multiple_of` must be strictly positive.
    NonPositiveMultipleOf(Number),
    /// Two different schemas want the same `$defs` name.
    DefsClash(String),
    /// A model's schema is not a JSON object (or its `$defs` is not one).
    InvalidModelSchema(String),
}

impl fmt::Display for DeriveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnsupportedVersion(v) => {
                write!(f, "unsupported IR version {v} (expected {IR_VERSION})")
            }
            Self::UnknownRecord(name) => write!(f, "reference to an unknown record {name:?}"),
            Self::EmptyUnion => f.write_str("a union needs at least one variant"),
            Self::EmptyLiteral => f.write_str("a Literal needs at least one value"),
            Self::EmptyEnum(name) => write!(f, "enum {name:?} has no values"),
            Self::NonPositiveMultipleOf(n) => write!(f, "multiple_of must be positive, not {n}"),
            Self::DefsClash(name) => {
                write!(f, "two different schemas are both named {name:?} in $defs")
            }
            Self::InvalidModelSchema(name) => {
                write!(f, "the schema of model {name:?} is not a JSON object")
            }
        }
    }
}

impl std::error::Error for DeriveError {}

/// Derive the JSON Schema (draft 2020-12) of an IR document.
///
/// A function root gives the object schema of its keyword arguments (its description belongs to
/// the tool, not to the parameters schema); a type root gives the type's schema.
pub fn derive_schema(root: &Root) -> Result<Value, DeriveError> {
    if root.version != IR_VERSION {
        return Err(DeriveError::UnsupportedVersion(root.version));
    }
    let mut deriver = Deriver {
        records: &root.defs,
        defs: Map::new(),
        origins: HashMap::new(),
    };
    let mut schema = match &root.root {
        RootType::Function { record, .. } => deriver.record(record, false)?,
        RootType::Type { ty } => deriver.ty(ty)?,
    };
    if !deriver.defs.is_empty() {
        schema.insert("$defs".to_owned(), Value::Object(deriver.defs));
    }
    Ok(Value::Object(schema))
}

/// Where a `$defs` entry came from: records are ours; model entries may be shared when equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Record,
    Model,
}

struct Deriver<'a> {
    records: &'a IndexMap<String, Record>,
    defs: Map<String, Value>,
    origins: HashMap<String, Origin>,
}

type Schema = Map<String, Value>;

fn object(pairs: impl IntoIterator<Item = (&'static str, Value)>) -> Schema {
    pairs
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
}

fn of_type(name: &str) -> Schema {
    object([("type", Value::String(name.to_owned()))])
}

impl Deriver<'_> {
    fn ty(&mut self, ty: &Type) -> Result<Schema, DeriveError> {
        Ok(match ty {
            Type::Any => Schema::new(),
            Type::Null => of_type("null"),
            Type::Bool => of_type("boolean"),
            Type::Int { bounds } => number_schema("integer", bounds)?,
            Type::Float { bounds } => number_schema("number", bounds)?,
            Type::Str { bounds } => string_schema(bounds),
            Type::StrValue { value } => string_value_schema(*value),
            Type::Literal { values } => literal_schema(values)?,
            Type::Enum {
                name,
                values,
                description,
            } => enum_schema(name, values, description.as_deref())?,
            Type::List {
                items,
                container,
                size,
            } => {
                let mut schema = of_type("array");
                schema.insert("items".to_owned(), Value::Object(self.ty(items)?));
                insert_size(&mut schema, size, "minItems", "maxItems");
                if container.unique() {
                    schema.insert("uniqueItems".to_owned(), Value::Bool(true));
                }
                schema
            }
            Type::Tuple { items } => {
                let mut schema = of_type("array");
                if !items.is_empty() {
                    // `prefixItems` must not be empty (metaschema); `maxItems: 0` says it all.
                    let prefix = items
                        .iter()
                        .map(|item| self.ty(item).map(Value::Object))
                        .collect::<Result<Vec<_>, _>>()?;
                    schema.insert("prefixItems".to_owned(), Value::Array(prefix));
                    schema.insert("items".to_owned(), Value::Bool(false));
                    schema.insert("minItems".to_owned(), Value::from(items.len()));
                }
                schema.insert("maxItems".to_owned(), Value::from(items.len()));
                schema
            }
            Type::Dict { values, size } => {
                let mut schema = of_type("object");
                schema.insert(
                    "additionalProperties".to_owned(),
                    Value::Object(self.ty(values)?),
                );
                insert_size(&mut schema, size, "minProperties", "maxProperties");
                schema
            }
            Type::Union { variants } => {
                let mut flat = Vec::with_capacity(variants.len());
                flatten_union(variants, &mut flat);
                match flat.as_slice() {
                    [] => return Err(DeriveError::EmptyUnion),
                    [single] => self.ty(single)?,
                    _ => {
                        let any_of = flat
                            .iter()
                            .map(|variant| self.ty(variant).map(Value::Object))
                            .collect::<Result<Vec<_>, _>>()?;
                        object([("anyOf", Value::Array(any_of))])
                    }
                }
            }
            Type::Ref { name } => {
                self.ensure_record(name)?;
                reference(name)
            }
            Type::Model { name, schema } => {
                self.hoist_model(name, schema)?;
                reference(name)
            }
            Type::Annotated { inner, meta } => {
                let mut schema = self.ty(inner)?;
                insert_meta(&mut schema, meta);
                schema
            }
        })
    }

    /// A record's object schema; `described` adds the record's description (not on a function).
    fn record(&mut self, record: &Record, described: bool) -> Result<Schema, DeriveError> {
        let mut properties = Map::with_capacity(record.fields.len());
        let mut required = Vec::new();
        for field in &record.fields {
            properties.insert(field.name.clone(), Value::Object(self.field(field)?));
            if field.required {
                required.push(Value::String(field.name.clone()));
            }
        }
        let mut schema = of_type("object");
        schema.insert("properties".to_owned(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".to_owned(), Value::Array(required));
        }
        if record.closed {
            schema.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
        if described && let Some(description) = &record.description {
            schema.insert("description".to_owned(), Value::String(description.clone()));
        }
        Ok(schema)
    }

    fn field(&mut self, field: &Field) -> Result<Schema, DeriveError> {
        let mut schema = self.ty(&field.ty)?;
        insert_meta(&mut schema, &field.meta);
        if let Some(default) = &field.default {
            schema.insert("default".to_owned(), default.clone());
        }
        Ok(schema)
    }

    fn ensure_record(&mut self, name: &str) -> Result<(), DeriveError> {
        match self.origins.get(name) {
            Some(Origin::Record) => return Ok(()),
            Some(Origin::Model) => return Err(DeriveError::DefsClash(name.to_owned())),
            None => {}
        }
        let records = self.records;
        let record = records
            .get(name)
            .ok_or_else(|| DeriveError::UnknownRecord(name.to_owned()))?;
        // Reserve the slot first: a recursive reference then finds it, and `$defs` lists entries
        // in the order they are first referenced.
        self.origins.insert(name.to_owned(), Origin::Record);
        self.defs.insert(name.to_owned(), Value::Null);
        let schema = self.record(record, true)?;
        self.defs.insert(name.to_owned(), Value::Object(schema));
        Ok(())
    }

    fn hoist_model(&mut self, name: &str, schema: &Value) -> Result<(), DeriveError> {
        let invalid = || DeriveError::InvalidModelSchema(name.to_owned());
        let mut own = schema.as_object().ok_or_else(invalid)?.clone();
        let own_defs = match own.remove("$defs") {
            None => Map::new(),
            Some(Value::Object(defs)) => defs,
            Some(_) => return Err(invalid()),
        };
        // A recursive pydantic model is `{"$ref": "#/$defs/Name", "$defs": {"Name": ...}}`: its
        // definition is already among its `$defs`.
        let self_reference = own.len() == 1
            && own.get("$ref").and_then(Value::as_str) == Some(&format!("#/$defs/{name}"))
            && own_defs.contains_key(name);
        if !self_reference {
            self.add_model_def(name, Value::Object(own))?;
        }
        for (key, value) in own_defs {
            self.add_model_def(&key, value)?;
        }
        Ok(())
    }

    fn add_model_def(&mut self, name: &str, value: Value) -> Result<(), DeriveError> {
        match self.origins.get(name) {
            None => {
                self.origins.insert(name.to_owned(), Origin::Model);
                self.defs.insert(name.to_owned(), value);
                Ok(())
            }
            Some(Origin::Model) if self.defs.get(name) == Some(&value) => Ok(()),
            Some(_) => Err(DeriveError::DefsClash(name.to_owned())),
        }
    }
}

fn flatten_union<'t>(variants: &'t [Type], out: &mut Vec<&'t Type>) {
    for variant in variants {
        if let Type::Union { variants } = variant {
            flatten_union(variants, out);
        } else {
            out.push(variant);
        }
    }
}

fn number_schema(name: &str, bounds: &NumberBounds) -> Result<Schema, DeriveError> {
    let mut schema = of_type(name);
    let pairs = [
        ("minimum", &bounds.ge),
        ("exclusiveMinimum", &bounds.gt),
        ("maximum", &bounds.le),
        ("exclusiveMaximum", &bounds.lt),
    ];
    for (key, bound) in pairs {
        if let Some(bound) = bound {
            schema.insert(key.to_owned(), Value::Number(bound.clone()));
        }
    }
    if let Some(multiple) = &bounds.multiple_of {
        if !multiple.as_f64().is_some_and(|m| m > 0.0) {
            return Err(DeriveError::NonPositiveMultipleOf(multiple.clone()));
        }
        schema.insert("multipleOf".to_owned(), Value::Number(multiple.clone()));
    }
    Ok(schema)
}

fn string_schema(bounds: &StringBounds) -> Schema {
    let mut schema = of_type("string");
    if let Some(min) = bounds.min_length {
        schema.insert("minLength".to_owned(), Value::from(min));
    }
    if let Some(max) = bounds.max_length {
        schema.insert("maxLength".to_owned(), Value::from(max));
    }
    if let Some(pattern) = &bounds.pattern {
        schema.insert("pattern".to_owned(), Value::String(pattern.clone()));
    }
    schema
}

fn string_value_schema(value: StringValue) -> Schema {
    let mut schema = of_type("string");
    let (key, text) = match value {
        StringValue::Datetime => ("format", "date-time"),
        StringValue::Date => ("format", "date"),
        StringValue::Time => ("format", "time"),
        // RFC 3339 durations allow years and months, which `timedelta` cannot hold, and no
        // fractions: the exact grammar the validator reads is stated as a pattern instead.
        StringValue::Timedelta => ("pattern", DURATION_PATTERN),
        StringValue::Uuid => ("format", "uuid"),
        StringValue::Path => ("format", "path"),
        StringValue::Decimal => ("pattern", DECIMAL_PATTERN),
    };
    schema.insert(key.to_owned(), Value::String(text.to_owned()));
    schema
}

/// The JSON Schema `type` shared by all `values`, if they share one.
fn shared_type(values: &[Value]) -> Option<&'static str> {
    let type_of = |value: &Value| match value {
        Value::Null => Some("null"),
        Value::Bool(_) => Some("boolean"),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some("integer"),
        Value::Number(_) => Some("number"),
        Value::String(_) => Some("string"),
        Value::Array(_) | Value::Object(_) => None,
    };
    let first = type_of(values.first()?)?;
    values
        .iter()
        .all(|value| type_of(value) == Some(first))
        .then_some(first)
}

fn literal_schema(values: &[Value]) -> Result<Schema, DeriveError> {
    match values {
        [] => Err(DeriveError::EmptyLiteral),
        [Value::Null] => Ok(of_type("null")),
        _ => Ok(enum_like(values)),
    }
}

fn enum_like(values: &[Value]) -> Schema {
    let mut schema = shared_type(values).map_or_else(Schema::new, of_type);
    if let [single] = values {
        schema.insert("const".to_owned(), single.clone());
    } else {
        schema.insert("enum".to_owned(), Value::Array(values.to_vec()));
    }
    schema
}

fn enum_schema(
    name: &str,
    values: &[Value],
    description: Option<&str>,
) -> Result<Schema, DeriveError> {
    if values.is_empty() {
        return Err(DeriveError::EmptyEnum(name.to_owned()));
    }
    let mut schema = enum_like(values);
    schema.insert("title".to_owned(), Value::String(name.to_owned()));
    if let Some(description) = description {
        schema.insert(
            "description".to_owned(),
            Value::String(description.to_owned()),
        );
    }
    Ok(schema)
}

fn insert_size(schema: &mut Schema, size: &SizeBounds, min_key: &str, max_key: &str) {
    if let Some(min) = size.min {
        schema.insert(min_key.to_owned(), Value::from(min));
    }
    if let Some(max) = size.max {
        schema.insert(max_key.to_owned(), Value::from(max));
    }
}

/// Documentation keywords; a value already present (an enum's title) is replaced in place.
fn insert_meta(schema: &mut Schema, meta: &Meta) {
    if let Some(title) = &meta.title {
        schema.insert("title".to_owned(), Value::String(title.clone()));
    }
    if let Some(description) = &meta.description {
        schema.insert("description".to_owned(), Value::String(description.clone()));
    }
    if !meta.examples.is_empty() {
        schema.insert("examples".to_owned(), Value::Array(meta.examples.clone()));
    }
    if meta.deprecated {
        schema.insert("deprecated".to_owned(), Value::Bool(true));
    }
}

fn reference(name: &str) -> Schema {
    object([(
        "$ref",
        Value::String(format!("#/$defs/{}", pointer_fragment(name))),
    )])
}

/// A `$defs` key as a URI fragment JSON pointer token: `~` and `/` escaped (RFC 6901), then
/// anything outside RFC 3986's fragment characters percent-encoded.
fn pointer_fragment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.replace('~', "~0").replace('/', "~1").bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&byte) {
            out.push(char::from(byte));
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0F)]));
        }
    }
    out
}

#[cfg(test)]
mod tests;
