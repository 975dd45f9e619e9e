//! Gemini function declarations (the google-genai SDK's `Schema`): every `$ref` inlined (a
//! recursive one cut after a few levels), `null` as `nullable`, `const` as a one-string `enum`,
//! `examples` as one `example`, integer fields as integers, and what the `Schema` lacks removed.
//! Gemini has no strict flag: what it cannot express is merely lossy, except what changes the
//! declaration's structure (a recursion cut, a conditional dropped).
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::merge::{
    ANNOTATIONS, TYPE_NAMES, is_null_schema, is_primitive, set_types, split_types, value_type,
};
use super::node::Node;
use super::walk::{Build, Parts, Rules, Treatment, Walker};

/// How many times Gemini inlines a recursive `$ref` inside itself before cutting it.
pub const GEMINI_RECURSION_DEPTH: usize = 3;

/// The rules of [`Dialect::Gemini`](super::Dialect::Gemini).
pub(super) struct Gemini;

impl Rules for Gemini {
    fn label(&self) -> &'static str {
        "Gemini function declarations"
    }

    fn is_strict(&self) -> bool {
        false
    }

    fn always_removed(&self, _key: &str) -> bool {
        false
    }

    fn treat(&self, key: &str, value: &Value) -> Treatment {
        match key {
            "title" | "description" => Treatment::KeepString,
            "default" | "example" => Treatment::Keep,
            "examples"
                if value
                    .as_array()
                    .is_some_and(|examples| !examples.is_empty()) =>
            {
                Treatment::Own
            }
            "minLength" | "maxLength" | "minProperties" | "maxProperties" | "minItems"
            | "maxItems" => Treatment::Count,
            "minimum" | "maximum" => Treatment::KeepNumber,
            "exclusiveMinimum" | "exclusiveMaximum" if value.is_number() => Treatment::Own,
            _ => Treatment::Remove,
        }
    }

    /// `examples` becomes its first example; an exclusive bound waits to become an inclusive
    /// one (see `finish_gemini`).
    fn own(&self, walker: &mut Walker<'_>, key: &str, base: &str, value: &Value, build: Build<'_>) {
        match (key, value) {
            ("examples", Value::Array(examples)) if !examples.is_empty() => {
                build.out.insert("example".to_owned(), examples[0].clone());
                if examples.len() > 1 {
                    let message = "kept the first of `examples` as `example`".to_owned();
                    walker.lossy(base, key, message);
                }
            }
            ("exclusiveMinimum", Value::Number(bound)) => {
                build
                    .parts
                    .exclusive
                    .push(("minimum", bound.clone(), base.to_owned()));
            }
            ("exclusiveMaximum", Value::Number(bound)) => {
                build
                    .parts
                    .exclusive
                    .push(("maximum", bound.clone(), base.to_owned()));
            }
            _ => walker.removed(base, key),
        }
    }

    /// "Any value is allowed, but most do not trigger any special functionality."
    fn keeps_format(&self, value: &Value) -> bool {
        value.is_string()
    }

    fn keeps_pattern(&self, pattern: Option<&str>) -> bool {
        pattern.is_some()
    }

    /// Gemini enums hold strings only; a `null` among them makes the schema nullable.
    fn enumeration(&self, walker: &mut Walker<'_>, base: &str, value: &Value, build: Build<'_>) {
        let Value::Array(values) = value else {
            walker.removed_unfaithful(base, "enum", "an `enum` that is not an array");
            return;
        };
        let strings: Vec<Value> = values.iter().filter(|v| v.is_string()).cloned().collect();
        let nulls = values.iter().filter(|v| v.is_null()).count();
        if strings.len() + nulls == values.len() && !strings.is_empty() {
            build.out.insert("enum".to_owned(), Value::Array(strings));
            build.parts.nullable |= nulls > 0;
        } else {
            let message = "removed `enum`: Gemini enums hold strings only".to_owned();
            walker.lossy(base, "enum", message);
        }
    }

    /// Gemini has no `const`: a string becomes a one-value `enum`, `null` the type `null`;
    /// anything else is removed, its type kept when there is none.
    fn constant(&self, walker: &mut Walker<'_>, base: &str, value: &Value, build: Build<'_>) {
        let Build { out, types, .. } = build;
        match value {
            Value::String(_) => {
                out.insert("enum".to_owned(), Value::Array(vec![value.clone()]));
            }
            Value::Null if types.is_none() => {
                *types = Some(vec!["null".to_owned()]);
                out.insert("type".to_owned(), Value::Null);
            }
            _ => {
                let message = "removed `const`: Gemini has no `const`, and its enums hold \
                               strings only"
                    .to_owned();
                walker.lossy(base, "const", message);
                if types.is_none() && is_primitive(value) {
                    *types = Some(vec![value_type(value).to_owned()]);
                    out.insert("type".to_owned(), Value::Null);
                }
            }
        }
    }

    /// A reference is inlined again and again, down to [`GEMINI_RECURSION_DEPTH`] levels (or
    /// until the budget is spent), then cut.
    fn recursion<'a>(
        &self,
        walker: &mut Walker<'a>,
        node: &mut Node<'a>,
        target: &Value,
        site: &str,
        reference: &str,
        depth: usize,
    ) -> Option<Value> {
        (depth >= GEMINI_RECURSION_DEPTH || walker.budget == 0)
            .then(|| walker.cut(node, target, site, reference))
    }

    fn finish(
        &self,
        walker: &mut Walker<'_>,
        out: Map<String, Value>,
        types: Option<&[String]>,
        parts: Parts,
        pointer: &str,
        _root: bool,
    ) -> Value {
        walker.finish_gemini(out, types, parts, pointer)
    }
}

