//! Plain JSON values to Python objects: jiter's parsed values and `serde_json` values (schema
//! constants). A leaf of the binding, below the typed validator and the schema validator.
use jiter::JsonValue;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde_json::Value;

use crate::typed::outcome::Fatal;

/// Converts a parsed JSON value; nesting deeper than `max_depth` stops with `Fatal::Stop`.
pub(crate) fn json_to_python<'py>(
    py: Python<'py>,
    value: &JsonValue<'_>,
    max_depth: u16,
) -> Result<Bound<'py, PyAny>, Fatal> {
    Ok(match value {
        JsonValue::Null => py.None().into_bound(py),
        JsonValue::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        JsonValue::Int(number) => number.into_pyobject(py)?.into_any(),
        JsonValue::BigInt(number) => big_int(py, &number.to_string())?,
        JsonValue::Float(number) => PyFloat::new(py, *number).into_any(),
        JsonValue::Str(text) => PyString::new(py, text).into_any(),
        JsonValue::Array(items) => {
            let depth = max_depth.checked_sub(1).ok_or(Fatal::Stop)?;
            let list = PyList::empty(py);
            for item in items.iter() {
                list.append(json_to_python(py, item, depth)?)?;
            }
            list.into_any()
        }
        JsonValue::Object(entries) => {
            let depth = max_depth.checked_sub(1).ok_or(Fatal::Stop)?;
            let dict = PyDict::new(py);
            for (key, item) in entries.iter() {
                dict.set_item(PyString::new(py, key), json_to_python(py, item, depth)?)?;
            }
            dict.into_any()
        }
    })
}

/// A Python `int` from decimal digits (for integers beyond 64 bits).
pub(crate) fn big_int<'py>(py: Python<'py>, digits: &str) -> PyResult<Bound<'py, PyAny>> {
    py.get_type::<pyo3::types::PyInt>().call1((digits,))
}

/// Converts a `serde_json::Value` (schema constants: literals, enum values).
pub(crate) fn value_to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        Value::Number(number) => {
            if let Some(int) = number.as_i64() {
                int.into_pyobject(py)?.into_any()
            } else if let Some(int) = number.as_u64() {
                int.into_pyobject(py)?.into_any()
            } else {
                PyFloat::new(py, number.as_f64().unwrap_or(f64::NAN)).into_any()
            }
        }
        Value::String(text) => PyString::new(py, text).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(entries) => {
            let dict = PyDict::new(py);
            for (key, item) in entries {
                dict.set_item(key, value_to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}
