//! Validating and building typed Python values in one walk over a [`Source`].
use ferrotool_core::checks::{NumberCheck, StringCheck};
use ferrotool_core::error::{ErrorCode, LineError, PathItem, describe_str};
use ferrotool_core::ir::{Container, StringValue};
use ferrotool_core::json::Number;
use ferrotool_core::pattern::Budget;
use pyo3::exceptions::{PyArithmeticError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyDict, PyFloat, PyFrozenSet, PyList, PySet, PyString, PyTuple, PyType,
};
use serde_json::Value;

use super::compile::{Build, Compiled, FieldDefault, InitField, Node, RecordNode, mask};
use crate::ffi::object::{new_instance, set_attribute};

use super::outcome::Fatal;
use super::source::{Head, Scalar, Shape, Source};
use crate::convert::big_int;
use ferrotool_core::duration::parse_duration;

/// The state of one validation run.
///
/// Errors are recorded without a path; each container adds its step (field, key, index) to the
/// errors its child recorded as the recursion unwinds, so valid input pays nothing for paths.
/// The steps are pushed innermost first: [`Context::into_errors`] puts them in order.
pub(crate) struct Context<'py> {
    pub(crate) errors: Vec<LineError>,
    /// The field values of the dataclass records being read, innermost last: a record takes
    /// one slot per field above the slots of the records around it, and frees them when done.
    /// An array's item values wait here the same way until its container is built.
    values: Vec<Option<Bound<'py, PyAny>>>,
    /// Set for a run that reads a function's arguments to call it: the root record is built
    /// as `(args, kwargs)`, its first this-many present fields passed by position.
    pub(crate) call_args: Option<usize>,
    /// The arguments read for that call, once the root record is built.
    pub(crate) arguments: Option<Arguments<'py>>,
    max_errors: usize,
    max_depth: u16,
    depth: u16,
    lenient: bool,
    /// The run's backtracking budget, spent only by `Param(pattern=)` patterns with lookaround
    /// or backreferences: once spent, every further such match fails at once.
    budget: Budget,
}

/// The field-value slots reserved up front: enough for a few nested records of common width.
const VALUE_SLOTS: usize = 16;

/// A call's arguments: the positional ones, and the keyword ones (`None` when there are none).
pub(crate) type Arguments<'py> = (Bound<'py, PyTuple>, Option<Bound<'py, PyDict>>);

type Built<'py> = Result<Option<Bound<'py, PyAny>>, Fatal>;
/// Where an array's values start on [`Context::values`] and its item count, or `None` when
/// the value was not an array.
type Items = Result<Option<(usize, usize)>, Fatal>;

impl<'py> Context<'py> {
    pub(crate) fn new(max_errors: usize, max_depth: u16, lenient: bool) -> Self {
        Self {
            errors: Vec::new(),
            values: Vec::with_capacity(VALUE_SLOTS),
            call_args: None,
            arguments: None,
            max_errors: max_errors.max(1),
            max_depth,
            depth: 0,
            lenient,
            budget: Budget::new(),
        }
    }

    /// Adds `step` to the path of every error recorded since `mark` (see the type's notes).
    fn under(&mut self, mark: usize, step: impl Fn() -> PathItem) {
        if let Some(errors) = self.errors.get_mut(mark..) {
            for error in errors {
                error.path.push(step());
            }
        }
    }

    /// The errors found, their paths in order, outermost step first.
    pub(crate) fn into_errors(self) -> Vec<LineError> {
        let mut errors = self.errors;
        for error in &mut errors {
            error.path.reverse();
        }
        errors
    }

    /// Takes the values left on `values` from `base` up (an array's items, each present).
    fn items(
        &mut self,
        py: Python<'py>,
        base: usize,
    ) -> impl ExactSizeIterator<Item = Bound<'py, PyAny>> + '_ {
        let start = base.min(self.values.len());
        self.values
            .drain(start..)
            .map(move |value| value.unwrap_or_else(|| py.None().into_bound(py)))
    }

