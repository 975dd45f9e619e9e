//! The call fast path: one call of a plain function tool as a single awaitable.
//!
//! A plain tool is a function tool with nothing between the model's arguments and the function:
//! no permission check, presets, injected parameters, converter or timeout. For those,
//! `PlainCall(call)` returns a `PendingCall` ([`crate::ffi::pending`]), an awaitable that does
//! the whole call when first resumed: it reads the call's raw JSON arguments, validates them into
//! keyword arguments in Rust, calls the function (driving its coroutine for an `async def`) and
//! builds the `ToolResultBlock`, all without a Python frame of its own.
//!
//! `ToolCaller`, the base class of `Toolkit` and `Registry`, holds `call_tool` itself: it looks
//! the tool up and hands a plain tool's call to its plan with no Python frame in between.
//!
//! Invalid arguments give their error result here too. Whatever is not the common case goes back
//! to Python: arguments whose only errors are explicit `null`s through `invalid` (validated again
//! without them: the arguments, or the error result), a tool that raised or was cancelled through
//! `failed`, and return values other than `str`, `int` and `None` through `convert`. `run(call)`
//! is the same call for a sync tool, run to its result without an awaitable.
//!
//! Everything here is safe code; the awaitable's C type and the named tuples' allocation are in
//! [`crate::ffi`].
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use crate::errors::{error_records, invalid_arguments_text, only_nulls, validation_error};
use crate::ffi::pending::{self, PendingType, Plan, Started};
use crate::ffi::record::{RecordType, is_exact_int, is_exact_str};
use crate::typed::TypedValidator;
use crate::typed::outcome::Invalid;

/// The compiled call of one plain function tool; calling it with a `ToolUseBlock` gives the
/// `PendingCall` that runs it.
#[pyclass(module = "ferrotool._core", frozen)]
pub(crate) struct PlainCall {
    validator: Py<TypedValidator>,
    function: Py<PyAny>,
    awaits: bool,
    invalid: Py<PyAny>,
    failed: Py<PyAny>,
    convert: Py<PyAny>,
    result_block: RecordType,
    text_block: RecordType,
    success: Py<PyAny>,
    error: Py<PyAny>,
    empty: Py<PyAny>,
    proxy: Py<PyAny>,
    done: Py<PyString>,
}

/// A field of a tool call, by its position in `ToolUseBlock`.
#[derive(Clone, Copy)]
enum Field {
    Id = 0,
    Name = 1,
    Arguments = 2,
}

static USE_BLOCK: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A field of `call`: read from the named tuple's items when `call` is exactly a
/// `ToolUseBlock`, by attribute from anything else.
fn field<'py>(call: &Bound<'py, PyAny>, which: Field) -> PyResult<Bound<'py, PyAny>> {
    let py = call.py();
    let class = USE_BLOCK.import(py, "ferrotool._results", "ToolUseBlock")?;
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
    call.getattr(name)
}

impl PlainCall {
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
        let output = PyTuple::new(py, [self.text_block.build(py, &[text])?])?;
        self.result_block.build(
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
    /// model and as records in the metadata (``errors``).
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
        self.block(
            call,
            PyString::new(py, &text).as_any(),
            self.error.bind(py),
            &self.proxy.bind(py).call1((metadata,))?,
            &py.None().into_bound(py),
        )
    }
}

impl Plan for PlainCall {
    fn pending_type() -> &'static PendingType {
        static TYPE: PendingType = PendingType::new();
        &TYPE
    }

    /// Validates the call's arguments and calls the function.
    fn start<'py>(&self, call: &Bound<'py, PyAny>) -> PyResult<Started<'py>> {
        let py = call.py();
        let mut raw = field(call, Field::Arguments)?;
        if !raw.is_truthy()? {
            raw = pyo3::intern!(py, "{}").clone().into_any();
        }
        let (args, kwargs) = match self.validator.get().validate_args_raw(py, &raw) {
            Ok(arguments) => arguments,
            Err(Invalid::Lines(errors)) if !only_nulls(&errors) => {
                return Ok(Started::Finished(self.invalid_result(call, &errors)?));
            }
            Err(Invalid::Lines(errors)) => {
                // Explicit nulls for optional properties: Python validates again without them,
                // giving the keyword arguments or the error result.
                let error = validation_error(py, errors).into_value(py);
                match self
                    .invalid
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
        match self.function.bind(py).call(args, kwargs.as_ref()) {
            Ok(value) if self.awaits => match awaitable_iter(value) {
                Ok(iterator) => Ok(Started::Drive(iterator)),
                Err(error) => Ok(Started::Finished(self.failed(call, error)?)),
            },
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
        let (text, structured) = if is_exact_str(&value) {
            (value, py.None().into_bound(py))
        } else if is_exact_int(&value) {
            (value.str()?.into_any(), value)
        } else if value.is_none() {
            (self.done.bind(py).clone().into_any(), value)
        } else {
            return match self.convert.bind(py).call1((call, value)) {
                Ok(result) => Ok(result),
                Err(error) => self.failed(call, error),
            };
        };
        self.block(
            call,
            &text,
            self.success.bind(py),
            self.empty.bind(py),
            &structured,
        )
    }

    /// The result of a call whose tool raised `error` (or was cancelled); raises what must not
    /// become a result.
    fn failed<'py>(&self, call: &Bound<'py, PyAny>, error: PyErr) -> PyResult<Bound<'py, PyAny>> {
        let py = call.py();
        self.failed.bind(py).call1((call, error.into_value(py)))
    }
}

