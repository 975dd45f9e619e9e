//! The walk every dialect shares: each subschema visited once, `$ref` targets inlined or kept,
//! `allOf` entries merged into their parent, every change recorded once, and budgets that bound
//! the work on hostile input. What differs between providers is asked of a [`Rules`] value; the
//! translation of a node's keywords is in `keywords.rs`.
use std::collections::HashSet;

use serde_json::{Map, Number, Value};

use super::merge::{ANNOTATIONS, TYPE_NAMES, merge_values, str_list, widens};
use super::node::{KeywordValue, Node, document_draft, index, resolve, single_resource};
use crate::jsonschema::Draft;

/// Subschemas one transform may build before `$ref` inlining stops (hostile fan-out).
const NODE_BUDGET: usize = 20_000;
/// Nesting of subschemas beyond which a transform stops descending (hostile depth).
const MAX_DEPTH: usize = 256;
/// Rounds of `$ref` / `allOf` merging in one schema before giving up (a chain of references).
const MAX_MERGE_ROUNDS: usize = 64;

/// One change a transform made.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Change {
    /// The JSON Pointer, in the input document, of the schema the keyword belongs to.
    pub pointer: String,
    /// The keyword concerned (`minLength`, `required`, `$ref`...).
    pub keyword: String,
    /// What was done, in a short sentence.
    pub message: String,
    /// True when the change only drops or loosens something (strict stays faithful); false when
    /// it makes the result unfaithful (see the module documentation).
    pub lossy: bool,
}

/// What a dialect does with a keyword whose treatment is a matter of dialect (see
/// [`Rules::treat`]).
pub(super) enum Treatment {
    /// Kept as it is.
    Keep,
    /// Kept when a string, removed otherwise.
    KeepString,
    /// Kept when a number, removed otherwise.
    KeepNumber,
    /// Kept as a non-negative integer (Gemini's integer fields), removed when it is none.
    Count,
    /// Removed: not supported (merely lossy).
    Remove,
    /// Removed, with this message (merely lossy).
    RemoveSaying(&'static str),
    /// Removed: the dialect cannot express what it says (unfaithful), with why.
    RemoveUnfaithful(&'static str),
    /// The dialect's own handling ([`Rules::own`]).
    Own,
}

/// What one provider's dialect accepts and how it stands in for the rest: the questions the
/// shared walk asks, answered once per dialect (`openai.rs`, `anthropic.rs`, `gemini.rs`).
pub(super) trait Rules: Sync {
    /// How messages name the dialect.
    fn label(&self) -> &'static str;

    /// Strict dialects (OpenAI, Anthropic) keep `$ref`s into `$defs` and make the result
    /// unfaithful where they cannot express something; Gemini inlines every reference and
    /// loses only precision where a strict dialect would lose faithfulness.
    fn is_strict(&self) -> bool;

    /// Keywords the dialect always removes, so they do not keep a `$ref` from staying pure.
    fn always_removed(&self, key: &str) -> bool;

    /// What the dialect does with `key`, one of the keywords [`Walker::build`] asks about.
    fn treat(&self, key: &str, value: &Value) -> Treatment;

    /// The dialect's own handling of a keyword it treats as [`Treatment::Own`].
    fn own(&self, walker: &mut Walker<'_>, key: &str, base: &str, value: &Value, build: Build<'_>) {
        let _ = (value, build);
        walker.removed(base, key);
    }

    /// Whether the `format` is kept.
    fn keeps_format(&self, value: &Value) -> bool;

    /// Whether the `pattern` is kept (`None`: not a string).
    fn keeps_pattern(&self, pattern: Option<&str>) -> bool;

    /// `enum` (`value`, of the schema at `base`) written into `out`, or removed.
    fn enumeration(&self, walker: &mut Walker<'_>, base: &str, value: &Value, build: Build<'_>);

    /// `const` (`value`, of the schema at `base`) written into `out`, or removed.
    fn constant(&self, walker: &mut Walker<'_>, base: &str, value: &Value, build: Build<'_>);

    /// A `$ref` whose target is being inlined `depth` times already around it (or the budget
    /// is spent): `Some(schema)` to stop there, `None` to inline it once more.
    fn recursion<'a>(
        &self,
        walker: &mut Walker<'a>,
        node: &mut Node<'a>,
        target: &Value,
        site: &str,
        reference: &str,
        depth: usize,
    ) -> Option<Value>;

    /// Before the walk, on the input.
    fn prepare(&self, walker: &mut Walker<'_>, schema: &Value) {
        let _ = (walker, schema);
    }

    /// A node whose keywords are translated, finished into its schema.
    fn finish(
        &self,
        walker: &mut Walker<'_>,
        out: Map<String, Value>,
        types: Option<&[String]>,
        parts: Parts,
        pointer: &str,
        root: bool,
    ) -> Value;

    /// After the walk, on the whole output.
    fn check_output(&self, walker: &mut Walker<'_>, out: &Value) {
        let _ = (walker, out);
    }
}

/// What a node's translation writes to: its output keywords, the parts finished once all are
/// seen, and its validated types.
pub(super) struct Build<'b> {
    pub(super) out: &'b mut Map<String, Value>,
    pub(super) parts: &'b mut Parts,
    pub(super) types: &'b mut Option<Vec<String>>,
}

