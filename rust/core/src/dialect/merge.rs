//! Schemas combined and reshaped: two values of one keyword merged as one schema asking for
//! both (`$ref` siblings, `allOf` entries), a property made nullable, a schema of several types
//! split into one `anyOf` branch per type; and the small vocabulary they share.
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::node::KeywordValue;

pub(super) const TYPE_NAMES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "integer", "string",
];
/// Keywords that describe rather than constrain: the outer schema's value wins in a merge.
pub(super) const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];
const STRING_KEYWORDS: &[&str] = &["minLength", "maxLength", "pattern", "format"];
const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];
const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
];
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
];

/// The JSON type names a value has (an integral number is both an integer and a number).
pub(super) fn value_types(value: &Value) -> &'static [&'static str] {
    match value {
        Value::Null => &["null"],
        Value::Bool(_) => &["boolean"],
        Value::Number(n) if n.is_i64() || n.is_u64() => &["integer", "number"],
        Value::Number(_) => &["number"],
        Value::String(_) => &["string"],
        Value::Array(_) => &["array"],
        Value::Object(_) => &["object"],
    }
}

/// The narrowest type name of a value, for inferring `type` from `enum` / `const`.
pub(super) fn value_type(value: &Value) -> &'static str {
    value_types(value)[0]
}

pub(super) fn is_primitive(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

/// Writes `type` (first among the keywords when it was missing), or removes it for `None`.
pub(super) fn set_types(out: &mut Map<String, Value>, types: Option<&[String]>) {
    if let Some(types) = types {
        if out.contains_key("type") {
            out.insert("type".to_owned(), types_value(types));
        } else {
            out.shift_insert(0, "type".to_owned(), types_value(types));
        }
    } else {
        out.shift_remove("type");
    }
}

pub(super) fn types_value(types: &[String]) -> Value {
    match types {
        [single] => Value::String(single.clone()),
        _ => Value::Array(types.iter().cloned().map(Value::String).collect()),
    }
}

pub(super) fn str_list(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Combine two values of the same keyword, as one schema asking for both; `None` if they
/// cannot be combined exactly.
pub(super) fn merge_values<'a>(
    key: &str,
    outer: &KeywordValue<'a>,
    inner: &KeywordValue<'a>,
) -> Option<KeywordValue<'a>> {
    if let (KeywordValue::Properties(outer), KeywordValue::Properties(inner)) = (outer, inner) {
        let mut merged = outer.clone();
        for prop in inner {
            match merged.iter().find(|p| p.name == prop.name) {
                Some(existing) if existing.schema == prop.schema => {}
                Some(_) => return None,
                None => merged.push(prop.clone()),
            }
        }
        return Some(KeywordValue::Properties(merged));
    }
    let (a, b) = (outer.as_value(), inner.as_value());
    if a == b {
        return Some(outer.clone());
    }
    let merged = match key {
        "required" => {
            let mut names = str_list(&a);
            for name in str_list(&b) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            Value::Array(names.into_iter().map(Value::String).collect())
        }
        "type" => {
            let (left, right) = (str_list(&a), str_list(&b));
            let mut both: Vec<String> = Vec::new();
            for name in &left {
                let meets = right.contains(name)
                    || name == "integer" && right.iter().any(|r| r == "number");
                if meets && !both.contains(name) {
                    both.push(name.clone());
                }
            }
            for name in &right {
                if name == "integer" && left.iter().any(|l| l == "number") && !both.contains(name) {
                    both.push(name.clone());
                }
            }
            if both.is_empty() {
                return None;
            }
            types_value(&both)
        }
        "enum" => {
            let (Value::Array(left), Value::Array(right)) = (a.as_ref(), b.as_ref()) else {
                return None;
            };
            let both: Vec<Value> = left.iter().filter(|v| right.contains(v)).cloned().collect();
            if both.is_empty() {
                return None;
            }
            Value::Array(both)
        }
        "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties" => {
            pick(&a, &b, true)?
        }
        "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties" => {
            pick(&a, &b, false)?
        }
        "$defs" | "definitions" => {
            let (Value::Object(left), Value::Object(right)) = (a.as_ref(), b.as_ref()) else {
                return None;
            };
            let mut merged = left.clone();
            for (name, def) in right {
                match merged.get(name) {
                    Some(existing) if existing != def => return None,
                    Some(_) => {}
                    None => {
                        merged.insert(name.clone(), def.clone());
                    }
                }
            }
            Value::Object(merged)
        }
        _ => return None,
    };
    Some(KeywordValue::Built(merged))
}

/// Whether merging into a closed object adds properties it does not declare.
pub(super) fn widens(
    closed: bool,
    own: Option<&HashSet<String>>,
    other: Option<&HashSet<String>>,
) -> bool {
    closed
        && other.is_some_and(|other| {
            other
                .iter()
                .any(|name| own.is_none_or(|own| !own.contains(name)))
        })
}

fn pick(a: &Value, b: &Value, larger: bool) -> Option<Value> {
    let (x, y) = (a.as_f64()?, b.as_f64()?);
    Some(if (y > x) == larger {
        b.clone()
    } else {
        a.clone()
    })
}

pub(super) fn is_null_schema(schema: &Value) -> bool {
    schema.as_object().is_some_and(|map| {
        map.get("type").and_then(Value::as_str) == Some("null")
            && map
                .keys()
                .all(|key| key == "type" || ANNOTATIONS.contains(&key.as_str()))
    })
}

