//! The object keywords: `properties`, `patternProperties`, `additionalProperties`, `required`,
//! `propertyNames`, property counts and dependencies; read from a schema object (with
//! `unevaluatedProperties`, checked in `annotations`), then checked against objects.
use std::borrow::Cow;

use serde_json::Value;

use crate::error::{ErrorCode, describe_str};
use crate::json::{Instance, Kind, Number};
use crate::jsonschema::compile::{Compiler, Reading};
use crate::jsonschema::context::{Context, Step, check, fail, fail_at};
use crate::jsonschema::describe::property_text;
use crate::jsonschema::node::ObjectKeywords;
use crate::jsonschema::options::SchemaError;

/// Names of allowed properties listed in an `unexpected_property` error before `...`.
const MAX_NAMES: usize = 8;
/// Above this many properties, lookups go through a hash map instead of a linear scan.
const PROPERTY_INDEX_THRESHOLD: usize = 12;

/// The object keywords of one schema object, as they are read.
#[derive(Default)]
pub(crate) struct Reader {
    keywords: ObjectKeywords,
    used: bool,
}

impl Reader {
    /// Reads `key` if it is an object keyword in force where `reading` says; returns whether it
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
            "properties" => {
                for (name, subschema) in compiler.members(child)? {
                    let id = compiler.subschema(subschema, resource)?;
                    keywords.properties.push((name.as_str().into(), id));
                }
            }
            "required" if validation => {
                keywords.required = compiler.names(child)?;
                self.used |= !keywords.required.is_empty();
                return Ok(true);
            }
            "patternProperties" => {
                for (source, subschema) in compiler.members(child)? {
                    let pattern = compiler.pattern(subschema, source)?;
                    let id = compiler.subschema(subschema, resource)?;
                    keywords.pattern_properties.push((pattern, id));
                }
            }
            "additionalProperties" => {
                keywords.additional = Some(compiler.subschema(child, resource)?);
            }
            "propertyNames" if reading.since_7() => {
                keywords.property_names = Some(compiler.subschema(child, resource)?);
            }
            "unevaluatedProperties" if reading.since_2019() => {
                keywords.unevaluated = Some(compiler.subschema(child, resource)?);
            }
            "minProperties" if validation => keywords.min_properties = Some(compiler.count(child)?),
            "maxProperties" if validation => keywords.max_properties = Some(compiler.count(child)?),
            // Kept after draft 7 as well, for documents that still use it (as the suite's
            // optional compatibility tests expect).
            "dependencies" => {
                for (name, dependency) in compiler.members(child)? {
                    if dependency.is_array() {
                        let required = compiler.names(dependency)?;
                        keywords
                            .dependent_required
                            .push((name.as_str().into(), required));
                    } else {
                        let id = compiler.subschema(dependency, resource)?;
                        keywords.dependent_schemas.push((name.as_str().into(), id));
                    }
                }
            }
            "dependentRequired" if validation && reading.since_2019() => {
                for (name, required) in compiler.members(child)? {
                    let required = compiler.names(required)?;
                    keywords
                        .dependent_required
                        .push((name.as_str().into(), required));
                }
            }
            "dependentSchemas" if reading.since_2019() => {
                for (name, subschema) in compiler.members(child)? {
                    let id = compiler.subschema(subschema, resource)?;
                    keywords.dependent_schemas.push((name.as_str().into(), id));
                }
            }
            _ => return Ok(false),
        }
        self.used = true;
        Ok(true)
    }

    /// The object keywords with their lookups indexed, or `None` when none of them checks
    /// anything.
    pub(crate) fn finish(self) -> Option<Box<ObjectKeywords>> {
        let mut keywords = self.keywords;
        if keywords.properties.len() > PROPERTY_INDEX_THRESHOLD {
            keywords.property_index = Some(
                keywords
                    .properties
                    .iter()
                    .enumerate()
                    .map(|(slot, (name, _))| (name.clone(), slot))
                    .collect(),
            );
        }
        keywords.index_heads();
        keywords.index_required();
        self.used.then(|| Box::new(keywords))
    }
}

