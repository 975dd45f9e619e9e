//! Provider schema dialects: a canonical JSON Schema (draft 2020-12) → the subset a model
//! provider accepts for tool arguments, with every change reported.
//!
//! Three dialects:
//!
//! - [`Dialect::OpenAiStrict`]: OpenAI structured outputs / `strict: true` function tools. Every
//!   object is closed (`additionalProperties: false`) and lists every property in `required`; a
//!   property that was optional becomes nullable (`null` stands for "omitted", so a caller drops
//!   `null` values of properties that did not accept `null` before validating) and loses its
//!   `default`. Kept: `type` (lists included), `enum`, `const`, `anyOf`, `$ref`/`$defs`
//!   (recursion included), string `pattern` and `format` (date-time, time, date, duration, email,
//!   hostname, ipv4, ipv6, uuid), numeric bounds and `multipleOf`, `minItems`/`maxItems`,
//!   `title`, `description`. A `$ref` with sibling keywords is inlined (merged with its target),
//!   as the OpenAI Agents SDK's checker does, so the output is a fixed point of that checker.
//! - [`Dialect::AnthropicStrict`]: Anthropic strict tool use. Every object is closed; `required`
//!   is kept as is. Kept: `enum`/`const` of primitive values, `anyOf`, `$ref`/`$defs`
//!   (non-recursive), `default`, `title`, `description`, simple `pattern`s, `format` (the OpenAI
//!   set plus uri), `minItems` of 0 or 1. A `type` list becomes an `anyOf` of one branch per type.
//! - [`Dialect::Gemini`]: the google-genai SDK's `Schema` (`FunctionDeclaration.parameters`):
//!   every `$ref` is inlined (a recursive one down to [`GEMINI_RECURSION_DEPTH`] levels, then
//!   cut to a plain `{"type": "object"}`), `$defs` and `additionalProperties` go, a nullable
//!   type becomes `nullable: true`, `const` a one-value `enum` (strings; Gemini enums hold
//!   strings only), `examples` the single `example`, and every keyword the SDK's `Schema` lacks
//!   is removed (`format` stays: Gemini accepts any value). Type names stay lowercase (the SDK reads them case-insensitively).
//!
//! `oneOf` becomes `anyOf` and `allOf` is merged into its parent in every dialect.
//!
//! # Lossy changes and faithfulness
//!
//! Each [`Change`] names the schema it applies to (a JSON Pointer into the *input* document), the
//! keyword and what was done. A change is either:
//!
//! - **merely lossy** (`lossy: true`): a constraint or an annotation was dropped or loosened
//!   (`minLength`, numeric bounds under Anthropic, `uniqueItems`, `default`, `examples`, an
//!   unknown `format`, `oneOf` read as `anyOf`, a complex `pattern`...), an open object with
//!   declared properties was closed, or an optional property became required-and-nullable. The
//!   model may then send a value the canonical validator rejects; that is acceptable because
//!   validation still happens server-side, and the schema still describes what the tool takes;
//! - **unfaithful** (`lossy: false`): the dialect cannot express the construct, and a grammar
//!   built from the result would demand or forbid something materially different, so the tool
//!   must not be sent as strict. These are: free-form objects (`additionalProperties` true or a
//!   schema, `patternProperties`, `unevaluatedProperties` other than `false`, or a nested object
//!   without declared properties: closing it leaves only `{}`); a schema without a type (any
//!   value); an array without `items`; tuples (`prefixItems`: positions are lost); `not`,
//!   `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, `dependencies`; `$dynamicRef`;
//!   a `$ref` that cannot be resolved; an `allOf` or `$ref` whose parts cannot be merged; enums of
//!   objects or arrays; recursion under Anthropic (unsupported) and recursion Gemini has to cut;
//!   a root that is not a plain object; OpenAI's size limits (more than 5000 properties, more
//!   than 10 levels of object nesting, more than 1000 enum values, more than 120,000 characters
//!   of names and values, or an enum of more than 250 strings totalling over 15,000
//!   characters); a `false` schema.
//!
//! [`Transformed::faithful`] is true exactly when every change is merely lossy. For Gemini, which
//! has no strict flag, `faithful == false` means the declaration is structurally different from
//! the canonical schema (a recursion cut, a conditional dropped...), for the caller to warn about.
//!
//! A root object without declared properties (`{"type": "object"}`, what MCP servers send for a
//! tool without arguments) is closed as an argument-less tool: merely lossy. Nested, the same
//! schema is a free-form dictionary: unfaithful.
//!
//! The output is deterministic: keywords keep their input order, added keywords come after them
//! in a fixed order, and changes are listed in the order the walk meets them (each once).
#![allow(clippy::doc_markdown)] // Product names (OpenAI, Gemini) are not code.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use indexmap::IndexMap;
use serde_json::{Map, Number, Value};

use crate::json::pointer;

