//! The array keywords: size bounds, `uniqueItems`, `prefixItems` / `items`, `contains`; read
//! from a schema object (with `unevaluatedItems`, checked in `annotations`), then checked
//! against arrays.
use std::hash::{Hash, Hasher};

use serde_json::Value;

use crate::error::ErrorCode;
use crate::json::{Instance, Kind, numbers_eq};
use crate::jsonschema::compile::{Compiler, Reading};
use crate::jsonschema::context::{Context, Step, check, fail, fail_at};
use crate::jsonschema::describe::describe;
use crate::jsonschema::node::{ArrayKeywords, Node, NodeId};
use crate::jsonschema::options::SchemaError;

/// Up to this many items, duplicates are found by comparing every pair.
const PAIRWISE_LIMIT: usize = 16;

fn items_text(count: u64) -> String {
    if count == 1 {
        "1 item".to_owned()
    } else {
        format!("{count} items")
    }
}

/// The array keywords of one schema object, as they are read.
#[derive(Default)]
pub(crate) struct Reader {
    keywords: ArrayKeywords,
    used: bool,
    /// Before 2020-12, an array `items` is `prefixItems` and `additionalItems` the rest.
    items_is_array: bool,
    additional_items: Option<NodeId>,
    /// `minContains` and `maxContains`, which count only beside `contains`.
    contains_bounds: (Option<u64>, Option<u64>),
}

impl Reader {
    /// Reads `key` if it is an array keyword in force where `reading` says; returns whether it
    /// was.
    pub(crate) fn read<'s>(
        &mut self,
        compiler: &mut Compiler<'s>,
        reading: Reading,
        key: &str,
        child: &'s Value,
    ) -> Result<bool, SchemaError> {
        let (keywords, resource, validation) =
            (&mut self.keywords, reading.resource, reading.validation);
        match key {
            "minItems" if validation => keywords.min_items = Some(compiler.count(child)?),
            "maxItems" if validation => keywords.max_items = Some(compiler.count(child)?),
            "uniqueItems" if validation => {
                keywords.unique = child.as_bool().unwrap_or(false);
                self.used |= keywords.unique;
                return Ok(true);
            }
            "minContains" if validation && reading.since_2019() => {
                self.contains_bounds.0 = Some(compiler.count(child)?);
                return Ok(true);
            }
            "maxContains" if validation && reading.since_2019() => {
                self.contains_bounds.1 = Some(compiler.count(child)?);
                return Ok(true);
            }
            "prefixItems" if reading.latest() => {
                keywords.prefix_items = compiler.subschemas(child, resource)?;
            }
            "items" if !reading.latest() && child.is_array() => {
                keywords.prefix_items = compiler.subschemas(child, resource)?;
                self.items_is_array = true;
            }
            "items" => keywords.items = Some(compiler.subschema(child, resource)?),
            "additionalItems" if !reading.latest() => {
                self.additional_items = Some(compiler.subschema(child, resource)?);
                return Ok(true);
            }
            "contains" if reading.since_7() => {
                keywords.contains = Some(compiler.subschema(child, resource)?);
            }
            "unevaluatedItems" if reading.since_2019() => {
                keywords.unevaluated = Some(compiler.subschema(child, resource)?);
            }
            _ => return Ok(false),
        }
        self.used = true;
        Ok(true)
    }

    /// The array keywords, or `None` when none of them checks anything.
    pub(crate) fn finish(self) -> Option<Box<ArrayKeywords>> {
        let mut keywords = self.keywords;
        if self.items_is_array {
            keywords.items = self.additional_items;
        }
        if keywords.contains.is_some() {
            (keywords.min_contains, keywords.max_contains) = self.contains_bounds;
        }
        self.used.then(|| Box::new(keywords))
    }
}

/// Validates an array against the array keywords (not `unevaluatedItems`).
#[expect(
    clippy::too_many_lines,
    reason = "the hot validation path, kept whole: each keyword's `fail!` returns from here at \
              once in fast mode, which a helper per keyword would turn into a result checked \
              again at every call"
)]
pub(crate) fn validate<I: Instance>(
    ctx: &mut Context<'_>,
    keywords: &ArrayKeywords,
    instance: &I,
) -> bool {
    let length = instance.array_len().unwrap_or(0) as u64;
    let mut valid = true;
    if let Some(min) = keywords.min_items
        && length < min
    {
        fail!(
            ctx,
            valid,
            ErrorCode::ArrayTooShort,
            format!("at least {}", items_text(min)),
            describe(instance)
        );
    }
    if let Some(max) = keywords.max_items
        && length > max
    {
        fail!(
            ctx,
            valid,
            ErrorCode::ArrayTooLong,
            format!("at most {}", items_text(max)),
            describe(instance)
        );
    }
    if keywords.unique && length > 1 {
        let budget = ctx.max_depth.saturating_sub(ctx.depth);
        match duplicate(instance, budget) {
            Ok(None) => {}
            Ok(Some((first, second))) => fail!(
                ctx,
                valid,
                ErrorCode::DuplicateItems,
                "unique items",
                format!(
                    "{} where items {first} and {second} are equal",
                    describe(instance)
                )
            ),
            Err(()) => fail!(
                ctx,
                valid,
                ErrorCode::NestingTooDeep,
                format!("at most {} levels of nesting", ctx.max_depth),
                describe(instance)
            ),
        }
    }
    if !keywords.prefix_items.is_empty() || keywords.items.is_some() {
        let prefix = keywords.prefix_items.len();
        let forbid_rest = keywords
            .items
            .is_some_and(|id| matches!(ctx.node(id), Some(Node::Bool(false))));
        for (index, item) in instance.array_items().enumerate() {
            let node = match keywords.prefix_items.get(index) {
                Some(id) => *id,
                None if forbid_rest => {
                    fail_at!(
                        ctx,
                        valid,
                        Step::Index(index),
                        ErrorCode::UnexpectedItem,
                        format!("at most {}", items_text(prefix as u64)),
                        describe(&item)
                    );
                    continue;
                }
                None => match keywords.items {
                    Some(id) => id,
                    None => break,
                },
            };
            check!(ctx, valid, ctx.child(Step::Index(index), node, &item));
        }
    }
    if let Some(contains) = keywords.contains {
        let min = keywords.min_contains.unwrap_or(1);
        let mut count = 0u64;
        for (index, item) in instance.array_items().enumerate() {
            if ctx.quietly(|ctx| ctx.child(Step::Index(index), contains, &item)) {
                count += 1;
                match keywords.max_contains {
                    Some(max) if count > max => break,
                    None if count >= min => break,
                    _ => {}
                }
            }
        }
        if count < min {
            fail!(
                ctx,
                valid,
                ErrorCode::ContainsTooFew,
                format!("at least {} matching `contains`", items_text(min)),
                format!("{} with {count} matching", describe(instance))
            );
        }
        if let Some(max) = keywords.max_contains
            && count > max
        {
            fail!(
                ctx,
                valid,
                ErrorCode::ContainsTooMany,
                format!("at most {} matching `contains`", items_text(max)),
                format!("{} with more matching", describe(instance))
            );
        }
    }
    valid
}

