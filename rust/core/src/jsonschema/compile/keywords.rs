//! Pre-parsing of each keyword of a schema object into its node: the checked values of the
//! assertions, and the node indices of the subschemas the applicators hold.
//!
//! [`Compiler::compile_object`] reads an object in two phases: each keyword is handed to the
//! reader of its group, then each group is finished into the node. The groups with a module in
//! `keywords/` (string, number, array, object) read their keywords there, beside their
//! validation; `type`, `enum`, `const` and the in-place applicators, which the hub
//! (`validate.rs`) checks, are read here.
use serde_json::{Map, Value};

use super::Compiler;
use crate::json::{Instance, Number};
use crate::jsonschema::keywords::{array, number, object, string};
use crate::jsonschema::node::{Applicators, DynamicRef, Enumeration, Node, NodeId, Schema, types};
use crate::jsonschema::options::{Draft, SchemaError};
use crate::jsonschema::uri;
use crate::pattern::Pattern;

/// Above this many string choices, `enum` uses a hash set.
const ENUM_SET_THRESHOLD: usize = 8;

/// Where a schema object is read: the resource its subschemas belong to, and what its draft and
/// the metaschema's vocabularies say about which keywords count.
#[derive(Clone, Copy)]
pub(in crate::jsonschema) struct Reading {
    pub(in crate::jsonschema) resource: u32,
    pub(in crate::jsonschema) draft: Draft,
    /// The validation vocabulary is in force (always, unless a custom metaschema leaves it out).
    pub(in crate::jsonschema) validation: bool,
    /// `format` is an assertion, not an annotation.
    pub(in crate::jsonschema) assert_formats: bool,
}

impl Reading {
    pub(in crate::jsonschema) fn since_7(self) -> bool {
        self.draft >= Draft::Draft7
    }

    pub(in crate::jsonschema) fn since_2019(self) -> bool {
        self.draft >= Draft::Draft201909
    }

    pub(in crate::jsonschema) fn latest(self) -> bool {
        self.draft == Draft::Draft202012
    }
}

/// The keyword groups of one schema object, as its keywords are read.
#[derive(Default)]
struct Groups {
    string: string::Reader,
    number: number::Reader,
    array: array::Reader,
    object: object::Reader,
    apply: ApplicatorReader,
}

impl Groups {
    /// Puts the groups that check something on `schema`.
    fn finish(self, schema: &mut Schema) {
        schema.string = self.string.finish();
        schema.number = self.number.finish();
        schema.array = self.array.finish();
        schema.object = self.object.finish();
        schema.apply = self.apply.finish();
    }
}

/// The in-place applicators of one schema object, as they are read.
#[derive(Default)]
struct ApplicatorReader {
    keywords: Applicators,
    used: bool,
}

impl ApplicatorReader {
    /// Reads `key` if it is an in-place applicator in force where `reading` says; returns whether
    /// it was.
    fn read<'s>(
        &mut self,
        compiler: &mut Compiler<'s>,
        reading: Reading,
        key: &str,
        child: &'s Value,
    ) -> Result<bool, SchemaError> {
        let keywords = &mut self.keywords;
        let resource = reading.resource;
        match key {
            "allOf" => keywords.all_of = compiler.subschemas(child, resource)?,
            "anyOf" => keywords.any_of = compiler.subschemas(child, resource)?,
            "oneOf" => keywords.one_of = compiler.subschemas(child, resource)?,
            "not" => keywords.not = Some(compiler.subschema(child, resource)?),
            // `then` and `else` wait for `if`: they count only beside it (see `finish`).
            "if" if reading.since_7() => keywords.if_ = Some(compiler.subschema(child, resource)?),
            "then" if reading.since_7() => {
                keywords.then_ = Some(compiler.subschema(child, resource)?);
                return Ok(true);
            }
            "else" if reading.since_7() => {
                keywords.else_ = Some(compiler.subschema(child, resource)?);
                return Ok(true);
            }
            "$ref" => keywords.reference = Some(compiler.reference(child, resource)?),
            "$recursiveRef" if reading.draft == Draft::Draft201909 => {
                keywords.dynamic_reference = Some(compiler.recursive_reference(child, resource)?);
            }
            "$dynamicRef" if reading.latest() => {
                keywords.dynamic_reference = Some(compiler.dynamic_reference(child, resource)?);
            }
            _ => return Ok(false),
        }
        self.used = true;
        Ok(true)
    }

    /// The applicators, or `None` when there are none to apply.
    fn finish(self) -> Option<Box<Applicators>> {
        let mut keywords = self.keywords;
        // An `if` is kept even without `then`/`else`: its annotations still count for
        // `unevaluated*`.
        if keywords.if_.is_none() {
            keywords.then_ = None;
            keywords.else_ = None;
        }
        self.used.then(|| Box::new(keywords))
    }
}