/// How many times Gemini inlines a recursive `$ref` inside itself before cutting it.
pub const GEMINI_RECURSION_DEPTH: usize = 3;

/// Subschemas one transform may build before `$ref` inlining stops (hostile fan-out).
const NODE_BUDGET: usize = 20_000;
/// Nesting of subschemas beyond which a transform stops descending (hostile depth).
const MAX_DEPTH: usize = 256;
/// Rounds of `$ref` / `allOf` merging in one schema before giving up (a chain of references).
const MAX_MERGE_ROUNDS: usize = 64;

const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_NESTING: usize = 10;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_MAX_TEXT: usize = 120_000;
const OPENAI_LARGE_ENUM: usize = 250;
const OPENAI_LARGE_ENUM_TEXT: usize = 15_000;

const TYPE_NAMES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "integer", "string",
];
/// Keywords that describe rather than constrain: the outer schema's value wins in a merge.
const ANNOTATIONS: &[&str] = &[
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

/// A provider's schema dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI structured outputs (`strict: true` function tools, Chat Completions and Responses).
    OpenAiStrict,
    /// Anthropic strict tool use (`strict: true` on a tool).
    AnthropicStrict,
    /// Gemini function declarations (the google-genai SDK's `Schema`).
    Gemini,
}

impl Dialect {
    /// Every dialect, in a fixed order.
    pub const ALL: [Self; 3] = [Self::OpenAiStrict, Self::AnthropicStrict, Self::Gemini];

    /// The dialect named `openai_strict`, `anthropic_strict` or `gemini`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|dialect| dialect.name() == name)
    }

    /// The name [`Dialect::parse`] reads.
    pub const fn name(self) -> &'static str {
        match self {
            Self::OpenAiStrict => "openai_strict",
            Self::AnthropicStrict => "anthropic_strict",
            Self::Gemini => "gemini",
        }
    }

    /// How messages name the dialect.
    const fn label(self) -> &'static str {
        match self {
            Self::OpenAiStrict => "OpenAI strict mode",
            Self::AnthropicStrict => "Anthropic strict mode",
            Self::Gemini => "Gemini function declarations",
        }
    }

    const fn is_strict(self) -> bool {
        matches!(self, Self::OpenAiStrict | Self::AnthropicStrict)
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

/// A transformed schema with what changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Transformed {
    /// The schema in the dialect.
    pub schema: Value,
    /// Every change, in the order met, each once.
    pub changes: Vec<Change>,
    /// Whether the result may be sent as strict: every change is merely lossy.
    pub faithful: bool,
}

/// Transform a canonical JSON Schema into `dialect`, reporting every change.
pub fn transform(schema: &Value, dialect: Dialect) -> Transformed {
    let mut walker = Walker {
        dialect,
        root: schema,
        changes: Vec::new(),
        seen: HashSet::new(),
        stack: Vec::new(),
        budget: NODE_BUDGET,
        depth: 0,
        cyclic: HashSet::new(),
    };
    if dialect == Dialect::AnthropicStrict {
        walker.cyclic = cyclic_sites(schema);
    }
    let out = walker.schema(schema, "", true);
    walker.check_root(&out);
    if dialect == Dialect::OpenAiStrict {
        walker.check_openai_limits(&out);
    }
    let faithful = walker.changes.iter().all(|change| change.lossy);
    Transformed {
        schema: out,
        changes: walker.changes,
        faithful,
    }
}

// -- input nodes --------------------------------------------------------------------------------

/// A keyword's value, borrowed from the input, built by a merge, or a `properties` map whose
/// entries keep their own pointers (they may come from different schemas after a merge).
#[derive(Debug, Clone)]
enum Val<'a> {
    In(&'a Value),
    Own(Value),
    Props(Vec<Prop<'a>>),
}

#[derive(Debug, Clone)]
struct Prop<'a> {
    name: &'a str,
    schema: &'a Value,
    pointer: String,
}

impl<'a> Val<'a> {
    /// The input value, when the keyword comes straight from the input.
    fn input(&self) -> Option<&'a Value> {
        match self {
            Self::In(value) => Some(value),
            _ => None,
        }
    }

    /// The value (`properties` as a map); `Null` for `properties` when `props` is false.
    fn value_or_null(&self, props: bool) -> Cow<'_, Value> {
        match self {
            Self::Props(_) if !props => Cow::Owned(Value::Null),
            _ => self.value(),
        }
    }

    fn value(&self) -> Cow<'_, Value> {
        match self {
            Self::In(value) => Cow::Borrowed(*value),
            Self::Own(value) => Cow::Borrowed(value),
            Self::Props(props) => Cow::Owned(Value::Object(
                props
                    .iter()
                    .map(|prop| (prop.name.to_owned(), prop.schema.clone()))
                    .collect(),
            )),
        }
    }
}

/// A keyword of a schema being transformed, with the pointer of the schema it came from.
#[derive(Debug, Clone)]
struct Kw<'a> {
    val: Val<'a>,
    base: String,
}

