//! The call fast path: one call of a plain function tool as a single awaitable.
//!
//! A plain tool is a function tool with nothing between the model's arguments and the function:
//! no permission check, presets, injected parameters, converter or timeout. For those,
//! `PlainCall(call)` returns a `PendingCall`, an awaitable that does the whole call when first
//! resumed: it reads the call's raw JSON arguments, validates them into keyword arguments in
//! Rust, calls the function (driving its coroutine for an `async def`) and builds the
//! `ToolResultBlock`, all without a Python frame of its own.
//!
//! `ToolCaller`, the base class of `Toolkit` and `Registry`, holds `call_tool` itself: it looks
//! the tool up and hands a plain tool's call to its plan with no Python frame in between.
//!
//! `PendingCall` is a hand-made type (not a `#[pyclass]`) because it implements `am_send`, the
//! slot through which `await` and asyncio's tasks resume an awaitable: a finished call hands its
//! result back directly, where an iterator would have to raise `StopIteration` to return it.
//! It also has `send`, `throw` and `close`, so it is a `collections.abc.Coroutine`: cancellation
//! thrown into it reaches the tool's coroutine, and a tracing interpreter (which resumes through
//! `__next__` and `send`) sees the same behaviour.
//!
//! Invalid arguments give their error result here too. Whatever is not the common case goes back
//! to Python: arguments whose only errors are explicit `null`s through `invalid` (validated again
//! without them: the arguments, or the error result), a tool that raised or was cancelled through
//! `failed`, and return values other than `str`, `int` and `None` through `convert`. `run(call)`
//! is the same call for a sync tool, run to its result without an awaitable.
#![allow(
    unsafe_code,
    reason = "PendingCall is built on the C API: its am_send slot has no PyO3 equivalent"
)]

use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use crate::errors::{error_records, invalid_arguments_text, only_nulls, validation_error};
use crate::typed::{Invalid, TypedValidator};

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
    result_block: Py<PyType>,
    text_block: Py<PyType>,
    success: Py<PyAny>,
    error: Py<PyAny>,
    empty: Py<PyAny>,
    proxy: Py<PyAny>,
    done: Py<PyString>,
}

/// Checks that `class` is a tuple subclass with `fields` fields (a `NamedTuple`).
fn check_record(class: &Bound<'_, PyType>, fields: usize) -> PyResult<()> {
    let names = class.getattr(pyo3::intern!(class.py(), "_fields"))?;
    if !class.is_subclass_of::<PyTuple>()? || names.len()? != fields {
        return Err(PyTypeError::new_err(format!(
            "{} is not a named tuple of {fields} fields",
            class.name()?
        )));
    }
    Ok(())
}