impl<'s> Compiler<'s> {
    pub(super) fn compile_object(
        &mut self,
        object: &'s Map<String, Value>,
        resource: u32,
    ) -> Result<Node, SchemaError> {
        let reading = Reading {
            resource,
            draft: self.registry.draft(resource),
            validation: self.validation_vocabulary,
            assert_formats: self.assert_formats,
        };
        if reading.draft.ref_replaces_siblings()
            && let Some(reference) = object.get("$ref")
        {
            return self.compile_reference_alone(reference, resource);
        }
        let mut schema = Schema {
            resource,
            ..Schema::default()
        };
        let mut groups = Groups::default();
        for (key, child) in object {
            self.read_keyword(&mut schema, &mut groups, reading, key, child)?;
        }
        groups.finish(&mut schema);
        Ok(if checks_nothing(&schema) {
            Node::Bool(true)
        } else {
            Node::Schema(Box::new(schema))
        })
    }

    /// Before 2019-09, `$ref` stands for its target and everything beside it is ignored.
    fn compile_reference_alone(
        &mut self,
        reference: &'s Value,
        resource: u32,
    ) -> Result<Node, SchemaError> {
        let apply = Applicators {
            reference: Some(self.reference(reference, resource)?),
            ..Applicators::default()
        };
        Ok(Node::Schema(Box::new(Schema {
            resource,
            apply: Some(Box::new(apply)),
            ..Schema::default()
        })))
    }

    /// Reads one keyword into `schema` or the group it belongs to; a keyword of no group, or not
    /// in force where `reading` says, is ignored.
    fn read_keyword(
        &mut self,
        schema: &mut Schema,
        groups: &mut Groups,
        reading: Reading,
        key: &str,
        child: &'s Value,
    ) -> Result<(), SchemaError> {
        // Each keyword belongs to one group at most: the first that reads it ends the search.
        let _read = self.read_own(schema, reading, key, child)?
            || groups.string.read(self, reading, key, child)?
            || groups.number.read(self, reading, key, child)?
            || groups.array.read(self, reading, key, child)?
            || groups.object.read(self, reading, key, child)?
            || groups.apply.read(self, reading, key, child)?;
        Ok(())
    }