/// One transform's walk over the input: the dialect's rules, what changed so far, and the
/// budgets that bound the work on hostile input.
pub(super) struct Walker<'a> {
    pub(super) rules: &'static dyn Rules,
    root: &'a Value,
    changes: Vec<Change>,
    seen: HashSet<(String, String, String)>,
    /// Pointers of the `$ref` targets being inlined, innermost last.
    stack: Vec<String>,
    /// Subschemas left to build (see [`NODE_BUDGET`]).
    pub(super) budget: usize,
    depth: usize,
    /// The schemas whose `$ref` is part of a cycle (filled by the rules that need them:
    /// Anthropic's).
    pub(super) cyclic: HashSet<String>,
    /// The draft the input is written in (its `$schema`; 2020-12 when it names none), whose
    /// keywords are read as 2020-12's (`drafts.rs`).
    pub(super) draft: Draft,
    /// Draft 2019-09: no schema below the root has an `$id` (see `drafts.rs`).
    pub(super) single_resource: bool,
}

/// What a schema's keywords gave, for the checks made once all of them are seen.
#[derive(Default)]
pub(super) struct Parts {
    /// The properties built: name, schema, pointer.
    pub(super) properties: Option<Vec<(String, Value, String)>>,
    pub(super) required: Option<Vec<String>>,
    /// `additionalProperties` and the pointer of its schema.
    pub(super) additional: Option<(Value, String)>,
    /// The distinct schemas of a tuple's positions, and its pointer.
    pub(super) prefix: Option<(Vec<Value>, String)>,
    pub(super) items: Option<Value>,
    /// The pointer of a schema with `items: false`.
    pub(super) items_false: Option<String>,
    /// Gemini: `null` was among the enum values.
    pub(super) nullable: bool,
    /// Gemini: exclusive bounds, as the inclusive keyword they become, the bound and the pointer.
    pub(super) exclusive: Vec<(&'static str, Number, String)>,
}

impl<'a> Walker<'a> {
    pub(super) fn new(rules: &'static dyn Rules, root: &'a Value) -> Self {
        let draft = document_draft(root);
        Self {
            rules,
            root,
            changes: Vec::new(),
            seen: HashSet::new(),
            stack: Vec::new(),
            budget: NODE_BUDGET,
            depth: 0,
            cyclic: HashSet::new(),
            draft,
            single_resource: draft == Draft::Draft201909 && single_resource(root),
        }
    }

    /// The changes recorded, in the order met.
    pub(super) fn into_changes(self) -> Vec<Change> {
        self.changes
    }

    pub(super) fn change(&mut self, pointer: &str, keyword: &str, message: String, lossy: bool) {
        let key = (pointer.to_owned(), keyword.to_owned(), message);
        if self.seen.insert(key.clone()) {
            let (pointer, keyword, message) = key;
            self.changes.push(Change {
                pointer,
                keyword,
                message,
                lossy,
            });
        }
    }

    pub(super) fn lossy(&mut self, pointer: &str, keyword: &str, message: String) {
        self.change(pointer, keyword, message, true);
    }

    pub(super) fn unfaithful(&mut self, pointer: &str, keyword: &str, message: String) {
        self.change(pointer, keyword, message, false);
    }

    pub(super) fn removed(&mut self, pointer: &str, keyword: &str) {
        let message = format!(
            "removed `{keyword}`: not supported in {}",
            self.rules.label()
        );
        self.lossy(pointer, keyword, message);
    }

    pub(super) fn removed_unfaithful(&mut self, pointer: &str, keyword: &str, why: &str) {
        let message = format!(
            "removed `{keyword}`: {why}, which {} cannot express",
            self.rules.label()
        );
        self.unfaithful(pointer, keyword, message);
    }

    /// A construct the dialect cannot express: unfaithful in a strict dialect, merely lossy in
    /// Gemini's (see [`Rules::is_strict`]).
    pub(super) fn cannot_express(&mut self, pointer: &str, keyword: &str, message: String) {
        let lossy = !self.rules.is_strict();
        self.change(pointer, keyword, message, lossy);
    }