/// A new instance of the named tuple `class` holding `items`, built without calling its
/// `__new__` (as `tuple.__new__(class, items)` does).
fn new_record<'py>(
    class: &Bound<'py, PyType>,
    items: &[&Bound<'py, PyAny>],
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    let Ok(count) = ffi::Py_ssize_t::try_from(items.len()) else {
        return Err(PyValueError::new_err("too many items for a record"));
    };
    // SAFETY: `class` is a tuple subclass (checked by `check_record` when the plan was built),
    // so its `tp_alloc` returns a zeroed tuple of `count` items that nothing else references
    // yet; `PyTuple_SetItem` accepts tuple subclasses and steals the reference it is given.
    unsafe {
        let slot = ffi::PyType_GetSlot(class.as_type_ptr(), ffi::Py_tp_alloc);
        if slot.is_null() {
            return Err(PyTypeError::new_err("record type without tp_alloc"));
        }
        let alloc: ffi::allocfunc = std::mem::transmute(slot);
        let record = Bound::from_owned_ptr_or_err(py, alloc(class.as_type_ptr(), count))?;
        for (index, item) in (0..count).zip(items) {
            if ffi::PyTuple_SetItem(record.as_ptr(), index, (*item).clone().into_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(record)
    }
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
    call.getattr(name)
}

impl PlainCall {
    /// The result of a call whose function returned `value`.
    fn result<'py>(
        &self,
        call: &Bound<'py, PyAny>,
        value: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = call.py();
        // SAFETY: exact type checks on a live object.
        let (is_str, is_int) = unsafe {
            (
                ffi::PyUnicode_CheckExact(value.as_ptr()) != 0,
                ffi::PyLong_CheckExact(value.as_ptr()) != 0,
            )
        };
        let (text, structured) = if is_str {
            (value, py.None().into_bound(py))
        } else if is_int {
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
        let output = PyTuple::new(py, [new_record(self.text_block.bind(py), &[text])?])?;
        new_record(
            self.result_block.bind(py),
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

    /// The result of a call whose tool raised `error` (or was cancelled); raises what must not
    /// become a result.
    fn failed<'py>(&self, call: &Bound<'py, PyAny>, error: PyErr) -> PyResult<Bound<'py, PyAny>> {
        let py = call.py();
        self.failed.bind(py).call1((call, error.into_value(py)))
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
        check_record(result_block, 6)?;
        check_record(text_block, 1)?;
        Ok(Self {
            validator,
            function,
            awaits,
            invalid,
            failed,
            convert,
            result_block: result_block.clone().unbind(),
            text_block: text_block.clone().unbind(),
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
        Self::pending(slf, call)
    }
}

impl PlainCall {
    /// A new `PendingCall` of `call` under this plan.
    fn pending(slf: &Bound<'_, Self>, call: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let class = pending_type(py)?;
        // SAFETY: `PyType_GenericAlloc` returns a zeroed, GC-tracked `PendingCallObject` (the
        // type's basic size); the fields it holds are owned references set right here.
        unsafe {
            let object = ffi::PyType_GenericAlloc(class.as_type_ptr(), 0);
            if object.is_null() {
                return Err(PyErr::fetch(py));
            }
            let pending = object.cast::<PendingCallObject>();
            (*pending).plan = slf.clone().into_ptr();
            (*pending).call = call.clone().into_ptr();
            (*pending).phase = Phase::Start;
            Ok(Bound::from_owned_ptr(py, object).unbind())
        }
    }
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
            return PlainCall::pending(plan, call);
        }
        slf.call_method1(
            pyo3::intern!(py, "_call_slow"),
            (call, context, agent, on_progress),
        )
        .map(Bound::unbind)
    }
}

/// What the first step of a call led to.
enum Started<'py> {
    /// The call is over: its result.
    Finished(Bound<'py, PyAny>),
    /// The tool's coroutine (an iterator to drive), converted into a result when it returns.
    Drive(Bound<'py, PyAny>),
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

// --- PendingCall: the awaitable --------------------------------------------------------------

/// Where a `PendingCall` is.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    /// Not yet resumed (a zeroed object starts here).
    Start = 0,
    /// Driving the tool's coroutine, held in `inner`.
    Driving,
    /// Inside a step: a re-entrant resume is refused.
    Running,
    /// Finished.
    Done,
}

/// The instance layout of `PendingCall`.
#[repr(C)]
struct PendingCallObject {
    base: ffi::PyObject,
    /// The `PlainCall` (owned).
    plan: *mut ffi::PyObject,
    /// The `ToolUseBlock` (owned).
    call: *mut ffi::PyObject,
    /// The coroutine being driven (owned, or null).
    inner: *mut ffi::PyObject,
    phase: Phase,
}

/// How one step ended.
enum Step<'py> {
    /// The call is suspended: the value to hand to the event loop.
    Yield(Bound<'py, PyAny>),
    /// The call is over: its result.
    Return(Bound<'py, PyAny>),
}

/// How to resume.
enum Resume<'a, 'py> {
    Send(&'a Bound<'py, PyAny>),
    Throw(&'a Bound<'py, PyTuple>),
}

static PENDING_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Access to a `PendingCall`'s fields through its pointer; no Rust reference to the object is
/// held across a call into Python, which may re-enter it.
#[derive(Clone, Copy)]
struct Pending(*mut PendingCallObject);

impl Pending {
    fn phase(self) -> Phase {
        // SAFETY: the pointer is a live `PendingCallObject` for the duration of a slot call.
        unsafe { (*self.0).phase }
    }

    fn set_phase(self, phase: Phase) {
        // SAFETY: as in `phase`.
        unsafe { (*self.0).phase = phase }
    }

    /// A new reference to a field, or `None` when it is null (cleared by the GC).
    fn field(py: Python<'_>, field: *mut ffi::PyObject) -> Option<Bound<'_, PyAny>> {
        // SAFETY: a non-null field is an owned reference held by the object.
        unsafe { Bound::from_borrowed_ptr_or_opt(py, field) }
    }

    fn plan(self, py: Python<'_>) -> PyResult<Bound<'_, PlainCall>> {
        // SAFETY: as in `phase`; `plan` is only ever set to a `PlainCall`.
        let plan = Self::field(py, unsafe { (*self.0).plan });
        plan.map(|plan| unsafe { plan.cast_into_unchecked::<PlainCall>() })
            .ok_or_else(|| PyRuntimeError::new_err("the tool call was cleared"))
    }

    fn call(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        // SAFETY: as in `phase`.
        Self::field(py, unsafe { (*self.0).call })
            .ok_or_else(|| PyRuntimeError::new_err("the tool call was cleared"))
    }

    fn inner(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        // SAFETY: as in `phase`.
        Self::field(py, unsafe { (*self.0).inner })
            .ok_or_else(|| PyRuntimeError::new_err("the tool call was cleared"))
    }

    /// Replaces `inner` (taking the new reference), releasing the old one.
    fn set_inner(self, inner: Option<Bound<'_, PyAny>>) {
        let new = inner.map_or(ptr::null_mut(), Bound::into_ptr);
        // SAFETY: as in `phase`; the old value is released after the field no longer holds it.
        unsafe {
            let old = std::mem::replace(&mut (*self.0).inner, new);
            ffi::Py_XDECREF(old);
        }
    }

    /// Ends the call: no coroutine held any more.
    fn finish(self) {
        self.set_phase(Phase::Done);
        self.set_inner(None);
    }

    /// Runs one step, guarding against re-entry.
    fn resume<'py>(self, py: Python<'py>, how: &Resume<'_, 'py>) -> PyResult<Step<'py>> {
        let phase = self.phase();
        match phase {
            Phase::Running => {
                return Err(PyValueError::new_err("the tool call is already running"));
            }
            Phase::Done => {
                return Err(PyRuntimeError::new_err(
                    "cannot reuse an already awaited tool call",
                ));
            }
            Phase::Start | Phase::Driving => {}
        }
        self.set_phase(Phase::Running);
        let step = self.step(py, phase, how);
        if self.phase() == Phase::Running {
            // A step that yields sets the phase to resume in; one that stops early ends the call.
            self.finish();
        }
        step
    }

    fn step<'py>(
        self,
        py: Python<'py>,
        phase: Phase,
        how: &Resume<'_, 'py>,
    ) -> PyResult<Step<'py>> {
        let plan = self.plan(py)?;
        let call = self.call(py)?;
        match phase {
            Phase::Start => {
                match how {
                    Resume::Throw(args) => return Err(thrown(args)?),
                    Resume::Send(value) if !value.is_none() => {
                        return Err(PyTypeError::new_err(
                            "can't send non-None value to a just-started tool call",
                        ));
                    }
                    Resume::Send(_) => {}
                }
                match plan.get().start(&call)? {
                    Started::Finished(result) => Ok(Step::Return(result)),
                    Started::Drive(iterator) => {
                        self.set_inner(Some(iterator));
                        self.set_phase(Phase::Driving);
                        let none = py.None().into_bound(py);
                        self.drive(&plan, &call, &Resume::Send(&none))
                    }
                }
            }
            _ => self.drive(&plan, &call, how),
        }
    }

    /// Resumes the tool's coroutine; its return value becomes the result, its exception the
    /// failed result.
    fn drive<'py>(
        self,
        plan: &Bound<'py, PlainCall>,
        call: &Bound<'py, PyAny>,
        how: &Resume<'_, 'py>,
    ) -> PyResult<Step<'py>> {
        let py = call.py();
        let plan = plan.get();
        match resume_iter(&self.inner(py)?, how) {
            Ok(Sent::Yield(value)) => {
                self.set_phase(Phase::Driving);
                Ok(Step::Yield(value))
            }
            Ok(Sent::Return(value)) => {
                self.finish();
                Ok(Step::Return(plan.result(call, value)?))
            }
            Err(error) => {
                self.finish();
                Ok(Step::Return(plan.failed(call, error)?))
            }
        }
    }

    /// `close()`: closes the coroutine being driven, if any.
    fn close(self, py: Python<'_>) -> PyResult<()> {
        let phase = self.phase();
        if phase == Phase::Running {
            return Err(PyValueError::new_err("the tool call is already running"));
        }
        let inner = if phase == Phase::Driving {
            Some(self.inner(py)?)
        } else {
            None
        };
        self.finish();
        if let Some(inner) = inner {
            inner.call_method0(pyo3::intern!(py, "close"))?;
        }
        Ok(())
    }
}