    /// Reads `key` if it is `type`, `enum` or `const` (kept on the schema itself); returns whether
    /// it was.
    fn read_own(
        &self,
        schema: &mut Schema,
        reading: Reading,
        key: &str,
        child: &Value,
    ) -> Result<bool, SchemaError> {
        match key {
            "type" if reading.validation => schema.types = self.types(child)?,
            "enum" if reading.validation => {
                schema.enumeration = Some(Box::new(self.enumeration(child)?));
            }
            "const" if reading.validation && reading.since_7() => {
                schema.constant = Some(Box::new(child.clone()));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    pub(in crate::jsonschema) fn subschema(
        &mut self,
        value: &'s Value,
        resource: u32,
    ) -> Result<NodeId, SchemaError> {
        match value {
            Value::Bool(_) | Value::Object(_) => Ok(self.node_for(value, resource)),
            _ => Err(self.error(value, "a schema must be an object or a boolean")),
        }
    }

    pub(in crate::jsonschema) fn subschemas(
        &mut self,
        value: &'s Value,
        resource: u32,
    ) -> Result<Vec<NodeId>, SchemaError> {
        let Value::Array(items) = value else {
            return Err(self.error(value, "expected an array of schemas"));
        };
        items
            .iter()
            .map(|item| self.subschema(item, resource))
            .collect()
    }

    /// The members of a keyword whose value must be an object.
    pub(in crate::jsonschema) fn members(
        &self,
        value: &'s Value,
    ) -> Result<&'s Map<String, Value>, SchemaError> {
        match value {
            Value::Object(members) => Ok(members),
            _ => Err(self.error(value, "expected an object")),
        }
    }

    pub(in crate::jsonschema) fn count(&self, value: &Value) -> Result<u64, SchemaError> {
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

    pub(in crate::jsonschema) fn number(&self, value: &Value) -> Result<Number, SchemaError> {
        match value {
            Value::Number(_) => <&Value as Instance>::as_number(&value)
                .ok_or_else(|| self.error(value, "expected a number")),
            _ => Err(self.error(value, "expected a number")),
        }
    }

    pub(in crate::jsonschema) fn names(&self, value: &Value) -> Result<Vec<Box<str>>, SchemaError> {
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

    pub(in crate::jsonschema) fn pattern(
        &self,
        at: &Value,
        source: &str,
    ) -> Result<Pattern, SchemaError> {
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

    /// `enum`, with a hash set of its strings when there are many and nothing else.
    fn enumeration(&self, value: &Value) -> Result<Enumeration, SchemaError> {
        let Value::Array(values) = value else {
            return Err(self.error(value, "expected an array"));
        };
        let strings = (values.len() > ENUM_SET_THRESHOLD && values.iter().all(Value::is_string))
            .then(|| {
                values
                    .iter()
                    .filter_map(|v| v.as_str().map(Into::into))
                    .collect()
            });
        Ok(Enumeration {
            values: values.clone(),
            strings,
        })
    }

    /// The node a `$ref` names.
    fn reference(&mut self, value: &'s Value, resource: u32) -> Result<NodeId, SchemaError> {
        let Value::String(reference) = value else {
            return Err(self.error(value, "$ref must be a string"));
        };
        let (target, target_resource, _) = self.resolve(value, resource, reference)?;
        self.subschema(target, target_resource)
    }

    /// Draft 2019-09's `$recursiveRef`: dynamic only when its target has `$recursiveAnchor`.
    fn recursive_reference(
        &mut self,
        value: &'s Value,
        resource: u32,
    ) -> Result<DynamicRef, SchemaError> {
        let Value::String(reference) = value else {
            return Err(self.error(value, "$recursiveRef must be a string"));
        };
        let (target, target_resource, _) = self.resolve(value, resource, reference)?;
        let node = self.subschema(target, target_resource)?;
        let anchor =
            (target.get("$recursiveAnchor") == Some(&Value::Bool(true))).then(|| "".into());
        self.dynamic |= anchor.is_some();
        Ok(DynamicRef {
            target: node,
            anchor,
        })
    }

    /// `$dynamicRef`: dynamic only when it names a `$dynamicAnchor` by its plain-name fragment.
    fn dynamic_reference(
        &mut self,
        value: &'s Value,
        resource: u32,
    ) -> Result<DynamicRef, SchemaError> {
        let Value::String(reference) = value else {
            return Err(self.error(value, "$dynamicRef must be a string"));
        };
        let (target, target_resource, absolute) = self.resolve(value, resource, reference)?;
        let node = self.subschema(target, target_resource)?;
        let fragment = uri::split_fragment(&absolute).1;
        let anchor = (!fragment.is_empty()
            && !fragment.starts_with('/')
            && self.registry.dynamic_keys.contains(&absolute))
        .then(|| fragment.into());
        self.dynamic |= anchor.is_some();
        Ok(DynamicRef {
            target: node,
            anchor,
        })
    }
}

/// True when `schema` checks nothing, so it compiles to `true`.
fn checks_nothing(schema: &Schema) -> bool {
    schema.types == 0
        && schema.enumeration.is_none()
        && schema.constant.is_none()
        && schema.string.is_none()
        && schema.number.is_none()
        && schema.array.is_none()
        && schema.object.is_none()
        && schema.apply.is_none()
}
