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
//! `ToolCaller`, the base class of `Toolkit` and `Registry`, holds `call_tool` itself: it looks
//! the tool up in the default view's direct calls (bound by the subclass, `_bind`) and hands a
//! plain tool's call to its direct call with no Python frame in between, when the call has no
//! result sink and its context no request config (a view other than the default one); every
//! other call goes to the pipeline the subclass binds, which routes it again. `call_tool_sync`
//! does the same with the direct calls of a sync caller, running a plain sync tool's call to
//! its result on the calling thread (`run`), and a sync pipeline for the rest. The property
//! `tests/property/test_routing.py` checks these shortcuts are taken exactly when the route says.
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
use std::sync::{Mutex, PoisonError};

use pyo3::exceptions::{PyException, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple, PyType};

use crate::errors::{error_records, invalid_arguments_text, may_hold_nulls, validation_error};
use crate::ffi::pending::{self, PendingType, Plan, Started};
use crate::ffi::record::{RecordType, is_exact_int, is_exact_str};
use crate::onion::{DirectRoute, Layered, Onion, TakingPart};
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
enum Field {
    Id = 0,
    Name = 1,
    Arguments = 2,
}

static USE_BLOCK: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A field of `call`: read from the named tuple's items when `call` is exactly a
/// `ToolUseBlock`, by attribute from anything else; a `TypeError` saying what to pass when
/// `call` is no call at all (see [`misuse`]).
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
    call.getattr(name).map_err(|error| misuse(call, error))
}

