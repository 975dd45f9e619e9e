//! The compiled form of a schema: an arena of nodes whose keywords are pre-resolved, so validation
//! never looks at the schema JSON again.
use ahash::AHashMap;
use serde_json::Value;

use super::regex::Pattern;
use crate::formats::Format;
use crate::json::{Kind, Number};

/// Index of a node in the arena; `$ref` cycles are just indices pointing back.
pub(crate) type NodeId = u32;

/// Bit set of JSON Schema type names.
pub(crate) mod types {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 2;
    pub(crate) const INTEGER: u8 = 4;
    pub(crate) const NUMBER: u8 = 8;
    pub(crate) const STRING: u8 = 16;
    pub(crate) const ARRAY: u8 = 32;
    pub(crate) const OBJECT: u8 = 64;
    /// Types a string may be read as in lenient mode.
    pub(crate) const COERCIBLE: u8 = BOOLEAN | INTEGER | NUMBER;
}

/// True when a value of `kind` satisfies the `type` bit set (`number` includes integers).
pub(crate) const fn types_accept(set: u8, kind: crate::json::Kind) -> bool {
    let bits = match kind {
        Kind::Null => types::NULL,
        Kind::Bool => types::BOOLEAN,
        Kind::Integer => types::INTEGER | types::NUMBER,
        Kind::Number => types::NUMBER,
        Kind::String => types::STRING,
        Kind::Array => types::ARRAY,
        Kind::Object => types::OBJECT,
        Kind::Other => 0,
    };
    set & bits != 0
}

/// One compiled schema.
pub(crate) enum Node {
    /// `true` or `false` (and `{}`, which compiles to `true`).
    Bool(bool),
    Schema(Box<Schema>),
}

/// A schema object with every keyword group resolved; absent groups cost one `None` check.
#[derive(Default)]
pub(crate) struct Schema {
    /// `type` as a bit set; 0 when absent.
    pub types: u8,
    /// The schema resource this node belongs to (for the `$dynamicRef` scope).
    pub resource: u32,
    pub enumeration: Option<Box<Enumeration>>,
    pub constant: Option<Box<Value>>,
    pub string: Option<Box<StringKeywords>>,
    pub number: Option<Box<NumberKeywords>>,
    pub array: Option<Box<ArrayKeywords>>,
    pub object: Option<Box<ObjectKeywords>>,
    pub apply: Option<Box<Applicators>>,
}

/// `enum`, with a hash set when there are many string choices.
pub(crate) struct Enumeration {
    pub values: Vec<Value>,
    pub strings: Option<ahash::AHashSet<Box<str>>>,
}

/// `minLength`, `maxLength`, `pattern`, `format`.
#[derive(Default)]
pub(crate) struct StringKeywords {
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<Pattern>,
    pub format: Option<Format>,
}

/// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.
#[derive(Default)]
pub(crate) struct NumberKeywords {
    pub minimum: Option<Number>,
    pub maximum: Option<Number>,
    pub exclusive_minimum: Option<Number>,
    pub exclusive_maximum: Option<Number>,
    pub multiple_of: Option<Number>,
}

/// The array keywords.
#[derive(Default)]
pub(crate) struct ArrayKeywords {
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique: bool,
    pub prefix_items: Vec<NodeId>,
    pub items: Option<NodeId>,
    pub contains: Option<NodeId>,
    pub min_contains: Option<u64>,
    pub max_contains: Option<u64>,
    pub unevaluated: Option<NodeId>,
}

/// The object keywords.
#[derive(Default)]
pub(crate) struct ObjectKeywords {
    pub properties: Vec<(Box<str>, NodeId)>,
    /// Name lookup for schemas with many properties.
    pub property_index: Option<AHashMap<Box<str>, NodeId>>,
    pub required: Vec<Box<str>>,
    pub pattern_properties: Vec<(Pattern, NodeId)>,
    pub additional: Option<NodeId>,
    pub property_names: Option<NodeId>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub dependent_required: Vec<(Box<str>, Vec<Box<str>>)>,
    pub dependent_schemas: Vec<(Box<str>, NodeId)>,
    pub unevaluated: Option<NodeId>,
}

impl ObjectKeywords {
    /// The `properties` subschema for `key`, if any.
    pub(crate) fn property(&self, key: &str) -> Option<NodeId> {
        match &self.property_index {
            Some(index) => index.get(key).copied(),
            None => self
                .properties
                .iter()
                .find(|(name, _)| &**name == key)
                .map(|(_, id)| *id),
        }
    }

    /// True when the keywords must see every property of the instance, not just the named ones.
    pub(crate) fn iterates_instance(&self) -> bool {
        self.additional.is_some() || !self.pattern_properties.is_empty()
    }
}

/// In-place applicators.
#[derive(Default)]
pub(crate) struct Applicators {
    pub all_of: Vec<NodeId>,
    pub any_of: Vec<NodeId>,
    pub one_of: Vec<NodeId>,
    pub not: Option<NodeId>,
    pub if_: Option<NodeId>,
    pub then_: Option<NodeId>,
    pub else_: Option<NodeId>,
    pub reference: Option<NodeId>,
    pub dynamic_reference: Option<DynamicRef>,
}

/// A `$dynamicRef`: its static target, and the anchor name when resolution is dynamic.
pub(crate) struct DynamicRef {
    pub target: NodeId,
    pub anchor: Option<Box<str>>,
}

/// A schema resource (a document or a subschema with `$id`).
#[derive(Default)]
pub(crate) struct Resource {
    /// `$dynamicAnchor` name to node.
    pub dynamic_anchors: Vec<(Box<str>, NodeId)>,
}
