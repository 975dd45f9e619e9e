//! Python objects read as JSON in place, for the JSON Schema validator.
use std::borrow::Cow;

use ferrotool_core::json::{Instance, Kind, Number};
use pyo3::prelude::*;
use pyo3::types::dict::BoundDictIterator;
use pyo3::types::list::BoundListIterator;
use pyo3::types::tuple::BoundTupleIterator;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

/// A Python value seen as JSON: `dict` is an object, `list` and `tuple` are arrays, `bool` is not
/// a number. Anything else is `Kind::Other`, which matches no JSON type.
#[derive(Clone)]
pub(crate) struct PyInstance<'py>(pub(crate) Bound<'py, PyAny>);

/// Objects up to this size are searched by scanning their keys.
const SCAN_LIMIT: usize = 8;

/// An object key, readable as `&str`.
pub(crate) enum PyKey<'py> {
    Str(Bound<'py, PyString>),
    /// A key that is not a valid UTF-8 `str` (a surrogate, or not a string at all), rendered.
    Text(String),
}

impl AsRef<str> for PyKey<'_> {
    fn as_ref(&self) -> &str {
        match self {
            Self::Str(text) => text.to_str().unwrap_or(""),
            Self::Text(text) => text,
        }
    }
}

fn key(value: Bound<'_, PyAny>) -> PyKey<'_> {
    match value.cast_into::<PyString>() {
        Ok(text) if text.to_str().is_ok() => PyKey::Str(text),
        Ok(text) => PyKey::Text(text.to_string_lossy().into_owned()),
        Err(error) => PyKey::Text(error.into_inner().to_string()),
    }
}

/// The items of a `list` or a `tuple`.
pub(crate) enum Items<'py> {
    List(BoundListIterator<'py>),
    Tuple(BoundTupleIterator<'py>),
    Empty,
}

impl<'py> Iterator for Items<'py> {
    type Item = PyInstance<'py>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::List(items) => items.next().map(PyInstance),
            Self::Tuple(items) => items.next().map(PyInstance),
            Self::Empty => None,
        }
    }
}

impl<'py> Instance for PyInstance<'py> {
    type Key = PyKey<'py>;