    /// Records an error here; stops the run once `max_errors` are collected.
    pub(crate) fn error(
        &mut self,
        code: ErrorCode,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Built<'py> {
        let error = LineError::new(code, Vec::new(), expected.into(), found.into());
        self.errors.push(error);
        if self.errors.len() >= self.max_errors {
            Err(Fatal::Stop)
        } else {
            Ok(None)
        }
    }

    fn too_deep(&mut self) -> Fatal {
        let error = LineError::new(
            ErrorCode::NestingTooDeep,
            Vec::new(),
            format!("at most {} levels of nesting", self.max_depth),
            "deeper nesting",
        );
        self.errors.push(error);
        Fatal::Stop
    }

    fn enter(&mut self) -> Result<(), Fatal> {
        if self.depth >= self.max_depth {
            return Err(self.too_deep());
        }
        self.depth += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

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

/// A short rendering of a value's head for messages.
fn describe(head: &Head<'_>) -> String {
    match head {
        Head::Null => "null".to_owned(),
        Head::Bool(flag) => format!("boolean {flag}"),
        Head::Int(number) => format!("integer {number}"),
        Head::BigInt(digits) => format!("integer {digits}"),
        Head::Float(number) => format!("number {number}"),
        Head::Overflow { negative: false } => "number above 1.7976931348623157e308".to_owned(),
        Head::Overflow { negative: true } => "number below -1.7976931348623157e308".to_owned(),
        Head::Str(text) => describe_str(text),
        Head::Array => "array".to_owned(),
        Head::Object => "object".to_owned(),
        Head::Other(name) => format!("Python {name}"),
    }
}

const fn shape_bit(shape: Shape) -> u8 {
    match shape {
        Shape::Null => mask::NULL,
        Shape::Bool => mask::BOOL,
        Shape::Number => mask::NUMBER,
        Shape::String => mask::STRING,
        Shape::Array => mask::ARRAY,
        Shape::Object => mask::OBJECT,
        Shape::Other => 0,
    }
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

fn is_container(head: &Head<'_>) -> bool {
    matches!(head, Head::Array | Head::Object)
}

/// The tail of every node's arm for a value of the wrong kind: the `$code` error (`$expected`
/// this, found what `$head` shows), after passing over the rest of a container. A macro, not a
/// function: the head borrows the source, so what it shows is taken before the source reads
/// on, and each arm compiles to the code it held written out (a helper function measured 0.15%
/// to 0.4% more instructions per call on the valid path of S4, from inlining and layout).
macro_rules! wrong_kind {
    ($source:ident, $context:ident, $head:expr, $code:expr, $expected:expr) => {{
        let (found, container) = (describe(&$head), is_container(&$head));
        Self::mismatch($source, $context, $code, $expected, found, container)
    }};
}

/// A compiled typed validator.
pub(crate) struct Engine {
    pub(crate) compiled: Compiled,
}

impl Engine {
    /// Validates the next value of `source` against the root and builds it.
    pub(crate) fn run<'v, 'py, S: Source<'py>>(
        &'v self,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        self.value(&self.compiled.root, source, context)
    }

    fn mismatch<'v, 'py, S: Source<'py>>(
        source: &mut S,
        context: &mut Context<'py>,
        code: ErrorCode,
        expected: &str,
        found: String,
        container: bool,
    ) -> Built<'py> {
        if container {
            source.skip()?;
        }
        context.error(code, expected, found)
    }

    /// Reads `node`'s value as a container's child: a leaf node whose value is exactly of its
    /// kind is read straight from the source ([`Source::scalar`]) and built here; anything else
    /// goes the general way ([`Self::value`]), with the same outcome and errors.
    #[inline]
    fn child<'v, 'py, S: Source<'py>>(
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
    fn bool_head<'py>(
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
    fn int_head<'py>(
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
    fn float_head<'py>(
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
    fn str_text<'py>(
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

