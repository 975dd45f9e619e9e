//! Documents written in an older draft (2019-09, 7 or 4, named by `$schema`): each schema
//! object's keywords are read with their 2020-12 meaning before the dialect's rules apply, so
//! that the providers' rules are written once, for 2020-12.
//!
//! What is read differently, each reported at the schema's pointer with the keyword as the input
//! writes it, and merely lossy (`lossy: true`): the meaning is kept, or the keyword had none.
//!
//! - Drafts 4 to 2019-09: an array `items` is `prefixItems`, and `additionalItems` beside it is
//!   `items` (without it, `additionalItems` has no effect and is dropped); `dependencies` is
//!   `dependentRequired` (its arrays) and `dependentSchemas` (its schemas), which the dialects
//!   then treat as they do in 2020-12. The subschemas keep their input pointers
//!   (`/items/0`, `/additionalItems`).
//! - Drafts 4 and 7: `$ref` stands for its target alone, so the keywords beside it are dropped,
//!   except annotations (`title`, `description`...: kept, they describe the value to the model),
//!   identifiers and `definitions`/`$defs` (locations other references may point into).
//! - Draft 4: a boolean `exclusiveMaximum`/`exclusiveMinimum` turns `maximum`/`minimum` into
//!   the numeric exclusive bound of 2020-12 (`true` without a bound, or `false`, is dropped);
//!   `id` is an identifier, dropped as `$id` is.
//! - Draft 2019-09: `$recursiveRef: "#"` in a document of one schema resource (no `$id` below
//!   the root) can only reach the root: it is read as `$ref: "#"`. With several resources it
//!   stays a dynamic reference, which no dialect can express. `$recursiveAnchor` is only read by
//!   `$recursiveRef`, and goes.
//! - Keywords a draft does not have are dropped, since they mean nothing there: in draft 4
//!   `const`, `contains`, `propertyNames`, `if`/`then`/`else`; before 2019-09
//!   `dependentRequired`, `dependentSchemas`, `unevaluatedProperties`, `unevaluatedItems`,
//!   `minContains`, `maxContains`, `$recursiveAnchor`, `$recursiveRef`; before 2020-12
//!   `prefixItems` and `$dynamicRef`.
//!
//! `definitions` needs no rewrite: it is where draft 7's references point, and a reference into
//! it stays one exactly as one into `$defs` does. A plain-name fragment given by `$id` (`"#foo"`
//! before 2019-09) is resolved as an `$anchor` (see `node.rs`).
use serde_json::{Map, Value};

use super::merge::ANNOTATIONS;
use super::node::{Keyword, KeywordValue, Node, node_of};
use super::walk::Walker;
use crate::jsonschema::Draft;

/// Keywords kept beside a `$ref` that replaces its siblings (drafts 4 and 7), besides the
/// annotations: the reference itself, identifiers, and the locations other references use.
const KEPT_BESIDE_REF: &[&str] = &["$ref", "$schema", "$id", "id", "definitions", "$defs"];

/// How messages name a draft.
fn label(draft: Draft) -> &'static str {
    match draft {
        Draft::Draft4 => "draft 4",
        Draft::Draft7 => "draft 7",
        Draft::Draft201909 => "draft 2019-09",
        Draft::Draft202012 => "draft 2020-12",
    }
}

/// Whether `key` is a keyword the dialects read that `draft` does not have.
fn foreign(draft: Draft, key: &str) -> bool {
    match key {
        "const" | "contains" | "propertyNames" | "if" | "then" | "else" => draft == Draft::Draft4,
        "dependentRequired"
        | "dependentSchemas"
        | "unevaluatedProperties"
        | "unevaluatedItems"
        | "minContains"
        | "maxContains"
        | "$recursiveAnchor"
        | "$recursiveRef" => draft < Draft::Draft201909,
        "prefixItems" | "$dynamicRef" => draft < Draft::Draft202012,
        _ => false,
    }
}

