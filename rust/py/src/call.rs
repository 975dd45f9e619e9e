//! The direct call: the call pipeline of `ferrotool._execution.pipeline`, specialised for a
//! plain function tool and run without a Python frame.
//!
//! A plain tool is a function tool that needs no step besides parse, invoke and convert: no
//! permission check, external suspension, presets, injected parameters, converter, timeout or
//! retries (`_is_direct` in the pipeline). Whether a call runs so is decided once, in Python
//! (`ToolView.route`); the Python side hands the answers for plain tools here as a dict. For
//! those,
//! `DirectCall(call)` returns a `PendingCall` ([`crate::ffi::pending`]), an awaitable that does
//! the whole call when first resumed: it reads the call's raw JSON arguments, validates them into
//! keyword arguments in Rust, calls the function (driving its coroutine for an `async def`) and
//! builds the `ToolResultBlock`, all without a Python frame of its own.
//!
//! `ToolCaller` ([`crate::caller`]) hands plain tools' calls here.
//!
//! Invalid arguments give their error result here too (logged by `outcomes.report_invalid`).
//! Whatever is not the common case goes back to the pipeline's own steps: arguments whose only
//! errors are explicit `null`s through `retry` (validated again without them: the arguments, or
//! the error result), a tool that raised through `failed`, and return values other than `str`,
//! `int` and `None` through `convert`. A
//! cancellation (any exception that is not an `Exception`) is not a result: it goes on to the
//! caller. `run(call)` is the same call for a sync tool, run to its result without an awaitable.
//!
//! Everything here is safe code; the awaitable's C type and the named tuples' allocation are in
//! [`crate::ffi`].
use pyo3::exceptions::{PyException, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple, PyType};

use crate::errors::{error_records, invalid_arguments_text, may_hold_nulls, validation_error};
use crate::ffi::pending::{self, PendingType, Plan, Started};
use crate::ffi::record::{RecordType, is_exact_int, is_exact_str};
use crate::typed::outcome::Invalid;
use crate::typed::{TypedValidator, input_bytes};

/// The compiled call of one plain function tool; calling it with a `ToolUseBlock` gives the
/// `PendingCall` that runs it.
#[pyclass(module = "ferrotool._core", frozen)]
pub(crate) struct DirectCall {
    validator: Py<TypedValidator>,
    function: Py<PyAny>,
    awaits: bool,
    retry: Py<PyAny>,
    failed: Py<PyAny>,
    convert: Py<PyAny>,
    /// The tool's output schema wraps its value: the structured value of a result built here
    /// is `{"result": <value>}` (`convert` wraps the others).
    wraps: bool,
    values: &'static ResultValues,
}

/// The Python values every result is built from, read once from `ferrotool`'s own modules.
struct ResultValues {
    result_block: RecordType,
    text_block: RecordType,
    success: Py<PyAny>,
    error: Py<PyAny>,
    empty: Py<PyAny>,
    proxy: Py<PyAny>,
    done: Py<PyString>,
    /// `outcomes.report_invalid`: logs an invalid-arguments result built here.
    report_invalid: Py<PyAny>,
}

static RESULT_VALUES: PyOnceLock<ResultValues> = PyOnceLock::new();

impl ResultValues {
    fn get(py: Python<'_>) -> PyResult<&'static Self> {
        RESULT_VALUES.get_or_try_init(py, || {
            let calls = py.import("ferrotool._values.calls")?;
            let content = py.import("ferrotool._values.content")?;
            let outcomes = py.import("ferrotool._execution.outcomes")?;
            let result_block = calls.getattr("ToolResultBlock")?.cast_into::<PyType>()?;
            let text_block = content.getattr("TextBlock")?.cast_into::<PyType>()?;
            Ok(Self {
                result_block: RecordType::new(&result_block, 6)?,
                text_block: RecordType::new(&text_block, 1)?,
                success: outcomes.getattr("SUCCESS")?.unbind(),
                error: outcomes.getattr("ERROR")?.unbind(),
                empty: outcomes.getattr("EMPTY")?.unbind(),
                proxy: py.import("types")?.getattr("MappingProxyType")?.unbind(),
                done: outcomes.getattr("DONE")?.cast_into::<PyString>()?.unbind(),
                report_invalid: outcomes.getattr("report_invalid")?.unbind(),
            })
        })
    }
}

/// A field of a tool call, by its position in `ToolUseBlock`.
#[derive(Clone, Copy)]
pub(crate) enum Field {
    Id = 0,
    Name = 1,
    Arguments = 2,
}

static USE_BLOCK: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A field of `call`: read from the named tuple's items when `call` is exactly a
/// `ToolUseBlock`, by attribute from anything else; a `TypeError` saying what to pass when
/// `call` is no call at all (see [`misuse`]).
pub(crate) fn field<'py>(call: &Bound<'py, PyAny>, which: Field) -> PyResult<Bound<'py, PyAny>> {
    let py = call.py();
    let class = USE_BLOCK.import(py, "ferrotool._values.calls", "ToolUseBlock")?;
    if call.get_type_ptr() == class.as_type_ptr()
        && let Ok(tuple) = call.cast::<PyTuple>()
    {
        return tuple.get_item(which as usize);
    }
    let name = match which {
        Field::Id => pyo3::intern!(py, "id"),
        Field::Name => pyo3::intern!(py, "name"),
        Field::Arguments => pyo3::intern!(py, "arguments"),
    };
    call.getattr(name).map_err(|error| misuse(call, error))
}