fn properties_text(count: u64) -> String {
    if count == 1 {
        "1 property".to_owned()
    } else {
        format!("{count} properties")
    }
}

/// What an object with `additionalProperties: false` allows.
fn allowed_names(keywords: &ObjectKeywords) -> String {
    if keywords.properties.is_empty() {
        return "no other properties".to_owned();
    }
    let mut out = String::from("one of the properties ");
    for (index, (name, _)) in keywords.properties.iter().enumerate() {
        if index == MAX_NAMES {
            out.push_str(", ...");
            break;
        }
        if index > 0 {
            out.push_str(", ");
        }
        out.push_str(&describe_str(name)["string ".len()..]);
    }
    out
}

/// Validates an object against the object keywords (not `unevaluatedProperties`).
///
/// A missing required property is reported at the object's path, with `expected` naming the
/// property (`property "city"`); an unexpected property is reported at the property's own path.
#[expect(
    clippy::too_many_lines,
    reason = "the hot validation path, kept whole: one pass over the instance checks \
              `properties`, `patternProperties`, `additionalProperties`, `propertyNames` and the \
              required mask together, and each `fail!` returns from here at once in fast mode"
)]
pub(crate) fn validate<I: Instance>(
    ctx: &mut Context<'_>,
    keywords: &ObjectKeywords,
    instance: &I,
) -> bool {
    let mut valid = true;
    let count = instance.object_len().unwrap_or(0);
    if let Some(min) = keywords.min_properties
        && (count as u64) < min
    {
        fail!(
            ctx,
            valid,
            ErrorCode::TooFewProperties,
            format!("at least {}", properties_text(min)),
            format!("object with {}", properties_text(count as u64))
        );
    }
    if let Some(max) = keywords.max_properties
        && count as u64 > max
    {
        fail!(
            ctx,
            valid,
            ErrorCode::TooManyProperties,
            format!("at most {}", properties_text(max)),
            format!("object with {}", properties_text(count as u64))
        );
    }
    for name in &keywords.required_outside {
        if instance.object_get(name).is_none() {
            fail!(
                ctx,
                valid,
                ErrorCode::MissingProperty,
                property_text(name),
                "object without it"
            );
        }
    }
    for (name, dependencies) in &keywords.dependent_required {
        if instance.object_get(name).is_none() {
            continue;
        }
        for dependency in dependencies {
            if instance.object_get(dependency).is_none() {
                fail!(
                    ctx,
                    valid,
                    ErrorCode::DependencyMissing,
                    format!(
                        "{} (required when {} is present)",
                        property_text(dependency),
                        property_text(name)
                    ),
                    "object without it"
                );
            }
        }
    }
    let walk_instance = keywords.iterates_instance()
        || keywords.property_names.is_some()
        || keywords.required_mask != 0
        || count < keywords.properties.len();
    if walk_instance {
        let forbid_additional = keywords.forbid_additional;
        let mut seen = 0u64;
        let mut next_slot = 0;
        for (key, value) in instance.object_items() {
            let key = key.as_ref();
            if let Some(names) = keywords.property_names {
                let name = NameInstance(key);
                if !ctx.quietly(|ctx| ctx.apply(names, &name)) {
                    fail_at!(
                        ctx,
                        valid,
                        Step::Key(key),
                        ErrorCode::InvalidPropertyName,
                        "a name allowed by `propertyNames`",
                        property_text(key)
                    );
                }
            }
            let mut matched = false;
            if let Some((slot, id)) = keywords.property_slot_from(key, next_slot) {
                matched = true;
                next_slot = slot + 1;
                if slot < 64 {
                    seen |= 1 << slot;
                }
                check!(ctx, valid, ctx.child(Step::Key(key), id, &value));
            }
            for (pattern, id) in &keywords.pattern_properties {
                match pattern.is_match_within(key, &mut ctx.budget) {
                    Ok(true) => {
                        matched = true;
                        check!(ctx, valid, ctx.child(Step::Key(key), *id, &value));
                    }
                    Ok(false) => {}
                    Err(too_complex) => {
                        matched = true;
                        fail_at!(
                            ctx,
                            valid,
                            Step::Key(key),
                            ErrorCode::PatternTooComplex,
                            format!("a name matched by {} ({too_complex})", pattern.source()),
                            property_text(key)
                        );
                    }
                }
            }
            if matched {
                continue;
            }
            if let Some(additional) = keywords.additional {
                if forbid_additional {
                    fail_at!(
                        ctx,
                        valid,
                        Step::Key(key),
                        ErrorCode::UnexpectedProperty,
                        allowed_names(keywords),
                        property_text(key)
                    );
                } else {
                    check!(ctx, valid, ctx.child(Step::Key(key), additional, &value));
                }
            }
        }
        let missing = keywords.required_mask & !seen;
        if missing != 0 {
            for (slot, (name, _)) in keywords.properties.iter().enumerate().take(64) {
                if missing & (1 << slot) != 0 {
                    fail!(
                        ctx,
                        valid,
                        ErrorCode::MissingProperty,
                        property_text(name),
                        "object without it"
                    );
                }
            }
        }
    } else {
        for (name, id) in &keywords.properties {
            if let Some(value) = instance.object_get(name) {
                check!(ctx, valid, ctx.child(Step::Key(name), *id, &value));
            }
        }
    }
    for (name, id) in &keywords.dependent_schemas {
        if instance.object_get(name).is_some() {
            check!(ctx, valid, ctx.apply(*id, instance));
        }
    }
    valid
}

