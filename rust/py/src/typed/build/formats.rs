//! String formats: checking a string-valued node's text (a date, a UUID, a decimal, ...) and
//! building its Python value.
use ferrotool_core::duration::parse_duration;
use ferrotool_core::error::ErrorCode;
use ferrotool_core::ir::StringValue;
use pyo3::exceptions::{PyArithmeticError, PyValueError};
use pyo3::prelude::*;

use super::{Built, Context, Engine, describe, is_container};
use crate::typed::outcome::Fatal;
use crate::typed::source::{Head, Source};

impl Engine {
    /// A string of a format (a date, a UUID, ...), built as its Python value.
    #[inline]
    pub(super) fn format_value<'py, S: Source<'py>>(
        py: Python<'py>,
        value: StringValue,
        convert: &Py<PyAny>,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let head = source.head()?;
        let Head::Str(text) = &head else {
            return wrong_kind!(source, context, head, ErrorCode::WrongType, "string");
        };
        match string_value(py, value, convert.bind(py), text) {
            Ok(Some(built)) => Ok(Some(built)),
            Ok(None) => context.error(
                ErrorCode::InvalidFormat,
                expected_format(value),
                describe(&head),
            ),
            Err(error) => Err(Fatal::from(error)),
        }
    }
}

fn expected_format(value: StringValue) -> &'static str {
    match value {
        StringValue::Datetime => "an RFC 3339 date-time with offset, e.g. 2024-05-01T10:00:00Z",
        StringValue::Date => "an RFC 3339 date, e.g. 2024-05-01",
        StringValue::Time => "an RFC 3339 time with offset, e.g. 10:00:00Z",
        StringValue::Timedelta => "an ISO 8601 duration, e.g. P1DT2H30M",
        StringValue::Uuid => "a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000",
        StringValue::Decimal => "a decimal number as a string, e.g. \"12.50\"",
        StringValue::Path => "a path",
    }
}

/// Checks the string's format, then builds the Python value; `Ok(None)` when the format is wrong.
fn string_value<'py>(
    py: Python<'py>,
    value: StringValue,
    convert: &Bound<'py, PyAny>,
    text: &str,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let valid = match value {
        StringValue::Datetime => ferrotool_core::formats::check_format("date-time", text),
        StringValue::Date => ferrotool_core::formats::check_format("date", text),
        StringValue::Time => ferrotool_core::formats::check_format("time", text),
        StringValue::Uuid => ferrotool_core::formats::check_format("uuid", text),
        StringValue::Decimal => Some(is_decimal(text)),
        StringValue::Timedelta | StringValue::Path => Some(true),
    };
    if valid == Some(false) {
        return Ok(None);
    }
    let result = match value {
        StringValue::Timedelta => match parse_duration(text) {
            Some((days, seconds, micros)) => convert.call1((days, seconds, micros)),
            None => return Ok(None),
        },
        StringValue::Datetime | StringValue::Time => convert.call1((text.to_ascii_uppercase(),)),
        _ => convert.call1((text,)),
    };
    match result {
        Ok(built) => Ok(Some(built)),
        // A well-formed value Python cannot hold (a duration beyond `timedelta.max`, a decimal
        // exponent beyond the context's) is reported like a malformed one.
        Err(error)
            if error.is_instance_of::<PyValueError>(py)
                || error.is_instance_of::<PyArithmeticError>(py) =>
        {
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: the JSON number grammar, as a string.
fn is_decimal(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut index = 0;
    let digits = |index: &mut usize| {
        let start = *index;
        while bytes.get(*index).is_some_and(u8::is_ascii_digit) {
            *index += 1;
        }
        *index - start
    };
    if bytes.get(index) == Some(&b'-') {
        index += 1;
    }
    match bytes.get(index) {
        Some(b'0') => index += 1,
        Some(b'1'..=b'9') => {
            digits(&mut index);
        }
        _ => return false,
    }
    if bytes.get(index) == Some(&b'.') {
        index += 1;
        if digits(&mut index) == 0 {
            return false;
        }
    }
    if matches!(bytes.get(index), Some(b'e' | b'E')) {
        index += 1;
        if matches!(bytes.get(index), Some(b'+' | b'-')) {
            index += 1;
        }
        if digits(&mut index) == 0 {
            return false;
        }
    }
    index == bytes.len()
}
