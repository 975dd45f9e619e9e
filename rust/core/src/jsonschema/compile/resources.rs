//! Resources and anchors: where each document, `$id`, `$anchor`, `$dynamicAnchor` and
//! `$recursiveAnchor` of the known documents lives, the draft each resource is written in, and
//! the resolution of a `$ref` to its schema value.
use ahash::{AHashMap, AHashSet};
use serde_json::Value;

use super::{Compiler, DEFAULT_BASE, address};
use crate::json::pointer;
use crate::jsonschema::options::{Draft, SchemaError};
use crate::jsonschema::{meta, uri};

/// Where every resource and anchor of the known documents lives.
#[derive(Default)]
pub(super) struct Registry<'s> {
    pub(super) by_uri: AHashMap<String, (&'s Value, u32)>,
    pub(super) root_ids: AHashMap<usize, u32>,
    pub(super) uris: Vec<String>,
    /// The draft of each resource, by resource index.
    pub(super) drafts: Vec<Draft>,
    /// The draft of a document that names none.
    pub(super) default_draft: Draft,
    pub(super) anchors: AHashMap<String, (&'s Value, u32)>,
    pub(super) dynamic_keys: AHashSet<String>,
    pub(super) dynamic: Vec<Vec<(String, &'s Value)>>,
    pub(super) documents: Vec<&'s Value>,
    pub(super) metaschemas_loaded: bool,
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
pub(super) fn document_draft(
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

    pub(super) fn uri(&self, id: u32) -> &str {
        self.uris
            .get(id as usize)
            .map_or(DEFAULT_BASE, String::as_str)
    }

    /// The draft of resource `id`.
    pub(super) fn draft(&self, id: u32) -> Draft {
        self.drafts
            .get(id as usize)
            .copied()
            .unwrap_or(self.default_draft)
    }

    /// Registers `document` (written in `draft`) under `base`, with every resource and anchor in
    /// it: `$id` (`id` in draft 4), `$anchor`, `$dynamicAnchor`, `$recursiveAnchor`, and before
    /// 2019-09 an `$id` that is only a fragment. Before 2019-09 an `$id` beside `$ref` is ignored,
    /// as everything beside `$ref` is.
    pub(super) fn add_document(&mut self, base: &str, document: &'s Value, draft: Draft) {
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

    pub(super) fn load_metaschemas(&mut self) {
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

impl<'s> Compiler<'s> {
    /// Resolves a reference to its schema value and resource.
    pub(super) fn resolve(
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
}

/// The `$id` (`id` in draft 4) that `value` declares, unless `$ref` beside it makes it void.
fn own_id(value: &Value, draft: Draft) -> Option<&str> {
    let object = value.as_object()?;
    if draft.ref_replaces_siblings() && object.contains_key("$ref") {
        return None;
    }
    object.get(draft.id_keyword())?.as_str()
}
