//! Records: objects read field by field into a dict, a class call, a dataclass built as its
//! `__init__` would, or a function's arguments; and the errors of a pydantic model.
use ferrotool_core::error::{ErrorCode, PathItem, describe_str};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes, PyDict, PyTuple, PyType};

use super::{Arguments, Built, Context, Engine, describe, is_container};
use crate::ffi::object::{new_instance, set_attribute};
use crate::typed::compile::{Build, FieldDefault, InitField, RecordNode};
use crate::typed::outcome::Fatal;
use crate::typed::source::{Shape, Source};

impl Engine {
    pub(super) fn record<'v, 'py, S: Source<'py>>(
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

    /// A pydantic model, validated by the model itself: from the raw JSON text when the source
    /// has it, else from the Python value.
    #[inline]
    pub(super) fn model_value<'py, S: Source<'py>>(
        py: Python<'py>,
        name: &str,
        (validate_json, validate_python): (&Py<PyAny>, &Py<PyAny>),
        source: &mut S,
        context: &mut Context<'py>,
    ) -> Built<'py> {
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