/// Whether a transformed schema accepts `null` (conservatively false through a `$ref`).
fn accepts_null(schema: &Value) -> bool {
    let map = match schema {
        Value::Bool(accepts) => return *accepts,
        Value::Object(map) => map,
        _ => return false,
    };
    if map.contains_key("$ref") {
        return false;
    }
    let by_values = match (map.get("const"), map.get("enum")) {
        (Some(value), _) => value.is_null(),
        (None, Some(Value::Array(values))) => values.iter().any(Value::is_null),
        _ => true,
    };
    if !by_values {
        return false;
    }
    if let Some(kind) = map.get("type") {
        return str_list(kind).iter().any(|name| name == "null");
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        return branches.iter().any(accepts_null);
    }
    true
}

/// OpenAI: make a property schema accept `null`; also says whether it already did.
pub(super) fn make_nullable(schema: Value) -> (Value, bool) {
    if accepts_null(&schema) {
        return (schema, true);
    }
    let Value::Object(mut map) = schema else {
        return (schema, false);
    };
    let add_null_value = |map: &mut Map<String, Value>| {
        if let Some(value) = map.shift_remove("const") {
            map.insert("enum".to_owned(), Value::Array(vec![value, Value::Null]));
        } else if let Some(Value::Array(values)) = map.get_mut("enum") {
            values.push(Value::Null);
        }
    };
    if !map.contains_key("anyOf")
        && !map.contains_key("$ref")
        && let Some(kind) = map.get_mut("type")
    {
        let mut names = str_list(kind);
        names.push("null".to_owned());
        *kind = types_value(&names);
        add_null_value(&mut map);
        return (Value::Object(map), false);
    }
    if !map.contains_key("type")
        && !map.contains_key("$ref")
        && let Some(Value::Array(branches)) = map.get_mut("anyOf")
    {
        branches.push(null_schema());
        add_null_value(&mut map);
        return (Value::Object(map), false);
    }
    let mut outer = Map::new();
    for key in ["title", "description"] {
        if let Some(value) = map.shift_remove(key) {
            outer.insert(key.to_owned(), value);
        }
    }
    outer.shift_insert(
        0,
        "anyOf".to_owned(),
        Value::Array(vec![Value::Object(map), null_schema()]),
    );
    (Value::Object(outer), false)
}

fn null_schema() -> Value {
    Value::Object(Map::from_iter([(
        "type".to_owned(),
        Value::String("null".to_owned()),
    )]))
}

/// A schema with several types → `anyOf` with one branch per type holding that type's keywords
/// (`enum` / `const` values filtered by type); annotations stay outside. Gemini leaves `null`
/// to `nullable`.
pub(super) fn split_types(
    out: Map<String, Value>,
    types: &[String],
    gemini: bool,
) -> Map<String, Value> {
    let mut outer = Map::new();
    let mut shared = Map::new();
    for (key, value) in out {
        if key == "type" {
            continue;
        }
        if ANNOTATIONS.contains(&key.as_str()) || key == "nullable" {
            outer.insert(key, value);
        } else {
            shared.insert(key, value);
        }
    }
    let mut branches = Vec::new();
    for kind in types {
        if gemini && kind == "null" {
            continue;
        }
        let specific: &[&str] = match kind.as_str() {
            "string" => STRING_KEYWORDS,
            "number" | "integer" => NUMBER_KEYWORDS,
            "array" => ARRAY_KEYWORDS,
            "object" => OBJECT_KEYWORDS,
            _ => &[],
        };
        let mut branch = Map::new();
        branch.insert("type".to_owned(), Value::String(kind.clone()));
        let mut empty = false;
        for (key, value) in &shared {
            match key.as_str() {
                "enum" => {
                    let Value::Array(values) = value else {
                        continue;
                    };
                    let kept: Vec<Value> = values
                        .iter()
                        .filter(|v| value_types(v).contains(&kind.as_str()))
                        .cloned()
                        .collect();
                    empty |= kept.is_empty();
                    branch.insert(key.clone(), Value::Array(kept));
                }
                "const" => {
                    empty |= !value_types(value).contains(&kind.as_str());
                    branch.insert(key.clone(), value.clone());
                }
                "format" => {
                    let numeric =
                        matches!(value.as_str(), Some("float" | "double" | "int32" | "int64"));
                    if numeric == (kind == "number" || kind == "integer") {
                        branch.insert(key.clone(), value.clone());
                    }
                }
                _ if specific.contains(&key.as_str()) => {
                    branch.insert(key.clone(), value.clone());
                }
                _ => {}
            }
        }
        if !empty {
            branches.push(Value::Object(branch));
        }
    }
    let mut result = Map::new();
    result.insert("anyOf".to_owned(), Value::Array(branches));
    for (key, value) in shared {
        let per_type = ["enum", "const", "format"].contains(&key.as_str())
            || [
                STRING_KEYWORDS,
                NUMBER_KEYWORDS,
                ARRAY_KEYWORDS,
                OBJECT_KEYWORDS,
            ]
            .iter()
            .any(|set| set.contains(&key.as_str()));
        if !per_type {
            result.insert(key, value);
        }
    }
    result.extend(outer);
    result
}
