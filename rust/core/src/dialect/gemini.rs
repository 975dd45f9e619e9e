//! Gemini function declarations (the google-genai SDK's `Schema`): every `$ref` inlined (a
//! recursive one cut after a few levels), `null` as `nullable`, `const` as a one-string `enum`,
//! `examples` as one `example`, integer fields as integers, and what the `Schema` lacks removed.
//! Gemini has no strict flag: what it cannot express is merely lossy, except what changes the
//! declaration's structure (a recursion cut, a conditional dropped).
use std::collections::HashSet;

use serde_json::{Map, Number, Value};

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
        self.finish_gemini_items(&mut out, &mut parts, pointer);
        let mut types = inferred_types(types, &parts, &out);
        let exclusive = std::mem::take(&mut parts.exclusive);
        self.exclusive_bounds(&mut out, exclusive, types.as_deref());
        self.properties_and_required(&mut out, &mut parts, pointer);
        self.drop_additional_properties(&mut out, parts.additional.take());
        let mut nullable = null_as_nullable(&mut out, &mut types, parts.nullable);
        if out
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            // Every branch was `null`: the schema is `null`, unless it has types of its own.
            out.shift_remove("anyOf");
            if types.is_none() {
                types = Some(vec!["null".to_owned()]);
            }
        }
        if types.as_deref().is_some_and(|list| list == ["null"]) {
            // A `null` schema is not also nullable: the flag would say nothing (and a second
            // pass, reading it, drops it).
            nullable = false;
        }
        if types.is_none()
            && let Some(hoisted) = hoisted_branch(&out, nullable)
        {
            return Value::Object(hoisted);
        }
        typed_schema(out, types.as_deref(), nullable)
    }

    /// `items` as every dialect finishes it; the positions' schemas of a tuple, joined into one
    /// union, are finished as a union the input had written: a `null` among them becomes
    /// `nullable` now, not on a second pass.
    fn finish_gemini_items(
        &mut self,
        out: &mut Map<String, Value>,
        parts: &mut Parts,
        pointer: &str,
    ) {
        let tuple = parts.prefix.is_some();
        self.finish_items(out, parts);
        if tuple
            && let Some(Value::Object(items)) = out.get_mut("items")
            && items.len() == 1
            && items.contains_key("anyOf")
        {
            let union = std::mem::take(items);
            let folded = self.finish_gemini(union, None, Parts::default(), pointer);
            out.insert("items".to_owned(), folded);
        }
    }

    /// Exclusive bounds: exact on integers, loosened to inclusive on numbers; the tighter of
    /// the bound and an inclusive one beside it is kept.
    fn exclusive_bounds(
        &mut self,
        out: &mut Map<String, Value>,
        exclusive: Vec<(&'static str, Number, String)>,
        types: Option<&[String]>,
    ) {
        let integers =
            types.is_some_and(|t| !t.is_empty() && t.iter().all(|k| k == "integer" || k == "null"));
        for (which, bound, base) in exclusive {
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
    }

    /// `properties`, and `required` kept to the names it declares (both removed without
    /// properties).
    fn properties_and_required(
        &mut self,
        out: &mut Map<String, Value>,
        parts: &mut Parts,
        pointer: &str,
    ) {
        let Some(properties) = parts.properties.take() else {
            out.shift_remove("properties");
            if out.shift_remove("required").is_some() {
                let message = "removed `required` without `properties`".to_owned();
                self.lossy(pointer, "required", message);
            }
            return;
        };
        let declared: HashSet<String> = properties.iter().map(|(n, _, _)| n.clone()).collect();
        out.insert(
            "properties".to_owned(),
            Value::Object(properties.into_iter().map(|(n, s, _)| (n, s)).collect()),
        );
        let Some(required) = parts.required.take() else {
            return;
        };
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

    /// `additionalProperties` removed: Gemini objects are open and their values undescribed.
    fn drop_additional_properties(
        &mut self,
        out: &mut Map<String, Value>,
        additional: Option<(Value, String)>,
    ) {
        out.shift_remove("additionalProperties");
        let Some((value, base)) = additional else {
            return;
        };
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
}

/// The schema's types: as written, else `object` beside properties and `string` beside an
/// `enum` (Gemini's enums are strings).
fn inferred_types(
    types: Option<&[String]>,
    parts: &Parts,
    out: &Map<String, Value>,
) -> Option<Vec<String>> {
    if let Some(types) = types {
        return Some(types.to_vec());
    }
    if parts.properties.is_some() {
        return Some(vec!["object".to_owned()]);
    }
    out.contains_key("enum").then(|| vec!["string".to_owned()])
}

/// `null` among several types or among the `anyOf` branches is removed and the schema made
/// `nullable` instead, as a `null` enum value already made it (`nullable`); returns whether it
/// is.
fn null_as_nullable(
    out: &mut Map<String, Value>,
    types: &mut Option<Vec<String>>,
    nullable: bool,
) -> bool {
    let mut nullable = nullable;
    if let Some(list) = types
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
    nullable
}

/// The lone `anyOf` branch of a schema with nothing but annotations beside it, merged with them
/// into one schema; `None` when the schema is not such.
fn hoisted_branch(out: &Map<String, Value>, nullable: bool) -> Option<Map<String, Value>> {
    let Some(Value::Array(branches)) = out.get("anyOf") else {
        return None;
    };
    let [Value::Object(branch)] = branches.as_slice() else {
        return None;
    };
    if !out
        .keys()
        .all(|key| key == "anyOf" || ANNOTATIONS.contains(&key.as_str()))
    {
        return None;
    }
    let mut merged = branch.clone();
    for (key, value) in out {
        if key != "anyOf" {
            merged.insert(key.clone(), value.clone());
        }
    }
    if nullable {
        merged.insert("nullable".to_owned(), Value::Bool(true));
    }
    Some(nullable_after_type(merged))
}

/// The finished schema: its types set (several split into an `anyOf` of one type each), and
/// `nullable` after `type`.
fn typed_schema(mut out: Map<String, Value>, types: Option<&[String]>, nullable: bool) -> Value {
    set_types(&mut out, types);
    if nullable {
        out.insert("nullable".to_owned(), Value::Bool(true));
    }
    let out = nullable_after_type(out);
    match types {
        Some(list) if list.len() > 1 && !out.contains_key("anyOf") => {
            Value::Object(nullable_after_type(split_types(out, list, true)))
        }
        _ => Value::Object(out),
    }
}

/// `nullable` placed right after `type`, or last when there is none: one place, however the
/// schema came to be nullable (a `null` type, enum value or branch, or a nullable branch
/// hoisted), so that a declaration read back and transformed again gives the same bytes.
fn nullable_after_type(mut schema: Map<String, Value>) -> Map<String, Value> {
    let Some(flag) = schema.get("nullable").cloned() else {
        return schema;
    };
    if !schema.contains_key("type") {
        schema.shift_remove("nullable");
        schema.insert("nullable".to_owned(), flag);
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
