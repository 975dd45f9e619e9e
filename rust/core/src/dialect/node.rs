//! The input as the walk reads it: each keyword of a schema with the pointer of the schema it
//! came from (once `$ref` targets and `allOf` entries are merged in, one node holds keywords of
//! several schemas), and same-document references resolved to their targets.
use std::borrow::Cow;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::json::pointer;
use crate::jsonschema::Draft;

/// A keyword's value, borrowed from the input, built by a merge, or a `properties` map whose
/// entries keep their own pointers (they may come from different schemas after a merge).
#[derive(Debug, Clone)]
pub(super) enum KeywordValue<'a> {
    Input(&'a Value),
    Built(Value),
    Properties(Vec<Property<'a>>),
}

/// One entry of a `properties` keyword, with its own pointer.
#[derive(Debug, Clone)]
pub(super) struct Property<'a> {
    pub(super) name: &'a str,
    pub(super) schema: &'a Value,
    pub(super) pointer: String,
}

impl<'a> KeywordValue<'a> {
    /// The input value, when the keyword comes straight from the input.
    pub(super) fn input(&self) -> Option<&'a Value> {
        match self {
            Self::Input(value) => Some(value),
            _ => None,
        }
    }

    /// The value (`properties` as a map); `Null` for `properties` when `properties` is false.
    pub(super) fn value_or_null(&self, properties: bool) -> Cow<'_, Value> {
        match self {
            Self::Properties(_) if !properties => Cow::Owned(Value::Null),
            _ => self.as_value(),
        }
    }

    /// The value as JSON (`properties` as a map).
    pub(super) fn as_value(&self) -> Cow<'_, Value> {
        match self {
            Self::Input(value) => Cow::Borrowed(*value),
            Self::Built(value) => Cow::Borrowed(value),
            Self::Properties(properties) => Cow::Owned(Value::Object(
                properties
                    .iter()
                    .map(|property| (property.name.to_owned(), property.schema.clone()))
                    .collect(),
            )),
        }
    }
}

/// A keyword of a schema being transformed, with the pointer of the schema it came from.
#[derive(Debug, Clone)]
pub(super) struct Keyword<'a> {
    pub(super) value: KeywordValue<'a>,
    /// The pointer of the schema the keyword belongs to.
    pub(super) base: String,
    /// The keyword's name in the input, when the walk reads it under another (`oneOf` read as
    /// `anyOf`): the pointers of its subschemas are built with it, so that they locate the
    /// input.
    pub(super) written: Option<&'static str>,
}

impl Keyword<'_> {
    /// The pointer of the subschema at `index` of this keyword's array (`key` is the name the
    /// walk reads it under).
    pub(super) fn item(&self, key: &str, index: usize) -> String {
        self::index(&self.base, self.written.unwrap_or(key), index)
    }

    /// The pointer of this keyword's own subschema (`key` as in [`Self::item`]).
    pub(super) fn subschema(&self, key: &str) -> String {
        child(&self.base, self.written.unwrap_or(key))
    }
}

pub(super) type Node<'a> = IndexMap<String, Keyword<'a>>;

pub(super) fn node_of<'a>(map: &'a Map<String, Value>, pointer: &str) -> Node<'a> {
    map.iter()
        .map(|(key, value)| {
            let keyword_value = match (key.as_str(), value) {
                ("properties", Value::Object(properties)) => {
                    let base = child(pointer, "properties");
                    KeywordValue::Properties(
                        properties
                            .iter()
                            .map(|(name, schema)| Property {
                                name,
                                schema,
                                pointer: child(&base, name),
                            })
                            .collect(),
                    )
                }
                _ => KeywordValue::Input(value),
            };
            (
                key.clone(),
                Keyword {
                    value: keyword_value,
                    base: pointer.to_owned(),
                    written: None,
                },
            )
        })
        .collect()
}

/// `pointer` extended by one reference token (RFC 6901 escaping).
pub(super) fn child(pointer: &str, token: &str) -> String {
    pointer::join(pointer, token)
}

pub(super) fn index(pointer: &str, key: &str, i: usize) -> String {
    child(&child(pointer, key), &i.to_string())
}

// -- references -----------------------------------------------------------------------------

/// Resolve a same-document reference (`#`, `#/json/pointer`, `#anchor`): the target and its
/// pointer.
pub(super) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<(&'a Value, String)> {
    let fragment = pointer::fragment(reference)?;
    if fragment.is_empty() {
        return Some((root, String::new()));
    }
    if !fragment.starts_with('/') {
        return find_anchor(root, &fragment, "");
    }
    let mut target = root;
    let mut at = String::new();
    for token in pointer::tokens(&fragment)? {
        target = pointer::step(target, &token)?;
        at = child(&at, &token);
    }
    Some((target, at))
}

fn find_anchor<'a>(schema: &'a Value, anchor: &str, pointer: &str) -> Option<(&'a Value, String)> {
    let Value::Object(map) = schema else {
        return None;
    };
    // Before 2019-09 a plain-name fragment was an `$id` (draft 4: `id`) of `#name`.
    let named = map.get("$anchor").and_then(Value::as_str) == Some(anchor)
        || ["$id", "id"].iter().any(|key| {
            map.get(*key)
                .and_then(Value::as_str)
                .and_then(|id| id.strip_prefix('#'))
                == Some(anchor)
        });
    if named {
        return Some((schema, pointer.to_owned()));
    }
    subschemas(map, pointer)
        .into_iter()
        .find_map(|(sub, sub_pointer)| find_anchor(sub, anchor, &sub_pointer))
}

/// The subschemas of a schema object with their pointers (applicators only, not data values),
/// in any draft: array `items`, `additionalItems` and `dependencies` included.
pub(super) fn subschemas<'a>(
    map: &'a Map<String, Value>,
    pointer: &str,
) -> Vec<(&'a Value, String)> {
    let mut out = Vec::new();
    for (key, value) in map {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
            | "dependencies" => {
                if let Value::Object(entries) = value {
                    let base = child(pointer, key);
                    out.extend(
                        entries
                            .iter()
                            .filter(|(_, sub)| !sub.is_array())
                            .map(|(name, sub)| (sub, child(&base, name))),
                    );
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" | "items" if value.is_array() => {
                if let Value::Array(entries) = value {
                    out.extend(
                        entries
                            .iter()
                            .enumerate()
                            .map(|(i, sub)| (sub, index(pointer, key, i))),
                    );
                }
            }
            "items"
            | "additionalItems"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems" => {
                out.push((value, child(pointer, key)));
            }
            _ => {}
        }
    }
    out
}

/// The draft a document is written in: the one its `$schema` names, else 2020-12.
pub(super) fn document_draft(root: &Value) -> Draft {
    root.get("$schema")
        .and_then(Value::as_str)
        .and_then(Draft::from_metaschema)
        .unwrap_or_default()
}

/// Whether no schema below the root starts a schema resource of its own (a string `$id`).
pub(super) fn single_resource(root: &Value) -> bool {
    let mut stack: Vec<&Value> = match root {
        Value::Object(map) => subschemas(map, "")
            .into_iter()
            .map(|(sub, _)| sub)
            .collect(),
        _ => return true,
    };
    while let Some(value) = stack.pop() {
        if let Value::Object(map) = value {
            if map.get("$id").is_some_and(Value::is_string) {
                return false;
            }
            stack.extend(subschemas(map, "").into_iter().map(|(sub, _)| sub));
        }
    }
    true
}
