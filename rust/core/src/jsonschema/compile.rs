//! Compiles schema documents into the node arena: finds resources and anchors, resolves every
//! `$ref` to a node index, and pre-parses each keyword.
//!
//! Nodes are memoised by the address of their schema value, so the documents are never copied and
//! reference cycles compile to index cycles.
use ahash::{AHashMap, AHashSet};
use serde_json::{Map, Value};

use super::node::{
    Applicators, ArrayKeywords, DynamicRef, Enumeration, Node, NodeId, NumberKeywords,
    ObjectKeywords, Resource, Schema, StringKeywords, types,
};
use super::options::{Draft, Options, SchemaError};
use super::{meta, uri};
use crate::formats::Format;
use crate::json::{Instance, Number, pointer};
use crate::pattern::Pattern;

/// Base URI of a document that has no `$id`.
const DEFAULT_BASE: &str = "json-schema:///";
/// Above this many properties, lookups go through a hash map instead of a linear scan.
const PROPERTY_INDEX_THRESHOLD: usize = 12;
/// Above this many string choices, `enum` uses a hash set.
const ENUM_SET_THRESHOLD: usize = 8;

/// The result of compilation.
pub(crate) struct Compiled {
    pub nodes: Vec<Node>,
    pub resources: Vec<Resource>,
    pub root: NodeId,
    /// True when some `$dynamicRef` resolves dynamically, so validation tracks the scope.
    pub dynamic: bool,
    /// True when some `pattern` or `patternProperties` key needs backtracking.
    pub backtracking: bool,
}

/// True when a node matches a pattern with lookaround or backreferences.
fn has_backtracking_pattern(nodes: &[Node]) -> bool {
    nodes.iter().any(|node| {
        let Node::Schema(schema) = node else {
            return false;
        };
        let string = schema
            .string
            .as_ref()
            .and_then(|keywords| keywords.pattern.as_ref())
            .is_some_and(|pattern| !pattern.is_linear());
        let object = schema.object.as_ref().is_some_and(|keywords| {
            keywords
                .pattern_properties
                .iter()
                .any(|(pattern, _)| !pattern.is_linear())
        });
        string || object
    })
}

fn address(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
}