/// The first pair of equal items, or `Err` when comparing would go deeper than `budget`.
fn duplicate<I: Instance>(instance: &I, budget: u32) -> Result<Option<(usize, usize)>, ()> {
    let items: Vec<I> = instance.array_items().collect();
    if items.len() <= PAIRWISE_LIMIT {
        for (i, left) in items.iter().enumerate() {
            for (j, right) in items.iter().enumerate().skip(i + 1) {
                if equal(left, right, budget)? {
                    return Ok(Some((i, j)));
                }
            }
        }
        return Ok(None);
    }
    let mut hashed: Vec<(u64, usize)> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        hashed.push((hash(item, budget)?, index));
    }
    hashed.sort_unstable();
    let mut best: Option<(usize, usize)> = None;
    for (position, (key, i)) in hashed.iter().enumerate() {
        for (other_key, j) in hashed.iter().skip(position + 1) {
            if other_key != key {
                break;
            }
            let (Some(left), Some(right)) = (items.get(*i), items.get(*j)) else {
                continue;
            };
            if equal(left, right, budget)? {
                let pair = ((*i).min(*j), (*i).max(*j));
                if best.is_none_or(|b| pair < b) {
                    best = Some(pair);
                }
            }
        }
    }
    Ok(best)
}

/// JSON equality that refuses to recurse deeper than `budget`.
pub(crate) fn equal<A: Instance, B: Instance>(
    left: &A,
    right: &B,
    budget: u32,
) -> Result<bool, ()> {
    match (left.kind(), right.kind()) {
        (Kind::Array, Kind::Array) => {
            if left.array_len() != right.array_len() {
                return Ok(false);
            }
            let budget = budget.checked_sub(1).ok_or(())?;
            for (a, b) in left.array_items().zip(right.array_items()) {
                if !equal(&a, &b, budget)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        (Kind::Object, Kind::Object) => {
            if left.object_len() != right.object_len() {
                return Ok(false);
            }
            let budget = budget.checked_sub(1).ok_or(())?;
            for (key, a) in left.object_items() {
                let Some(b) = right.object_get(key.as_ref()) else {
                    return Ok(false);
                };
                if !equal(&a, &b, budget)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        (Kind::Integer | Kind::Number, Kind::Integer | Kind::Number) => Ok(
            matches!((left.as_number(), right.as_number()), (Some(a), Some(b)) if numbers_eq(a, b)),
        ),
        (Kind::Null, Kind::Null) => Ok(true),
        (Kind::Bool, Kind::Bool) => Ok(left.as_bool() == right.as_bool()),
        (Kind::String, Kind::String) => Ok(left.as_str() == right.as_str()),
        _ => Ok(false),
    }
}

/// A hash consistent with [`equal`]: numbers hash by their float value, objects ignore key order.
fn hash<I: Instance>(instance: &I, budget: u32) -> Result<u64, ()> {
    let mut hasher = ahash::AHasher::default();
    match instance.kind() {
        Kind::Null => 0u8.hash(&mut hasher),
        Kind::Bool => (1u8, instance.as_bool()).hash(&mut hasher),
        Kind::Integer | Kind::Number => {
            let value = instance
                .as_number()
                .map_or(0.0, crate::json::Number::as_f64);
            let value = if value == 0.0 { 0.0 } else { value };
            (2u8, value.to_bits()).hash(&mut hasher);
        }
        Kind::String => (3u8, instance.as_str()).hash(&mut hasher),
        Kind::Array => {
            let budget = budget.checked_sub(1).ok_or(())?;
            4u8.hash(&mut hasher);
            for item in instance.array_items() {
                hash(&item, budget)?.hash(&mut hasher);
            }
        }
        Kind::Object => {
            let budget = budget.checked_sub(1).ok_or(())?;
            let mut combined = 0u64;
            for (key, value) in instance.object_items() {
                let mut entry = ahash::AHasher::default();
                key.as_ref().hash(&mut entry);
                hash(&value, budget)?.hash(&mut entry);
                combined = combined.wrapping_add(entry.finish());
            }
            (5u8, combined).hash(&mut hasher);
        }
        Kind::Other => 6u8.hash(&mut hasher),
    }
    Ok(hasher.finish())
}