/// The error to raise when reading `call` failed with `error`: the `TypeError` saying what to
/// pass when `call` is no call at all (`ferrotool._values.calls.misused`: say, a tool's name
/// where the `ToolUseBlock` goes), else `error` itself. Only an error path comes here.
#[cold]
pub(crate) fn misuse(call: &Bound<'_, PyAny>, error: PyErr) -> PyErr {
    let py = call.py();
    let found = py
        .import(pyo3::intern!(py, "ferrotool._values.calls"))
        .and_then(|calls| calls.call_method1(pyo3::intern!(py, "misused"), ("call_tool", call)));
    match found {
        Ok(found) if found.is_none() => error,
        Ok(found) => PyErr::from_value(found),
        Err(failed) => failed,
    }
}

/// The error for a context passed to `entry` that is not one (a dict of its fields, say), else
/// `error` as it is.
#[cold]
pub(crate) fn misused_context(entry: &str, context: &Bound<'_, PyAny>, error: PyErr) -> PyErr {
    let py = context.py();
    let found = py
        .import(pyo3::intern!(py, "ferrotool._values.context"))
        .and_then(|module| {
            module.call_method1(pyo3::intern!(py, "misused_context"), (entry, context))
        });
    match found {
        Ok(found) if found.is_none() => error,
        Ok(found) => PyErr::from_value(found),
        Err(failed) => failed,
    }
}

impl DirectCall {
    /// A one-text result for `call`.
    fn block<'py>(
        &self,
        call: &Bound<'py, PyAny>,
        text: &Bound<'py, PyAny>,
        state: &Bound<'py, PyAny>,
        metadata: &Bound<'py, PyAny>,
        structured: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = call.py();
        let output = PyTuple::new(py, [self.values.text_block.build(py, &[text])?])?;
        self.values.result_block.build(
            py,
            &[
                &field(call, Field::Id)?,
                &field(call, Field::Name)?,
                output.as_any(),
                state,
                metadata,
                structured,
            ],
        )
    }

    /// The error result for arguments that did not validate: every error, as text for the
    /// model and as records in the metadata (``errors``); logged as the pipeline logs it
    /// (`outcomes.report_invalid`).
    fn invalid_result<'py>(
        &self,
        call: &Bound<'py, PyAny>,
        errors: &[ferrotool_core::error::LineError],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = call.py();
        let name = field(call, Field::Name)?;
        let text = invalid_arguments_text(name.cast::<PyString>()?.to_str()?, errors);
        let metadata = PyDict::new(py);
        metadata.set_item(pyo3::intern!(py, "errors"), error_records(py, errors)?)?;
        let result = self.block(
            call,
            PyString::new(py, &text).as_any(),
            self.values.error.bind(py),
            &self.values.proxy.bind(py).call1((metadata,))?,
            &py.None().into_bound(py),
        )?;
        self.values.report_invalid.bind(py).call1((result,))
    }
}