/// What resuming an iterator gave.
enum Sent<'py> {
    Yield(Bound<'py, PyAny>),
    Return(Bound<'py, PyAny>),
}

/// Sends a value into (or throws an exception into) an iterator.
fn resume_iter<'py>(iterator: &Bound<'py, PyAny>, how: &Resume<'_, 'py>) -> PyResult<Sent<'py>> {
    let py = iterator.py();
    match how {
        Resume::Send(value) => {
            let mut out: *mut ffi::PyObject = ptr::null_mut();
            // SAFETY: both objects are live; `PyIter_Send` stores a new reference in `out` for
            // a yield or a return, and sets an exception for an error.
            let status =
                unsafe { ffi::PyIter_Send(iterator.as_ptr(), value.as_ptr(), &raw mut out) };
            match status {
                ffi::PySendResult::PYGEN_NEXT => {
                    // SAFETY: a new reference (see above).
                    Ok(Sent::Yield(unsafe { Bound::from_owned_ptr(py, out) }))
                }
                ffi::PySendResult::PYGEN_RETURN => {
                    // SAFETY: a new reference (see above).
                    Ok(Sent::Return(unsafe { Bound::from_owned_ptr(py, out) }))
                }
                ffi::PySendResult::PYGEN_ERROR => Err(PyErr::fetch(py)),
            }
        }
        Resume::Throw(args) => {
            match iterator.call_method1(pyo3::intern!(py, "throw"), (*args).clone()) {
                Ok(value) => Ok(Sent::Yield(value)),
                Err(error) if error.is_instance_of::<PyStopIteration>(py) => {
                    let value = error.value(py).getattr(pyo3::intern!(py, "value"))?;
                    Ok(Sent::Return(value))
                }
                Err(error) => Err(error),
            }
        }
    }
}

