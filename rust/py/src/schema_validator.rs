//! `JsonSchemaValidator`: any JSON Schema document of drafts 2020-12, 2019-09, 7 or 4, compiled
//! once, validating Python values in place or raw JSON.
use ferrotool_core::error::{ErrorCode, Limits, LineError, PathItem};
use ferrotool_core::json::Instance;
use ferrotool_core::jsonschema::{Coercion, Draft, Options, SchemaValidator};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

use crate::errors::{error_details, validation_error};
use crate::ffi::borrowed;
use crate::instance::{PyInstance, python_to_value};
use crate::typed::{check_max_depth, input_bytes, json_error, read_input, too_large};

/// Raw JSON at least this long is validated with the interpreter released: the parsed value is
/// Rust data, and its strings may be long enough for pattern matching to take a while (each match
/// is linear in its input, or bounded by the backtracking budget). A Python value is read in
/// place, which needs the interpreter, so its walk keeps it.
const DETACH_BYTES: usize = 16 * 1024;

/// A compiled JSON Schema (drafts 2020-12, 2019-09, 7 and 4).
#[pyclass(name = "JsonSchemaValidator", module = "ferrotool._core", frozen)]
pub(crate) struct PySchemaValidator {
    inner: SchemaValidator,
    /// Raw JSON of any size is validated with the interpreter released: the schema holds a
    /// pattern with lookaround or backreferences, whose matches in one validation may take up
    /// to the backtracking budget (a few hundred milliseconds), however short the input.
    detach_always: bool,
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
    /// Parses raw JSON: as a `serde_json` value with whether it is long enough to validate with
    /// the interpreter released ([`DETACH_BYTES`]), or, when it holds an integer beyond 64 bits
    /// (which `serde_json` cannot keep exact), as Python objects. A number beyond a float's range
    /// (`1e400`) is refused.
    fn parse_json<'py>(&self, py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Parsed<'py>> {
        let limits = &self.inner.options().limits;
        let raw = match read_input(data, limits.max_bytes)? {
            Ok(text) => text.as_bytes(),
            Err(error) => return Err(validation_error(py, vec![error])),
        };
        if raw.len() > limits.max_bytes {
            return Err(validation_error(py, vec![too_large(raw.len(), limits)]));
        }
        if nesting_exceeds(raw, limits.max_depth) {
            return Err(validation_error(py, vec![too_deep(limits.max_depth)]));
        }
        match jiter::JsonValue::parse(raw, false) {
            Ok(value) => {
                let mut wide = Wide::default();
                let plain = jiter_to_value(&value, &mut wide);
                if wide.overflow {
                    let path = overflow_path(&value).unwrap_or_default();
                    return Err(validation_error(py, vec![out_of_range(path)]));
                }
                if wide.big {
                    return Ok(Parsed::Python(jiter_to_python(py, &value)?));
                }
                Ok(Parsed::Plain(
                    plain,
                    self.detach_always || raw.len() >= DETACH_BYTES,
                ))
            }
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

/// Raw JSON parsed for validation.
enum Parsed<'py> {
    /// A `serde_json` value, and whether to validate it with the interpreter released.
    Plain(Value, bool),
    /// Python objects, for input with integers beyond 64 bits (read exactly as Python `int`s).
    Python(Bound<'py, PyAny>),
}

/// What [`jiter_to_value`] met that a `serde_json` value cannot hold.
#[derive(Default)]
struct Wide {
    /// An integer beyond 64 bits.
    big: bool,
    /// A number beyond a float's range.
    overflow: bool,
}

/// A parsed value as `serde_json::Value` (the parse bounded its depth); what it cannot hold
/// exactly is noted in `wide` (and left as `null`, for the caller to read otherwise).
fn jiter_to_value(value: &jiter::JsonValue<'_>, wide: &mut Wide) -> Value {
    match value {
        jiter::JsonValue::Null => Value::Null,
        jiter::JsonValue::Bool(flag) => Value::Bool(*flag),
        jiter::JsonValue::Int(number) => Value::from(*number),
        jiter::JsonValue::BigInt(number) => {
            if let Ok(number) = u64::try_from(number) {
                return Value::from(number);
            }
            wide.big = true;
            Value::Null
        }
        jiter::JsonValue::Float(number) => serde_json::Number::from_f64(*number).map_or_else(
            || {
                wide.overflow = true;
                Value::Null
            },
            Value::Number,
        ),
        jiter::JsonValue::Str(text) => Value::String(text.to_string()),
        jiter::JsonValue::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| jiter_to_value(item, wide))
                .collect(),
        ),
        jiter::JsonValue::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, item)| (key.to_string(), jiter_to_value(item, wide)))
                .collect(),
        ),
    }
}