impl Walker<'_> {
    /// Gemini: a recursive reference past the depth limit becomes a plain schema of its type.
    fn cut(&mut self, node: &Node<'_>, target: &Value, site: &str, reference: &str) -> Value {
        let kind = target
            .get("type")
            .and_then(Value::as_str)
            .filter(|kind| *kind != "null" && TYPE_NAMES.contains(kind))
            .unwrap_or("object");
        let message = if self.budget == 0 {
            format!(
                "`$ref` {reference:?} not inlined (schema too large): replaced by a plain `{kind}`"
            )
        } else {
            format!(
                "recursive `$ref` {reference:?} cut after {GEMINI_RECURSION_DEPTH} levels: \
                 replaced by a plain `{kind}`"
            )
        };
        self.unfaithful(site, "$ref", message);
        let mut out = Map::new();
        out.insert("type".to_owned(), Value::String(kind.to_owned()));
        let description = node
            .get("description")
            .map(|entry| entry.value.as_value().into_owned())
            .or_else(|| target.get("description").cloned());
        if let Some(description @ Value::String(_)) = description {
            out.insert("description".to_owned(), description);
        }
        Value::Object(out)
    }

    /// Gemini: nullable flags, folded `anyOf`, single types, inlined everything.
    fn finish_gemini(
        &mut self,
        mut out: Map<String, Value>,
        types: Option<&[String]>,
        mut parts: Parts,
        pointer: &str,
    ) -> Value {
        self.finish_items(&mut out, &mut parts);
        let mut types: Option<Vec<String>> = types.map(<[String]>::to_vec);
        if types.is_none() && parts.properties.is_some() {
            types = Some(vec!["object".to_owned()]);
        }
        if types.is_none() && out.contains_key("enum") {
            types = Some(vec!["string".to_owned()]);
        }
        // Exclusive bounds: exact on integers, loosened to inclusive on numbers.
        let integers = types
            .as_ref()
            .is_some_and(|t| !t.is_empty() && t.iter().all(|k| k == "integer" || k == "null"));
        for (which, bound, base) in std::mem::take(&mut parts.exclusive) {
            let keyword = if which == "minimum" {
                "exclusiveMinimum"
            } else {
                "exclusiveMaximum"
            };
            let exact = bound.as_i64().filter(|_| integers).and_then(|n| {
                if which == "minimum" {
                    n.checked_add(1)
                } else {
                    n.checked_sub(1)
                }
            });
            let new = exact.map_or_else(|| Value::Number(bound.clone()), Value::from);
            if exact.is_none() {
                let message = format!("replaced `{keyword}` by an inclusive `{which}`");
                self.lossy(&base, keyword, message);
            }
            let tighter = match (out.get(which).and_then(Value::as_f64), new.as_f64()) {
                (Some(old), Some(candidate)) => {
                    if which == "minimum" {
                        candidate > old
                    } else {
                        candidate < old
                    }
                }
                _ => true,
            };
            if tighter {
                out.insert(which.to_owned(), new);
            }
        }
        if let Some(properties) = parts.properties.take() {
            let declared: HashSet<String> = properties.iter().map(|(n, _, _)| n.clone()).collect();
            out.insert(
                "properties".to_owned(),
                Value::Object(properties.into_iter().map(|(n, s, _)| (n, s)).collect()),
            );
            if let Some(required) = parts.required.take() {
                let kept: Vec<Value> = required
                    .iter()
                    .filter(|name| declared.contains(*name))
                    .map(|name| Value::String(name.clone()))
                    .collect();
                if kept.len() != required.len() {
                    let message = "removed `required` names without a property schema".to_owned();
                    self.lossy(pointer, "required", message);
                }
                if kept.is_empty() {
                    out.shift_remove("required");
                } else {
                    out.insert("required".to_owned(), Value::Array(kept));
                }
            }
        } else {
            out.shift_remove("properties");
            if out.shift_remove("required").is_some() {
                let message = "removed `required` without `properties`".to_owned();
                self.lossy(pointer, "required", message);
            }
        }
        out.shift_remove("additionalProperties");
        if let Some((value, base)) = parts.additional.take() {
            let open = value == Value::Bool(true) || value.as_object().is_some_and(Map::is_empty);
            if !open {
                let message = if value == Value::Bool(false) {
                    "removed `additionalProperties: false`: Gemini objects cannot be closed"
                } else {
                    "removed `additionalProperties`: Gemini cannot describe the values of a \
                     free-form object"
                };
                self.lossy(&base, "additionalProperties", message.to_owned());
            }
        }
        // `null` among the types, the enum or the alternatives becomes `nullable`.
        let mut nullable = parts.nullable;
        if let Some(list) = &mut types
            && list.len() > 1
            && list.iter().any(|k| k == "null")
        {
            list.retain(|k| k != "null");
            nullable = true;
        }
        if let Some(Value::Array(branches)) = out.get_mut("anyOf") {
            let before = branches.len();
            branches.retain(|branch| !is_null_schema(branch));
            if branches.len() != before {
                nullable = true;
            }
        }
        match out.get("anyOf") {
            Some(Value::Array(branches)) if branches.is_empty() => {
                out.shift_remove("anyOf");
                if types.is_none() {
                    types = Some(vec!["null".to_owned()]);
                    nullable = false;
                }
            }
            Some(Value::Array(branches)) if branches.len() == 1 => {
                let hoistable = types.is_none()
                    && out
                        .keys()
                        .all(|key| key == "anyOf" || ANNOTATIONS.contains(&key.as_str()));
                if hoistable && let Some(Value::Object(branch)) = branches.first() {
                    let mut merged = branch.clone();
                    for (key, value) in &out {
                        if key != "anyOf" {
                            merged.insert(key.clone(), value.clone());
                        }
                    }
                    if nullable {
                        merged.insert("nullable".to_owned(), Value::Bool(true));
                    }
                    return Value::Object(nullable_after_type(merged));
                }
            }
            _ => {}
        }
        set_types(&mut out, types.as_deref());
        if nullable {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
        let out = nullable_after_type(out);
        match &types {
            Some(list) if list.len() > 1 && !out.contains_key("anyOf") => {
                Value::Object(split_types(out, list, true))
            }
            _ => Value::Object(out),
        }
    }
}

/// `nullable` placed right after `type` (when there is one): one place, however the schema
/// came to be nullable, so that a declaration read back and transformed again gives the same
/// bytes.
fn nullable_after_type(schema: Map<String, Value>) -> Map<String, Value> {
    let Some(flag) = schema.get("nullable").cloned() else {
        return schema;
    };
    if !schema.contains_key("type") {
        return schema;
    }
    let mut out = Map::with_capacity(schema.len());
    for (key, value) in schema {
        if key == "nullable" {
            continue;
        }
        let is_type = key == "type";
        out.insert(key, value);
        if is_type {
            out.insert("nullable".to_owned(), flag.clone());
        }
    }
    out
}
