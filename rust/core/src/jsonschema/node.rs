//! The compiled form of a schema: an arena of nodes whose keywords are pre-resolved, so validation
//! never looks at the schema JSON again.
use ahash::AHashMap;
use serde_json::Value;

use crate::formats::Format;
use crate::json::{Kind, Number};
use crate::pattern::Pattern;

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
pub(crate) const fn types_accept(set: u8, kind: Kind) -> bool {
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
    /// Set once compiled when the schema checks nothing but `type` (see [`Schema::only_types`]),
    /// so validation can stop right after the type check.
    pub types_only: bool,
    /// Set once compiled when the schema has no subschemas to apply (no array, object or
    /// in-place applicator keywords), so checking it never descends.
    pub leaf: bool,
    /// Set once compiled when the schema is `type: object` with nothing but plain object
    /// keywords (see [`ObjectKeywords::is_plain`]), so a fast check can match each property to
    /// its subschema in one pass over the object.
    pub plain_object: bool,
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
    /// Each property name's length and first bytes ([`name_head`]), in `properties` order: a scan
    /// compares these before it reads any name.
    pub heads: Vec<(usize, u64)>,
    /// Name to position in `properties`, for schemas with many properties.
    pub property_index: Option<AHashMap<Box<str>, usize>>,
    pub required: Vec<Box<str>>,
    /// Bit `i` set when `properties[i]` is required: checked while walking the instance, so
    /// required properties cost no lookups.
    pub required_mask: u64,
    /// Required names not covered by `required_mask`, looked up one by one.
    pub required_outside: Vec<Box<str>>,
    pub pattern_properties: Vec<(Pattern, NodeId)>,
    pub additional: Option<NodeId>,
    pub property_names: Option<NodeId>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub dependent_required: Vec<(Box<str>, Vec<Box<str>>)>,
    pub dependent_schemas: Vec<(Box<str>, NodeId)>,
    pub unevaluated: Option<NodeId>,
    /// Set once compiled when `additional` is the `false` schema.
    pub forbid_additional: bool,
}

impl ObjectKeywords {
    /// The position and subschema of `key` in `properties`, if any.
    pub(crate) fn property_slot(&self, key: &str) -> Option<(usize, NodeId)> {
        if let Some(index) = &self.property_index {
            let slot = *index.get(key)?;
            return self.properties.get(slot).map(|(_, id)| (slot, *id));
        }
        let head = name_head(key);
        self.heads
            .iter()
            .zip(&self.properties)
            .enumerate()
            .find(|(_, ((length, start), (name, _)))| {
                *start == head
                    && *length == key.len()
                    && (key.len() <= HEAD_BYTES || **name == *key)
            })
            .map(|(slot, (_, (_, id)))| (slot, *id))
    }

    /// Like [`property_slot`](Self::property_slot), trying slot `hint` first: objects usually
    /// list their properties in the schema's order, so the slot after the last match is a good
    /// guess that spares the scan (or the hash).
    #[inline]
    pub(crate) fn property_slot_from(&self, key: &str, hint: usize) -> Option<(usize, NodeId)> {
        if let (Some((length, start)), Some((name, id))) =
            (self.heads.get(hint), self.properties.get(hint))
            && *length == key.len()
            && *start == name_head(key)
            && (key.len() <= HEAD_BYTES || **name == *key)
        {
            return Some((hint, *id));
        }
        self.property_slot(key)
    }

    /// Fills `heads` from `properties`.
    pub(crate) fn index_heads(&mut self) {
        self.heads = self
            .properties
            .iter()
            .map(|(name, _)| (name.len(), name_head(name)))
            .collect();
    }

    /// The `properties` subschema for `key`, if any.
    pub(crate) fn property(&self, key: &str) -> Option<NodeId> {
        self.property_slot(key).map(|(_, id)| id)
    }

    /// Splits `required` into the bit mask over `properties` and the rest.
    pub(crate) fn index_required(&mut self) {
        self.required_mask = 0;
        self.required_outside.clear();
        for index in 0..self.required.len() {
            let Some(name) = self.required.get(index) else {
                continue;
            };
            match self.property_slot(name) {
                Some((slot, _)) if slot < 64 => self.required_mask |= 1 << slot,
                _ => self.required_outside.push(name.clone()),
            }
        }
    }

    /// Every subschema index, for rewriting after compilation.
    pub(crate) fn ids_mut(&mut self) -> impl Iterator<Item = &mut NodeId> {
        self.properties
            .iter_mut()
            .map(|(_, id)| id)
            .chain(self.pattern_properties.iter_mut().map(|(_, id)| id))
            .chain(self.additional.iter_mut())
            .chain(self.property_names.iter_mut())
            .chain(self.dependent_schemas.iter_mut().map(|(_, id)| id))
            .chain(self.unevaluated.iter_mut())
    }

