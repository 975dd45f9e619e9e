//! What the two strict dialects (OpenAI's and Anthropic's) share: every object closed, its
//! `required` settled, the type of an `enum`/`const` inferred, and what a strict grammar cannot
//! express reported as unfaithful. Where they differ is a [`Strictness`].
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::merge::{is_primitive, make_nullable, set_types, split_types, value_type};
use super::node::Node;
use super::walk::{Parts, Walker};

/// How the strict dialects differ when they finish a node.
pub(super) struct Strictness {
    /// OpenAI: every property is listed in `required`; an optional one becomes nullable (`null`
    /// stands for "omitted").
    pub(super) all_required: bool,
    /// Anthropic: a schema of several types becomes an `anyOf` of one branch per type.
    pub(super) split_types: bool,
}

/// Where a node is: its pointer, and whether it is the root.
#[derive(Clone, Copy)]
pub(super) struct Site<'p> {
    pub(super) pointer: &'p str,
    pub(super) root: bool,
}

impl<'a> Walker<'a> {
    /// A `$ref` met again inside its own expansion (or past the budget): a reference into
    /// `$defs` stays one, losing its siblings; any other cannot be expressed. `None` while the
    /// target is not being inlined yet.
    pub(super) fn strict_recursion(
        &mut self,
        node: &mut Node<'a>,
        site: &str,
        reference: &str,
        depth: usize,
    ) -> Option<Value> {
        if depth == 0 && self.budget > 0 {
            return None;
        }
        if self.keeps_reference(reference) {
            // Recursion through a `$ref` with siblings: inlined once already; the inner
            // occurrence stays a plain reference and loses its siblings.
            let siblings: Vec<String> = node.keys().filter(|key| *key != "$ref").cloned().collect();
            for key in siblings {
                if let Some(entry) = node.shift_remove(&key) {
                    let message =
                        format!("removed `{key}` next to a recursive `$ref` {reference:?}");
                    self.lossy(&entry.base, &key, message);
                }
            }
            return Some(self.pure_reference(site, reference));
        }
        let message = format!(
            "recursive `$ref` {reference:?} outside `$defs` cannot be expressed in {}",
            self.rules.label()
        );
        self.unfaithful(site, "$ref", message);
        Some(Value::Object(Map::from_iter([(
            "$ref".to_owned(),
            Value::String(reference.to_owned()),
        )])))
    }

    /// `enum` in a strict dialect: kept; values that are objects or arrays make it unfaithful.
    pub(super) fn strict_enumeration(
        &mut self,
        base: &str,
        value: &Value,
        out: &mut Map<String, Value>,
    ) {
        let Value::Array(values) = value else {
            self.removed_unfaithful(base, "enum", "an `enum` that is not an array");
            return;
        };
        if !values.iter().all(is_primitive) {
            self.unfaithful(
                base,
                "enum",
                format!(
                    "`enum` of objects or arrays cannot be expressed in {}",
                    self.rules.label()
                ),
            );
        }
        out.insert("enum".to_owned(), value.clone());
    }

    /// `const` in a strict dialect: kept; an object or array makes it unfaithful.
    pub(super) fn strict_constant(
        &mut self,
        base: &str,
        value: &Value,
        out: &mut Map<String, Value>,
    ) {
        if !is_primitive(value) {
            self.unfaithful(
                base,
                "const",
                format!(
                    "`const` object or array cannot be expressed in {}",
                    self.rules.label()
                ),
            );
        }
        out.insert("const".to_owned(), value.clone());
    }

    /// Closes objects, settles `required`, infers and checks types.
    pub(super) fn finish_strict(
        &mut self,
        mut out: Map<String, Value>,
        types: Option<&[String]>,
        mut parts: Parts,
        at: Site<'_>,
        strictness: &Strictness,
    ) -> Value {
        let pointer = at.pointer;
        let label = self.rules.label();
        let mut types: Option<Vec<String>> = types.map(<[String]>::to_vec);
        self.finish_items(&mut out, &mut parts);
        // Infer the type of an `enum` / `const` (faithful: the values decide anyway).
        if types.is_none() && !out.contains_key("anyOf") {
            let values: Vec<&Value> = match (out.get("enum"), out.get("const")) {
                (_, Some(value)) => vec![value],
                (Some(Value::Array(values)), None) => values.iter().collect(),
                _ => Vec::new(),
            };
            if !values.is_empty() && values.iter().all(|v| is_primitive(v)) {
                let mut inferred: Vec<String> = Vec::new();
                for value in &values {
                    let kind = value_type(value).to_owned();
                    if !inferred.contains(&kind) {
                        inferred.push(kind);
                    }
                }
                if inferred.iter().any(|k| k == "number") {
                    inferred.retain(|k| k != "integer");
                }
                types = Some(inferred);
            }
        }
        if types.is_none() && parts.properties.is_some() {
            let message = "added `type: object` to a schema with `properties`".to_owned();
            self.lossy(pointer, "type", message);
            types = Some(vec!["object".to_owned()]);
        }
        let has = |kind: &str| {
            types
                .as_ref()
                .is_some_and(|t| t.iter().any(|name| name == kind))
        };
        set_types(&mut out, types.as_deref());
        if has("object") {
            self.close_object(&mut out, &mut parts, at, strictness);
        } else {
            for key in ["properties", "required", "additionalProperties"] {
                if out.shift_remove(key).is_some() {
                    let message = format!("removed `{key}`: the schema is not an object");
                    self.lossy(pointer, key, message);
                }
            }
        }
        if has("array") && !out.contains_key("items") {
            let message =
                format!("array without `items` (items of any type): {label} needs an items schema");
            self.unfaithful(pointer, "items", message);
        }
        let has_kind = ["type", "anyOf", "$ref", "enum", "const"]
            .iter()
            .any(|key| out.contains_key(*key));
        if !has_kind {
            let message = format!("no `type` (any value allowed): {label} needs a type");
            self.unfaithful(pointer, "type", message);
        }
        if strictness.split_types
            && let Some(types) = &types
            && types.len() > 1
            && !out.contains_key("anyOf")
        {
            return Value::Object(split_types(out, types, false));
        }
        Value::Object(out)
    }

