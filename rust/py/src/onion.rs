//! The middleware onion, run without a Python frame of its own.
//!
//! `Onion` holds a toolkit's (or a view's) middleware, the first outermost, built once. For each
//! call, `run(call, context, rest)` asks each layer that declares an `active()` whether it takes
//! part now (a tracing layer with no tracer provider does not), calls the outermost active layer
//! with `(call, context, next)` and hands its coroutine to a `PendingCall` that contains it:
//! what the middleware raises (an `Exception`) or returns that is no `ToolResultBlock` becomes the
//! call's error result through the Python side's `failed` and `settle`, and a `RUNNING` result
//! that does not wait is settled too; a cancellation goes on. `next` is a `NextLayer`: calling it
//! calls the next active layer, and after the innermost, `rest`, which runs the call itself
//! (the view's dispatch, or a `DirectRoute` to the tool's Rust direct call). With no layer
//! active, `run` is `rest(call, context)`: the call costs what it costs without middleware.
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::ffi::pending::{self, PendingType, Plan, Started, TwoArgs, TwoArgsDef};
use crate::route::plain_direct;

/// A toolkit's middleware, composed once (see the module's documentation).
#[pyclass(module = "ferrotool._core", frozen)]
pub(crate) struct Onion {
    /// The middleware, the first outermost.
    layers: Py<PyTuple>,
    /// Each layer's `active`, if it has one.
    active: Vec<Option<Active>>,
    /// The result of a call whose outermost middleware returned `value`: `settle(call, value)`.
    settle: Py<PyAny>,
    /// The result of a call whose middleware raised `error` (an `Exception`), or the error to
    /// raise when it is a programmer's mistake: `failed(call, error)`.
    failed: Py<PyAny>,
    /// `ToolResultBlock`, and `ToolResultState.RUNNING`: a result of that type in another state
    /// is final as it is.
    result_type: Py<PyAny>,
    running: Py<PyAny>,
}

#[pymethods]
impl Onion {
    #[new]
    #[pyo3(signature = (layers, *, settle, failed, result_type, running))]
    fn new(
        py: Python<'_>,
        layers: Bound<'_, PyTuple>,
        settle: Py<PyAny>,
        failed: Py<PyAny>,
        result_type: Py<PyAny>,
        running: Py<PyAny>,
    ) -> PyResult<Self> {
        let name = pyo3::intern!(py, "active");
        let active = layers
            .iter()
            .map(|layer| {
                Ok(match layer.getattr_opt(name)? {
                    Some(active) => match active.cast_into::<IsSet>() {
                        Ok(slot) => Some(Active::Slot(slot.unbind())),
                        Err(error) => {
                            let active = error.into_inner();
                            active.is_callable().then(|| Active::Call(active.unbind()))
                        }
                    },
                    None => None,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Self {
            layers: layers.unbind(),
            active,
            settle,
            failed,
            result_type,
            running,
        })
    }

    /// The awaitable of one call through the layers active now; `rest(call, context)` runs the
    /// call itself.
    pub(crate) fn run(
        slf: &Bound<'_, Self>,
        call: &Bound<'_, PyAny>,
        context: &Bound<'_, PyAny>,
        rest: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        match slf.get().taking_part(call)? {
            TakingPart::None => pending::call2(rest, call, context).map(Bound::unbind),
            taking_part => Self::run_layers(slf, taking_part, call, context, rest),
        }
    }

    /// How many layers the onion holds.
    fn __len__(&self, py: Python<'_>) -> usize {
        self.layers.bind(py).len()
    }
}

/// Which layers take part in a call.
pub(crate) enum TakingPart<'py> {
    /// None: the call is `rest`'s alone.
    None,
    /// These, the first outermost.
    Layers(Bound<'py, PyTuple>),
    /// A layer's `active()` raised: the call's result is the middleware step's error, as if the
    /// layer had raised.
    Failed(Bound<'py, PyAny>),
}

impl Onion {
    /// The layers that take part in `call` now (see [`TakingPart`]).
    pub(crate) fn taking_part<'py>(&self, call: &Bound<'py, PyAny>) -> PyResult<TakingPart<'py>> {
        let py = call.py();
        match self.active_layers(py) {
            Ok(layers) if layers.is_empty() => Ok(TakingPart::None),
            Ok(layers) => Ok(TakingPart::Layers(layers)),
            Err(error) if error.is_instance_of::<PyException>(py) => {
                let result = self.failed.bind(py).call1((call, error.into_value(py)))?;
                Ok(TakingPart::Failed(result))
            }
            Err(error) => Err(error),
        }
    }

    /// The plan of every call through all the layers in `context`, then `rest`: built once
    /// where both are the same for many calls (a toolkit's calls with no context of their own).
    pub(crate) fn plan_for_all(
        slf: &Bound<'_, Self>,
        context: &Bound<'_, PyAny>,
        rest: &Bound<'_, PyAny>,
    ) -> PyResult<Py<Layered>> {
        let py = slf.py();
        let layers = slf.get().layers.bind(py);
        Py::new(py, Layered::new(slf, layers, context, rest)?)
    }

    /// Whether the onion holds any layer.
    pub(crate) fn has_layers(&self, py: Python<'_>) -> bool {
        !self.layers.bind(py).is_empty()
    }

    /// Whether every layer takes part in every call: none declares an `active()`.
    pub(crate) fn every_call(&self) -> bool {
        self.active.iter().all(Option::is_none)
    }

    /// Whether `layers` are all of this onion's (what `taking_part` gives when every layer
    /// takes part).
    pub(crate) fn is_all(&self, layers: &Bound<'_, PyTuple>) -> bool {
        layers.is(self.layers.bind(layers.py()))
    }

    /// The awaitable of `call` through the layers taking part, then `rest`.
    pub(crate) fn run_layers(
        slf: &Bound<'_, Self>,
        taking_part: TakingPart<'_>,
        call: &Bound<'_, PyAny>,
        context: &Bound<'_, PyAny>,
        rest: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let plan = match taking_part {
            TakingPart::Layers(layers) => Layered::new(slf, &layers, context, rest)?,
            TakingPart::Failed(result) => Layered {
                onion: slf.clone().unbind(),
                begin: Begin::Ready(result.unbind()),
            },
            TakingPart::None => return pending::call2(rest, call, context).map(Bound::unbind),
        };
        pending::pending_call(&Bound::new(py, plan)?, call)
    }

    /// The layers that take part in a call now: every layer without `active()`, and those
    /// whose `active()` is true (an empty tuple, allocated nowhere, when none does).
    fn active_layers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let layers = self.layers.bind(py);
        if self.every_call() {
            return Ok(layers.clone());
        }
        let mut taking_part = Vec::new();
        for (layer, active) in layers.iter().zip(&self.active) {
            match active {
                Some(active) if !active.is_true(py)? => {}
                _ => taking_part.push(layer),
            }
        }
        if taking_part.len() == layers.len() {
            return Ok(layers.clone());
        }
        PyTuple::new(py, taking_part)
    }
}

/// How the onion asks a layer whether it takes part in a call.
enum Active {
    /// Its `active()`, called.
    Call(Py<PyAny>),
    /// An `IsSet`, read without a call.
    Slot(Py<IsSet>),
}

impl Active {
    fn is_true(&self, py: Python<'_>) -> PyResult<bool> {
        match self {
            Self::Call(active) => active.bind(py).call0()?.is_truthy(),
            Self::Slot(slot) => slot.get().is_set(py),
        }
    }
}

/// `IsSet(namespace, key)()`: whether `namespace[key]` holds a value other than `None`.
///
/// A layer's `active` of this type is read by the onion with one dictionary lookup and no
/// call (`ferrotool.telemetry.Tracing` watches OpenTelemetry's global provider slot so).
#[pyclass(module = "ferrotool._core", frozen)]
pub(crate) struct IsSet {
    namespace: Py<PyDict>,
    key: Py<PyString>,
}

#[pymethods]
impl IsSet {
    #[new]
    fn new(namespace: Py<PyDict>, key: Py<PyString>) -> Self {
        Self { namespace, key }
    }

