//! Validating and building typed Python values in one walk over a [`Source`].
//!
//! One `impl Engine` per concern: the walk itself ([`Engine::run`] and the match over every
//! node kind) and the run's [`Context`] here; leaf values in `scalars`, arrays in `containers`,
//! unions in `unions`, records (dicts, classes, dataclasses, a function's arguments) in
//! `records`, and the string formats (dates, UUIDs, decimals) in `formats`.
use ferrotool_core::error::{ErrorCode, LineError, PathItem, describe_str};
use ferrotool_core::pattern::Budget;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use super::compile::{Compiled, Node};
use super::outcome::Fatal;
use super::source::{Head, Source};

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

// Declared after `wrong_kind!`, which they use.
mod containers;
mod formats;
mod records;
mod scalars;
mod unions;

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

fn is_container(head: &Head<'_>) -> bool {
    matches!(head, Head::Array | Head::Object)
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

    /// Validates and builds the next value of `source` as `node` says: each kind of node is
    /// read by the module of its kind.
    fn value<'v, 'py, S: Source<'py>>(
        &'v self,
        node: &'v Node,
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
        let py = source.py();
        match node {
            Node::Any => Self::any_value(source, context),
            Node::Null => Self::null_value(py, source, context),
            Node::Bool => Self::bool_value(py, source, context),
            Node::Int(check) => Self::int_value(py, check, source, context),
            Node::Float(check) => Self::float_value(py, check, source, context),
            Node::Str(check) => Self::str_value(py, check, source, context),
            Node::StrValue { value, convert } => {
                Self::format_value(py, *value, convert, source, context)
            }
            Node::Choice { values, expected } => {
                Self::choice_value(py, values, expected, source, context)
            }
            Node::List {
                items,
                container,
                min,
                max,
            } => self.list_value(items, *container, (*min, *max), source, context),
            Node::Tuple { items } => self.tuple_value(items, source, context),
            Node::Dict { values, min, max } => {
                self.dict_value(values, (*min, *max), source, context)
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
            } => Self::model_value(py, name, (validate_json, validate_python), source, context),
        }
    }

    /// Any value, built as the Python value the source holds.
    #[inline]
    fn any_value<'py, S: Source<'py>>(source: &mut S, context: &mut Context<'py>) -> Built<'py> {
        let remaining = context.max_depth.saturating_sub(context.depth);
        match source.to_python(remaining) {
            Ok(value) => Ok(Some(value)),
            Err(Fatal::Stop) => Err(context.too_deep()),
            Err(other) => Err(other),
        }
    }
}