    /// Transform one subschema.
    pub(super) fn schema(&mut self, value: &'a Value, pointer: &str, root: bool) -> Value {
        if self.depth >= MAX_DEPTH {
            self.unfaithful(
                pointer,
                "",
                "schema nested too deeply: not transformed".into(),
            );
            return Value::Object(Map::new());
        }
        self.budget = self.budget.saturating_sub(1);
        match value {
            Value::Object(map) => {
                self.depth += 1;
                let node = self.read(map, pointer);
                let out = self.node(node, pointer, root);
                self.depth -= 1;
                out
            }
            Value::Bool(true) => self.node(Node::new(), pointer, root),
            Value::Bool(false) => {
                let message = format!(
                    "schema `false` (no value allowed) cannot be expressed in {}",
                    self.rules.label()
                );
                self.unfaithful(pointer, "", message);
                // Gemini's `Schema` has no `false`: an empty schema stands in.
                if self.rules.is_strict() {
                    Value::Bool(false)
                } else {
                    Value::Object(Map::new())
                }
            }
            _ => {
                self.unfaithful(
                    pointer,
                    "",
                    "not a schema (neither an object nor a boolean)".into(),
                );
                Value::Object(Map::new())
            }
        }
    }

    /// Whether a pure `$ref` stays a reference (OpenAI, Anthropic): into `$defs` / `definitions`
    /// or to the root.
    pub(super) fn keeps_reference(&self, reference: &str) -> bool {
        self.rules.is_strict()
            && (reference == "#"
                || reference.starts_with("#/$defs/") && reference[8..].find('/').is_none()
                || reference.starts_with("#/definitions/") && reference[14..].find('/').is_none())
    }

    /// Keywords this dialect always removes, so they do not keep a `$ref` from staying pure.
    fn always_removed(&self, key: &str) -> bool {
        self.rules.always_removed(key)
    }

    fn node(&mut self, mut node: Node<'a>, pointer: &str, root: bool) -> Value {
        let pushed = self.stack.len();
        let mut rounds = 0;
        let out = loop {
            rounds += 1;
            if rounds > MAX_MERGE_ROUNDS {
                let message = "too many nested `$ref`/`allOf` to merge".to_owned();
                self.unfaithful(pointer, "$ref", message);
                node.shift_remove("$ref");
                node.shift_remove("allOf");
            }
            if let Some(entry) = node.get("$ref") {
                let site = entry.base.clone();
                let Some(reference) = entry.value.as_value().as_str().map(str::to_owned) else {
                    self.unfaithful(&site, "$ref", "`$ref` is not a string".into());
                    node.shift_remove("$ref");
                    continue;
                };
                if let Some(done) = self.reference(&mut node, &site, &reference, root) {
                    break done;
                }
                continue;
            }
            if let Some(all_of) = node.shift_remove("allOf") {
                let Some(Value::Array(entries)) = all_of.value.input() else {
                    self.unfaithful(&all_of.base, "allOf", "`allOf` is not an array".into());
                    continue;
                };
                for (i, entry) in entries.iter().enumerate() {
                    let entry_pointer = index(&all_of.base, "allOf", i);
                    match entry {
                        Value::Object(map) => {
                            let inner = self.read(map, &entry_pointer);
                            node = self.merge(node, inner, &all_of.base, "allOf");
                        }
                        Value::Bool(true) => {}
                        _ => {
                            let message = "an `allOf` entry allows no value".to_owned();
                            self.unfaithful(&entry_pointer, "allOf", message);
                        }
                    }
                }
                continue;
            }
            break self.build(node, pointer, root);
        };
        self.stack.truncate(pushed);
        out
    }

    /// Handle the `$ref` of `node`: `Some(schema)` when the node is finished (a kept reference or
    /// a cut recursion), `None` when the target was merged in (or the reference dropped).
    fn reference(
        &mut self,
        node: &mut Node<'a>,
        site: &str,
        reference: &str,
        root: bool,
    ) -> Option<Value> {
        if !root && self.keeps_reference(reference) {
            let dropped: Vec<String> = node
                .keys()
                .filter(|key| self.always_removed(key))
                .cloned()
                .collect();
            for key in dropped {
                if let Some(entry) = node.shift_remove(&key) {
                    self.removed(&entry.base, &key);
                }
            }
            if node.len() == 1 {
                return Some(self.pure_reference(site, reference));
            }
        }
        let Some((target, target_pointer)) = resolve(self.root, reference) else {
            let message = format!("cannot resolve `$ref` {reference:?}: removed");
            self.unfaithful(site, "$ref", message);
            node.shift_remove("$ref");
            return None;
        };
        let depth = self.stack.iter().filter(|p| **p == target_pointer).count();
        if let Some(done) = self
            .rules
            .recursion(self, node, target, site, reference, depth)
        {
            return Some(done);
        }
        self.stack.push(target_pointer.clone());
        node.shift_remove("$ref");
        let inner = match target {
            Value::Object(map) => self.read(map, &target_pointer),
            Value::Bool(true) => Node::new(),
            _ => {
                let message = format!("`$ref` {reference:?} points to a schema allowing no value");
                self.unfaithful(site, "$ref", message);
                Node::new()
            }
        };
        let outer = std::mem::take(node);
        *node = self.merge(outer, inner, site, "$ref");
        None
    }