/// Where every resource and anchor of the known documents lives.
#[derive(Default)]
struct Registry<'s> {
    by_uri: AHashMap<String, (&'s Value, u32)>,
    root_ids: AHashMap<usize, u32>,
    uris: Vec<String>,
    /// The draft of each resource, by resource index.
    drafts: Vec<Draft>,
    /// The draft of a document that names none.
    default_draft: Draft,
    anchors: AHashMap<String, (&'s Value, u32)>,
    dynamic_keys: AHashSet<String>,
    dynamic: Vec<Vec<(String, &'s Value)>>,
    documents: Vec<&'s Value>,
    metaschemas_loaded: bool,
}

/// How a keyword holds subschemas, for finding the resources and anchors inside a document.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// One subschema.
    One,
    /// An object of subschemas.
    Map,
    /// An array of subschemas.
    Array,
    /// One subschema or an array of them (`items` before 2020-12).
    OneOrArray,
    /// An object whose values may be subschemas (`dependencies`: arrays of names are not).
    SomeOfMap,
}

/// How `keyword` holds subschemas in `draft`, `None` when it holds none.
fn holds(draft: Draft, keyword: &str) -> Option<Holds> {
    let since_7 = draft >= Draft::Draft7;
    let since_2019 = draft >= Draft::Draft201909;
    Some(match keyword {
        "additionalProperties" | "not" => Holds::One,
        "properties" | "patternProperties" => Holds::Map,
        "allOf" | "anyOf" | "oneOf" => Holds::Array,
        "items" if draft == Draft::Draft202012 => Holds::One,
        "items" => Holds::OneOrArray,
        "prefixItems" if draft == Draft::Draft202012 => Holds::Array,
        "additionalItems" if !since_2019 || draft == Draft::Draft201909 => Holds::One,
        "contains" | "propertyNames" | "if" | "then" | "else" if since_7 => Holds::One,
        "unevaluatedProperties" | "unevaluatedItems" | "contentSchema" if since_2019 => Holds::One,
        "$defs" | "dependentSchemas" if since_2019 => Holds::Map,
        "definitions" if !since_2019 => Holds::Map,
        "dependencies" => Holds::SomeOfMap,
        _ => return None,
    })
}

/// The draft a document is written in: its `$schema` when it names a draft, the draft of the
/// metaschema it names when that is one of `documents` (a custom metaschema), else `default`.
/// `Err` carries a `$schema` that names neither.
fn document_draft(
    document: &Value,
    documents: &[(String, Value)],
    default: Draft,
) -> Result<Draft, String> {
    let mut current = document;
    // A custom metaschema may itself name a custom metaschema; a few levels are plenty.
    for _ in 0..8 {
        let Some(Value::String(metaschema)) = current.get("$schema") else {
            return Ok(default);
        };
        if let Some(draft) = Draft::from_metaschema(metaschema) {
            return Ok(draft);
        }
        let wanted = uri::split_fragment(metaschema).0;
        let found = documents.iter().find(|(retrieval, candidate)| {
            uri::split_fragment(retrieval).0 == wanted
                || ["$id", "id"].iter().any(|key| {
                    candidate
                        .get(*key)
                        .and_then(Value::as_str)
                        .is_some_and(|id| {
                            uri::split_fragment(&uri::resolve(retrieval, id)).0 == wanted
                        })
                })
        });
        match found {
            Some((_, meta)) if !std::ptr::eq(meta, current) => current = meta,
            _ => return Err(metaschema.clone()),
        }
    }
    Ok(default)
}

impl<'s> Registry<'s> {
    fn add_resource(&mut self, uri: String, root: &'s Value, draft: Draft) -> u32 {
        if let Some(&id) = self.root_ids.get(&address(root))
            && self.uris.get(id as usize) == Some(&uri)
        {
            return id;
        }
        let id = self.uris.len() as u32;
        self.by_uri.entry(uri.clone()).or_insert((root, id));
        self.root_ids.entry(address(root)).or_insert(id);
        self.uris.push(uri);
        self.drafts.push(draft);
        self.dynamic.push(Vec::new());
        id
    }

    fn uri(&self, id: u32) -> &str {
        self.uris
            .get(id as usize)
            .map_or(DEFAULT_BASE, String::as_str)
    }

    /// The draft of resource `id`.
    fn draft(&self, id: u32) -> Draft {
        self.drafts
            .get(id as usize)
            .copied()
            .unwrap_or(self.default_draft)
    }

    /// Registers `document` (written in `draft`) under `base`, with every resource and anchor in
    /// it: `$id` (`id` in draft 4), `$anchor`, `$dynamicAnchor`, `$recursiveAnchor`, and before
    /// 2019-09 an `$id` that is only a fragment. Before 2019-09 an `$id` beside `$ref` is ignored,
    /// as everything beside `$ref` is.
    fn add_document(&mut self, base: &str, document: &'s Value, draft: Draft) {
        self.documents.push(document);
        let retrieval = uri::split_fragment(base).0;
        let root_id = match own_id(document, draft) {
            Some(id) => uri::split_fragment(&uri::resolve(retrieval, id))
                .0
                .to_owned(),
            None => retrieval.to_owned(),
        };
        let root = self.add_resource(root_id, document, draft);
        self.by_uri
            .entry(retrieval.to_owned())
            .or_insert((document, root));
        let mut stack: Vec<(&'s Value, u32)> = vec![(document, root)];
        while let Some((value, mut resource)) = stack.pop() {
            let Value::Object(object) = value else {
                continue;
            };
            let mut draft = self.draft(resource);
            if let Some(id) = own_id(value, draft) {
                let resolved = uri::resolve(self.uri(resource), id);
                let (location, fragment) = uri::split_fragment(&resolved);
                let location = location.to_owned();
                if address(value) != address(document)
                    && !(id.starts_with('#') && draft < Draft::Draft201909)
                {
                    if let Some(Value::String(metaschema)) = object.get("$schema") {
                        draft = Draft::from_metaschema(metaschema).unwrap_or(draft);
                    }
                    resource = self.add_resource(location, value, draft);
                }
                if draft < Draft::Draft201909 && !fragment.is_empty() {
                    // A plain-name fragment in `$id` is what `$anchor` became.
                    self.anchors
                        .entry(resolved.clone())
                        .or_insert((value, resource));
                }
            }
            if draft >= Draft::Draft201909
                && let Some(Value::String(name)) = object.get("$anchor")
            {
                let key = format!("{}#{name}", self.uri(resource));
                self.anchors.entry(key).or_insert((value, resource));
            }
            if draft == Draft::Draft202012
                && let Some(Value::String(name)) = object.get("$dynamicAnchor")
            {
                let key = format!("{}#{name}", self.uri(resource));
                self.anchors.entry(key.clone()).or_insert((value, resource));
                self.dynamic_keys.insert(key);
                if let Some(list) = self.dynamic.get_mut(resource as usize) {
                    list.push((name.clone(), value));
                }
            }
            if draft == Draft::Draft201909
                && object.get("$recursiveAnchor") == Some(&Value::Bool(true))
                && let Some(list) = self.dynamic.get_mut(resource as usize)
            {
                // `$recursiveRef` is `$dynamicRef` to the one nameless dynamic anchor.
                list.push((String::new(), value));
            }
            if draft.ref_replaces_siblings() && object.contains_key("$ref") {
                continue;
            }
            for (key, child) in object {
                match (holds(draft, key), child) {
                    (Some(Holds::One), _) | (Some(Holds::OneOrArray), Value::Object(_)) => {
                        stack.push((child, resource));
                    }
                    (Some(Holds::Map | Holds::SomeOfMap), Value::Object(children)) => {
                        stack.extend(children.values().map(|child| (child, resource)));
                    }
                    (Some(Holds::Array | Holds::OneOrArray), Value::Array(children)) => {
                        stack.extend(children.iter().map(|child| (child, resource)));
                    }
                    _ => {}
                }
            }
        }
    }

    fn load_metaschemas(&mut self) {
        if self.metaschemas_loaded {
            return;
        }
        self.metaschemas_loaded = true;
        for (uri, document) in meta::documents() {
            let draft = document
                .get("$schema")
                .and_then(Value::as_str)
                .and_then(Draft::from_metaschema)
                .unwrap_or(self.default_draft);
            self.add_document(uri, document, draft);
        }
    }
}

/// Compiles `schema` (with `resources` available to `$ref`) into a node arena.
pub(crate) fn compile(
    schema: &Value,
    options: &Options,
    resources: &[(String, Value)],
) -> Result<Compiled, SchemaError> {
    let draft = document_draft(schema, resources, options.draft).map_err(|metaschema| SchemaError {
        pointer: "/$schema".to_owned(),
        message: format!("unknown $schema {metaschema:?}: not a draft this validator knows (2020-12, 2019-09, 7, 6 or 4) nor a metaschema among the resources"),
    })?;
    let mut registry = Registry {
        default_draft: draft,
        ..Registry::default()
    };
    registry.add_document(DEFAULT_BASE, schema, draft);
    for (uri, document) in resources {
        let own = document_draft(document, resources, draft).unwrap_or(draft);
        registry.add_document(uri, document, own);
    }
    let mut compiler = Compiler {
        registry,
        nodes: Vec::new(),
        memo: AHashMap::new(),
        pending: Vec::new(),
        origins: Vec::new(),
        used: Vec::new(),
        dynamic: false,
        validation_vocabulary: true,
        assert_formats: options.assert_formats,
    };
    compiler.read_vocabularies(schema);
    let root = compiler.node_for(schema, 0);
    compiler.drain()?;
    let resources = compiler.compile_dynamic_anchors()?;
    compiler.reject_cycles()?;
    let dynamic = compiler.dynamic;
    let mut nodes = compiler.nodes;
    let mut root = root;
    if !dynamic {
        root = skip_pure_references(&mut nodes, root);
    }
    merge_type_unions(&mut nodes);
    mark_shortcuts(&mut nodes);
    let backtracking = has_backtracking_pattern(&nodes);
    Ok(Compiled {
        nodes,
        resources,
        root,
        dynamic,
        backtracking,
    })
}

struct Compiler<'s> {
    registry: Registry<'s>,
    nodes: Vec<Node>,
    memo: AHashMap<usize, NodeId>,
    pending: Vec<(&'s Value, NodeId, u32)>,
    /// The schema value each node was compiled from, for error locations.
    origins: Vec<&'s Value>,
    used: Vec<bool>,
    dynamic: bool,
    validation_vocabulary: bool,
    /// `format` is an assertion: asked for in the options, or by the metaschema's vocabulary.
    assert_formats: bool,
}

impl<'s> Compiler<'s> {
    /// Honours a custom metaschema's `$vocabulary`: without the validation vocabulary its
    /// keywords are ignored; with the format-assertion vocabulary (required or not, which only
    /// matters to validators that do not know it) `format` is asserted.
    fn read_vocabularies(&mut self, schema: &'s Value) {
        let Some(Value::String(metaschema)) = schema.get("$schema") else {
            return;
        };
        let (document, _) = uri::split_fragment(metaschema);
        if document.starts_with("https://json-schema.org/") {
            return;
        }
        let Some((meta, _)) = self.registry.by_uri.get(document) else {
            return;
        };
        if let Some(Value::Object(vocabularies)) = meta.get("$vocabulary") {
            self.validation_vocabulary = vocabularies
                .keys()
                .any(|name| name.ends_with("/vocab/validation"));
            self.assert_formats |= vocabularies
                .keys()
                .any(|name| name.ends_with("/vocab/format-assertion"));
        }
    }

    fn error(&self, at: &Value, message: impl Into<String>) -> SchemaError {
        let pointer = self
            .registry
            .documents
            .iter()
            .find_map(|document| locate(document, address(at), &mut Vec::new(), 0))
            .unwrap_or_default();
        SchemaError {
            pointer,
            message: message.into(),
        }
    }

    /// The node for the schema `value` of resource `resource`, compiled later if new.
    fn node_for(&mut self, value: &'s Value, resource: u32) -> NodeId {
        if let Some(id) = self.memo.get(&address(value)) {
            return *id;
        }
        let id = self.nodes.len() as NodeId;
        self.memo.insert(address(value), id);
        self.origins.push(value);
        match value {
            Value::Bool(flag) => self.nodes.push(Node::Bool(*flag)),
            Value::Object(object) if object.is_empty() => self.nodes.push(Node::Bool(true)),
            _ => {
                let resource = self
                    .registry
                    .root_ids
                    .get(&address(value))
                    .copied()
                    .unwrap_or(resource);
                self.nodes.push(Node::Bool(true));
                self.pending.push((value, id, resource));
            }
        }
        id
    }

    fn drain(&mut self) -> Result<(), SchemaError> {
        while let Some((value, id, resource)) = self.pending.pop() {
            let index = resource as usize;
            if self.used.len() <= index {
                self.used.resize(index + 1, false);
            }
            if let Some(flag) = self.used.get_mut(index) {
                *flag = true;
            }
            let node = match value {
                Value::Object(object) => self.compile_object(object, resource)?,
                _ => return Err(self.error(value, "a schema must be an object or a boolean")),
            };
            if let Some(slot) = self.nodes.get_mut(id as usize) {
                *slot = node;
            }
        }
        Ok(())
    }

    /// Compiles the `$dynamicAnchor`s of every resource in use; they may be reached only through
    /// the dynamic scope.
    fn compile_dynamic_anchors(&mut self) -> Result<Vec<Resource>, SchemaError> {
        let mut resources: Vec<Resource> = Vec::new();
        if !self.dynamic {
            return Ok(resources);
        }
        let mut done = 0;
        loop {
            let used: Vec<usize> = self
                .used
                .iter()
                .enumerate()
                .filter_map(|(index, used)| used.then_some(index))
                .collect();
            if used.len() == done {
                break;
            }
            done = used.len();
            for index in used {
                let anchors = self
                    .registry
                    .dynamic
                    .get(index)
                    .cloned()
                    .unwrap_or_default();
                if resources.len() <= index {
                    resources.resize_with(index + 1, Resource::default);
                }
                let mut compiled = Vec::with_capacity(anchors.len());
                for (name, value) in anchors {
                    compiled.push((name.into_boxed_str(), self.node_for(value, index as u32)));
                }
                if let Some(resource) = resources.get_mut(index) {
                    resource.dynamic_anchors = compiled;
                }
            }
            self.drain()?;
        }
        Ok(resources)
    }

    /// Rejects schemas where applicators that stay on the same value (`$ref`, `allOf`, `not`, ...)
    /// lead back to a schema already being applied: such a schema would never finish validating.
    fn reject_cycles(&self) -> Result<(), SchemaError> {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let mut colour = vec![WHITE; self.nodes.len()];
        let mut edges: Vec<NodeId> = Vec::new();
        for start in 0..self.nodes.len() {
            if colour.get(start) != Some(&WHITE) {
                continue;
            }
            // Each frame: a node and its in-place successors still to visit.
            let mut stack: Vec<(usize, Vec<NodeId>)> =
                vec![(start, self.in_place(start, &mut edges))];
            if let Some(c) = colour.get_mut(start) {
                *c = GREY;
            }
            while let Some((node, successors)) = stack.last_mut() {
                let node = *node;
                let Some(next) = successors.pop() else {
                    if let Some(c) = colour.get_mut(node) {
                        *c = BLACK;
                    }
                    stack.pop();
                    continue;
                };
                let next = next as usize;
                match colour.get(next) {
                    Some(&GREY) => {
                        let at = self.origins.get(next).copied().unwrap_or(&Value::Null);
                        return Err(self.error(
                            at,
                            "this schema applies itself to the same value in a cycle of \
                             references, so validation would never end",
                        ));
                    }
                    Some(&WHITE) => {
                        if let Some(c) = colour.get_mut(next) {
                            *c = GREY;
                        }
                        let successors = self.in_place(next, &mut edges);
                        stack.push((next, successors));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Nodes that `id` applies to the same instance value.
    fn in_place(&self, id: usize, scratch: &mut Vec<NodeId>) -> Vec<NodeId> {
        scratch.clear();
        let Some(Node::Schema(schema)) = self.nodes.get(id) else {
            return Vec::new();
        };
        if let Some(apply) = &schema.apply {
            scratch.extend(apply.reference);
            scratch.extend(apply.dynamic_reference.as_ref().map(|d| d.target));
            scratch.extend(&apply.all_of);
            scratch.extend(&apply.any_of);
            scratch.extend(&apply.one_of);
            scratch.extend(apply.not);
            scratch.extend(apply.if_);
            scratch.extend(apply.then_);
            scratch.extend(apply.else_);
        }
        if let Some(object) = &schema.object {
            scratch.extend(object.dependent_schemas.iter().map(|(_, id)| *id));
        }
        scratch.clone()
    }

    /// Resolves a reference to its schema value and resource.
    fn resolve(
        &mut self,
        at: &Value,
        resource: u32,
        reference: &str,
    ) -> Result<(&'s Value, u32, String), SchemaError> {
        let absolute = uri::resolve(self.registry.uri(resource), reference);
        let (document, fragment) = uri::split_fragment(&absolute);
        if !self.registry.by_uri.contains_key(document) {
            self.registry.load_metaschemas();
        }
        let Some(&(root, root_resource)) = self.registry.by_uri.get(document) else {
            return Err(self.error(at, format!("cannot resolve reference {reference:?}")));
        };
        if fragment.is_empty() {
            return Ok((root, root_resource, absolute));
        }
        if fragment.starts_with('/') {
            // Followed token by token: a `$id` on the way changes the resource.
            let unresolved = || format!("cannot resolve reference {reference:?}");
            let Some(decoded) = pointer::percent_decode(fragment) else {
                return Err(self.error(at, unresolved()));
            };
            let Some(tokens) = pointer::tokens(&decoded) else {
                return Err(self.error(at, unresolved()));
            };
            let mut value = root;
            let mut resource = root_resource;
            for token in tokens {
                let Some(next) = pointer::step(value, &token) else {
                    return Err(self.error(at, unresolved()));
                };
                value = next;
                if let Some(id) = self.registry.root_ids.get(&address(value)) {
                    resource = *id;
                }
            }
            return Ok((value, resource, absolute));
        }
        match self.registry.anchors.get(&absolute) {
            Some(&(value, resource)) => Ok((value, resource, absolute)),
            None => Err(self.error(at, format!("cannot resolve reference {reference:?}"))),
        }
    }

    fn subschema(&mut self, value: &'s Value, resource: u32) -> Result<NodeId, SchemaError> {
        match value {
            Value::Bool(_) | Value::Object(_) => Ok(self.node_for(value, resource)),
            _ => Err(self.error(value, "a schema must be an object or a boolean")),
        }
    }

    fn subschemas(&mut self, value: &'s Value, resource: u32) -> Result<Vec<NodeId>, SchemaError> {
        let Value::Array(items) = value else {
            return Err(self.error(value, "expected an array of schemas"));
        };
        items
            .iter()
            .map(|item| self.subschema(item, resource))
            .collect()
    }

    fn count(&self, value: &Value) -> Result<u64, SchemaError> {
        match value {
            Value::Number(number) => number
                .as_u64()
                .or_else(|| {
                    number
                        .as_f64()
                        .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19)
                        .map(|f| f as u64)
                })
                .ok_or_else(|| self.error(value, "expected a non-negative integer")),
            _ => Err(self.error(value, "expected a non-negative integer")),
        }
    }

    fn number(&self, value: &Value) -> Result<Number, SchemaError> {
        match value {
            Value::Number(_) => <&Value as Instance>::as_number(&value)
                .ok_or_else(|| self.error(value, "expected a number")),
            _ => Err(self.error(value, "expected a number")),
        }
    }

    fn names(&self, value: &Value) -> Result<Vec<Box<str>>, SchemaError> {
        let Value::Array(items) = value else {
            return Err(self.error(value, "expected an array of strings"));
        };
        items
            .iter()
            .map(|item| match item {
                Value::String(name) => Ok(name.as_str().into()),
                _ => Err(self.error(item, "expected a string")),
            })
            .collect()
    }

    fn pattern(&self, at: &Value, source: &str) -> Result<Pattern, SchemaError> {
        Pattern::new(source).map_err(|message| self.error(at, message))
    }

    fn types(&self, value: &Value) -> Result<u8, SchemaError> {
        let one = |item: &Value| -> Result<u8, SchemaError> {
            Ok(match item.as_str() {
                Some("null") => types::NULL,
                Some("boolean") => types::BOOLEAN,
                Some("integer") => types::INTEGER,
                Some("number") => types::NUMBER,
                Some("string") => types::STRING,
                Some("array") => types::ARRAY,
                Some("object") => types::OBJECT,
                _ => return Err(self.error(item, "unknown type name")),
            })
        };
        match value {
            Value::Array(items) => items.iter().try_fold(0, |set, item| Ok(set | one(item)?)),
            _ => one(value),
        }
    }

    fn compile_object(
        &mut self,
        object: &'s Map<String, Value>,
        resource: u32,
    ) -> Result<Node, SchemaError> {
        let mut schema = Schema {
            resource,
            ..Schema::default()
        };
        let mut string = StringKeywords::default();
        let mut number = NumberKeywords::default();
        let mut array = ArrayKeywords::default();
        let mut obj = ObjectKeywords::default();
        let mut apply = Applicators::default();
        let (mut if_, mut then_, mut else_) = (None, None, None);
        let (mut contains_bounds, mut uses_string, mut uses_number) = ((None, None), false, false);
        let (mut uses_array, mut uses_object, mut uses_apply) = (false, false, false);
        let validation = self.validation_vocabulary;
        let draft = self.registry.draft(resource);
        if draft.ref_replaces_siblings()
            && let Some(child) = object.get("$ref")
        {
            // Before 2019-09, `$ref` stands for its target and everything beside it is ignored.
            let Value::String(reference) = child else {
                return Err(self.error(child, "$ref must be a string"));
            };
            let (target, target_resource, _) = self.resolve(child, resource, reference)?;
            apply.reference = Some(self.subschema(target, target_resource)?);
            schema.apply = Some(Box::new(apply));
            return Ok(Node::Schema(Box::new(schema)));
        }
        let since_7 = draft >= Draft::Draft7;
        let since_2019 = draft >= Draft::Draft201909;
        let latest = draft == Draft::Draft202012;
        // Before 2020-12, an array `items` is `prefixItems` and `additionalItems` the rest.
        let (mut items_array, mut additional_items) = (false, None);
        // Draft 4's boolean `exclusiveMinimum` / `exclusiveMaximum` modify the bounds.
        let (mut exclusive_minimum, mut exclusive_maximum) = (false, false);
        for (key, child) in object {
            match key.as_str() {
                "type" if validation => schema.types = self.types(child)?,
                "enum" if validation => {
                    let Value::Array(values) = child else {
                        return Err(self.error(child, "expected an array"));
                    };
                    let strings = (values.len() > ENUM_SET_THRESHOLD
                        && values.iter().all(Value::is_string))
                    .then(|| {
                        values
                            .iter()
                            .filter_map(|v| v.as_str().map(Into::into))
                            .collect()
                    });
                    schema.enumeration = Some(Box::new(Enumeration {
                        values: values.clone(),
                        strings,
                    }));
                }
                "const" if validation && since_7 => schema.constant = Some(Box::new(child.clone())),
                "minLength" if validation => {
                    string.min_length = Some(self.count(child)?);
                    uses_string = true;
                }
                "maxLength" if validation => {
                    string.max_length = Some(self.count(child)?);
                    uses_string = true;
                }
                "pattern" if validation => {
                    let Value::String(source) = child else {
                        return Err(self.error(child, "expected a string"));
                    };
                    string.pattern = Some(self.pattern(child, source)?);
                    uses_string = true;
                }
                "format" if self.assert_formats => {
                    if let Some(format) = child.as_str().and_then(Format::from_name) {
                        string.format = Some(format);
                        uses_string = true;
                    }
                }
                "minimum" if validation => {
                    number.minimum = Some(self.number(child)?);
                    uses_number = true;
                }
                "maximum" if validation => {
                    number.maximum = Some(self.number(child)?);
                    uses_number = true;
                }
                "exclusiveMinimum" | "exclusiveMaximum" if validation && !since_7 => {
                    let flag = child.as_bool().unwrap_or(false);
                    if key == "exclusiveMinimum" {
                        exclusive_minimum = flag;
                    } else {
                        exclusive_maximum = flag;
                    }
                }
                "exclusiveMinimum" if validation => {
                    number.exclusive_minimum = Some(self.number(child)?);
                    uses_number = true;
                }
                "exclusiveMaximum" if validation => {
                    number.exclusive_maximum = Some(self.number(child)?);
                    uses_number = true;
                }
                "multipleOf" if validation => {
                    let divisor = self.number(child)?;
                    if divisor.as_f64() <= 0.0 {
                        return Err(self.error(child, "multipleOf must be greater than 0"));
                    }
                    number.multiple_of = Some(divisor);
                    uses_number = true;
                }
                "minItems" if validation => {
                    array.min_items = Some(self.count(child)?);
                    uses_array = true;
                }
                "maxItems" if validation => {
                    array.max_items = Some(self.count(child)?);
                    uses_array = true;
                }
                "uniqueItems" if validation => {
                    array.unique = child.as_bool().unwrap_or(false);
                    uses_array |= array.unique;
                }
                "minContains" if validation && since_2019 => {
                    contains_bounds.0 = Some(self.count(child)?);
                }
                "maxContains" if validation && since_2019 => {
                    contains_bounds.1 = Some(self.count(child)?);
                }
                "prefixItems" if latest => {
                    array.prefix_items = self.subschemas(child, resource)?;
                    uses_array = true;
                }
                "items" if !latest && child.is_array() => {
                    array.prefix_items = self.subschemas(child, resource)?;
                    items_array = true;
                    uses_array = true;
                }
                "items" => {
                    array.items = Some(self.subschema(child, resource)?);
                    uses_array = true;
                }
                "additionalItems" if !latest => {
                    additional_items = Some(self.subschema(child, resource)?);
                }
                "contains" if since_7 => {
                    array.contains = Some(self.subschema(child, resource)?);
                    uses_array = true;
                }
                "unevaluatedItems" if since_2019 => {
                    array.unevaluated = Some(self.subschema(child, resource)?);
                    uses_array = true;
                }
                "properties" => {
                    let Value::Object(properties) = child else {
                        return Err(self.error(child, "expected an object"));
                    };
                    for (name, subschema) in properties {
                        let id = self.subschema(subschema, resource)?;
                        obj.properties.push((name.as_str().into(), id));
                    }
                    uses_object = true;
                }
                "required" if validation => {
                    obj.required = self.names(child)?;
                    uses_object |= !obj.required.is_empty();
                }
                "patternProperties" => {
                    let Value::Object(patterns) = child else {
                        return Err(self.error(child, "expected an object"));
                    };
                    for (source, subschema) in patterns {
                        let pattern = self.pattern(subschema, source)?;
                        let id = self.subschema(subschema, resource)?;
                        obj.pattern_properties.push((pattern, id));
                    }
                    uses_object = true;
                }
                "additionalProperties" => {
                    obj.additional = Some(self.subschema(child, resource)?);
                    uses_object = true;
                }
                "propertyNames" if since_7 => {
                    obj.property_names = Some(self.subschema(child, resource)?);
                    uses_object = true;
                }
                "unevaluatedProperties" if since_2019 => {
                    obj.unevaluated = Some(self.subschema(child, resource)?);
                    uses_object = true;
                }
                "minProperties" if validation => {
                    obj.min_properties = Some(self.count(child)?);
                    uses_object = true;
                }
                "maxProperties" if validation => {
                    obj.max_properties = Some(self.count(child)?);
                    uses_object = true;
                }
                // Kept after draft 7 as well, for documents that still use it (as the suite's
                // optional compatibility tests expect).
                "dependencies" => {
                    let Value::Object(dependencies) = child else {
                        return Err(self.error(child, "expected an object"));
                    };
                    for (name, dependency) in dependencies {
                        if dependency.is_array() {
                            obj.dependent_required
                                .push((name.as_str().into(), self.names(dependency)?));
                        } else {
                            let id = self.subschema(dependency, resource)?;
                            obj.dependent_schemas.push((name.as_str().into(), id));
                        }
                    }
                    uses_object = true;
                }
                "dependentRequired" if validation && since_2019 => {
                    let Value::Object(dependencies) = child else {
                        return Err(self.error(child, "expected an object"));
                    };
                    for (name, required) in dependencies {
                        obj.dependent_required
                            .push((name.as_str().into(), self.names(required)?));
                    }
                    uses_object = true;
                }
                "dependentSchemas" if since_2019 => {
                    let Value::Object(dependencies) = child else {
                        return Err(self.error(child, "expected an object"));
                    };
                    for (name, subschema) in dependencies {
                        let id = self.subschema(subschema, resource)?;
                        obj.dependent_schemas.push((name.as_str().into(), id));
                    }
                    uses_object = true;
                }
                "allOf" => {
                    apply.all_of = self.subschemas(child, resource)?;
                    uses_apply = true;
                }
                "anyOf" => {
                    apply.any_of = self.subschemas(child, resource)?;
                    uses_apply = true;
                }
                "oneOf" => {
                    apply.one_of = self.subschemas(child, resource)?;
                    uses_apply = true;
                }
                "not" => {
                    apply.not = Some(self.subschema(child, resource)?);
                    uses_apply = true;
                }
                "if" if since_7 => if_ = Some(self.subschema(child, resource)?),
                "then" if since_7 => then_ = Some(self.subschema(child, resource)?),
                "else" if since_7 => else_ = Some(self.subschema(child, resource)?),
                "$ref" => {
                    let Value::String(reference) = child else {
                        return Err(self.error(child, "$ref must be a string"));
                    };
                    let (target, target_resource, _) = self.resolve(child, resource, reference)?;
                    apply.reference = Some(self.subschema(target, target_resource)?);
                    uses_apply = true;
                }
                "$recursiveRef" if draft == Draft::Draft201909 => {
                    let Value::String(reference) = child else {
                        return Err(self.error(child, "$recursiveRef must be a string"));
                    };
                    let (target, target_resource, _) = self.resolve(child, resource, reference)?;
                    let node = self.subschema(target, target_resource)?;
                    // Resolution is dynamic only when the target itself has `$recursiveAnchor`.
                    let anchor = (target.get("$recursiveAnchor") == Some(&Value::Bool(true)))
                        .then(|| "".into());
                    self.dynamic |= anchor.is_some();
                    apply.dynamic_reference = Some(DynamicRef {
                        target: node,
                        anchor,
                    });
                    uses_apply = true;
                }
                "$dynamicRef" if latest => {
                    let Value::String(reference) = child else {
                        return Err(self.error(child, "$dynamicRef must be a string"));
                    };
                    let (target, target_resource, absolute) =
                        self.resolve(child, resource, reference)?;
                    let node = self.subschema(target, target_resource)?;
                    let fragment = uri::split_fragment(&absolute).1;
                    let anchor = (!fragment.is_empty()
                        && !fragment.starts_with('/')
                        && self.registry.dynamic_keys.contains(&absolute))
                    .then(|| fragment.into());
                    self.dynamic |= anchor.is_some();
                    apply.dynamic_reference = Some(DynamicRef {
                        target: node,
                        anchor,
                    });
                    uses_apply = true;
                }
                _ => {}
            }
        }
        if let Some(condition) = if_ {
            // Kept even without `then`/`else`: its annotations still count for `unevaluated*`.
            apply.if_ = Some(condition);
            apply.then_ = then_;
            apply.else_ = else_;
            uses_apply = true;
        }
        if items_array {
            array.items = additional_items;
        }
        if exclusive_minimum {
            number.exclusive_minimum = number.minimum.take();
        }
        if exclusive_maximum {
            number.exclusive_maximum = number.maximum.take();
        }
        if array.contains.is_some() {
            array.min_contains = contains_bounds.0;
            array.max_contains = contains_bounds.1;
        }
        if obj.properties.len() > PROPERTY_INDEX_THRESHOLD {
            obj.property_index = Some(
                obj.properties
                    .iter()
                    .enumerate()
                    .map(|(slot, (name, _))| (name.clone(), slot))
                    .collect(),
            );
        }
        schema.string = uses_string.then(|| Box::new(string));
        schema.number = uses_number.then(|| Box::new(number));
        schema.array = uses_array.then(|| Box::new(array));
        obj.index_heads();
        obj.index_required();
        schema.object = uses_object.then(|| Box::new(obj));
        schema.apply = uses_apply.then(|| Box::new(apply));
        let empty = schema.types == 0
            && schema.enumeration.is_none()
            && schema.constant.is_none()
            && schema.string.is_none()
            && schema.number.is_none()
            && schema.array.is_none()
            && schema.object.is_none()
            && schema.apply.is_none();
        Ok(if empty {
            Node::Bool(true)
        } else {
            Node::Schema(Box::new(schema))
        })
    }
}

/// Points every use of a schema that is only a `$ref` at its target, saving a hop per use. Only
/// done without dynamic references, where entering the intermediate resource could matter.
fn skip_pure_references(nodes: &mut [Node], root: NodeId) -> NodeId {
    const MAX_HOPS: usize = 64;
    let targets: Vec<NodeId> = (0..nodes.len() as NodeId)
        .map(|start| {
            let mut id = start;
            for _ in 0..MAX_HOPS {
                match nodes.get(id as usize) {
                    Some(Node::Schema(schema)) => match schema.pure_reference() {
                        Some(next) => id = next,
                        None => break,
                    },
                    _ => break,
                }
            }
            id
        })
        .collect();
    let resolve = |id: NodeId| targets.get(id as usize).copied().unwrap_or(id);
    for node in nodes.iter_mut() {
        if let Node::Schema(schema) = node {
            for id in schema.ids_mut() {
                *id = resolve(*id);
            }
        }
    }
    resolve(root)
}

/// Records, on each schema, facts validation would otherwise work out on every visit.
fn mark_shortcuts(nodes: &mut [Node]) {
    let false_nodes: Vec<bool> = nodes
        .iter()
        .map(|node| matches!(node, Node::Bool(false)))
        .collect();
    for node in nodes.iter_mut() {
        if let Node::Schema(schema) = node {
            schema.types_only = schema.only_types();
            schema.leaf =
                schema.array.is_none() && schema.object.is_none() && schema.apply.is_none();
            if let Some(object) = &mut schema.object {
                object.forbid_additional = object
                    .additional
                    .is_some_and(|id| false_nodes.get(id as usize).copied().unwrap_or(false));
            }
            schema.plain_object = schema.types == types::OBJECT
                && schema.enumeration.is_none()
                && schema.constant.is_none()
                && schema.apply.is_none()
                && schema
                    .object
                    .as_ref()
                    .is_some_and(|object| object.is_plain());
        }
    }
}

/// Turns `anyOf` of branches that only check `type` (e.g. `string` or `null`) into one `type`
/// bit set on a schema that has none.
fn merge_type_unions(nodes: &mut [Node]) {
    for index in 0..nodes.len() {
        let union = match nodes.get(index) {
            Some(Node::Schema(schema)) if schema.types == 0 => {
                let Some(apply) = &schema.apply else { continue };
                if apply.any_of.len() < 2 {
                    continue;
                }
                let mut union = 0u8;
                for id in &apply.any_of {
                    match nodes.get(*id as usize) {
                        Some(Node::Schema(branch)) if branch.only_types() => union |= branch.types,
                        _ => {
                            union = 0;
                            break;
                        }
                    }
                }
                union
            }
            _ => continue,
        };
        if union == 0 {
            continue;
        }
        if let Some(Node::Schema(schema)) = nodes.get_mut(index) {
            schema.types = union;
            if let Some(apply) = &mut schema.apply {
                apply.any_of.clear();
                if apply.is_empty() {
                    schema.apply = None;
                }
            }
        }
    }
}

/// The JSON pointer of the value at `target` inside `value`, searched depth first.
fn locate(value: &Value, target: usize, path: &mut Vec<String>, depth: usize) -> Option<String> {
    if address(value) == target {
        return Some(crate::error::json_pointer(
            &path
                .iter()
                .map(|key| crate::error::PathItem::Key(key.as_str().into()))
                .collect::<Vec<_>>(),
        ));
    }
    if depth > 512 {
        return None;
    }
    let children: Vec<(String, &Value)> = match value {
        Value::Object(object) => object.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => return None,
    };
    for (key, child) in children {
        path.push(key);
        if let Some(found) = locate(child, target, path, depth + 1) {
            return Some(found);
        }
        path.pop();
    }
    None
}

/// The `$id` (`id` in draft 4) that `value` declares, unless `$ref` beside it makes it void.
fn own_id(value: &Value, draft: Draft) -> Option<&str> {
    let object = value.as_object()?;
    if draft.ref_replaces_siblings() && object.contains_key("$ref") {
        return None;
    }
    object.get(draft.id_keyword())?.as_str()
}
