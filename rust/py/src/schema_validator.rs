//! `JsonSchemaValidator`: any JSON Schema document of drafts 2020-12, 2019-09, 7 or 4, compiled
//! once, validating Python values in place or raw JSON.
use ferrotool_core::error::{ErrorCode, Limits, LineError, PathItem};
use ferrotool_core::json::Instance;
use ferrotool_core::jsonschema::{Coercion, Draft, Options, SchemaValidator};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use serde_json::Value;

use crate::borrowed;
use crate::errors::{error_details, validation_error};
use crate::instance::{PyInstance, python_to_value};
use crate::typed::{check_max_depth, input_bytes, json_error, too_large};

/// Raw JSON at least this long is validated with the interpreter released: the parsed value is
/// Rust data, and its strings may be long enough for pattern matching to take a while (each match
/// is linear in its input, or bounded by the backtracking budget). A Python value is read in
/// place, which needs the interpreter, so its walk keeps it.
const DETACH_BYTES: usize = 16 * 1024;

/// A compiled JSON Schema (drafts 2020-12, 2019-09, 7 and 4).
#[pyclass(name = "JsonSchemaValidator", module = "ferrotool._core", frozen)]
pub(crate) struct PySchemaValidator {
    inner: SchemaValidator,
}

/// Reads a schema given as a dict/bool (JSON-like Python) or as JSON text.
fn schema_value(schema: &Bound<'_, PyAny>) -> PyResult<Value> {
    if schema.is_instance_of::<PyString>() || schema.is_instance_of::<PyBytes>() {
        let raw = input_bytes(schema)?;
        return serde_json::from_slice(raw)
            .map_err(|error| PyValueError::new_err(format!("schema is not valid JSON: {error}")));
    }
    python_to_value(schema, 512).ok_or_else(|| {
        PyTypeError::new_err("schema must be a JSON-like dict or bool (or JSON text) without NaN, infinities or non-JSON values")
    })
}

impl PySchemaValidator {
    /// The parsed value, and whether it is long enough to validate with the interpreter
    /// released ([`DETACH_BYTES`]).
    fn parse_json(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<(Value, bool)> {
        let raw = input_bytes(data)?;
        let limits = &self.inner.options().limits;
        if raw.len() > limits.max_bytes {
            return Err(validation_error(py, vec![too_large(raw.len(), limits)]));
        }
        if nesting_exceeds(raw, limits.max_depth) {
            return Err(validation_error(py, vec![too_deep(limits.max_depth)]));
        }
        match jiter::JsonValue::parse(raw, false) {
            Ok(value) => Ok((jiter_to_value(&value), raw.len() >= DETACH_BYTES)),
            Err(error) => {
                let position = error.get_position(raw);
                let error_type = jiter::JiterErrorType::JsonError(error.error_type);
                Err(validation_error(
                    py,
                    vec![json_error(&position, &error_type)],
                ))
            }
        }
    }
}

/// True when arrays and objects in raw JSON nest deeper than `max_depth` (a byte scan that skips
/// strings; malformed JSON is left to the parser).
fn nesting_exceeds(raw: &[u8], max_depth: u16) -> bool {
    let mut depth: u32 = 0;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in raw {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > u32::from(max_depth) {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// A parsed value as `serde_json::Value` (the parse bounded its depth).
fn jiter_to_value(value: &jiter::JsonValue<'_>) -> Value {
    match value {
        jiter::JsonValue::Null => Value::Null,
        jiter::JsonValue::Bool(flag) => Value::Bool(*flag),
        jiter::JsonValue::Int(number) => Value::from(*number),
        jiter::JsonValue::BigInt(number) => number
            .to_string()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        jiter::JsonValue::Float(number) => {
            serde_json::Number::from_f64(*number).map_or(Value::Null, Value::Number)
        }
        jiter::JsonValue::Str(text) => Value::String(text.to_string()),
        jiter::JsonValue::Array(items) => Value::Array(items.iter().map(jiter_to_value).collect()),
        jiter::JsonValue::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, item)| (key.to_string(), jiter_to_value(item)))
                .collect(),
        ),
    }
}

fn too_deep(max_depth: u16) -> LineError {
    LineError::new(
        ErrorCode::NestingTooDeep,
        Vec::new(),
        format!("at most {max_depth} levels of nesting"),
        "deeper nesting",
    )
}

fn apply_coercions(value: &mut Value, coercions: Vec<Coercion>) {
    for coercion in coercions {
        if let Some(target) = locate(value, &coercion.path) {
            *target = coercion.value;
        }
    }
}

fn locate<'v>(value: &'v mut Value, path: &[PathItem]) -> Option<&'v mut Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(value);
    };
    let next = match (first, value) {
        (PathItem::Key(key), Value::Object(map)) => map.get_mut(&**key)?,
        (PathItem::Index(index), Value::Array(items)) => items.get_mut(*index)?,
        _ => return None,
    };
    locate(next, rest)
}

