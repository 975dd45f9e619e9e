//! The translation of one node's keywords, once its `$ref` and `allOf` are merged in: what
//! every dialect does alike is written here, what differs is asked of the dialect's
//! [`Rules`](super::walk::Rules).
use serde_json::{Map, Value};

use super::merge::str_list;
use super::node::{Keyword, KeywordValue, Node, child};
use super::walk::{Build, Parts, Treatment, Walker};

impl<'a> Walker<'a> {
    /// Transform a node whose `$ref` and `allOf` are resolved: `oneOf` read as `anyOf`, each
    /// keyword translated, then the dialect's finish.
    pub(super) fn build(&mut self, mut node: Node<'a>, pointer: &str, root: bool) -> Value {
        self.read_one_of_as_any_of(&mut node);
        let mut types = self.types(&node);
        let mut out = Map::new();
        let mut parts = Parts::default();
        for (key, entry) in &node {
            let build = Build {
                out: &mut out,
                parts: &mut parts,
                types: &mut types,
            };
            self.keyword(&node, key, entry, build);
        }
        let rules = self.rules;
        rules.finish(self, out, types.as_deref(), parts, pointer, root)
    }

    /// `oneOf` becomes `anyOf` (no dialect has `oneOf`), or is removed beside an `anyOf`.
    fn read_one_of_as_any_of(&mut self, node: &mut Node<'a>) {
        let Some(mut entry) = node.shift_remove("oneOf") else {
            return;
        };
        entry.written = Some("oneOf");
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

    /// Translates one keyword of `node` into `build`: kept, rewritten, left to the dialect, or
    /// removed (and the change recorded).
    fn keyword(&mut self, node: &Node<'a>, key: &str, entry: &Keyword<'a>, build: Build<'_>) {
        let rules = self.rules;
        let base = entry.base.as_str();
        let value = entry.value.value_or_null(false);
        match key {
            "type" => {
                build.out.insert(key.to_owned(), Value::Null); // placeholder, set by the finish
            }
            "unevaluatedProperties" if matches!(value.as_ref(), Value::Bool(false)) => {
                self.unevaluated_properties_false(node, base, build.parts);
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
            | "unevaluatedItems" => self.treated(key, base, &value, build),
            "enum" => rules.enumeration(self, base, &value, build),
            "const" => rules.constant(self, base, &value, build),
            "anyOf" => self.any_of(key, entry, build.out),
            "items" => self.items(key, entry, build.out, build.parts),
            "prefixItems" => self.prefix_items(key, entry, build.parts),
            "properties" => self.properties(key, entry, build.out, build.parts),
            "required" => {
                build.parts.required = Some(str_list(&value));
                build.out.insert(key.to_owned(), Value::Null);
            }
            "additionalProperties" => {
                build.parts.additional = Some((value.into_owned(), base.to_owned()));
                build.out.insert(key.to_owned(), Value::Null);
            }
            "$defs" | "definitions" => self.definitions(key, entry, build.out),
            "$schema" | "$id" | "$anchor" | "$dynamicAnchor" | "$vocabulary" | "$comment" => {}
            "format" => self.format(base, &value, build.out),
            "pattern" => self.pattern(base, &value, build.out),
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

    /// `unevaluatedProperties: false` read as `additionalProperties: false` when the node has
    /// none.
    fn unevaluated_properties_false(&mut self, node: &Node<'a>, base: &str, parts: &mut Parts) {
        if parts.additional.is_none() && !node.contains_key("additionalProperties") {
            parts.additional = Some((Value::Bool(false), base.to_owned()));
        }
        let message =
            "read `unevaluatedProperties: false` as `additionalProperties: false`".to_owned();
        self.lossy(base, "unevaluatedProperties", message);
    }

    /// `anyOf`, each branch transformed.
    fn any_of(&mut self, key: &str, entry: &Keyword<'a>, out: &mut Map<String, Value>) {
        let Some(Value::Array(branches)) = entry.value.input() else {
            self.removed_unfaithful(&entry.base, key, "an `anyOf` that is not an array");
            return;
        };
        let out_branches = branches
            .iter()
            .enumerate()
            .map(|(i, branch)| self.schema(branch, &entry.item(key, i), false))
            .collect();
        out.insert(key.to_owned(), Value::Array(out_branches));
    }

    /// `items`, transformed into the parts (the dialect's finish places it).
    fn items(
        &mut self,
        key: &str,
        entry: &Keyword<'a>,
        out: &mut Map<String, Value>,
        parts: &mut Parts,
    ) {
        match entry.value.input() {
            Some(Value::Bool(false)) => parts.items_false = Some(entry.base.clone()),
            Some(items @ (Value::Object(_) | Value::Bool(true))) => {
                let sub = self.schema(items, &entry.subschema(key), false);
                parts.items = Some(sub);
                out.insert(key.to_owned(), Value::Null);
            }
            _ => self.removed_unfaithful(&entry.base, key, "`items` that is not a schema"),
        }
    }

    /// `prefixItems`: the distinct schemas of its positions, transformed into the parts.
    fn prefix_items(&mut self, key: &str, entry: &Keyword<'a>, parts: &mut Parts) {
        let Some(Value::Array(entries)) = entry.value.input() else {
            self.removed_unfaithful(&entry.base, key, "a `prefixItems` that is not an array");
            return;
        };
        let mut distinct: Vec<Value> = Vec::new();
        for (i, item) in entries.iter().enumerate() {
            let sub = self.schema(item, &entry.item(key, i), false);
            if !distinct.contains(&sub) {
                distinct.push(sub);
            }
        }
        parts.prefix = Some((distinct, entry.base.clone()));
    }

    /// `properties`, each transformed into the parts; a property whose schema is `false` is
    /// removed.
    fn properties(
        &mut self,
        key: &str,
        entry: &Keyword<'a>,
        out: &mut Map<String, Value>,
        parts: &mut Parts,
    ) {
        let KeywordValue::Properties(props) = &entry.value else {
            self.removed_unfaithful(&entry.base, key, "a `properties` that is not an object");
            return;
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
        out.insert(key.to_owned(), Value::Null);
    }

    /// `$defs` / `definitions`, each transformed, for the strict dialects that keep references;
    /// dropped for the others, which inline every reference.
    fn definitions(&mut self, key: &str, entry: &Keyword<'a>, out: &mut Map<String, Value>) {
        if !self.rules.is_strict() {
            return;
        }
        let Some(Value::Object(defs)) = entry.value.input() else {
            self.removed(&entry.base, key);
            return;
        };
        let defs_pointer = child(&entry.base, key);
        let out_defs = defs
            .iter()
            .map(|(name, def)| {
                let sub = self.schema(def, &child(&defs_pointer, name), false);
                (name.clone(), sub)
            })
            .collect();
        out.insert(key.to_owned(), Value::Object(out_defs));
    }

    /// `pattern`, kept when the dialect's regex engine reads it.
    fn pattern(&mut self, base: &str, value: &Value, out: &mut Map<String, Value>) {
        if self.rules.keeps_pattern(value.as_str()) {
            out.insert("pattern".to_owned(), value.clone());
        } else {
            let message = format!(
                "removed `pattern`: lookaround, backreferences or other complex regex features \
                 are not supported in {}",
                self.rules.label()
            );
            self.lossy(base, "pattern", message);
        }
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