/// The exception `throw(type[, value[, traceback]])` asks for.
fn thrown(args: &Bound<'_, PyTuple>) -> PyResult<PyErr> {
    let Ok(kind) = args.get_item(0) else {
        return Err(PyTypeError::new_err(
            "throw expected at least 1 argument, got 0",
        ));
    };
    let value = args.get_item(1).ok().filter(|value| !value.is_none());
    if kind.is_instance_of::<pyo3::exceptions::PyBaseException>() {
        return Ok(PyErr::from_value(kind));
    }
    let Ok(kind) = kind.cast::<PyType>() else {
        return Err(PyTypeError::new_err(
            "exceptions must be classes or instances deriving from BaseException",
        ));
    };
    if !kind.is_subclass_of::<pyo3::exceptions::PyBaseException>()? {
        return Err(PyTypeError::new_err(
            "exceptions must be classes or instances deriving from BaseException",
        ));
    }
    let instance = match value {
        Some(value) if value.is_instance(kind)? => value,
        Some(value) => kind.call1((value,))?,
        None => kind.call0()?,
    };
    Ok(PyErr::from_value(instance))
}

// --- the C slots -----------------------------------------------------------------------------

/// Runs `body` with the interpreter attached, turning a panic into a Python exception.
///
/// # Safety
/// Only called from a slot, that is with the GIL held.
unsafe fn slot<T>(error: T, body: impl FnOnce(Python<'_>) -> PyResult<T>) -> T {
    // SAFETY: slots are called by the interpreter with the GIL held.
    let py = unsafe { Python::assume_attached() };
    match catch_unwind(AssertUnwindSafe(|| body(py))) {
        Ok(Ok(value)) => value,
        Ok(Err(err)) => {
            err.restore(py);
            error
        }
        Err(_) => {
            PyRuntimeError::new_err("internal error in a tool call").restore(py);
            error
        }
    }
}

/// Hands a step's outcome to an iterator-protocol caller: a yield is returned, a return is
/// raised as `StopIteration(result)`.
fn iterator_outcome(step: Step<'_>) -> PyResult<*mut ffi::PyObject> {
    match step {
        Step::Yield(value) => Ok(value.into_ptr()),
        Step::Return(value) => Err(PyStopIteration::new_err((value.unbind(),))),
    }
}

unsafe extern "C" fn pending_send(
    slf: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
    out: *mut *mut ffi::PyObject,
) -> ffi::PySendResult {
    // SAFETY: called by the interpreter with the GIL held, on a `PendingCall`, with a borrowed
    // `arg` and a valid `out`.
    unsafe {
        slot(ffi::PySendResult::PYGEN_ERROR, |py| {
            let arg = Bound::from_borrowed_ptr(py, arg);
            let step = Pending(slf.cast()).resume(py, &Resume::Send(&arg))?;
            Ok(match step {
                Step::Yield(value) => {
                    *out = value.into_ptr();
                    ffi::PySendResult::PYGEN_NEXT
                }
                Step::Return(value) => {
                    *out = value.into_ptr();
                    ffi::PySendResult::PYGEN_RETURN
                }
            })
        })
    }
}

unsafe extern "C" fn pending_next(slf: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: `__next__` is `send(None)`; `None` is immortal for the call's duration.
    unsafe { pending_send_method(slf, ffi::Py_None()) }
}

unsafe extern "C" fn pending_send_method(
    slf: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: a METH_O method: the GIL is held and `arg` is borrowed.
    unsafe {
        slot(ptr::null_mut(), |py| {
            let arg = Bound::from_borrowed_ptr(py, arg);
            iterator_outcome(Pending(slf.cast()).resume(py, &Resume::Send(&arg))?)
        })
    }
}

unsafe extern "C" fn pending_throw(
    slf: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: a METH_VARARGS method: the GIL is held and `args` is a borrowed tuple.
    unsafe {
        slot(ptr::null_mut(), |py| {
            let args = Bound::from_borrowed_ptr(py, args).cast_into::<PyTuple>()?;
            iterator_outcome(Pending(slf.cast()).resume(py, &Resume::Throw(&args))?)
        })
    }
}

unsafe extern "C" fn pending_close(
    slf: *mut ffi::PyObject,
    _: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: a METH_NOARGS method, called with the GIL held.
    unsafe {
        slot(ptr::null_mut(), |py| {
            Pending(slf.cast()).close(py)?;
            Ok(py.None().into_ptr())
        })
    }
}

unsafe extern "C" fn pending_await(slf: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: called by the interpreter with the GIL held, on a `PendingCall`; `__await__`
    // returns the object itself, a new reference.
    unsafe {
        slot(ptr::null_mut(), |_| {
            if matches!(Pending(slf.cast()).phase(), Phase::Driving | Phase::Running) {
                return Err(PyRuntimeError::new_err(
                    "the tool call is being awaited already",
                ));
            }
            ffi::Py_INCREF(slf);
            Ok(slf)
        })
    }
}

unsafe extern "C" fn pending_traverse(
    slf: *mut ffi::PyObject,
    visit: ffi::visitproc,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: called by the GC on a live `PendingCall`; a heap type's instances visit their type.
    unsafe {
        let pending = slf.cast::<PendingCallObject>();
        let fields = [
            ffi::Py_TYPE(slf).cast::<ffi::PyObject>(),
            (*pending).plan,
            (*pending).call,
            (*pending).inner,
        ];
        for field in fields {
            if !field.is_null() {
                let found = visit(field, arg);
                if found != 0 {
                    return found;
                }
            }
        }
    }
    0
}

unsafe extern "C" fn pending_clear(slf: *mut ffi::PyObject) -> c_int {
    // SAFETY: each field is emptied before its reference is released (the release may run
    // arbitrary code that looks at the object again).
    unsafe {
        let pending = slf.cast::<PendingCallObject>();
        for field in [
            &raw mut (*pending).plan,
            &raw mut (*pending).call,
            &raw mut (*pending).inner,
        ] {
            let old = std::mem::replace(&mut *field, ptr::null_mut());
            ffi::Py_XDECREF(old);
        }
        (*pending).phase = Phase::Done;
    }
    0
}

unsafe extern "C" fn pending_dealloc(slf: *mut ffi::PyObject) {
    // SAFETY: the object is untracked before its fields are released, then freed through its
    // type's `tp_free`; the heap type's reference held by the instance is released last.
    unsafe {
        ffi::PyObject_GC_UnTrack(slf.cast());
        pending_clear(slf);
        let class = ffi::Py_TYPE(slf);
        let free = ffi::PyType_GetSlot(class, ffi::Py_tp_free);
        if !free.is_null() {
            let free: ffi::freefunc = std::mem::transmute(free);
            free(slf.cast());
        }
        ffi::Py_DECREF(class.cast());
    }
}

/// The `PendingCall` type, created once per interpreter.
fn pending_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    PENDING_TYPE
        .get_or_try_init(py, || create_pending_type(py))
        .map(|class| class.bind(py))
}