type Node<'a> = IndexMap<String, Kw<'a>>;

fn node_of<'a>(map: &'a Map<String, Value>, pointer: &str) -> Node<'a> {
    map.iter()
        .map(|(key, value)| {
            let val = match (key.as_str(), value) {
                ("properties", Value::Object(props)) => {
                    let base = child(pointer, "properties");
                    Val::Props(
                        props
                            .iter()
                            .map(|(name, schema)| Prop {
                                name,
                                schema,
                                pointer: child(&base, name),
                            })
                            .collect(),
                    )
                }
                _ => Val::In(value),
            };
            (
                key.clone(),
                Kw {
                    val,
                    base: pointer.to_owned(),
                },
            )
        })
        .collect()
}

/// `pointer` extended by one reference token (RFC 6901 escaping).
fn child(pointer: &str, token: &str) -> String {
    pointer::join(pointer, token)
}

fn index(pointer: &str, key: &str, i: usize) -> String {
    child(&child(pointer, key), &i.to_string())
}

/// The JSON type names a value has (an integral number is both an integer and a number).
fn value_types(value: &Value) -> &'static [&'static str] {
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
fn value_type(value: &Value) -> &'static str {
    value_types(value)[0]
}

fn is_primitive(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

/// Writes `type` (first among the keywords when it was missing), or removes it for `None`.
fn set_types(out: &mut Map<String, Value>, types: Option<&[String]>) {
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

fn types_value(types: &[String]) -> Value {
    match types {
        [single] => Value::String(single.clone()),
        _ => Value::Array(types.iter().cloned().map(Value::String).collect()),
    }
}

fn str_list(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether a `pattern` uses what constrained decoders commonly lack: lookaround, backreferences,
/// word boundaries, or (`strict_counts`) a counted repetition over 100.
fn complex_pattern(pattern: &str, strict_counts: bool) -> bool {
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

/// Resolve a same-document reference (`#`, `#/json/pointer`, `#anchor`): the target and its
/// pointer.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<(&'a Value, String)> {
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
    if map.get("$anchor").and_then(Value::as_str) == Some(anchor) {
        return Some((schema, pointer.to_owned()));
    }
    subschemas(map, pointer)
        .into_iter()
        .find_map(|(sub, sub_pointer)| find_anchor(sub, anchor, &sub_pointer))
}

/// The subschemas of a schema object with their pointers (applicators only, not data values).
fn subschemas<'a>(map: &'a Map<String, Value>, pointer: &str) -> Vec<(&'a Value, String)> {
    let mut out = Vec::new();
    for (key, value) in map {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(entries) = value {
                    let base = child(pointer, key);
                    out.extend(entries.iter().map(|(name, sub)| (sub, child(&base, name))));
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
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

/// The pointers of the schemas holding a `$ref` that (transitively) reaches itself: a target's
/// expansion holds every reference located inside the target.
fn cyclic_sites(root: &Value) -> HashSet<String> {
    let mut sites: Vec<(String, Option<String>)> = Vec::new();
    let mut stack = vec![(root, String::new())];
    while let Some((schema, pointer)) = stack.pop() {
        let Value::Object(map) = schema else {
            continue;
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let target = resolve(root, reference).map(|(_, target)| target);
            sites.push((pointer.clone(), target));
        }
        stack.extend(subschemas(map, &pointer));
    }
    let inside = |site: &str, target: &str| {
        target.is_empty()
            || site == target
            || site
                .strip_prefix(target)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    let edges: Vec<Vec<usize>> = sites
        .iter()
        .map(|(_, target)| {
            target.as_deref().map_or_else(Vec::new, |target| {
                sites
                    .iter()
                    .enumerate()
                    .filter(|(_, (site, _))| inside(site, target))
                    .map(|(j, _)| j)
                    .collect()
            })
        })
        .collect();
    let mut cyclic = HashSet::new();
    for start in 0..sites.len() {
        let mut seen = vec![false; sites.len()];
        let mut todo = edges[start].clone();
        while let Some(next) = todo.pop() {
            if next == start {
                cyclic.insert(sites[start].0.clone());
                break;
            }
            if !seen[next] {
                seen[next] = true;
                todo.extend(edges[next].iter().copied());
            }
        }
    }
    cyclic
}

// -- the walk -----------------------------------------------------------------------------------

struct Walker<'a> {
    dialect: Dialect,
    root: &'a Value,
    changes: Vec<Change>,
    seen: HashSet<(String, String, String)>,
    /// Pointers of the `$ref` targets being inlined, innermost last.
    stack: Vec<String>,
    budget: usize,
    depth: usize,
    /// Anthropic: the schemas whose `$ref` is part of a cycle.
    cyclic: HashSet<String>,
}

/// What a schema's keywords gave, for the checks made once all of them are seen.
#[derive(Default)]
struct Parts {
    properties: Option<Vec<(String, Value, String)>>,
    required: Option<Vec<String>>,
    additional: Option<(Value, String)>,
    prefix: Option<(Vec<Value>, String)>,
    items: Option<Value>,
    items_false: Option<String>,
    nullable: bool,
    exclusive: Vec<(&'static str, Number, String)>,
}

impl<'a> Walker<'a> {
    fn change(&mut self, pointer: &str, keyword: &str, message: String, lossy: bool) {
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

    fn lossy(&mut self, pointer: &str, keyword: &str, message: String) {
        self.change(pointer, keyword, message, true);
    }

    fn unfaithful(&mut self, pointer: &str, keyword: &str, message: String) {
        self.change(pointer, keyword, message, false);
    }

    fn removed(&mut self, pointer: &str, keyword: &str) {
        let message = format!(
            "removed `{keyword}`: not supported in {}",
            self.dialect.label()
        );
        self.lossy(pointer, keyword, message);
    }

    fn removed_unfaithful(&mut self, pointer: &str, keyword: &str, why: &str) {
        let message = format!(
            "removed `{keyword}`: {why}, which {} cannot express",
            self.dialect.label()
        );
        self.unfaithful(pointer, keyword, message);
    }

    /// Transform one subschema.
    fn schema(&mut self, value: &'a Value, pointer: &str, root: bool) -> Value {
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
                let out = self.node(node_of(map, pointer), pointer, root);
                self.depth -= 1;
                out
            }
            Value::Bool(true) => self.node(Node::new(), pointer, root),
            Value::Bool(false) => {
                let message = format!(
                    "schema `false` (no value allowed) cannot be expressed in {}",
                    self.dialect.label()
                );
                self.unfaithful(pointer, "", message);
                if self.dialect == Dialect::Gemini {
                    Value::Object(Map::new())
                } else {
                    Value::Bool(false)
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
    fn keeps_reference(&self, reference: &str) -> bool {
        self.dialect.is_strict()
            && (reference == "#"
                || reference.starts_with("#/$defs/") && reference[8..].find('/').is_none()
                || reference.starts_with("#/definitions/") && reference[14..].find('/').is_none())
    }

    /// Keywords this dialect always removes, so they do not keep a `$ref` from staying pure.
    fn always_removed(&self, key: &str) -> bool {
        match self.dialect {
            Dialect::OpenAiStrict => matches!(
                key,
                "default" | "examples" | "example" | "deprecated" | "readOnly" | "writeOnly"
            ),
            Dialect::AnthropicStrict => {
                matches!(
                    key,
                    "examples" | "example" | "deprecated" | "readOnly" | "writeOnly"
                )
            }
            Dialect::Gemini => false,
        }
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
            if let Some(kw) = node.get("$ref") {
                let site = kw.base.clone();
                let Some(reference) = kw.val.value().as_str().map(str::to_owned) else {
                    self.unfaithful(&site, "$ref", "`$ref` is not a string".into());
                    node.shift_remove("$ref");
                    continue;
                };
                if let Some(done) = self.reference(&mut node, &site, &reference, root) {
                    break done;
                }
                continue;
            }
            if let Some(kw) = node.shift_remove("allOf") {
                let Some(Value::Array(entries)) = kw.val.input() else {
                    self.unfaithful(&kw.base, "allOf", "`allOf` is not an array".into());
                    continue;
                };
                for (i, entry) in entries.iter().enumerate() {
                    let entry_pointer = index(&kw.base, "allOf", i);
                    match entry {
                        Value::Object(map) => {
                            let inner = node_of(map, &entry_pointer);
                            node = self.merge(node, inner, &kw.base, "allOf");
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
        let dialect = self.dialect;
        if !root && self.keeps_reference(reference) {
            let dropped: Vec<String> = node
                .keys()
                .filter(|key| self.always_removed(key))
                .cloned()
                .collect();
            for key in dropped {
                if let Some(kw) = node.shift_remove(&key) {
                    self.removed(&kw.base, &key);
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
        if dialect == Dialect::Gemini {
            if depth >= GEMINI_RECURSION_DEPTH || self.budget == 0 {
                return Some(self.cut(node, target, site, reference));
            }
        } else if depth > 0 || self.budget == 0 {
            if self.keeps_reference(reference) {
                // Recursion through a `$ref` with siblings: inlined once already; the inner
                // occurrence stays a plain reference and loses its siblings.
                let siblings: Vec<String> =
                    node.keys().filter(|key| *key != "$ref").cloned().collect();
                for key in siblings {
                    if let Some(kw) = node.shift_remove(&key) {
                        let message =
                            format!("removed `{key}` next to a recursive `$ref` {reference:?}");
                        self.lossy(&kw.base, &key, message);
                    }
                }
                return Some(self.pure_reference(site, reference));
            }
            let message = format!(
                "recursive `$ref` {reference:?} outside `$defs` cannot be expressed in {}",
                dialect.label()
            );
            self.unfaithful(site, "$ref", message);
            return Some(Value::Object(Map::from_iter([(
                "$ref".to_owned(),
                Value::String(reference.to_owned()),
            )])));
        }
        self.stack.push(target_pointer.clone());
        node.shift_remove("$ref");
        let inner = match target {
            Value::Object(map) => node_of(map, &target_pointer),
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

    fn pure_reference(&mut self, site: &str, reference: &str) -> Value {
        if resolve(self.root, reference).is_none() {
            let message = format!("cannot resolve `$ref` {reference:?}");
            self.unfaithful(site, "$ref", message);
        } else if self.dialect == Dialect::AnthropicStrict && self.cyclic.contains(site) {
            let message = format!(
                "recursive `$ref` {reference:?}: {} does not support recursive schemas",
                self.dialect.label()
            );
            self.unfaithful(site, "$ref", message);
        }
        Value::Object(Map::from_iter([(
            "$ref".to_owned(),
            Value::String(reference.to_owned()),
        )]))
    }

    /// Gemini: a recursive reference past the depth limit becomes a plain schema of its type.
    fn cut(&mut self, node: &Node<'a>, target: &Value, site: &str, reference: &str) -> Value {
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
            .map(|kw| kw.val.value().into_owned())
            .or_else(|| target.get("description").cloned());
        if let Some(description @ Value::String(_)) = description {
            out.insert("description".to_owned(), description);
        }
        Value::Object(out)
    }

    /// Merge `inner` (a `$ref` target or an `allOf` entry) into `outer`, as one schema asking for
    /// both. Parts that cannot be combined keep `outer`'s value and make the result unfaithful.
    fn merge(&mut self, mut outer: Node<'a>, inner: Node<'a>, at: &str, via: &str) -> Node<'a> {
        let names = |node: &Node<'a>| -> Option<HashSet<String>> {
            match node.get("properties").map(|kw| &kw.val) {
                Some(Val::Props(props)) => {
                    Some(props.iter().map(|prop| prop.name.to_owned()).collect())
                }
                _ => None,
            }
        };
        let closed = |node: &Node<'a>| {
            ["additionalProperties", "unevaluatedProperties"]
                .iter()
                .any(|key| {
                    node.get(*key).is_some_and(|kw| {
                        !matches!(kw.val.value().as_ref(), Value::Bool(true))
                            && kw.val.value().as_object().is_none_or(|m| !m.is_empty())
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
        for (key, kw) in inner {
            let Some(existing) = outer.get_mut(&key) else {
                outer.insert(key, kw);
                continue;
            };
            if ANNOTATIONS.contains(&key.as_str()) {
                continue;
            }
            if let Some(val) = merge_values(&key, &existing.val, &kw.val) {
                existing.val = val;
            } else {
                let message =
                    format!("cannot merge `{key}` of `{via}` into one schema: kept the outer one");
                self.unfaithful(at, &key, message);
            }
        }
        outer
    }

    /// The validated type names of a node, if it has a `type`.
    fn types(&mut self, node: &Node<'a>) -> Option<Vec<String>> {
        let kw = node.get("type")?;
        let value = kw.val.value();
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
            self.unfaithful(&kw.base, "type", message);
        }
        let mut unique: Vec<String> = Vec::with_capacity(known.len());
        for name in known {
            if !unique.contains(&name) {
                unique.push(name);
            }
        }
        (!unique.is_empty()).then_some(unique)
    }

    /// Transform a node whose `$ref` and `allOf` are resolved.
    fn build(&mut self, mut node: Node<'a>, pointer: &str, root: bool) -> Value {
        let dialect = self.dialect;
        if let Some(kw) = node.shift_remove("oneOf") {
            if node.contains_key("anyOf") {
                let message = "`oneOf` next to `anyOf` cannot be expressed: removed".to_owned();
                self.unfaithful(&kw.base, "oneOf", message);
            } else {
                let message = "replaced `oneOf` with `anyOf`: a value matching several \
                               alternatives is no longer rejected"
                    .to_owned();
                self.lossy(&kw.base, "oneOf", message);
                node.insert("anyOf".to_owned(), kw);
            }
        }
        let mut types = self.types(&node);
        let mut out = Map::new();
        let mut parts = Parts::default();
        for (key, kw) in &node {
            let base = kw.base.as_str();
            let value = kw.val.value_or_null(false);
            match key.as_str() {
                "type" => {
                    out.insert(key.clone(), Value::Null); // placeholder, set below
                }
                "title" | "description" => {
                    if value.is_string() || dialect != Dialect::Gemini {
                        out.insert(key.clone(), value.into_owned());
                    } else {
                        self.removed(base, key);
                    }
                }
                "default" => {
                    if dialect == Dialect::OpenAiStrict {
                        self.removed(base, key);
                    } else {
                        out.insert(key.clone(), value.into_owned());
                    }
                }
                "examples" => match (dialect, value.as_ref()) {
                    (Dialect::Gemini, Value::Array(examples)) if !examples.is_empty() => {
                        out.insert("example".to_owned(), examples[0].clone());
                        if examples.len() > 1 {
                            let message = "kept the first of `examples` as `example`".to_owned();
                            self.lossy(base, key, message);
                        }
                    }
                    _ => self.removed(base, key),
                },
                "example" if dialect == Dialect::Gemini => {
                    out.insert(key.clone(), value.into_owned());
                }
                "enum" => self.enumeration(base, &value, &mut out, &mut parts),
                "const" => self.constant(base, &value, &mut out, &mut types),
                "anyOf" => {
                    let Some(Value::Array(branches)) = kw.val.input() else {
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
                "items" => match kw.val.input() {
                    Some(Value::Bool(false)) => parts.items_false = Some(base.to_owned()),
                    Some(items @ (Value::Object(_) | Value::Bool(true))) => {
                        let sub = self.schema(items, &child(base, "items"), false);
                        parts.items = Some(sub);
                        out.insert(key.clone(), Value::Null);
                    }
                    _ => self.removed_unfaithful(base, key, "`items` that is not a schema"),
                },
                "prefixItems" => {
                    let Some(Value::Array(entries)) = kw.val.input() else {
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
                    let Val::Props(props) = &kw.val else {
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
                "unevaluatedProperties" if matches!(value.as_ref(), Value::Bool(false)) => {
                    if parts.additional.is_none() && !node.contains_key("additionalProperties") {
                        parts.additional = Some((Value::Bool(false), base.to_owned()));
                    }
                    let message =
                        "read `unevaluatedProperties: false` as `additionalProperties: false`"
                            .to_owned();
                    self.lossy(base, key, message);
                }
                "unevaluatedProperties" | "patternProperties" => {
                    if dialect == Dialect::Gemini {
                        self.removed(base, key);
                    } else {
                        self.removed_unfaithful(base, key, "a free-form object");
                    }
                }
                "unevaluatedItems" => {
                    if dialect == Dialect::Gemini || matches!(value.as_ref(), Value::Bool(false)) {
                        self.removed(base, key);
                    } else {
                        self.removed_unfaithful(base, key, "extra array items");
                    }
                }
                "$defs" | "definitions" => {
                    if dialect == Dialect::Gemini {
                        continue; // every reference is inlined
                    }
                    let Some(Value::Object(defs)) = kw.val.input() else {
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
                    let keep = match (dialect, value.as_str()) {
                        (Dialect::Gemini, Some(_)) => true,
                        (_, Some(pattern)) => {
                            !complex_pattern(pattern, dialect == Dialect::AnthropicStrict)
                        }
                        (_, None) => false,
                    };
                    if keep {
                        out.insert(key.clone(), value.into_owned());
                    } else {
                        let message = format!(
                            "removed `pattern`: lookaround, backreferences or other complex \
                             regex features are not supported in {}",
                            dialect.label()
                        );
                        self.lossy(base, key, message);
                    }
                }
                "minLength" | "maxLength" | "minProperties" | "maxProperties" => {
                    if dialect == Dialect::Gemini {
                        self.count(base, key, &value, &mut out);
                    } else {
                        self.removed(base, key);
                    }
                }
                "minItems" => match dialect {
                    Dialect::Gemini => self.count(base, key, &value, &mut out),
                    Dialect::AnthropicStrict if value.as_u64().is_none_or(|n| n > 1) => {
                        let message = "removed `minItems`: Anthropic strict mode only supports \
                                       0 or 1"
                            .to_owned();
                        self.lossy(base, key, message);
                    }
                    _ => {
                        out.insert(key.clone(), value.into_owned());
                    }
                },
                "maxItems" => match dialect {
                    Dialect::Gemini => self.count(base, key, &value, &mut out),
                    Dialect::AnthropicStrict => self.removed(base, key),
                    Dialect::OpenAiStrict => {
                        out.insert(key.clone(), value.into_owned());
                    }
                },
                "minimum" | "maximum" => match dialect {
                    Dialect::AnthropicStrict => self.removed(base, key),
                    _ if value.is_number() => {
                        out.insert(key.clone(), value.into_owned());
                    }
                    _ => self.removed(base, key),
                },
                "exclusiveMinimum" | "exclusiveMaximum" => match (dialect, value.as_ref()) {
                    (Dialect::OpenAiStrict, _) => {
                        out.insert(key.clone(), value.into_owned());
                    }
                    (Dialect::Gemini, Value::Number(n)) => {
                        let which = if key == "exclusiveMinimum" {
                            "minimum"
                        } else {
                            "maximum"
                        };
                        parts.exclusive.push((which, n.clone(), base.to_owned()));
                    }
                    _ => self.removed(base, key),
                },
                "multipleOf" => {
                    if dialect == Dialect::OpenAiStrict {
                        out.insert(key.clone(), value.into_owned());
                    } else {
                        self.removed(base, key);
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
        let types = types.as_deref();
        match dialect {
            Dialect::Gemini => self.finish_gemini(out, types, parts, pointer),
            _ => self.finish_strict(out, types, parts, pointer, root),
        }
    }

    /// Gemini integer fields (`minItems`...): a non-negative integer or removed.
    fn count(&mut self, base: &str, key: &str, value: &Value, out: &mut Map<String, Value>) {
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

    fn enumeration(
        &mut self,
        base: &str,
        value: &Value,
        out: &mut Map<String, Value>,
        parts: &mut Parts,
    ) {
        let Value::Array(values) = value else {
            self.removed_unfaithful(base, "enum", "an `enum` that is not an array");
            return;
        };
        if self.dialect == Dialect::Gemini {
            let strings: Vec<Value> = values.iter().filter(|v| v.is_string()).cloned().collect();
            let nulls = values.iter().filter(|v| v.is_null()).count();
            if strings.len() + nulls == values.len() && !strings.is_empty() {
                out.insert("enum".to_owned(), Value::Array(strings));
                parts.nullable |= nulls > 0;
            } else {
                let message = "removed `enum`: Gemini enums hold strings only".to_owned();
                self.lossy(base, "enum", message);
            }
        } else {
            if !values.iter().all(is_primitive) {
                self.unfaithful(
                    base,
                    "enum",
                    format!(
                        "`enum` of objects or arrays cannot be expressed in {}",
                        self.dialect.label()
                    ),
                );
            }
            out.insert("enum".to_owned(), value.clone());
        }
    }

    fn constant(
        &mut self,
        base: &str,
        value: &Value,
        out: &mut Map<String, Value>,
        types: &mut Option<Vec<String>>,
    ) {
        if self.dialect == Dialect::Gemini {
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
                    self.lossy(base, "const", message);
                    if types.is_none() && is_primitive(value) {
                        *types = Some(vec![value_type(value).to_owned()]);
                        out.insert("type".to_owned(), Value::Null);
                    }
                }
            }
        } else {
            if !is_primitive(value) {
                self.unfaithful(
                    base,
                    "const",
                    format!(
                        "`const` object or array cannot be expressed in {}",
                        self.dialect.label()
                    ),
                );
            }
            out.insert("const".to_owned(), value.clone());
        }
    }

    fn format(&mut self, base: &str, value: &Value, out: &mut Map<String, Value>) {
        let name = value.as_str().unwrap_or_default();
        let keep = match self.dialect {
            Dialect::OpenAiStrict => OPENAI_FORMATS.contains(&name),
            Dialect::AnthropicStrict => ANTHROPIC_FORMATS.contains(&name),
            // "Any value is allowed, but most do not trigger any special functionality."
            Dialect::Gemini => value.is_string(),
        };
        if keep {
            out.insert("format".to_owned(), value.clone());
        } else {
            let message = format!(
                "removed `format` {value}: not a format {} supports",
                self.dialect.label()
            );
            self.lossy(base, "format", message);
        }
    }

    /// Array parts shared by every dialect: `items` and tuples.
    fn finish_items(&mut self, out: &mut Map<String, Value>, parts: &mut Parts) {
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
            if self.dialect == Dialect::Gemini {
                self.lossy(&base, "prefixItems", message);
            } else {
                self.unfaithful(&base, "prefixItems", message);
            }
        } else if let Some(items) = parts.items.take() {
            out.insert("items".to_owned(), items);
        } else if let Some(base) = parts.items_false.take() {
            out.shift_remove("items");
            let message =
                "`items: false` (an empty array only) cannot be expressed: removed".to_owned();
            if self.dialect == Dialect::Gemini {
                self.lossy(&base, "items", message);
            } else {
                self.unfaithful(&base, "items", message);
            }
        }
        if out.get("items").is_some_and(Value::is_null) {
            out.shift_remove("items");
        }
    }

    /// OpenAI and Anthropic: close objects, settle `required`, infer and check types.
    fn finish_strict(
        &mut self,
        mut out: Map<String, Value>,
        types: Option<&[String]>,
        mut parts: Parts,
        pointer: &str,
        root: bool,
    ) -> Value {
        let dialect = self.dialect;
        let label = dialect.label();
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
            self.close_object(&mut out, &mut parts, pointer, root);
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
        if dialect == Dialect::AnthropicStrict
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
        pointer: &str,
        root: bool,
    ) {
        let label = self.dialect.label();
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
            let schema = if self.dialect == Dialect::OpenAiStrict {
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
        if self.dialect == Dialect::OpenAiStrict || !out_required.is_empty() {
            out.insert("required".to_owned(), Value::Array(out_required));
        } else {
            out.shift_remove("required");
        }
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
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
                    return Value::Object(merged);
                }
            }
            _ => {}
        }
        set_types(&mut out, types.as_deref());
        if nullable {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
        match &types {
            Some(list) if list.len() > 1 && !out.contains_key("anyOf") => {
                Value::Object(split_types(out, list, true))
            }
            _ => Value::Object(out),
        }
    }

    /// The root must be a plain object schema.
    fn check_root(&mut self, out: &Value) {
        let plain_object = out.get("type").and_then(Value::as_str) == Some("object")
            && !out.as_object().is_some_and(|m| m.contains_key("anyOf"))
            && out.get("nullable").is_none();
        if !plain_object {
            let message = format!(
                "the root is not a plain object schema, which {} requires",
                self.dialect.label()
            );
            self.unfaithful("", "type", message);
        }
    }

    fn check_openai_limits(&mut self, out: &Value) {
        let mut stats = Stats::default();
        stats.walk(out, 0);
        if stats.properties > OPENAI_MAX_PROPERTIES {
            let message = format!(
                "{} properties in total: OpenAI strict mode allows {OPENAI_MAX_PROPERTIES}",
                stats.properties
            );
            self.unfaithful("", "properties", message);
        }
        if stats.nesting > OPENAI_MAX_NESTING {
            let message = format!(
                "{} levels of object nesting: OpenAI strict mode allows {OPENAI_MAX_NESTING}",
                stats.nesting
            );
            self.unfaithful("", "properties", message);
        }
        if stats.enum_values > OPENAI_MAX_ENUM_VALUES {
            let message = format!(
                "{} enum values in total: OpenAI strict mode allows {OPENAI_MAX_ENUM_VALUES}",
                stats.enum_values
            );
            self.unfaithful("", "enum", message);
        }
        if stats.large_enum {
            let message = format!(
                "an enum of more than {OPENAI_LARGE_ENUM} strings totals over \
                 {OPENAI_LARGE_ENUM_TEXT} characters: over OpenAI strict mode's limit"
            );
            self.unfaithful("", "enum", message);
        }
        if stats.text > OPENAI_MAX_TEXT {
            let message = format!(
                "{} characters of property names, definition names and enum values: OpenAI \
                 strict mode allows {OPENAI_MAX_TEXT}",
                stats.text
            );
            self.unfaithful("", "properties", message);
        }
    }
}

/// Combine two values of the same keyword, as one schema asking for both; `None` if they
/// cannot be combined exactly.
fn merge_values<'a>(key: &str, outer: &Val<'a>, inner: &Val<'a>) -> Option<Val<'a>> {
    if let (Val::Props(outer), Val::Props(inner)) = (outer, inner) {
        let mut merged = outer.clone();
        for prop in inner {
            match merged.iter().find(|p| p.name == prop.name) {
                Some(existing) if existing.schema == prop.schema => {}
                Some(_) => return None,
                None => merged.push(prop.clone()),
            }
        }
        return Some(Val::Props(merged));
    }
    let (a, b) = (outer.value(), inner.value());
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
    Some(Val::Own(merged))
}

/// Whether merging into a closed object adds properties it does not declare.
fn widens(closed: bool, own: Option<&HashSet<String>>, other: Option<&HashSet<String>>) -> bool {
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

fn is_null_schema(schema: &Value) -> bool {
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
fn make_nullable(schema: Value) -> (Value, bool) {
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
fn split_types(out: Map<String, Value>, types: &[String], gemini: bool) -> Map<String, Value> {
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

/// Sizes OpenAI limits, measured on the output.
#[derive(Default)]
struct Stats {
    properties: usize,
    nesting: usize,
    enum_values: usize,
    large_enum: bool,
    text: usize,
}

impl Stats {
    fn walk(&mut self, schema: &Value, level: usize) {
        let Value::Object(map) = schema else {
            return;
        };
        let mut level = level;
        if let Some(Value::Object(props)) = map.get("properties") {
            level += 1;
            self.nesting = self.nesting.max(level);
            self.properties += props.len();
            self.text += props.keys().map(String::len).sum::<usize>();
        }
        let enum_text = |values: &[Value], stats: &mut Self| {
            let text: usize = values.iter().filter_map(Value::as_str).map(str::len).sum();
            stats.text += text;
            if values.len() > OPENAI_LARGE_ENUM && text > OPENAI_LARGE_ENUM_TEXT {
                stats.large_enum = true;
            }
        };
        if let Some(Value::Array(values)) = map.get("enum") {
            self.enum_values += values.len();
            enum_text(values, self);
        }
        if let Some(value) = map.get("const") {
            enum_text(std::slice::from_ref(value), self);
        }
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(defs)) = map.get(key) {
                self.text += defs.keys().map(String::len).sum::<usize>();
                for def in defs.values() {
                    self.walk(def, 0);
                }
            }
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            for sub in props.values() {
                self.walk(sub, level);
            }
        }
        if let Some(items) = map.get("items") {
            self.walk(items, level);
        }
        if let Some(Value::Array(branches)) = map.get("anyOf") {
            for branch in branches {
                self.walk(branch, level);
            }
        }
    }
}