    fn __call__(&self, py: Python<'_>) -> PyResult<bool> {
        self.is_set(py)
    }
}

impl IsSet {
    fn is_set(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self
            .namespace
            .bind(py)
            .get_item(self.key.bind(py))?
            .is_some_and(|value| !value.is_none()))
    }
}

/// Where `state` is in a `ToolResultBlock` (a named tuple: id, name, output, state, ...).
const STATE: usize = 3;

/// One call through the onion: the plan of its `PendingCall`.
///
/// A plan per call (it holds the call's context and rest), or one for every call with no
/// context of its own through all the layers (`Onion::plan_for_all`); its `PendingCall` holds
/// the call. The chain of `next`s is built with the plan, so a call through a plan built once
/// allocates nothing for its layers.
#[pyclass(module = "ferrotool._core", frozen)]
pub(crate) struct Layered {
    onion: Py<Onion>,
    begin: Begin,
}

/// How a call through the onion begins.
enum Begin {
    /// The outermost layer taking part is called with the call, `context` and `next`.
    Layer {
        outermost: Py<PyAny>,
        context: Py<PyAny>,
        next: Py<PyAny>,
    },
    /// The call's result, known before any layer ran (a layer's `active()` raised).
    Ready(Py<PyAny>),
}

impl Layered {
    /// The plan of a call in `context` through `layers` (at least one), then `rest`.
    fn new(
        onion: &Bound<'_, Onion>,
        layers: &Bound<'_, PyTuple>,
        context: &Bound<'_, PyAny>,
        rest: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let py = onion.py();
        let mut next = rest.clone().unbind();
        let mut outermost = None;
        for (index, layer) in layers.iter().enumerate().rev() {
            if index == 0 {
                outermost = Some(layer.unbind());
            } else {
                let layer = NextLayer {
                    layer: layer.unbind(),
                    next,
                };
                next = Py::new(py, layer)?.into_any();
            }
        }
        let Some(outermost) = outermost else {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "an onion's call goes through at least one layer",
            ));
        };
        Ok(Self {
            onion: onion.clone().unbind(),
            begin: Begin::Layer {
                outermost,
                context: context.clone().unbind(),
                next,
            },
        })
    }
}

