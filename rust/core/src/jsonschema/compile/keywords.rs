//! Pre-parsing of each keyword of a schema object into its node: the checked values of the
//! assertions, and the node indices of the subschemas the applicators hold.
use serde_json::{Map, Value};

use super::Compiler;
use crate::formats::Format;
use crate::json::{Instance, Number};
use crate::jsonschema::node::{
    Applicators, ArrayKeywords, DynamicRef, Enumeration, Node, NodeId, NumberKeywords,
    ObjectKeywords, Schema, StringKeywords, types,
};
use crate::jsonschema::options::{Draft, SchemaError};
use crate::jsonschema::uri;
use crate::pattern::Pattern;

/// Above this many properties, lookups go through a hash map instead of a linear scan.
const PROPERTY_INDEX_THRESHOLD: usize = 12;
/// Above this many string choices, `enum` uses a hash set.
const ENUM_SET_THRESHOLD: usize = 8;

impl<'s> Compiler<'s> {
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

    pub(super) fn compile_object(
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