/// Fast-mode check of `instance` against a `type: object` schema whose keywords are plain
/// ([`ObjectKeywords::is_plain`]): one pass over the object matches each key to its property,
/// checks the value, and notes the required properties seen, with no separate lookups.
pub(crate) fn validate_plain<I: Instance>(
    ctx: &mut Context<'_>,
    keywords: &ObjectKeywords,
    instance: &I,
) -> bool {
    if instance.kind() != Kind::Object {
        // `type: object` admits nothing else, and no other type is read as an object.
        return false;
    }
    let mut seen = 0u64;
    let mut next_slot = 0;
    for (key, value) in instance.object_items() {
        let key = key.as_ref();
        match keywords.property_slot_from(key, next_slot) {
            Some((slot, id)) => {
                next_slot = slot + 1;
                if slot < 64 {
                    seen |= 1 << slot;
                }
                if !ctx.child(Step::Key(key), id, &value) {
                    return false;
                }
            }
            None if keywords.forbid_additional => return false,
            None => {}
        }
    }
    keywords.required_mask & !seen == 0
}

/// A property name seen as a JSON string, for `propertyNames`, without copying it.
#[derive(Clone, Copy)]
pub(crate) struct NameInstance<'k>(pub &'k str);

impl Instance for NameInstance<'_> {
    type Key = String;

    fn kind(&self) -> Kind {
        Kind::String
    }
    fn as_bool(&self) -> Option<bool> {
        None
    }
    fn as_number(&self) -> Option<Number> {
        None
    }
    fn as_str(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(self.0))
    }
    fn array_len(&self) -> Option<usize> {
        None
    }
    fn array_items(&self) -> impl Iterator<Item = Self> + '_ {
        std::iter::empty()
    }
    fn object_len(&self) -> Option<usize> {
        None
    }
    fn object_get(&self, _key: &str) -> Option<Self> {
        None
    }
    fn object_items(&self) -> impl Iterator<Item = (Self::Key, Self)> + '_ {
        std::iter::empty()
    }
    fn to_value(&self) -> Value {
        Value::String(self.0.to_owned())
    }
}
