//! Leaf values: null, booleans, numbers, strings and choices (`Literal`, `Enum`), read from
//! their head or, as a container's child, straight from the source.
use ferrotool_core::checks::{NumberCheck, StringCheck};
use ferrotool_core::error::{ErrorCode, describe_str};
use ferrotool_core::json::Number;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyString};
use serde_json::Value;

use super::{Built, Context, Engine, describe, is_container};
use crate::convert::big_int;
use crate::typed::compile::Node;
use crate::typed::outcome::Fatal;
use crate::typed::source::{Head, Scalar, Shape, Source};

/// A Python `int`.
fn int_object(py: Python<'_>, value: i64) -> Bound<'_, PyAny> {
    let Ok(object) = value.into_pyobject(py);
    object.into_any()
}

/// A JSON number beyond a float's range (see [`Head::Overflow`]) for a number node: refused, as
/// no float holds it, rather than read as the infinity a decoder rounds it to.
#[cold]
#[inline(never)]
fn out_of_range<'py>(negative: bool, head: &Head<'_>, context: &mut Context<'py>) -> Built<'py> {
    let (code, expected) = if negative {
        (
            ErrorCode::NumberTooSmall,
            "at least -1.7976931348623157e308",
        )
    } else {
        (ErrorCode::NumberTooLarge, "at most 1.7976931348623157e308")
    };
    context.error(code, expected, describe(head))
}

/// Reads a lenient string as a number: `"5"`, `"-2.5"`.
fn lenient_number(text: &str) -> Option<Number> {
    let text = text.trim();
    if let Ok(value) = text.parse::<i64>() {
        return Some(Number::I64(value));
    }
    text.parse::<f64>()
        .ok()
        .filter(|value| value.is_finite())
        .map(Number::F64)
}

fn lenient_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "true" | "True" => Some(true),
        "false" | "False" => Some(false),
        _ => None,
    }
}

/// True when the value whose head is `head` is the choice `value`.
fn choice_matches(head: &Head<'_>, value: &Value) -> bool {
    match (head, value) {
        (Head::Null, Value::Null) => true,
        (Head::Bool(flag), Value::Bool(expected)) => flag == expected,
        (Head::Str(text), Value::String(expected)) => text == expected,
        (Head::Int(number), Value::Number(expected)) => {
            expected.as_i64() == Some(*number)
                || expected.as_f64() == Some(*number as f64) && expected.is_f64()
        }
        (Head::Float(number), Value::Number(expected)) => expected.as_f64() == Some(*number),
        _ => false,
    }
}

impl Engine {
    #[inline]
    pub(super) fn null_value<'py, S: Source<'py>>(
        py: Python<'py>,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let head = source.head()?;
        if matches!(head, Head::Null) {
            return Ok(Some(py.None().into_bound(py)));
        }
        wrong_kind!(source, context, head, ErrorCode::WrongType, "null")
    }

    #[inline]
    pub(super) fn bool_value<'py, S: Source<'py>>(
        py: Python<'py>,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let head = source.head()?;
        if let Some(built) = Self::bool_head(py, &head, context) {
            return built;
        }
        wrong_kind!(source, context, head, ErrorCode::WrongType, "boolean")
    }

    #[inline]
    pub(super) fn int_value<'py, S: Source<'py>>(
        py: Python<'py>,
        check: &NumberCheck,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let original = source.original();
        let head = source.head()?;
        if let Some(built) = Self::int_head(py, check, &head, original, context) {
            return built;
        }
        wrong_kind!(source, context, head, ErrorCode::WrongType, "integer")
    }

    #[inline]
    pub(super) fn float_value<'py, S: Source<'py>>(
        py: Python<'py>,
        check: &NumberCheck,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let original = source.original();
        let head = source.head()?;
        if let Some(built) = Self::float_head(py, check, &head, original, context) {
            return built;
        }
        wrong_kind!(source, context, head, ErrorCode::WrongType, "number")
    }