#[pymethods]
impl PlainCall {
    #[new]
    #[expect(
        clippy::too_many_arguments,
        reason = "the keyword arguments of the Python constructor"
    )]
    #[pyo3(signature = (validator, function, *, awaits, invalid, failed, convert, result_block, text_block, success, error, empty, proxy, done))]
    fn new(
        validator: Py<TypedValidator>,
        function: Py<PyAny>,
        awaits: bool,
        invalid: Py<PyAny>,
        failed: Py<PyAny>,
        convert: Py<PyAny>,
        result_block: &Bound<'_, PyType>,
        text_block: &Bound<'_, PyType>,
        success: Py<PyAny>,
        error: Py<PyAny>,
        empty: Py<PyAny>,
        proxy: Py<PyAny>,
        done: Py<PyString>,
    ) -> PyResult<Self> {
        Ok(Self {
            validator,
            function,
            awaits,
            invalid,
            failed,
            convert,
            result_block: RecordType::new(result_block, 6)?,
            text_block: RecordType::new(text_block, 1)?,
            success,
            error,
            empty,
            proxy,
            done,
        })
    }

    /// Runs `call` of a sync tool to its result on the calling thread.
    fn run<'py>(&self, call: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
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
    pending::pending_call_type::<PlainCall>(py)
}

/// The base class of `Toolkit` and `Registry`: `call_tool` itself.
///
/// A call of a plain tool goes from here straight to its `PendingCall`, with no Python frame
/// in between; every other call goes to the subclass's `_call_slow` (a coroutine).
#[pyclass(module = "ferrotool._core", subclass)]
pub(crate) struct ToolCaller {
    /// The plans of the plain tools run without a worker thread, by tool name, as the subclass
    /// binds them (its table's).
    plans: Py<PyDict>,
}

#[pymethods]
impl ToolCaller {
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        py: Python<'_>,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> Self {
        Self {
            plans: PyDict::new(py).unbind(),
        }
    }

    /// Reads the plans from `plans` from now on (the table the subclass now holds).
    fn _bind_plans(&mut self, plans: Py<PyDict>) {
        self.plans = plans;
    }

    /// Run one tool call and return its result; the model's mistakes become results.
    ///
    /// Unknown tools, bad JSON, invalid arguments, a denied permission, a tool that raises or
    /// times out: each is an `ERROR` (or `DENIED`) result naming the problem. If the caller is
    /// cancelled while the tool runs, the tool is cancelled and the call still returns its
    /// `INTERRUPTED` result (the cancellation reaches the caller again at its next checkpoint
    /// under anyio or trio). This reads the registry as it is, groups aside: a request with a
    /// session goes through a `view`.
    ///
    /// Args:
    ///     call: The tool call.
    ///     context: The runtime context (user, session, typed values).
    ///     agent: The calling agent, for tools that ask for it.
    ///     on_progress: Receives this call's progress chunks, besides the toolkit's sinks.
    ///
    /// Returns:
    ///     A coroutine to await for the result.
    ///
    /// Raises:
    ///     InjectionError: The tool needs a value the context lacks (a programming mistake).
    #[expect(
        clippy::doc_markdown,
        reason = "a Python docstring, in the Google style of the Python API"
    )]
    #[pyo3(signature = (call, context=None, *, agent=None, on_progress=None))]
    fn call_tool(
        slf: &Bound<'_, Self>,
        call: &Bound<'_, PyAny>,
        context: Option<&Bound<'_, PyAny>>,
        agent: Option<&Bound<'_, PyAny>>,
        on_progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let name = field(call, Field::Name)?;
        let plan = slf.borrow().plans.bind(py).get_item(&name)?;
        if let Some(plan) = plan
            && let Ok(plan) = plan.cast::<PlainCall>()
        {
            return pending::pending_call(plan, call);
        }
        slf.call_method1(
            pyo3::intern!(py, "_call_slow"),
            (call, context, agent, on_progress),
        )
        .map(Bound::unbind)
    }
}

/// The iterator behind an awaitable: a coroutine drives itself, anything else through
/// `__await__`.
fn awaitable_iter(value: Bound<'_, PyAny>) -> PyResult<Bound<'_, PyAny>> {
    let py = value.py();
    let coroutine = COROUTINE_TYPE.get_or_try_init(py, || {
        py.import("types")?
            .getattr("CoroutineType")?
            .cast_into::<PyType>()
            .map(Bound::unbind)
            .map_err(PyErr::from)
    })?;
    if value.get_type().is(coroutine.bind(py)) {
        return Ok(value);
    }
    value.call_method0(pyo3::intern!(py, "__await__"))
}

static COROUTINE_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