    fn value<'v, 'py, S: Source<'py>>(
        &'v self,
        node: &'v Node,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let py = source.py();
        match node {
            Node::Any => {
                let remaining = context.max_depth.saturating_sub(context.depth);
                match source.to_python(remaining) {
                    Ok(value) => Ok(Some(value)),
                    Err(Fatal::Stop) => Err(context.too_deep()),
                    Err(other) => Err(other),
                }
            }
            Node::Null => {
                let head = source.head()?;
                if matches!(head, Head::Null) {
                    return Ok(Some(py.None().into_bound(py)));
                }
                wrong_kind!(source, context, head, ErrorCode::WrongType, "null")
            }
            Node::Bool => {
                let head = source.head()?;
                if let Some(built) = Self::bool_head(py, &head, context) {
                    return built;
                }
                wrong_kind!(source, context, head, ErrorCode::WrongType, "boolean")
            }
            Node::Int(check) => {
                let original = source.original();
                let head = source.head()?;
                if let Some(built) = Self::int_head(py, check, &head, original, context) {
                    return built;
                }
                wrong_kind!(source, context, head, ErrorCode::WrongType, "integer")
            }
            Node::Float(check) => {
                let original = source.original();
                let head = source.head()?;
                if let Some(built) = Self::float_head(py, check, &head, original, context) {
                    return built;
                }
                wrong_kind!(source, context, head, ErrorCode::WrongType, "number")
            }
            Node::Str(check) => {
                let original = source.original();
                let head = source.head()?;
                let Head::Str(text) = &head else {
                    return wrong_kind!(source, context, head, ErrorCode::WrongType, "string");
                };
                Self::str_text(py, check, text, original, context)
            }
            Node::StrValue { value, convert } => {
                let head = source.head()?;
                let Head::Str(text) = &head else {
                    return wrong_kind!(source, context, head, ErrorCode::WrongType, "string");
                };
                match string_value(py, *value, convert.bind(py), text) {
                    Ok(Some(built)) => Ok(Some(built)),
                    Ok(None) => context.error(
                        ErrorCode::InvalidFormat,
                        expected_format(*value),
                        describe(&head),
                    ),
                    Err(error) => Err(Fatal::from(error)),
                }
            }
            Node::Choice { values, expected } => {
                let head = source.head()?;
                if let Some((_, object)) = values
                    .iter()
                    .find(|(value, _)| choice_matches(&head, value))
                {
                    return Ok(Some(object.bind(py).clone()));
                }
                wrong_kind!(source, context, head, ErrorCode::NotInEnum, expected)
            }
            Node::List {
                items,
                container,
                min,
                max,
            } => {
                let mark = context.errors.len();
                let Some((base, count)) =
                    Self::array_items(source, context, &mut |source, context, _| {
                        self.child(items, source, context)
                    })?
                else {
                    return Ok(None);
                };
                // The container is built straight from the item values, unless an item failed.
                let built = if context.errors.len() > mark {
                    None
                } else {
                    let built = context.items(py, base);
                    Some(match container {
                        Container::List => PyList::new(py, built).map(Bound::into_any),
                        Container::Tuple => PyTuple::new(py, built).map(Bound::into_any),
                        Container::Set => PySet::new(py, built).map(Bound::into_any),
                        Container::Frozenset => PyFrozenSet::new(py, built).map(Bound::into_any),
                    })
                };
                context.values.truncate(base);
                Self::check_size(
                    context,
                    count,
                    *min,
                    *max,
                    ErrorCode::ArrayTooShort,
                    ErrorCode::ArrayTooLong,
                    "items",
                )?;
                let value = match built {
                    Some(value) if context.errors.len() == mark => value?,
                    _ => return Ok(None),
                };
                if container.unique() && value.len()? != count {
                    return context.error(
                        ErrorCode::DuplicateItems,
                        "unique items",
                        format!("array of {count} items with duplicates"),
                    );
                }
                Ok(Some(value))
            }
            Node::Tuple { items } => {
                let mark = context.errors.len();
                let Some((base, count)) =
                    Self::array_items(source, context, &mut |source, context, index| {
                        if let Some(node) = items.get(index) {
                            return self.value(node, source, context);
                        }
                        source.skip()?;
                        let expected = format!("exactly {} items", items.len());
                        context.error(ErrorCode::UnexpectedItem, expected, "an extra item")
                    })?
                else {
                    return Ok(None);
                };
                let built = if context.errors.len() > mark {
                    None
                } else {
                    Some(PyTuple::new(py, context.items(py, base)))
                };
                context.values.truncate(base);
                if count < items.len() {
                    context.error(
                        ErrorCode::ArrayTooShort,
                        format!("exactly {} items", items.len()),
                        format!("{count} items"),
                    )?;
                }
                match built {
                    Some(value) if context.errors.len() == mark => Ok(Some(value?.into_any())),
                    _ => Ok(None),
                }
            }
            Node::Dict { values, min, max } => {
                let head = source.head()?;
                if !matches!(head, Head::Object) {
                    return wrong_kind!(source, context, head, ErrorCode::WrongType, "object");
                }
                context.enter()?;
                let mark = context.errors.len();
                let dict = PyDict::new(py);
                let mut count = 0usize;
                source.entries(&mut |key| PyString::new(py, key), &mut |source, key| {
                    count += 1;
                    let before = context.errors.len();
                    let item = self.value(values, source, context);
                    context.under(before, || PathItem::Key(key.to_string_lossy().into()));
                    if let Some(item) = item? {
                        dict.set_item(key, item)?;
                    }
                    Ok(())
                })?;
                context.leave();
                Self::check_size(
                    context,
                    count,
                    *min,
                    *max,
                    ErrorCode::TooFewProperties,
                    ErrorCode::TooManyProperties,
                    "properties",
                )?;
                if context.errors.len() > mark {
                    return Ok(None);
                }
                Ok(Some(dict.into_any()))
            }
            Node::Union { variants, expected } => self.union(variants, expected, source, context),
            Node::Record(index) => match self.compiled.records.get(*index) {
                Some(record) => self.record(record, source, context),
                None => Err(Fatal::from(PyValueError::new_err(
                    "dangling record reference",
                ))),
            },
            Node::Model {
                name,
                validate_json,
                validate_python,
            } => {
                let result = if let Some(raw) = source.raw()? {
                    validate_json.bind(py).call1((PyBytes::new(py, raw),))
                } else {
                    let remaining = context.max_depth.saturating_sub(context.depth);
                    let value = match source.to_python(remaining) {
                        Ok(value) => value,
                        Err(Fatal::Stop) => return Err(context.too_deep()),
                        Err(other) => return Err(other),
                    };
                    validate_python.bind(py).call1((value,))
                };
                match result {
                    Ok(value) => Ok(Some(value)),
                    Err(error) => Self::model_errors(py, name, &error, context).map(|()| None),
                }
            }
        }
    }

    /// Reads an array, each item with `item` (given its index, its path pushed), or returns
    /// `None` when the value is not an array (recorded). The values built are left on
    /// `context.values` from the position returned up, for the caller to take (see
    /// [`Context::items`]) and free; the item count comes with it.
    fn array_items<'v, 'py, S: Source<'py>>(
        source: &mut S,
        context: &mut Context<'py>,
        item: &mut impl FnMut(&mut S, &mut Context<'py>, usize) -> Built<'py>,
    ) -> Items {
        let head = source.head()?;
        if !matches!(head, Head::Array) {
            wrong_kind!(source, context, head, ErrorCode::WrongType, "array")?;
            return Ok(None);
        }
        context.enter()?;
        let base = context.values.len();
        let mut count = 0usize;
        let read = source.items(&mut |source, index| {
            count += 1;
            let before = context.errors.len();
            let value = item(source, context, index);
            context.under(before, || PathItem::Index(index));
            if let Some(value) = value? {
                context.values.push(Some(value));
            }
            Ok(())
        });
        if let Err(fatal) = read {
            context.values.truncate(base);
            return Err(fatal);
        }
        context.leave();
        Ok(Some((base, count)))
    }

    fn check_size(
        context: &mut Context<'_>,
        count: usize,
        min: Option<u64>,
        max: Option<u64>,
        too_short: ErrorCode,
        too_long: ErrorCode,
        noun: &str,
    ) -> Result<(), Fatal> {
        let count_u64 = count as u64;
        if let Some(min) = min
            && count_u64 < min
        {
            context.error(
                too_short,
                format!("at least {min} {noun}"),
                format!("{count} {noun}"),
            )?;
        }
        if let Some(max) = max
            && count_u64 > max
        {
            context.error(
                too_long,
                format!("at most {max} {noun}"),
                format!("{count} {noun}"),
            )?;
        }
        Ok(())
    }

    fn union<'v, 'py, S: Source<'py>>(
        &'v self,
        variants: &'v [(u8, Node)],
        expected: &str,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let py = source.py();
        let shape = source.shape()?;
        // Leniently, a string may also become a number or a boolean.
        let bit = if context.lenient && shape == Shape::String {
            mask::STRING | mask::NUMBER | mask::BOOL
        } else {
            shape_bit(shape)
        };
        let mut candidates = variants
            .iter()
            .filter(|(variant_mask, _)| variant_mask & bit != 0);
        let first = candidates.next();
        let second = candidates.next();
        match (first, second) {
            (Some((_, only)), None) => return self.value(only, source, context),
            (None, _) => {
                let head = source.head()?;
                return wrong_kind!(source, context, head, ErrorCode::NoMatch, expected);
            }
            _ => {}
        }
        let captured = source.capture()?;
        let saved_max = context.max_errors;
        for (variant_mask, variant) in variants {
            if variant_mask & bit == 0 {
                continue;
            }
            let mark = context.errors.len();
            // A trial stops at its first error; its errors are discarded.
            context.max_errors = mark + 1;
            let mut tree = captured.tree(py);
            let depth = context.depth;
            let outcome = self.value(variant, &mut tree, context);
            context.depth = depth;
            context.max_errors = saved_max;
            let failed = context.errors.len() > mark;
            context.errors.truncate(mark);
            match outcome {
                Ok(Some(value)) if !failed => return Ok(Some(value)),
                Ok(_) | Err(Fatal::Stop) => {}
                Err(other) => return Err(other),
            }
        }
        let found = describe(&captured.tree(py).head()?);
        context.error(ErrorCode::NoMatch, expected, found)
    }

    fn record<'v, 'py, S: Source<'py>>(
        &'v self,
        record: &'v RecordNode,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let base = context.values.len();
        // Frees this record's value slots on every path, early returns included. (Taken apart
        // and put back together, the outcome stays in registers across the truncation.)
        match self.record_at(record, source, context, base) {
            Ok(value) => {
                context.values.truncate(base);
                Ok(value)
            }
            Err(fatal) => {
                context.values.truncate(base);
                Err(fatal)
            }
        }
    }

    /// Reports a value that is not the object a record reads.
    #[cold]
    #[inline(never)]
    fn not_object<'py, S: Source<'py>>(source: &mut S, context: &mut Context<'py>) -> Built<'py> {
        let head = source.head()?;
        wrong_kind!(source, context, head, ErrorCode::WrongType, "object")
    }

    /// Reads and builds a record; a dataclass's field values go to `context.values[base..]`.
    fn record_at<'v, 'py, S: Source<'py>>(
        &'v self,
        record: &'v RecordNode,
        source: &mut S,
        context: &mut Context<'py>,
        base: usize,
    ) -> Built<'py> {
        let py = source.py();
        // The shape alone tells an object (its head is read only to report anything else).
        if source.shape()? != Shape::Object {
            return Self::not_object(source, context);
        }
        context.enter()?;
        let mark = context.errors.len();
        // A dict is filled as the fields arrive; a dataclass's values wait in their slots until
        // the instance is built, in declaration order.
        // The arguments of a call are taken by the root record alone.
        let call_args = context.call_args.take();
        let kwargs = match &record.build {
            Build::Dataclass { .. } => None,
            _ if call_args.is_some() => None,
            _ => Some(PyDict::new(py)),
        };
        if kwargs.is_none() {
            context.values.resize(base + record.fields.len(), None);
        }
        let mut seen = Seen::new(record.fields.len());
        // Keys usually arrive in declaration order: the field after the last one matched is
        // tried first (see `Source::fields`).
        source.fields(record, &mut |source, key| match key {
            Ok(index) => {
                let Some(field) = record.fields.get(index) else {
                    return Ok(());
                };
                seen.insert(index);
                let before = context.errors.len();
                let value = self.child(&field.node, source, context);
                context.under(before, || PathItem::Key(field.name.as_ref().into()));
                if let Some(value) = value? {
                    match &kwargs {
                        Some(kwargs) => kwargs.set_item(field.key.bind(py), value)?,
                        None => {
                            if let Some(slot) = context.values.get_mut(base + index) {
                                *slot = Some(value);
                            }
                        }
                    }
                }
                Ok(())
            }
            Err(unknown) => {
                source.skip()?;
                if record.closed {
                    let found = format!("property {unknown:?}");
                    let before = context.errors.len();
                    let result =
                        context.error(ErrorCode::UnexpectedProperty, record.allowed.clone(), found);
                    context.under(before, || PathItem::Key(unknown.clone()));
                    result?;
                }
                Ok(())
            }
        })?;
        context.leave();
        if record.required_count > 0 && !seen.has_all(record.required_mask) {
            for (index, field) in record.fields.iter().enumerate() {
                if field.required && !seen.contains(index) {
                    let expected = describe_str(&field.name).replacen("string", "property", 1);
                    context.error(ErrorCode::MissingProperty, expected, "object without it")?;
                }
            }
        }
        if context.errors.len() > mark {
            return Ok(None);
        }
        if let Some(positional) = call_args {
            let arguments = Self::call_args(py, record, positional, &mut context.values[base..])?;
            // The run's value is the positional arguments; the whole call waits in the context.
            let args = arguments.0.clone().into_any();
            context.arguments = Some(arguments);
            return Ok(Some(args));
        }
        let built = match (&record.build, kwargs) {
            (Build::Dict, Some(kwargs)) => return Ok(Some(kwargs.into_any())),
            (Build::Call(class), Some(kwargs)) => class.bind(py).call((), Some(&kwargs)),
            (
                Build::Dataclass {
                    class,
                    fields,
                    post_init,
                },
                None,
            ) => Self::dataclass(
                class.bind(py),
                fields,
                *post_init,
                &mut context.values[base..],
            ),
            _ => Err(PyValueError::new_err("record build without its fields")),
        };
        match built {
            Ok(value) => Ok(Some(value)),
            // What the class's own code rejects (`__post_init__`, a default factory, a
            // descriptor) is an invalid value, as when calling the class would raise it.
            Err(error)
                if error.is_instance_of::<PyValueError>(py)
                    || error.is_instance_of::<PyTypeError>(py) =>
            {
                context.error(
                    ErrorCode::InvalidValue,
                    format!("a valid {}", record.name),
                    error.to_string(),
                )
            }
            Err(error) => Err(Fatal::from(error)),
        }
    }

    /// A function's arguments from its record's field values (taken from `values`): the
    /// leading present fields, up to `positional` of them, in `args` and the rest by name in
    /// `kwargs` (`None` when empty). Calling with positional arguments costs Python less than
    /// matching keywords to parameters.
    fn call_args<'py>(
        py: Python<'py>,
        record: &RecordNode,
        positional: usize,
        values: &mut [Option<Bound<'py, PyAny>>],
    ) -> PyResult<Arguments<'py>> {
        let leading = values
            .iter()
            .take(positional)
            .take_while(|value| value.is_some())
            .count();
        let (leading_values, rest_values) = values.split_at_mut(leading.min(values.len()));
        // Every slot taken here holds a value (counted above).
        let args = PyTuple::new(
            py,
            leading_values
                .iter_mut()
                .map(|value| value.take().unwrap_or_else(|| py.None().into_bound(py))),
        )?;
        let mut kwargs: Option<Bound<'py, PyDict>> = None;
        let rest_fields = record.fields.iter().skip(leading);
        for (value, field) in rest_values.iter_mut().zip(rest_fields) {
            if let Some(value) = value.take() {
                kwargs
                    .get_or_insert_with(|| PyDict::new(py))
                    .set_item(field.key.bind(py), value)?;
            }
        }
        Ok((args, kwargs))
    }

    /// Builds a plain dataclass from its field values (taken from `values`), as its generated
    /// `__init__` would.
    fn dataclass<'py>(
        class: &Bound<'py, PyType>,
        fields: &[InitField],
        post_init: bool,
        values: &mut [Option<Bound<'py, PyAny>>],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = class.py();
        let instance = new_instance(class)?;
        for field in fields {
            let key = field.key.bind(py);
            let given = values.get_mut(field.field).and_then(Option::take);
            match (given, &field.default) {
                (Some(value), _) => set_attribute(&instance, key, &value)?,
                (None, Some(FieldDefault::Value(value))) => {
                    set_attribute(&instance, key, value.bind(py))?;
                }
                (None, Some(FieldDefault::Factory(factory))) => {
                    set_attribute(&instance, key, &factory.bind(py).call0()?)?;
                }
                // A missing required field was reported before the build.
                (None, None) => {
                    return Err(PyValueError::new_err(format!(
                        "missing value for field {key}"
                    )));
                }
            }
        }
        if post_init {
            instance.call_method0(pyo3::intern!(py, "__post_init__"))?;
        }
        Ok(instance)
    }

    /// Turns a pydantic `ValidationError` into line errors under the current path.
    fn model_errors<'py>(
        py: Python<'py>,
        name: &str,
        error: &PyErr,
        context: &mut Context<'py>,
    ) -> Result<(), Fatal> {
        let value = error.value(py);
        let options = [("include_url", false)].into_py_dict(py)?;
        let Ok(details) = value.call_method("errors", (), Some(&options)) else {
            return Err(Fatal::from(error.clone_ref(py)));
        };
        for detail in details.try_iter()? {
            let detail = detail?;
            let kind: String = detail.get_item("type")?.extract()?;
            let message: String = detail.get_item("msg")?.extract()?;
            // The model's own path inside it, innermost step first like every error path here.
            let mut steps = Vec::new();
            for part in detail.get_item("loc")?.try_iter()? {
                let part = part?;
                steps.push(match part.extract::<usize>() {
                    Ok(index) => PathItem::Index(index),
                    Err(_) => PathItem::Key(part.str()?.to_string_lossy().into()),
                });
            }
            steps.reverse();
            let code = match kind.as_str() {
                "missing" => ErrorCode::MissingProperty,
                "extra_forbidden" => ErrorCode::UnexpectedProperty,
                kind if kind.ends_with("_type") || kind.ends_with("_parsing") => {
                    ErrorCode::WrongType
                }
                _ => ErrorCode::InvalidValue,
            };
            let found = detail
                .get_item("input")
                .ok()
                .and_then(|input| input.get_type().name().ok().map(|name| name.to_string()))
                .unwrap_or_default();
            let before = context.errors.len();
            let result = context.error(code, format!("{message} ({name})"), found);
            if let Some(error) = context.errors.get_mut(before) {
                error.path = steps;
            }
            result?;
        }
        Ok(())
    }
}

use pyo3::types::IntoPyDict;

/// Which fields of a record were present: a bitmask, or a vector for very wide records.
enum Seen {
    Bits(u64),
    Wide(Vec<bool>),
}

impl Seen {
    fn new(count: usize) -> Self {
        if count <= 64 {
            Self::Bits(0)
        } else {
            Self::Wide(vec![false; count])
        }
    }

    fn insert(&mut self, index: usize) {
        match self {
            Self::Bits(bits) => *bits |= 1u64 << index,
            Self::Wide(flags) => {
                if let Some(flag) = flags.get_mut(index) {
                    *flag = true;
                }
            }
        }
    }

    /// Whether every field of `mask` was seen; always `false` for a wide record (whose fields
    /// are then checked one by one).
    fn has_all(&self, mask: u64) -> bool {
        match self {
            Self::Bits(bits) => bits & mask == mask,
            Self::Wide(_) => false,
        }
    }

    fn contains(&self, index: usize) -> bool {
        match self {
            Self::Bits(bits) => bits & (1u64 << index) != 0,
            Self::Wide(flags) => flags.get(index).copied().unwrap_or(false),
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