impl<'a> Walker<'a> {
    /// The node of the schema object `map` at `pointer`, its keywords read as 2020-12's.
    pub(super) fn read(&mut self, map: &'a Map<String, Value>, pointer: &str) -> Node<'a> {
        let node = node_of(map, pointer);
        if self.draft == Draft::Draft202012 {
            node
        } else {
            self.normalise(map, node, pointer)
        }
    }

    fn normalise(
        &mut self,
        map: &'a Map<String, Value>,
        node: Node<'a>,
        pointer: &str,
    ) -> Node<'a> {
        let draft = self.draft;
        let name = label(draft);
        if draft.ref_replaces_siblings() && map.contains_key("$ref") {
            let mut out = Node::with_capacity(node.len());
            for (key, entry) in node {
                if KEPT_BESIDE_REF.contains(&key.as_str()) || ANNOTATIONS.contains(&key.as_str()) {
                    out.insert(key, entry);
                } else {
                    let message = format!(
                        "dropped `{key}` beside `$ref`: in {name} `$ref` stands for its target \
                         alone"
                    );
                    self.lossy(pointer, &key, message);
                }
            }
            return out;
        }
        let items_array = map.get("items").is_some_and(Value::is_array);
        let mut out = Node::with_capacity(node.len());
        for (key, mut entry) in node {
            let value = map.get(&key);
            match key.as_str() {
                "id" if draft == Draft::Draft4 && value.is_some_and(Value::is_string) => {}
                "items" if items_array => {
                    let message = format!(
                        "read {name}'s array `items` as `prefixItems` (a tuple's positions)"
                    );
                    self.lossy(pointer, &key, message);
                    entry.written = Some("items");
                    out.insert("prefixItems".to_owned(), entry);
                }
                "additionalItems" if items_array => {
                    let message = format!(
                        "read {name}'s `additionalItems` as `items` (the items after the tuple)"
                    );
                    self.lossy(pointer, &key, message);
                    entry.written = Some("additionalItems");
                    out.insert("items".to_owned(), entry);
                }
                "additionalItems" => {
                    let message = format!(
                        "dropped `additionalItems`: in {name} it has no effect without an array \
                         `items`"
                    );
                    self.lossy(pointer, &key, message);
                }
                "dependencies" => match value {
                    Some(Value::Object(dependencies)) => {
                        self.dependencies(dependencies, &entry, &mut out);
                    }
                    _ => {
                        out.insert(key, entry);
                    }
                },
                "exclusiveMinimum" | "exclusiveMaximum"
                    if draft == Draft::Draft4 && value.is_some_and(Value::is_boolean) =>
                {
                    self.exclusive_bound(map, &key, entry, &mut out);
                }
                "minimum" | "maximum" if draft == Draft::Draft4 && exclusive(map, &key) => {
                    // Moved into the exclusive bound, where that keyword is met.
                }
                "$recursiveRef"
                    if draft == Draft::Draft201909
                        && value.and_then(Value::as_str) == Some("#")
                        && self.single_resource =>
                {
                    let message = "read `$recursiveRef: \"#\"` as `$ref: \"#\"`: in a document \
                                   of one schema resource it can only reach the root"
                        .to_owned();
                    self.lossy(pointer, &key, message);
                    entry.written = Some("$recursiveRef");
                    out.insert("$ref".to_owned(), entry);
                }
                // Only `$recursiveRef` reads it: where that stays dynamic, it is reported there.
                "$recursiveAnchor" if draft == Draft::Draft201909 => {}
                _ if foreign(draft, &key) => {
                    let message = format!("dropped `{key}`: not a keyword of {name}");
                    self.lossy(pointer, &key, message);
                }
                _ => {
                    out.insert(key, entry);
                }
            }
        }
        out
    }

    /// `dependencies` split into `dependentRequired` (the names a property brings along) and
    /// `dependentSchemas` (the schemas it brings), in that order, where it has any.
    fn dependencies(
        &mut self,
        dependencies: &Map<String, Value>,
        entry: &Keyword<'a>,
        out: &mut Node<'a>,
    ) {
        let (names, schemas): (Map<String, Value>, Map<String, Value>) = dependencies
            .iter()
            .map(|(key, value)| (key.clone(), value.clone()))
            .partition(|(_, value)| value.is_array());
        let mut read_as = Vec::new();
        for (keyword, part) in [("dependentRequired", names), ("dependentSchemas", schemas)] {
            if part.is_empty() {
                continue;
            }
            read_as.push(format!("`{keyword}`"));
            let keyword_entry = Keyword {
                value: KeywordValue::Built(Value::Object(part)),
                base: entry.base.clone(),
                written: Some("dependencies"),
            };
            out.insert(keyword.to_owned(), keyword_entry);
        }
        if !read_as.is_empty() {
            let message = format!("read `dependencies` as {}", read_as.join(" and "));
            self.lossy(&entry.base, "dependencies", message);
        }
    }

    /// Draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum` (`key`): `true` makes the bound
    /// beside it exclusive, the 2020-12 keyword holding the bound; otherwise it is dropped.
    fn exclusive_bound(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        mut entry: Keyword<'a>,
        out: &mut Node<'a>,
    ) {
        let bound_key = if key == "exclusiveMinimum" {
            "minimum"
        } else {
            "maximum"
        };
        let base = entry.base.clone();
        let message = match (map.get(key), map.get(bound_key)) {
            (Some(Value::Bool(true)), Some(bound)) => {
                let message = format!(
                    "read draft 4's `{key}: true` beside `{bound_key}: {bound}` as `{key}: {bound}`"
                );
                entry.value = KeywordValue::Built(bound.clone());
                out.insert(key.to_owned(), entry);
                message
            }
            (Some(Value::Bool(true)), None) => {
                format!("dropped `{key}: true`: in draft 4 it has no effect without `{bound_key}`")
            }
            _ => format!(
                "dropped `{key}: false`: in draft 4 it only says `{bound_key}` is inclusive"
            ),
        };
        self.lossy(&base, key, message);
    }
}

/// Whether draft 4's `minimum`/`maximum` (`key`) is made exclusive by its boolean companion.
fn exclusive(map: &Map<String, Value>, key: &str) -> bool {
    let companion = if key == "minimum" {
        "exclusiveMinimum"
    } else {
        "exclusiveMaximum"
    };
    map.get(companion) == Some(&Value::Bool(true))
}
