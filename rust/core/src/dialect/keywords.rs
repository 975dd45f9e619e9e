//! The translation of one node's keywords, once its `$ref` and `allOf` are merged in: what
//! every dialect does alike is written here, what differs is asked of the dialect's
//! [`Rules`](super::walk::Rules).
use serde_json::{Map, Value};

use super::merge::str_list;
use super::node::{KeywordValue, Node, child, index};
use super::walk::{Build, Parts, Treatment, Walker};

impl<'a> Walker<'a> {
    /// Transform a node whose `$ref` and `allOf` are resolved.
    pub(super) fn build(&mut self, mut node: Node<'a>, pointer: &str, root: bool) -> Value {
        let rules = self.rules;
        if let Some(entry) = node.shift_remove("oneOf") {
            if node.contains_key("anyOf") {
                let message = "`oneOf` next to `anyOf` cannot be expressed: removed".to_owned();
                self.unfaithful(&entry.base, "oneOf", message);
            } else {
                let message = "replaced `oneOf` with `anyOf`: a value matching several \
                               alternatives is no longer rejected"
                    .to_owned();
                self.lossy(&entry.base, "oneOf", message);
                node.insert("anyOf".to_owned(), entry);
            }
        }
        let mut types = self.types(&node);
        let mut out = Map::new();
        let mut parts = Parts::default();
        for (key, entry) in &node {
            let base = entry.base.as_str();
            let value = entry.value.value_or_null(false);
            match key.as_str() {
                "type" => {
                    out.insert(key.clone(), Value::Null); // placeholder, set below
                }
                "unevaluatedProperties" if matches!(value.as_ref(), Value::Bool(false)) => {
                    if parts.additional.is_none() && !node.contains_key("additionalProperties") {
                        parts.additional = Some((Value::Bool(false), base.to_owned()));
                    }
                    let message =
                        "read `unevaluatedProperties: false` as `additionalProperties: false`"
                            .to_owned();
                    self.lossy(base, key, message);
                }
                "title"
                | "description"
                | "default"
                | "examples"
                | "example"
                | "minLength"
                | "maxLength"
                | "minProperties"
                | "maxProperties"
                | "minItems"
                | "maxItems"
                | "minimum"
                | "maximum"
                | "exclusiveMinimum"
                | "exclusiveMaximum"
                | "multipleOf"
                | "unevaluatedProperties"
                | "patternProperties"
                | "unevaluatedItems" => {
                    let build = Build {
                        out: &mut out,
                        parts: &mut parts,
                        types: &mut types,
                    };
                    self.treated(key, base, &value, build);
                }
                "enum" => {
                    let build = Build {
                        out: &mut out,
                        parts: &mut parts,
                        types: &mut types,
                    };
                    rules.enumeration(self, base, &value, build);
                }
                "const" => {
                    let build = Build {
                        out: &mut out,
                        parts: &mut parts,
                        types: &mut types,
                    };
                    rules.constant(self, base, &value, build);
                }
                "anyOf" => {
                    let Some(Value::Array(branches)) = entry.value.input() else {
                        self.removed_unfaithful(base, key, "an `anyOf` that is not an array");
                        continue;
                    };
                    let out_branches = branches
                        .iter()
                        .enumerate()
                        .map(|(i, branch)| self.schema(branch, &index(base, "anyOf", i), false))
                        .collect();
                    out.insert(key.clone(), Value::Array(out_branches));
                }
                "items" => match entry.value.input() {
                    Some(Value::Bool(false)) => parts.items_false = Some(base.to_owned()),
                    Some(items @ (Value::Object(_) | Value::Bool(true))) => {
                        let sub = self.schema(items, &child(base, "items"), false);
                        parts.items = Some(sub);
                        out.insert(key.clone(), Value::Null);
                    }
                    _ => self.removed_unfaithful(base, key, "`items` that is not a schema"),
                },
                "prefixItems" => {
                    let Some(Value::Array(entries)) = entry.value.input() else {
                        self.removed_unfaithful(base, key, "a `prefixItems` that is not an array");
                        continue;
                    };
                    let mut distinct: Vec<Value> = Vec::new();
                    for (i, entry) in entries.iter().enumerate() {
                        let sub = self.schema(entry, &index(base, key, i), false);
                        if !distinct.contains(&sub) {
                            distinct.push(sub);
                        }
                    }
                    parts.prefix = Some((distinct, base.to_owned()));
                }
                "properties" => {
                    let KeywordValue::Properties(props) = &entry.value else {
                        self.removed_unfaithful(base, key, "a `properties` that is not an object");
                        continue;
                    };
                    let mut out_props = Vec::with_capacity(props.len());
                    for prop in props {
                        match prop.schema {
                            Value::Bool(false) => {
                                let message = format!(
                                    "removed property `{}`: its schema `false` forbids it",
                                    prop.name
                                );
                                self.lossy(&prop.pointer, "properties", message);
                            }
                            schema => {
                                let sub = self.schema(schema, &prop.pointer, false);
                                out_props.push((prop.name.to_owned(), sub, prop.pointer.clone()));
                            }
                        }
                    }
                    parts.properties = Some(out_props);
                    out.insert(key.clone(), Value::Null);
                }
                "required" => {
                    parts.required = Some(str_list(&value));
                    out.insert(key.clone(), Value::Null);
                }
                "additionalProperties" => {
                    parts.additional = Some((value.into_owned(), base.to_owned()));
                    out.insert(key.clone(), Value::Null);
                }
                "$defs" | "definitions" => {
                    if !rules.is_strict() {
                        continue; // every reference is inlined
                    }
                    let Some(Value::Object(defs)) = entry.value.input() else {
                        self.removed(base, key);
                        continue;
                    };
                    let defs_pointer = child(base, key);
                    let out_defs = defs
                        .iter()
                        .map(|(name, def)| {
                            let sub = self.schema(def, &child(&defs_pointer, name), false);
                            (name.clone(), sub)
                        })
                        .collect();
                    out.insert(key.clone(), Value::Object(out_defs));
                }
                "$schema" | "$id" | "$anchor" | "$dynamicAnchor" | "$vocabulary" | "$comment" => {}
                "format" => self.format(base, &value, &mut out),
                "pattern" => {
                    if rules.keeps_pattern(value.as_str()) {
                        out.insert(key.clone(), value.into_owned());
                    } else {
                        let message = format!(
                            "removed `pattern`: lookaround, backreferences or other complex \
                             regex features are not supported in {}",
                            rules.label()
                        );
                        self.lossy(base, key, message);
                    }
                }
                "not" | "if" | "then" | "else" | "dependentSchemas" | "dependentRequired"
                | "dependencies" => {
                    self.removed_unfaithful(base, key, "a conditional or negative constraint");
                }
                "$dynamicRef" | "$recursiveRef" | "$recursiveAnchor" => {
                    self.removed_unfaithful(base, key, "a dynamic reference");
                }
                _ => self.removed(base, key),
            }
        }
        rules.finish(self, out, types.as_deref(), parts, pointer, root)
    }