    fn kind(&self) -> Kind {
        let value = &self.0;
        // Exact type checks first: one pointer comparison each for the common JSON types.
        if value.is_exact_instance_of::<PyString>() {
            return Kind::String;
        }
        if value.is_exact_instance_of::<PyDict>() {
            return Kind::Object;
        }
        if value.is_exact_instance_of::<PyInt>() {
            return Kind::Integer;
        }
        if value.is_exact_instance_of::<PyList>() {
            return Kind::Array;
        }
        if value.is_instance_of::<PyString>() {
            Kind::String
        } else if value.is_instance_of::<PyBool>() {
            Kind::Bool
        } else if value.is_instance_of::<PyInt>() {
            Kind::Integer
        } else if let Ok(number) = value.cast::<PyFloat>() {
            Kind::of_float(number.value())
        } else if value.is_none() {
            Kind::Null
        } else if value.is_instance_of::<PyDict>() {
            Kind::Object
        } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            Kind::Array
        } else {
            Kind::Other
        }
    }

    fn as_bool(&self) -> Option<bool> {
        self.0
            .cast::<PyBool>()
            .ok()
            .map(pyo3::types::PyBoolMethods::is_true)
    }

    fn as_number(&self) -> Option<Number> {
        let value = &self.0;
        if value.is_instance_of::<PyBool>() {
            return None;
        }
        if value.is_instance_of::<PyInt>() {
            if let Ok(number) = value.extract::<i64>() {
                return Some(Number::I64(number));
            }
            if let Ok(number) = value.extract::<u64>() {
                return Some(Number::U64(number));
            }
            return value.extract::<f64>().ok().map(Number::F64);
        }
        value
            .cast::<PyFloat>()
            .ok()
            .map(|number| Number::F64(number.value()))
    }

    fn as_str(&self) -> Option<Cow<'_, str>> {
        self.0.cast::<PyString>().ok().map(|text| {
            text.to_cow()
                .unwrap_or_else(|_| Cow::Owned(text.to_string_lossy().into_owned()))
        })
    }

    fn array_len(&self) -> Option<usize> {
        if let Ok(list) = self.0.cast::<PyList>() {
            Some(list.len())
        } else {
            self.0
                .cast::<PyTuple>()
                .ok()
                .map(pyo3::types::PyTupleMethods::len)
        }
    }

    fn array_items(&self) -> impl Iterator<Item = Self> + '_ {
        if let Ok(list) = self.0.cast::<PyList>() {
            Items::List(list.clone().into_iter())
        } else if let Ok(tuple) = self.0.cast::<PyTuple>() {
            Items::Tuple(tuple.clone().into_iter())
        } else {
            Items::Empty
        }
    }

    fn object_len(&self) -> Option<usize> {
        self.0
            .cast::<PyDict>()
            .ok()
            .map(pyo3::types::PyDictMethods::len)
    }

    fn object_get(&self, key: &str) -> Option<Self> {
        let dict = self.0.cast::<PyDict>().ok()?;
        if dict.len() <= SCAN_LIMIT {
            // Comparing a few keys' cached UTF-8 beats allocating and hashing a new `str`.
            return dict.iter().find_map(|(name, value)| {
                let name = name.cast_into::<PyString>().ok()?;
                (name.to_str().ok()? == key).then_some(PyInstance(value))
            });
        }
        dict.get_item(key).ok().flatten().map(PyInstance)
    }

    fn object_items(&self) -> impl Iterator<Item = (Self::Key, Self)> + '_ {
        let entries: Option<BoundDictIterator<'py>> = self
            .0
            .cast::<PyDict>()
            .ok()
            .map(|dict| dict.clone().into_iter());
        entries
            .into_iter()
            .flatten()
            .map(|(name, value)| (key(name), PyInstance(value)))
    }

    fn to_value(&self) -> Value {
        instance_to_value(self, 64).unwrap_or(Value::Null)
    }

    fn number_text(&self) -> Option<Cow<'_, str>> {
        let value = &self.0;
        if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
            return None;
        }
        // Hexadecimal: exact, and free of the interpreter's limit on decimal digits.
        let text = value.py().import("builtins").ok()?.getattr("hex").ok()?;
        let text = text.call1((value,)).ok()?;
        Some(Cow::Owned(text.extract::<String>().ok()?))
    }
}

/// Converts a JSON-like Python value to `serde_json::Value`; `None` for anything else or when
/// nested deeper than `max_depth`.
pub(crate) fn python_to_value(value: &Bound<'_, PyAny>, max_depth: u16) -> Option<Value> {
    instance_to_value(&PyInstance(value.clone()), max_depth)
}

/// Copies any instance to `serde_json::Value`; `None` for a non-JSON value or when nested deeper
/// than `max_depth`.
pub(crate) fn instance_to_value<I: Instance>(instance: &I, max_depth: u16) -> Option<Value> {
    Some(match instance.kind() {
        Kind::Null => Value::Null,
        Kind::Bool => Value::Bool(instance.as_bool()?),
        Kind::Integer | Kind::Number => match instance.as_number()? {
            Number::I64(number) => Value::from(number),
            Number::U64(number) => Value::from(number),
            Number::F64(number) => Value::from(serde_json::Number::from_f64(number)?),
        },
        Kind::String => Value::String(instance.as_str()?.into_owned()),
        Kind::Array => {
            let depth = max_depth.checked_sub(1)?;
            Value::Array(
                instance
                    .array_items()
                    .map(|item| instance_to_value(&item, depth))
                    .collect::<Option<_>>()?,
            )
        }
        Kind::Object => {
            let depth = max_depth.checked_sub(1)?;
            let mut map = serde_json::Map::new();
            for (name, item) in instance.object_items() {
                map.insert(name.as_ref().to_owned(), instance_to_value(&item, depth)?);
            }
            Value::Object(map)
        }
        Kind::Other => return None,
    })
}