impl Plan for Layered {
    fn pending_type() -> &'static PendingType {
        static TYPE: PendingType = PendingType::new();
        &TYPE
    }

    /// Calls the outermost layer with the next one.
    fn start<'py>(&self, call: &Bound<'py, PyAny>) -> PyResult<Started<'py>> {
        let py = call.py();
        match &self.begin {
            Begin::Layer {
                outermost,
                context,
                next,
            } => self.awaiting(
                call,
                pending::call3(outermost.bind(py), call, context.bind(py), next.bind(py)),
            ),
            Begin::Ready(result) => Ok(Started::Finished(result.bind(py).clone())),
        }
    }

    /// A `ToolResultBlock` that is not `RUNNING` is the call's result as it is; anything else
    /// is settled by the Python side.
    fn result<'py>(
        &self,
        call: &Bound<'py, PyAny>,
        value: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = call.py();
        let onion = self.onion.get();
        if value.get_type_ptr() == onion.result_type.as_ptr().cast()
            && let Ok(fields) = value.cast::<PyTuple>()
            && !fields.get_borrowed_item(STATE)?.is(onion.running.bind(py))
        {
            return Ok(value);
        }
        onion.settle.bind(py).call1((call, value))
    }

    /// A cancellation (any exception that is not an `Exception`) goes on; the Python side
    /// turns an `Exception` into the middleware step's error result, or raises it again.
    fn failed<'py>(&self, call: &Bound<'py, PyAny>, error: PyErr) -> PyResult<Bound<'py, PyAny>> {
        let py = call.py();
        if !error.is_instance_of::<PyException>(py) {
            return Err(error);
        }
        self.onion
            .get()
            .failed
            .bind(py)
            .call1((call, error.into_value(py)))
    }
}

/// A middleware's `next` when a layer follows it: the rest of its call, from the next layer in
/// (the innermost layer's `next` is the call's `rest` itself). Built with the call's plan.
#[pyclass(module = "ferrotool._core", frozen)]
pub(crate) struct NextLayer {
    /// The next layer.
    layer: Py<PyAny>,
    /// That layer's own `next`.
    next: Py<PyAny>,
}

#[pymethods]
impl NextLayer {
    /// Goes on with `call` in `context`: through the next layer, or after the innermost, to
    /// the call itself.
    fn __call__(
        &self,
        py: Python<'_>,
        call: &Bound<'_, PyAny>,
        context: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        pending::call3(self.layer.bind(py), call, context, self.next.bind(py)).map(Bound::unbind)
    }
}

/// The innermost `rest` of a toolkit's calls: a plain tool's call to its Rust direct call,
/// any other to `bare(call, context)` (the default view's dispatch, with no middleware).
#[pyclass(module = "ferrotool._core", frozen)]
pub(crate) struct DirectRoute {
    direct: Py<PyDict>,
    bare: Py<PyAny>,
    /// The toolkit's empty context, if given: a call in it carries no request config, known
    /// without asking it.
    empty: Option<Py<PyAny>>,
}

#[pymethods]
impl DirectRoute {
    #[new]
    #[pyo3(signature = (direct, bare, *, empty=None))]
    pub(crate) fn new(direct: Py<PyDict>, bare: Py<PyAny>, empty: Option<Py<PyAny>>) -> Self {
        Self {
            direct,
            bare,
            empty,
        }
    }

    fn __call__(&self, call: &Bound<'_, PyAny>, context: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.route(call, context)
    }

    /// The same as calling the route (a bound method: called through vectorcall).
    fn run(&self, call: &Bound<'_, PyAny>, context: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.route(call, context)
    }
}

/// The route's `run` the toolkit hands to its innermost layer: a built-in method that Python
/// calls through vectorcall, with no argument parsing (a class's `__call__` is called with a
/// tuple of arguments).
impl TwoArgs for DirectRoute {
    const PARAMETERS: [&'static str; 2] = ["call", "context"];

    fn definition() -> &'static TwoArgsDef {
        static RUN: TwoArgsDef = TwoArgsDef::new::<DirectRoute>(
            c"run",
            c"run(call, context): the awaitable that runs the call.",
        );
        &RUN
    }

    fn call_two(&self, call: &Bound<'_, PyAny>, context: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.route(call, context)
    }
}

impl DirectRoute {
    /// The awaitable that runs `call` in `context`.
    pub(crate) fn route(
        &self,
        call: &Bound<'_, PyAny>,
        context: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let py = call.py();
        // The empty context (the one a call with none runs in) carries no request config.
        let empty = self.empty.as_ref().is_some_and(|empty| context.is(empty));
        let context_of_route = if empty { None } else { Some(context) };
        if let Some(direct) = plain_direct(self.direct.bind(py), call, context_of_route)? {
            return pending::pending_call(&direct, call);
        }
        pending::call2(self.bare.bind(py), call, context).map(Bound::unbind)
    }
}

/// The `PendingCall` type of calls through an onion, for the module's namespace.
pub(crate) fn layered_call_type(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyType>> {
    pending::pending_call_type::<Layered>(py)
}