    fn close_object(
        &mut self,
        out: &mut Map<String, Value>,
        parts: &mut Parts,
        at: Site<'_>,
        strictness: &Strictness,
    ) {
        let Site { pointer, root } = at;
        let label = self.rules.label();
        let properties = parts.properties.take().unwrap_or_default();
        let required = parts.required.take().unwrap_or_default();
        let declared: HashSet<&str> = properties
            .iter()
            .map(|(name, _, _)| name.as_str())
            .collect();
        match parts.additional.take() {
            Some((Value::Bool(false), _)) => {}
            Some((value, base)) => {
                let what =
                    if value == Value::Bool(true) || value.as_object().is_some_and(Map::is_empty) {
                        "any undeclared property"
                    } else {
                        "undeclared properties of a given schema"
                    };
                let message = format!(
                    "free-form object (`additionalProperties` allows {what}): {label} only accepts \
                     closed objects"
                );
                self.unfaithful(&base, "additionalProperties", message);
            }
            None if properties.is_empty() && root => {
                let message = "closed the root object without declared properties: a tool \
                               without arguments"
                    .to_owned();
                self.lossy(pointer, "additionalProperties", message);
            }
            None if properties.is_empty() => {
                let message = format!(
                    "free-form object (no declared properties): {label} only accepts closed objects"
                );
                self.unfaithful(pointer, "additionalProperties", message);
            }
            None => {
                let message =
                    "added `additionalProperties: false`: undeclared properties are no longer accepted"
                        .to_owned();
                self.lossy(pointer, "additionalProperties", message);
            }
        }
        for name in &required {
            if !declared.contains(name.as_str()) {
                let message = format!(
                    "required property `{name}` is not declared in `properties`: a closed object \
                     cannot have it"
                );
                self.unfaithful(pointer, "required", message);
            }
        }
        let mut out_props = Map::with_capacity(properties.len());
        let mut out_required = Vec::with_capacity(properties.len());
        for (name, schema, prop_pointer) in properties {
            let was_required = required.contains(&name);
            let schema = if strictness.all_required {
                out_required.push(Value::String(name.clone()));
                if was_required {
                    schema
                } else {
                    let (schema, already) = make_nullable(schema);
                    let message = if already {
                        "optional property made required (it accepts null: null stands for omitted)"
                    } else {
                        "optional property made required and nullable: null stands for omitted"
                    };
                    self.lossy(&prop_pointer, "required", message.to_owned());
                    schema
                }
            } else {
                if was_required {
                    out_required.push(Value::String(name.clone()));
                }
                schema
            };
            out_props.insert(name, schema);
        }
        out.insert("properties".to_owned(), Value::Object(out_props));
        if strictness.all_required || !out_required.is_empty() {
            out.insert("required".to_owned(), Value::Array(out_required));
        } else {
            out.shift_remove("required");
        }
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
}

/// Whether a `pattern` uses what constrained decoders commonly lack: lookaround, backreferences,
/// word boundaries, or (`strict_counts`) a counted repetition over 100.
pub(super) fn complex_pattern(pattern: &str, strict_counts: bool) -> bool {
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                if let Some(next) = bytes.get(i + 1)
                    && (matches!(next, b'b' | b'B' | b'k')
                        || next.is_ascii_digit() && *next != b'0')
                {
                    return true;
                }
                i += 2;
                continue;
            }
            b'(' if [&b"(?="[..], b"(?!", b"(?<=", b"(?<!"]
                .iter()
                .any(|prefix| bytes[i..].starts_with(prefix)) =>
            {
                return true;
            }
            b'{' if strict_counts => {
                let mut bound: u64 = 0;
                for &byte in &bytes[i + 1..] {
                    match byte {
                        b'0'..=b'9' => {
                            bound = bound
                                .saturating_mul(10)
                                .saturating_add(u64::from(byte - b'0'));
                            if bound > 100 {
                                return true;
                            }
                        }
                        b',' | b' ' => bound = 0,
                        _ => break,
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}