impl Plan for DirectCall {
    fn pending_type() -> &'static PendingType {
        static TYPE: PendingType = PendingType::new();
        &TYPE
    }

    /// Validates the call's arguments and calls the function.
    fn start<'py>(&self, call: &Bound<'py, PyAny>) -> PyResult<Started<'py>> {
        let py = call.py();
        let mut raw = field(call, Field::Arguments)?;
        if is_empty_text(&raw)? {
            raw = pyo3::intern!(py, "{}").clone().into_any();
        }
        let (args, kwargs) = match self.validator.get().validate_args_raw(py, &raw) {
            Ok(arguments) => arguments,
            Err(Invalid::Lines(errors))
                if !may_hold_nulls(&errors, input_bytes(&raw).unwrap_or_default()) =>
            {
                return Ok(Started::Finished(self.invalid_result(call, &errors)?));
            }
            Err(Invalid::Lines(errors)) => {
                // The arguments hold a `null`: the pipeline validates again with the nulls at
                // optional properties read as left out, giving the arguments or the error result.
                let error = validation_error(py, errors).into_value(py);
                match self
                    .retry
                    .bind(py)
                    .call1((call, error))?
                    .cast_into::<PyDict>()
                {
                    Ok(kwargs) => (PyTuple::empty(py), Some(kwargs)),
                    Err(result) => return Ok(Started::Finished(result.into_inner())),
                }
            }
            Err(Invalid::Python(error)) => return Err(error),
        };
        let called = self.function.bind(py).call(args, kwargs.as_ref());
        if self.awaits {
            return self.awaiting(call, called);
        }
        match called {
            Ok(value) => Ok(Started::Finished(self.result(call, value)?)),
            Err(error) => Ok(Started::Finished(self.failed(call, error)?)),
        }
    }

    /// The result of a call whose function returned `value`.
    fn result<'py>(
        &self,
        call: &Bound<'py, PyAny>,
        value: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = call.py();
        let text = if is_exact_str(&value) {
            value.clone()
        } else if is_exact_int(&value)
            && let Ok(text) = value.str()
        {
            // An int too long for `str()` (CPython's digit limit) goes to `convert` below.
            text.into_any()
        } else if value.is_none() {
            self.values.done.bind(py).clone().into_any()
        } else {
            return match self.convert.bind(py).call1((call, value)) {
                Ok(result) => Ok(result),
                Err(error) => self.failed(call, error),
            };
        };
        let structured = if self.wraps {
            let wrapped = PyDict::new(py);
            wrapped.set_item(pyo3::intern!(py, "result"), value)?;
            wrapped.into_any()
        } else if is_exact_str(&value) {
            py.None().into_bound(py)
        } else {
            value
        };
        self.block(
            call,
            &text,
            self.values.success.bind(py),
            self.values.empty.bind(py),
            &structured,
        )
    }

    /// The result of a call whose tool raised `error`; a cancellation (or an interpreter exit)
    /// is not a result: it goes on.
    fn failed<'py>(&self, call: &Bound<'py, PyAny>, error: PyErr) -> PyResult<Bound<'py, PyAny>> {
        let py = call.py();
        if !error.is_instance_of::<PyException>(py) {
            return Err(error);
        }
        self.failed.bind(py).call1((call, error.into_value(py)))
    }
}

#[pymethods]
impl DirectCall {
    #[new]
    #[pyo3(signature = (validator, function, *, awaits, retry, failed, convert, wraps=false))]
    #[allow(clippy::too_many_arguments)] // the keyword arguments of the Python constructor
    fn new(
        py: Python<'_>,
        validator: Py<TypedValidator>,
        function: Py<PyAny>,
        awaits: bool,
        retry: Py<PyAny>,
        failed: Py<PyAny>,
        convert: Py<PyAny>,
        wraps: bool,
    ) -> PyResult<Self> {
        Ok(Self {
            validator,
            function,
            awaits,
            retry,
            failed,
            convert,
            wraps,
            values: ResultValues::get(py)?,
        })
    }

    /// Runs `call` of a sync tool to its result on the calling thread.
    pub(crate) fn run<'py>(&self, call: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if self.awaits {
            return Err(PyTypeError::new_err(
                "run() is for sync tools: await the call of an async tool",
            ));
        }
        match self.start(call)? {
            Started::Finished(result) => Ok(result),
            Started::Drive(_) => Err(PyRuntimeError::new_err("a sync tool call suspended")),
        }
    }

    /// The awaitable that runs `call`: nothing happens until it is awaited.
    fn __call__(slf: &Bound<'_, Self>, call: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        pending::pending_call(slf, call)
    }
}

/// The `PendingCall` type, for the module's namespace.
pub(crate) fn pending_call_type(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    pending::pending_call_type::<DirectCall>(py)
}

/// Whether a call's raw arguments are an empty text (read as `{}`); anything that is not text
/// is left to the validator, which refuses it (a `str` holding a lone surrogate included: it is
/// measured, never encoded, here).
fn is_empty_text(raw: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(text) = raw.cast::<PyString>() {
        return text.is_empty();
    }
    Ok(raw
        .cast::<PyBytes>()
        .is_ok_and(|bytes| bytes.as_bytes().is_empty()))
}