    pub(super) fn pure_reference(&mut self, site: &str, reference: &str) -> Value {
        if resolve(self.root, reference).is_none() {
            let message = format!("cannot resolve `$ref` {reference:?}");
            self.unfaithful(site, "$ref", message);
        } else if self.cyclic.contains(site) {
            let message = format!(
                "recursive `$ref` {reference:?}: {} does not support recursive schemas",
                self.rules.label()
            );
            self.unfaithful(site, "$ref", message);
        }
        Value::Object(Map::from_iter([(
            "$ref".to_owned(),
            Value::String(reference.to_owned()),
        )]))
    }

    /// Merge `inner` (a `$ref` target or an `allOf` entry) into `outer`, as one schema asking for
    /// both. Parts that cannot be combined keep `outer`'s value and make the result unfaithful.
    fn merge(&mut self, mut outer: Node<'a>, inner: Node<'a>, at: &str, via: &str) -> Node<'a> {
        let names = |node: &Node<'a>| -> Option<HashSet<String>> {
            match node.get("properties").map(|entry| &entry.value) {
                Some(KeywordValue::Properties(props)) => {
                    Some(props.iter().map(|prop| prop.name.to_owned()).collect())
                }
                _ => None,
            }
        };
        let closed = |node: &Node<'a>| {
            ["additionalProperties", "unevaluatedProperties"]
                .iter()
                .any(|key| {
                    node.get(*key).is_some_and(|entry| {
                        !matches!(entry.value.as_value().as_ref(), Value::Bool(true))
                            && entry
                                .value
                                .as_value()
                                .as_object()
                                .is_none_or(|m| !m.is_empty())
                    })
                })
        };
        let (outer_names, inner_names) = (names(&outer), names(&inner));
        if widens(closed(&outer), outer_names.as_ref(), inner_names.as_ref())
            || widens(closed(&inner), inner_names.as_ref(), outer_names.as_ref())
        {
            let message = format!(
                "`{via}` combines a closed object with properties it does not declare: cannot be \
                 merged into one schema"
            );
            self.unfaithful(at, "additionalProperties", message);
        }
        for (key, entry) in inner {
            let Some(existing) = outer.get_mut(&key) else {
                outer.insert(key, entry);
                continue;
            };
            if ANNOTATIONS.contains(&key.as_str()) {
                continue;
            }
            if let Some(val) = merge_values(&key, &existing.value, &entry.value) {
                existing.value = val;
            } else {
                let message =
                    format!("cannot merge `{key}` of `{via}` into one schema: kept the outer one");
                self.unfaithful(at, &key, message);
            }
        }
        outer
    }

    /// The validated type names of a node, if it has a `type`.
    pub(super) fn types(&mut self, node: &Node<'a>) -> Option<Vec<String>> {
        let entry = node.get("type")?;
        let value = entry.value.as_value();
        let names = str_list(&value);
        let known: Vec<String> = names
            .iter()
            .filter(|name| TYPE_NAMES.contains(&name.as_str()))
            .cloned()
            .collect();
        let well_formed = match value.as_ref() {
            Value::String(_) => true,
            Value::Array(items) => items.iter().all(Value::is_string),
            _ => false,
        };
        if !well_formed || names.len() != known.len() {
            let message = format!("removed unknown type names from `type` {value}");
            self.unfaithful(&entry.base, "type", message);
        }
        let mut unique: Vec<String> = Vec::with_capacity(known.len());
        for name in known {
            if !unique.contains(&name) {
                unique.push(name);
            }
        }
        (!unique.is_empty()).then_some(unique)
    }

    /// The root must be a plain object schema.
    pub(super) fn check_root(&mut self, out: &Value) {
        let plain_object = out.get("type").and_then(Value::as_str) == Some("object")
            && !out.as_object().is_some_and(|m| m.contains_key("anyOf"))
            && out.get("nullable").is_none();
        if !plain_object {
            let message = format!(
                "the root is not a plain object schema, which {} requires",
                self.rules.label()
            );
            self.unfaithful("", "type", message);
        }
    }
}