/// A parsed value as Python objects, integers of any size exact (the parse bounded its depth).
fn jiter_to_python<'py>(
    py: Python<'py>,
    value: &jiter::JsonValue<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        jiter::JsonValue::Null => py.None().into_bound(py),
        jiter::JsonValue::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        jiter::JsonValue::Int(number) => number.into_pyobject(py)?.into_any(),
        jiter::JsonValue::BigInt(number) => {
            // Hexadecimal text: exact, and free of the interpreter's limit on decimal digits.
            let int = py.get_type::<PyInt>();
            int.call1((format!("{number:x}"), 16))?
        }
        jiter::JsonValue::Float(number) => PyFloat::new(py, *number).into_any(),
        jiter::JsonValue::Str(text) => PyString::new(py, text).into_any(),
        jiter::JsonValue::Array(items) => {
            let list = PyList::empty(py);
            for item in items.iter() {
                list.append(jiter_to_python(py, item)?)?;
            }
            list.into_any()
        }
        jiter::JsonValue::Object(entries) => {
            let dict = PyDict::new(py);
            for (key, item) in entries.iter() {
                dict.set_item(key.as_ref(), jiter_to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// The path of the first number beyond a float's range.
fn overflow_path(value: &jiter::JsonValue<'_>) -> Option<Vec<PathItem>> {
    match value {
        jiter::JsonValue::Float(number) if !number.is_finite() => Some(Vec::new()),
        jiter::JsonValue::Array(items) => items.iter().enumerate().find_map(|(index, item)| {
            let mut path = overflow_path(item)?;
            path.insert(0, PathItem::Index(index));
            Some(path)
        }),
        jiter::JsonValue::Object(entries) => entries.iter().find_map(|(key, item)| {
            let mut path = overflow_path(item)?;
            path.insert(0, PathItem::Key(key.as_ref().into()));
            Some(path)
        }),
        _ => None,
    }
}

/// A number beyond a float's range is refused rather than read as something else.
fn out_of_range(path: Vec<PathItem>) -> LineError {
    LineError::new(
        ErrorCode::InvalidValue,
        path,
        "a number within a 64-bit float's range",
        "a number beyond it",
    )
}

/// Applies lenient coercions to Python containers, in place.
fn apply_python_coercions(value: &Bound<'_, PyAny>, coercions: Vec<Coercion>) -> PyResult<()> {
    let py = value.py();
    for coercion in coercions {
        let Some((last, parents)) = coercion.path.split_last() else {
            continue;
        };
        let mut target = value.clone();
        for step in parents {
            target = match step {
                PathItem::Key(key) => target.get_item(&**key)?,
                PathItem::Index(index) => target.get_item(*index)?,
            };
        }
        let replacement = crate::convert::value_to_python(py, &coercion.value)?;
        match last {
            PathItem::Key(key) => target.set_item(&**key, replacement)?,
            PathItem::Index(index) => target.set_item(*index, replacement)?,
        }
    }
    Ok(())
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
        let detach_always = inner.has_backtracking_pattern();
        Ok(Self {
            inner,
            detach_always,
        })
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
        let (mut value, detach) = match self.parse_json(py, data)? {
            Parsed::Plain(value, detach) => (value, detach),
            Parsed::Python(value) => {
                let coercions = if self.inner.options().lenient {
                    self.validate_python_lenient(&value)
                } else {
                    self.check_python(&value).map(|()| Vec::new())
                }
                .map_err(|errors| validation_error(py, errors))?;
                apply_python_coercions(&value, coercions)?;
                return Ok(value);
            }
        };
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
        crate::convert::value_to_python(py, &value)
    }

    /// True when raw JSON parses and is valid.
    fn is_valid_json(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<bool> {
        match self.parse_json(py, data) {
            Ok(Parsed::Plain(value, true)) => Ok(py.detach(|| self.inner.is_valid(&&value))),
            Ok(Parsed::Plain(value, false)) => Ok(self.inner.is_valid(&&value)),
            Ok(Parsed::Python(value)) => Ok(self.is_valid(&value)),
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
    /// Lenient validation of a Python value, with the coercions to apply.
    fn validate_python_lenient(
        &self,
        instance: &Bound<'_, PyAny>,
    ) -> Result<Vec<Coercion>, Vec<LineError>> {
        borrowed::walk(instance, |value| self.inner.validate_lenient(value))
            .unwrap_or_else(|| self.inner.validate_lenient(&PyInstance(instance.clone())))
    }

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