    #[inline]
    pub(super) fn str_value<'py, S: Source<'py>>(
        py: Python<'py>,
        check: &StringCheck,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let original = source.original();
        let head = source.head()?;
        let Head::Str(text) = &head else {
            return wrong_kind!(source, context, head, ErrorCode::WrongType, "string");
        };
        Self::str_text(py, check, text, original, context)
    }

    /// A `Literal` or `Enum`: the Python object of the allowed value matched.
    #[inline]
    pub(super) fn choice_value<'py, S: Source<'py>>(
        py: Python<'py>,
        values: &[(Value, Py<PyAny>)],
        expected: &str,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let head = source.head()?;
        if let Some((_, object)) = values
            .iter()
            .find(|(value, _)| choice_matches(&head, value))
        {
            return Ok(Some(object.bind(py).clone()));
        }
        wrong_kind!(source, context, head, ErrorCode::NotInEnum, expected)
    }

    /// Reads `node`'s value as a container's child: a leaf node whose value is exactly of its
    /// kind is read straight from the source ([`Source::scalar`]) and built here; anything else
    /// goes the general way ([`Self::value`]), with the same outcome and errors.
    #[inline]
    pub(super) fn child<'v, 'py, S: Source<'py>>(
        &'v self,
        node: &'v Node,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let want = match node {
            Node::Str(check) if check.is_empty() => Shape::String,
            Node::Int(_) | Node::Float(_) => Shape::Number,
            Node::Bool => Shape::Bool,
            _ => return self.value(node, source, context),
        };
        let py = source.py();
        match (node, source.scalar(want)?) {
            (_, Scalar::Untouched) => self.value(node, source, context),
            (Node::Str(_), Scalar::Str(text)) => Ok(Some(PyString::new(py, text).into_any())),
            (Node::Int(check), Scalar::Int(number)) => {
                if !check.is_empty()
                    && let Err((code, expected)) = check.check(Number::I64(number))
                {
                    return context.error(code, expected, describe(&Head::Int(number)));
                }
                Ok(Some(int_object(py, number)))
            }
            (Node::Float(check), Scalar::Float(number)) => {
                if !check.is_empty()
                    && let Err((code, expected)) = check.check(Number::F64(number))
                {
                    return context.error(code, expected, describe(&Head::Float(number)));
                }
                Ok(Some(PyFloat::new(py, number).into_any()))
            }
            (Node::Bool, Scalar::Bool(flag)) => {
                Ok(Some(PyBool::new(py, flag).to_owned().into_any()))
            }
            (_, scalar) => Self::scalar_rest(py, node, scalar, context),
        }
    }

    /// The rarer cases of [`Self::child`]: a scalar read for a leaf node that is not simply of
    /// its kind (a float for an integer, an integer beyond `i64`), built as [`Self::value`]
    /// would from its head.
    #[inline(never)]
    fn scalar_rest<'py>(
        py: Python<'py>,
        node: &Node,
        scalar: Scalar<'_>,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let head = match scalar {
            Scalar::Str(text) => Head::Str(text.into()),
            Scalar::Int(number) => Head::Int(number),
            Scalar::Float(number) => Head::Float(number),
            Scalar::Bool(flag) => Head::Bool(flag),
            Scalar::Head(head) => head,
            Scalar::Untouched => {
                return Err(Fatal::from(PyValueError::new_err(
                    "a leaf value read without its head",
                )));
            }
        };
        let (built, expected) = match node {
            Node::Int(check) => (Self::int_head(py, check, &head, None, context), "integer"),
            Node::Float(check) => (Self::float_head(py, check, &head, None, context), "number"),
            Node::Bool => (Self::bool_head(py, &head, context), "boolean"),
            Node::Str(check) => match &head {
                Head::Str(text) => (
                    Some(Self::str_text(py, check, text, None, context)),
                    "string",
                ),
                _ => (None, "string"),
            },
            _ => {
                return Err(Fatal::from(PyValueError::new_err(
                    "a scalar read for a node that is no leaf",
                )));
            }
        };
        // A scalar head is no container: there is nothing to skip.
        built.unwrap_or_else(|| context.error(ErrorCode::WrongType, expected, describe(&head)))
    }

    /// A boolean node's value from its head; `None` when the head is of the wrong kind.
    pub(super) fn bool_head<'py>(
        py: Python<'py>,
        head: &Head<'_>,
        context: &mut Context<'py>,
    ) -> Option<Built<'py>> {
        let flag = match head {
            Head::Bool(flag) => Some(*flag),
            Head::Str(text) if context.lenient => lenient_bool(text),
            _ => None,
        };
        flag.map(|flag| Ok(Some(PyBool::new(py, flag).to_owned().into_any())))
    }

    /// An integer node's value from its head (`original`: the object it was read from, if any);
    /// `None` when the head is of the wrong kind.
    pub(super) fn int_head<'py>(
        py: Python<'py>,
        check: &NumberCheck,
        head: &Head<'_>,
        original: Option<Bound<'py, PyAny>>,
        context: &mut Context<'py>,
    ) -> Option<Built<'py>> {
        let number = match head {
            Head::Int(number) => Number::I64(*number),
            Head::Float(number) if number.is_finite() && number.fract() == 0.0 => {
                Number::F64(*number)
            }
            Head::BigInt(digits) => {
                let approximate = digits.parse::<f64>().unwrap_or(f64::INFINITY);
                if let Err((code, expected)) = check.check(Number::F64(approximate)) {
                    return Some(context.error(code, expected, describe(head)));
                }
                return Some(big_int(py, digits).map(Some).map_err(Fatal::from));
            }
            Head::Str(text) if context.lenient => {
                lenient_number(text).filter(|number| number.is_integer())?
            }
            Head::Overflow { negative } => return Some(out_of_range(*negative, head, context)),
            _ => return None,
        };
        if let Err((code, expected)) = check.check(number) {
            return Some(context.error(code, expected, describe(head)));
        }
        let built = match number {
            Number::I64(value) => match original {
                Some(object) if matches!(head, Head::Int(_)) => Ok(object),
                _ => Ok(int_object(py, value)),
            },
            Number::U64(value) => {
                let Ok(object) = value.into_pyobject(py);
                Ok(object.into_any())
            }
            Number::F64(value) => {
                if value.abs() < 9.0e15 {
                    Ok(int_object(py, value as i64))
                } else {
                    big_int(py, &format!("{value:.0}"))
                }
            }
        };
        Some(built.map(Some).map_err(Fatal::from))
    }

    /// A number node's value from its head; `None` when the head is of the wrong kind.
    pub(super) fn float_head<'py>(
        py: Python<'py>,
        check: &NumberCheck,
        head: &Head<'_>,
        original: Option<Bound<'py, PyAny>>,
        context: &mut Context<'py>,
    ) -> Option<Built<'py>> {
        let number = match head {
            Head::Int(number) => Number::I64(*number),
            Head::Float(number) => Number::F64(*number),
            Head::BigInt(digits) => Number::F64(digits.parse::<f64>().ok()?),
            Head::Str(text) if context.lenient => lenient_number(text)?,
            Head::Overflow { negative } => return Some(out_of_range(*negative, head, context)),
            _ => return None,
        };
        if let Err((code, expected)) = check.check(number) {
            return Some(context.error(code, expected, describe(head)));
        }
        Some(Ok(Some(match original {
            Some(object) if matches!(head, Head::Float(_)) => object,
            _ => PyFloat::new(py, number.as_f64()).into_any(),
        })))
    }

    /// A string node's value from the text read (`original`: the object it was read from).
    pub(super) fn str_text<'py>(
        py: Python<'py>,
        check: &StringCheck,
        text: &str,
        original: Option<Bound<'py, PyAny>>,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        if let Err((code, expected)) = check.check_within(text, &mut context.budget) {
            return context.error(code, expected, describe_str(text));
        }
        Ok(Some(match original {
            Some(object) => object,
            None => PyString::new(py, text).into_any(),
        }))
    }
}