    /// True when the keywords are only `properties` (at most 64), `required` (naming some of
    /// them) and `additionalProperties: false` (or nothing): one pass over the object, matching
    /// each key to its property, then checks them all.
    pub(crate) fn is_plain(&self) -> bool {
        self.properties.len() <= 64
            && self.property_index.is_none()
            && self.required_outside.is_empty()
            && self.pattern_properties.is_empty()
            && (self.additional.is_none() || self.forbid_additional)
            && self.property_names.is_none()
            && self.min_properties.is_none()
            && self.max_properties.is_none()
            && self.dependent_required.is_empty()
            && self.dependent_schemas.is_empty()
            && self.unevaluated.is_none()
    }

    /// True when the keywords must see every property of the instance, not just the named ones.
    pub(crate) fn iterates_instance(&self) -> bool {
        self.additional.is_some() || !self.pattern_properties.is_empty()
    }
}

/// Names up to this many bytes are told apart by [`name_head`] and their length alone.
const HEAD_BYTES: usize = 8;

/// Up to [`HEAD_BYTES`] bytes of `text` packed in one integer, such that two names of equal
/// length no longer than that are equal exactly when their heads are: most comparisons then need
/// no `memcmp`. Reads a fixed number of (possibly overlapping) bytes per length class, no loop.
#[inline]
pub(crate) fn name_head(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let length = bytes.len();
    if let Some(head) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(*head);
    }
    if let (Some(first), Some(last)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        // 4 to 7 bytes: the first four and the last four overlap and cover them all.
        return u64::from(u32::from_le_bytes(*first)) | u64::from(u32::from_le_bytes(*last)) << 32;
    }
    match (bytes.first(), bytes.get(length / 2), bytes.last()) {
        // 1 to 3 bytes: first, middle and last cover them all.
        (Some(first), Some(middle), Some(last)) => {
            u64::from(*first) | u64::from(*middle) << 8 | u64::from(*last) << 16
        }
        _ => 0,
    }
}

impl ArrayKeywords {
    /// Every subschema index, for rewriting after compilation.
    pub(crate) fn ids_mut(&mut self) -> impl Iterator<Item = &mut NodeId> {
        self.prefix_items
            .iter_mut()
            .chain(self.items.iter_mut())
            .chain(self.contains.iter_mut())
            .chain(self.unevaluated.iter_mut())
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

impl Applicators {
    /// Every subschema index, for rewriting after compilation.
    pub(crate) fn ids_mut(&mut self) -> impl Iterator<Item = &mut NodeId> {
        self.all_of
            .iter_mut()
            .chain(self.any_of.iter_mut())
            .chain(self.one_of.iter_mut())
            .chain(self.not.iter_mut())
            .chain(self.if_.iter_mut())
            .chain(self.then_.iter_mut())
            .chain(self.else_.iter_mut())
            .chain(self.reference.iter_mut())
            .chain(self.dynamic_reference.iter_mut().map(|d| &mut d.target))
    }

    /// True when nothing but `$ref` is set.
    pub(crate) fn only_reference(&self) -> bool {
        self.reference.is_some()
            && self.all_of.is_empty()
            && self.any_of.is_empty()
            && self.one_of.is_empty()
            && self.not.is_none()
            && self.if_.is_none()
            && self.dynamic_reference.is_none()
    }

    /// True when no applicator is set.
    pub(crate) fn is_empty(&self) -> bool {
        self.reference.is_none()
            && self.all_of.is_empty()
            && self.any_of.is_empty()
            && self.one_of.is_empty()
            && self.not.is_none()
            && self.if_.is_none()
            && self.dynamic_reference.is_none()
    }
}

impl Schema {
    /// True when the schema checks nothing but `type`.
    pub(crate) fn only_types(&self) -> bool {
        self.types != 0
            && self.enumeration.is_none()
            && self.constant.is_none()
            && self.string.is_none()
            && self.number.is_none()
            && self.array.is_none()
            && self.object.is_none()
            && self.apply.is_none()
    }

    /// The target when the schema is nothing but a `$ref`.
    pub(crate) fn pure_reference(&self) -> Option<NodeId> {
        let apply = self.apply.as_ref()?;
        let bare = self.types == 0
            && self.enumeration.is_none()
            && self.constant.is_none()
            && self.string.is_none()
            && self.number.is_none()
            && self.array.is_none()
            && self.object.is_none();
        (bare && apply.only_reference())
            .then_some(apply.reference)
            .flatten()
    }

    /// Every subschema index, for rewriting after compilation.
    pub(crate) fn ids_mut(&mut self) -> impl Iterator<Item = &mut NodeId> {
        let array = self.array.iter_mut().flat_map(|a| a.ids_mut());
        let object = self.object.iter_mut().flat_map(|o| o.ids_mut());
        let apply = self.apply.iter_mut().flat_map(|a| a.ids_mut());
        array.chain(object).chain(apply)
    }
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