#[pymethods]
impl PySchemaValidator {
    #[new]
    #[pyo3(signature = (schema, *, draft="draft2020-12", resources=None, lenient=false, assert_formats=false, max_depth=128, max_bytes=8_388_608, max_errors=20))]
    #[allow(clippy::too_many_arguments)] // The Python signature's keyword arguments.
    fn new(
        schema: &Bound<'_, PyAny>,
        draft: &str,
        resources: Option<&Bound<'_, PyDict>>,
        lenient: bool,
        assert_formats: bool,
        max_depth: u16,
        max_bytes: usize,
        max_errors: usize,
    ) -> PyResult<Self> {
        check_max_depth(max_depth)?;
        let draft = Draft::from_name(draft).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown draft {draft:?}: expected \"draft2020-12\", \"draft2019-09\", \"draft7\" or \"draft4\""
            ))
        })?;
        let schema = schema_value(schema)?;
        let mut documents = Vec::new();
        if let Some(resources) = resources {
            for (uri, document) in resources.iter() {
                documents.push((uri.extract::<String>()?, schema_value(&document)?));
            }
        }
        let options = Options {
            lenient,
            assert_formats,
            draft,
            limits: Limits {
                max_depth,
                max_bytes,
                max_errors: max_errors.max(1),
            },
        };
        let inner = SchemaValidator::compile_with_resources(&schema, options, &documents)
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        Ok(Self { inner })
    }

    /// True when the value is valid; stops at the first problem.
    fn is_valid(&self, instance: &Bound<'_, PyAny>) -> bool {
        borrowed::walk(instance, |value| self.inner.is_valid(value))
            .unwrap_or_else(|| self.inner.is_valid(&PyInstance(instance.clone())))
    }

    /// Raises `ValidationError` listing every problem (up to `max_errors`).
    fn validate(&self, py: Python<'_>, instance: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check_python(instance)
            .map_err(|errors| validation_error(py, errors))
    }

    /// Every problem found (up to `max_errors`), empty when the value is valid.
    fn errors<'py>(
        &self,
        py: Python<'py>,
        instance: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let errors = self.check_python(instance).err().unwrap_or_default();
        error_details(py, errors)
    }

    /// Parses raw JSON, validates it, and returns the parsed value (with lenient coercions applied).
    fn validate_json<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (mut value, detach) = self.parse_json(py, data)?;
        let inner = &self.inner;
        let check = |value: &Value| {
            if inner.options().lenient {
                inner.validate_lenient(&value)
            } else {
                inner.validate(&value).map(|()| Vec::new())
            }
        };
        let outcome = if detach {
            py.detach(|| check(&value))
        } else {
            check(&value)
        };
        let coercions = outcome.map_err(|errors| validation_error(py, errors))?;
        apply_coercions(&mut value, coercions);
        crate::typed::value_to_python(py, &value)
    }

    /// True when raw JSON parses and is valid.
    fn is_valid_json(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<bool> {
        match self.parse_json(py, data) {
            Ok((value, true)) => Ok(py.detach(|| self.inner.is_valid(&&value))),
            Ok((value, false)) => Ok(self.inner.is_valid(&&value)),
            Err(error) if error.is_instance_of::<crate::errors::ValidationError>(py) => Ok(false),
            Err(error) => Err(error),
        }
    }

    #[getter]
    fn lenient(&self) -> bool {
        self.inner.options().lenient
    }

    #[getter]
    fn assert_formats(&self) -> bool {
        self.inner.options().assert_formats
    }

    /// The draft of a document without `$schema` (its `$schema`, when present, wins).
    #[getter]
    fn draft(&self) -> &'static str {
        self.inner.options().draft.name()
    }
}

impl PySchemaValidator {
    /// [`check`](Self::check) of a Python value, read through borrowed pointers where it can be.
    fn check_python(&self, instance: &Bound<'_, PyAny>) -> Result<(), Vec<LineError>> {
        borrowed::walk(instance, |value| self.check(value))
            .unwrap_or_else(|| self.check(&PyInstance(instance.clone())))
    }

    fn check<I: Instance>(&self, instance: &I) -> Result<(), Vec<LineError>> {
        if self.inner.options().lenient {
            self.inner.validate_lenient(instance).map(|_| ())
        } else {
            self.inner.validate(instance)
        }
    }
}