fn create_pending_type(py: Python<'_>) -> PyResult<Py<PyType>> {
    // The method table lives as long as the type, that is for good.
    let methods: &'static mut [ffi::PyMethodDef; 4] = Box::leak(Box::new([
        ffi::PyMethodDef {
            ml_name: c"send".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: pending_send_method,
            },
            ml_flags: ffi::METH_O,
            ml_doc: c"send(value): resume the call.".as_ptr(),
        },
        ffi::PyMethodDef {
            ml_name: c"throw".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: pending_throw,
            },
            ml_flags: ffi::METH_VARARGS,
            ml_doc: c"throw(exception): raise an exception inside the call (cancellation)."
                .as_ptr(),
        },
        ffi::PyMethodDef {
            ml_name: c"close".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: pending_close,
            },
            ml_flags: ffi::METH_NOARGS,
            ml_doc: c"close(): stop the call.".as_ptr(),
        },
        ffi::PyMethodDef::zeroed(),
    ]));
    let slot = |slot: c_int, pfunc: *mut c_void| ffi::PyType_Slot { slot, pfunc };
    let doc = c"One tool call in progress: await it for the ToolResultBlock.";
    let mut slots = [
        slot(ffi::Py_tp_doc, doc.as_ptr().cast_mut().cast()),
        slot(ffi::Py_tp_dealloc, pending_dealloc as *mut c_void),
        slot(ffi::Py_tp_traverse, pending_traverse as *mut c_void),
        slot(ffi::Py_tp_clear, pending_clear as *mut c_void),
        slot(ffi::Py_tp_iternext, pending_next as *mut c_void),
        slot(ffi::Py_am_await, pending_await as *mut c_void),
        slot(ffi::Py_am_send, pending_send as *mut c_void),
        slot(ffi::Py_tp_methods, methods.as_mut_ptr().cast()),
        slot(0, ptr::null_mut()),
    ];
    let Ok(basicsize) = c_int::try_from(std::mem::size_of::<PendingCallObject>()) else {
        return Err(PyRuntimeError::new_err("PendingCall is too large"));
    };
    let mut spec = ffi::PyType_Spec {
        name: c"ferrotool._core.PendingCall".as_ptr(),
        basicsize,
        itemsize: 0,
        flags: (ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_HAVE_GC) as std::ffi::c_uint,
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: the spec and its slots are valid for the call; the name, documentation and
    // method table are static.
    unsafe {
        let class = Bound::from_owned_ptr_or_err(py, ffi::PyType_FromSpec(&raw mut spec))?;
        Ok(class.cast_into::<PyType>()?.unbind())
    }
}

/// The `PendingCall` type, for the module's namespace.
pub(crate) fn pending_call_type(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    pending_type(py).cloned()
}