/// The error to raise when reading `call` failed with `error`: the `TypeError` saying what to
/// pass when `call` is no call at all (`ferrotool._values.calls.misused`: say, a tool's name
/// where the `ToolUseBlock` goes), else `error` itself. Only an error path comes here.
#[cold]
fn misuse(call: &Bound<'_, PyAny>, error: PyErr) -> PyErr {
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
fn misused_context(entry: &str, context: &Bound<'_, PyAny>, error: PyErr) -> PyErr {
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
        } else if is_exact_int(&value)
            && let Ok(text) = value.str()
        {
            // An int too long for `str()` (CPython's digit limit) goes to `convert` below.
            (text.into_any(), value)
        } else if value.is_none() {
            (self.values.done.bind(py).clone().into_any(), value)
        } else {
            return match self.convert.bind(py).call1((call, value)) {
                Ok(result) => Ok(result),
                Err(error) => self.failed(call, error),
            };
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
    #[pyo3(signature = (validator, function, *, awaits, retry, failed, convert))]
    fn new(
        py: Python<'_>,
        validator: Py<TypedValidator>,
        function: Py<PyAny>,
        awaits: bool,
        retry: Py<PyAny>,
        failed: Py<PyAny>,
        convert: Py<PyAny>,
    ) -> PyResult<Self> {
        Ok(Self {
            validator,
            function,
            awaits,
            retry,
            failed,
            convert,
            values: ResultValues::get(py)?,
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

/// The base class of `Toolkit` and `Registry`: `call_tool` and `call_tool_sync` themselves.
///
/// A call of a plain tool goes from here straight to its `PendingCall` (or, for the sync
/// entry, its direct call's run), with no Python frame in between; every other call goes to
/// the pipeline the subclass binds.
#[pyclass(module = "ferrotool._core", subclass, frozen)]
pub(crate) struct ToolCaller {
    /// Where calls go; bound again whenever the subclass holds a new table. A lock, because a
    /// toolkit (a builder) changes while requests of other threads call through it.
    route: Mutex<Route>,
}

/// Where a `ToolCaller`'s calls go.
struct Route {
    /// The direct calls of the plain tools `call_tool` runs itself, by tool name.
    direct: Py<PyDict>,
    /// The pipeline of every other call: `pipeline(self, call, context, agent, on_progress,
    /// on_result)`, a function of the subclass (not a bound method: no reference cycle).
    pipeline: Option<Py<PyAny>>,
    /// The toolkit's middleware, when it has some: a plain call goes through the onion here,
    /// its core the direct route.
    layered: Option<Layers>,
    /// The direct calls of the plain tools `call_tool_sync` runs itself, by tool name.
    direct_sync: Py<PyDict>,
    /// The pipeline of every other sync call: `pipeline_sync(self, call, context, agent,
    /// on_progress)`, a function of the subclass.
    pipeline_sync: Option<Py<PyAny>>,
}

/// A toolkit's middleware, as `call_tool` runs its plain calls through it.
struct Layers {
    onion: Py<Onion>,
    /// The route inside the onion: a `DirectRoute`'s bound `run` method (vectorcall reaches it
    /// without a tuple of arguments).
    rest: Py<PyAny>,
    /// The empty context, for a call with none.
    empty: Py<PyAny>,
    /// The plan of a call with no context through every layer, built once.
    plan: Py<Layered>,
}

impl Layers {
    fn clone_ref(&self, py: Python<'_>) -> Self {
        Self {
            onion: self.onion.clone_ref(py),
            rest: self.rest.clone_ref(py),
            empty: self.empty.clone_ref(py),
            plan: self.plan.clone_ref(py),
        }
    }
}

/// The half of a `Route` one entry uses: its direct calls and its pipeline.
type Half = (Py<PyDict>, Option<Py<PyAny>>);

impl ToolCaller {
    /// The direct calls and the pipeline of the async entry (or of the sync one).
    fn half(&self, py: Python<'_>, sync: bool) -> Half {
        let route = self.route.lock().unwrap_or_else(PoisonError::into_inner);
        let (direct, pipeline) = if sync {
            (&route.direct_sync, &route.pipeline_sync)
        } else {
            (&route.direct, &route.pipeline)
        };
        (
            direct.clone_ref(py),
            pipeline.as_ref().map(|pipeline| pipeline.clone_ref(py)),
        )
    }
}

/// The error for a `ToolCaller` with no pipeline bound.
fn unbound() -> PyErr {
    PyRuntimeError::new_err(
        "this ToolCaller has no pipeline bound (a subclass binds one with _bind)",
    )
}

static RUNTIME_CONTEXT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Whether a sync call with this context may take the plain route: the context is none, or a
/// `RuntimeContext` without a request config. Anything else where the context goes is the
/// `TypeError` saying how to build one (after the one for a call that is no call).
fn sync_context_is_plain(
    call: &Bound<'_, PyAny>,
    context: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    let Some(context) = context.filter(|context| !context.is_none()) else {
        return Ok(true);
    };
    let py = context.py();
    let class = RUNTIME_CONTEXT.import(py, "ferrotool._values.context", "RuntimeContext")?;
    if !context.is_instance(class)? {
        let error = PyTypeError::new_err("call_tool_sync takes a RuntimeContext as its context");
        return Err(misuse(
            call,
            misused_context("call_tool_sync", context, error),
        ));
    }
    Ok(!carries_request_config(context)?)
}

static REQUEST_CONFIG: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Whether a call's context carries a request config (its view is not the default one).
fn carries_request_config(context: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = context.py();
    let config = REQUEST_CONFIG.import(py, "ferrotool._requests.config", "ToolRequestConfig")?;
    let values = context.getattr(pyo3::intern!(py, "values"))?;
    if values.len()? == 0 {
        return Ok(false);
    }
    values.contains(config)
}

/// Whether a call's context carries a request config; a context that cannot say is the
/// `TypeError` that shows what to pass.
fn carries_config(call: &Bound<'_, PyAny>, context: Option<&Bound<'_, PyAny>>) -> PyResult<bool> {
    match context {
        None => Ok(false),
        Some(context) if context.is_none() => Ok(false),
        Some(context) => carries_request_config(context)
            .map_err(|error| misuse(call, misused_context("call_tool", context, error))),
    }
}

/// The direct call that runs `call` as a plain tool's, if its route is plain: its context
/// carries no request config and `direct` holds its tool's name.
pub(crate) fn plain_direct<'py>(
    direct: &Bound<'py, PyDict>,
    call: &Bound<'py, PyAny>,
    context: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<Bound<'py, DirectCall>>> {
    if carries_config(call, context)? {
        return Ok(None);
    }
    let name = field(call, Field::Name)?;
    // A name no dict can hold (unhashable) is no plain tool's: the pipeline answers it.
    if let Ok(Some(found)) = direct.get_item(&name)
        && let Ok(found) = found.cast_into::<DirectCall>()
    {
        return Ok(Some(found));
    }
    Ok(None)
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
            route: Mutex::new(Route {
                direct: PyDict::new(py).unbind(),
                pipeline: None,
                layered: None,
                direct_sync: PyDict::new(py).unbind(),
                pipeline_sync: None,
            }),
        }
    }

    /// Routes calls from now on: plain tools' calls to their direct calls in `direct`, every
    /// other call to `pipeline`, sync calls alike to `direct_sync` and `pipeline_sync`; with
    /// `layered` (the toolkit's middleware as an `Onion`, the function that runs a call that is
    /// no plain tool's without middleware, and the empty context), every async call whose
    /// route is plain goes through the onion first.
    #[pyo3(signature = (direct, pipeline, layered=None, *, direct_sync, pipeline_sync))]
    fn _bind(
        &self,
        py: Python<'_>,
        direct: Py<PyDict>,
        pipeline: Py<PyAny>,
        layered: Option<(Py<Onion>, Py<PyAny>, Py<PyAny>)>,
        direct_sync: Py<PyDict>,
        pipeline_sync: Py<PyAny>,
    ) -> PyResult<()> {
        let layered = match layered {
            Some((onion, bare, empty)) => {
                let route = Py::new(py, DirectRoute::new(direct.clone_ref(py), bare))?;
                let run = route.bind(py).getattr(pyo3::intern!(py, "run"))?;
                let plan = Onion::plan_for_all(onion.bind(py), empty.bind(py), &run)?;
                Some(Layers {
                    onion,
                    rest: run.unbind(),
                    empty,
                    plan,
                })
            }
            None => None,
        };
        let mut route = self.route.lock().unwrap_or_else(PoisonError::into_inner);
        *route = Route {
            direct,
            pipeline: Some(pipeline),
            layered,
            direct_sync,
            pipeline_sync: Some(pipeline_sync),
        };
        Ok(())
    }

    #[pyo3(signature = (call, context=None, *, agent=None, on_progress=None, on_result=None))]
    fn call_tool(
        slf: &Bound<'_, Self>,
        call: &Bound<'_, PyAny>,
        context: Option<&Bound<'_, PyAny>>,
        agent: Option<&Bound<'_, PyAny>>,
        on_progress: Option<&Bound<'_, PyAny>>,
        on_result: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (direct, pipeline, layered) = {
            let route = slf
                .get()
                .route
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            (
                route.direct.clone_ref(py),
                route
                    .pipeline
                    .as_ref()
                    .map(|pipeline| pipeline.clone_ref(py)),
                route.layered.as_ref().map(|layers| layers.clone_ref(py)),
            )
        };
        if on_result.is_none() {
            match layered {
                Some(layers) => {
                    // The core of the onion runs a call that is no plain tool's with the
                    // default scope: a call with an agent or a progress sink goes the long way.
                    let absent =
                        |value: Option<&Bound<'_, PyAny>>| value.is_none_or(PyAnyMethods::is_none);
                    if absent(agent) && absent(on_progress) && !carries_config(call, context)? {
                        let onion = layers.onion.bind(py);
                        match onion.get().taking_part(call)? {
                            // No layer takes part: the call is a plain one.
                            TakingPart::None => {
                                if let Some(direct) = plain_direct(direct.bind(py), call, None)? {
                                    return pending::pending_call(&direct, call);
                                }
                            }
                            TakingPart::Layers(all)
                                if absent(context) && onion.get().is_all(&all) =>
                            {
                                return pending::pending_call(layers.plan.bind(py), call);
                            }
                            taking_part => {
                                let context = match context {
                                    Some(context) if !context.is_none() => context.clone(),
                                    _ => layers.empty.into_bound(py),
                                };
                                let rest = layers.rest.bind(py);
                                return Onion::run_layers(onion, taking_part, call, &context, rest);
                            }
                        }
                    }
                }
                None => {
                    if let Some(direct) = plain_direct(direct.bind(py), call, context)? {
                        return pending::pending_call(&direct, call);
                    }
                }
            }
        }
        let Some(pipeline) = pipeline else {
            return Err(unbound());
        };
        pipeline
            .bind(py)
            .call1((slf, call, context, agent, on_progress, on_result))
            .map(Bound::unbind)
    }

    /// `call_tool` for sync code: a plain sync tool's call runs here, on the calling thread,
    /// with no Python frame in between; every other call goes to the sync pipeline.
    #[pyo3(signature = (call, context=None, *, agent=None, on_progress=None))]
    fn call_tool_sync<'py>(
        slf: &Bound<'py, Self>,
        call: &Bound<'py, PyAny>,
        context: Option<&Bound<'py, PyAny>>,
        agent: Option<&Bound<'py, PyAny>>,
        on_progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let (direct, pipeline) = slf.get().half(py, true);
        if sync_context_is_plain(call, context)? {
            let name = field(call, Field::Name)?;
            // A name no dict can hold (unhashable) is no plain tool's: the pipeline answers it.
            if let Ok(Some(direct)) = direct.bind(py).get_item(&name)
                && let Ok(direct) = direct.cast::<DirectCall>()
            {
                return direct.get().run(call);
            }
        }
        let Some(pipeline) = pipeline else {
            return Err(unbound());
        };
        pipeline
            .bind(py)
            .call1((slf, call, context, agent, on_progress))
    }
}

/// The iterator behind an awaitable: a coroutine drives itself, anything else through
/// `__await__`.
pub(crate) fn awaitable_iter(value: Bound<'_, PyAny>) -> PyResult<Bound<'_, PyAny>> {
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
