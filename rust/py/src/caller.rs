//! `ToolCaller`, the base class of `Toolkit` and `Registry`: `call_tool` and `call_tool_sync`
//! themselves.
//!
//! It looks the tool up in the default view's direct calls (bound by the subclass, `_bind`)
//! and hands a plain tool's call to its direct call ([`crate::call`]) with no Python frame in
//! between, when the call has no result sink and its context no request config (a view other
//! than the default one; [`crate::route`]); with middleware, the call goes through the onion
//! ([`crate::onion`]) around that direct call. Every other call goes to the pipeline the
//! subclass binds, which routes it again. `call_tool_sync` does the same with the direct calls
//! of a sync caller, running a plain sync tool's call to its result on the calling thread
//! (`run`), and a sync pipeline for the rest. The property `tests/property/test_routing.py`
//! checks these shortcuts are taken exactly when the route says.
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::call::{DirectCall, Field, field};
use crate::ffi::pending;
use crate::onion::{DirectRoute, Layered, Onion, TakingPart};
use crate::route::{carries_config, plain_direct, sync_context_is_plain};

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
    /// its core the direct route (shared: a call takes it without a reference count per field).
    layered: Option<Arc<Layers>>,
    /// The direct calls of the plain tools `call_tool_sync` runs itself, by tool name.
    direct_sync: Py<PyDict>,
    /// The pipeline of every other sync call: `pipeline_sync(self, call, context, agent,
    /// on_progress)`, a function of the subclass.
    pipeline_sync: Option<Py<PyAny>>,
}

/// A toolkit's middleware, as `call_tool` runs its plain calls through it.
struct Layers {
    onion: Py<Onion>,
    /// The route inside the onion: a `DirectRoute`'s `run` as a built-in method of two
    /// arguments (vectorcall reaches it without a tuple of arguments or their parsing).
    rest: Py<PyAny>,
    /// The empty context, for a call with none.
    empty: Py<PyAny>,
    /// The plan of a call with no context through every layer, built once.
    plan: Py<Layered>,
    /// Whether every layer takes part in every call (none declares an `active()`): then a call
    /// with no context takes `plan` without asking the onion.
    every_call: bool,
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
            // An onion with no layer leaves every call as it is.
            Some((onion, bare, empty)) if onion.get().has_layers(py) => {
                let route = DirectRoute::new(direct.clone_ref(py), bare, Some(empty.clone_ref(py)));
                let route = Py::new(py, route)?;
                let run = pending::two_args_method(route.bind(py))?;
                let plan = Onion::plan_for_all(onion.bind(py), empty.bind(py), &run)?;
                let every_call = onion.get().every_call();
                Some(Arc::new(Layers {
                    onion,
                    rest: run.unbind(),
                    empty,
                    plan,
                    every_call,
                }))
            }
            _ => None,
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
        // The core of the onion runs a call that is no plain tool's with the default scope: a
        // call with an agent or a progress sink goes the long way.
        let absent = |value: Option<&Bound<'_, PyAny>>| value.is_none_or(PyAnyMethods::is_none);
        let routed_plain = on_result.is_none() && absent(agent) && absent(on_progress);
        let (direct, pipeline, layered) = {
            let route = slf
                .get()
                .route
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if routed_plain
                && absent(context)
                && let Some(layers) = &route.layered
                && layers.every_call
            {
                // Every layer takes part, in the empty context: the plan built once.
                let plan = layers.plan.clone_ref(py);
                drop(route);
                return pending::pending_call(plan.bind(py), call);
            }
            (
                route.direct.clone_ref(py),
                route
                    .pipeline
                    .as_ref()
                    .map(|pipeline| pipeline.clone_ref(py)),
                route.layered.clone(),
            )
        };
        if on_result.is_none() {
            match layered {
                Some(layers) => {
                    if routed_plain && !carries_config(call, context)? {
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
                                    _ => layers.empty.bind(py).clone(),
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
