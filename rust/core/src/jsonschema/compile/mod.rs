//! Compiles schema documents into the node arena: finds resources and anchors, resolves every
//! `$ref` to a node index, and pre-parses each keyword.
//!
//! Nodes are memoised by the address of their schema value, so the documents are never copied and
//! reference cycles compile to index cycles.
//!
//! The resources and anchors, and `$ref` resolution, are in [`resources`]; the pre-parsing of each
//! keyword in [`keywords`]; the passes over the finished arena in [`passes`].
mod keywords;
mod passes;
mod resources;

use ahash::AHashMap;
use serde_json::Value;

use super::node::{Node, NodeId, Resource};
use super::options::{Options, SchemaError};
use super::uri;
use passes::{has_backtracking_pattern, mark_shortcuts, merge_type_unions, skip_pure_references};
use resources::{Registry, document_draft};

pub(super) use keywords::Reading;

/// Base URI of a document that has no `$id`.
const DEFAULT_BASE: &str = "json-schema:///";

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

fn address(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
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

/// The state of one compilation; the keyword groups in `keywords/` read their keywords through
/// it.
pub(super) struct Compiler<'s> {
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

    pub(super) fn error(&self, at: &Value, message: impl Into<String>) -> SchemaError {
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