    /// A keyword whose treatment is a matter of dialect ([`Rules::treat`](super::walk::Rules)).
    fn treated(&mut self, key: &str, base: &str, value: &Value, build: Build<'_>) {
        let rules = self.rules;
        match rules.treat(key, value) {
            Treatment::Keep => {
                build.out.insert(key.to_owned(), value.clone());
            }
            Treatment::KeepString if value.is_string() => {
                build.out.insert(key.to_owned(), value.clone());
            }
            Treatment::KeepNumber if value.is_number() => {
                build.out.insert(key.to_owned(), value.clone());
            }
            Treatment::Count => self.count(base, key, value, build.out),
            Treatment::RemoveSaying(message) => self.lossy(base, key, message.to_owned()),
            Treatment::RemoveUnfaithful(why) => self.removed_unfaithful(base, key, why),
            Treatment::Own => rules.own(self, key, base, value, build),
            Treatment::Remove | Treatment::KeepString | Treatment::KeepNumber => {
                self.removed(base, key);
            }
        }
    }

    /// Gemini integer fields (`minItems`...): a non-negative integer or removed.
    pub(super) fn count(
        &mut self,
        base: &str,
        key: &str,
        value: &Value,
        out: &mut Map<String, Value>,
    ) {
        match value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        }) {
            Some(n) => {
                out.insert(key.to_owned(), Value::from(n));
            }
            None => self.removed(base, key),
        }
    }

    fn format(&mut self, base: &str, value: &Value, out: &mut Map<String, Value>) {
        if self.rules.keeps_format(value) {
            out.insert("format".to_owned(), value.clone());
        } else {
            let message = format!(
                "removed `format` {value}: not a format {} supports",
                self.rules.label()
            );
            self.lossy(base, "format", message);
        }
    }

    /// Array parts shared by every dialect: `items` and tuples.
    pub(super) fn finish_items(&mut self, out: &mut Map<String, Value>, parts: &mut Parts) {
        if let Some((mut distinct, base)) = parts.prefix.take() {
            if let Some(items) = parts.items.take()
                && !distinct.contains(&items)
            {
                distinct.push(items);
            }
            let items = if distinct.len() == 1 {
                distinct.pop().unwrap_or_default()
            } else {
                Value::Object(Map::from_iter([(
                    "anyOf".to_owned(),
                    Value::Array(distinct),
                )]))
            };
            out.insert("items".to_owned(), items);
            let message = "replaced the tuple's `prefixItems` by `items` accepting any of the \
                           positions' schemas: positions are lost"
                .to_owned();
            self.cannot_express(&base, "prefixItems", message);
        } else if let Some(items) = parts.items.take() {
            out.insert("items".to_owned(), items);
        } else if let Some(base) = parts.items_false.take() {
            out.shift_remove("items");
            let message =
                "`items: false` (an empty array only) cannot be expressed: removed".to_owned();
            self.cannot_express(&base, "items", message);
        }
        if out.get("items").is_some_and(Value::is_null) {
            out.shift_remove("items");
        }
    }
}
