//! `PendingCall`: one call of a plan in progress, as an awaitable built on the C API.
//!
//! It is a hand-made type (not a `#[pyclass]`) because it implements `am_send`, the slot
//! through which `await` and asyncio's tasks resume an awaitable: a finished call hands its
//! result back directly, where an iterator would have to raise `StopIteration` to return it.
//! It also has `send`, `throw` and `close`, so it is a `collections.abc.Coroutine`: cancellation
//! thrown into it reaches the tool's coroutine, and a tracing interpreter (which resumes through
//! `__next__` and `send`) sees the same behaviour.
//!
//! What a call does is the plan's ([`Plan`]: `DirectCall` in [`crate::call`]); this module only
//! holds the object, its protocol (start, drive, throw, close, no re-entry) and its slots.
//! Each plan type gets a `PendingCall` type of its own, whose slots are instantiated for it.

use std::ffi::{CStr, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use pyo3::Borrowed;
use pyo3::PyClass;
use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pyclass::boolean_struct::True;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyTuple, PyType};

/// What the first step of a call led to.
pub(crate) enum Started<'py> {
    /// The call is over: its result.
    Finished(Bound<'py, PyAny>),
    /// The tool's coroutine (an iterator to drive), converted into a result when it returns.
    Drive(Bound<'py, PyAny>),
}

/// What a `PendingCall` runs: a frozen pyclass that starts a call and turns how the tool's
/// coroutine ended into the call's result.
pub(crate) trait Plan: PyClass<Frozen = True> + Sync {
    /// Where the `PendingCall` type of this plan's calls is kept (created on first use).
    fn pending_type() -> &'static PendingType;
    /// The first step: the call's result, or the coroutine to drive.
    fn start<'py>(&self, call: &Bound<'py, PyAny>) -> PyResult<Started<'py>>;
    /// The result of a call whose tool returned `value`.
    fn result<'py>(
        &self,
        call: &Bound<'py, PyAny>,
        value: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>>;
    /// The result of a call whose tool raised `error` (or was cancelled); raises what must not
    /// become a result.
    fn failed<'py>(&self, call: &Bound<'py, PyAny>, error: PyErr) -> PyResult<Bound<'py, PyAny>>;

    /// The first step of a call whose tool (or layer) was called for an awaitable: its
    /// iterator to drive, or the result of the call having raised (or given no awaitable).
    fn awaiting<'py>(
        &self,
        call: &Bound<'py, PyAny>,
        called: PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Started<'py>> {
        match called.and_then(awaitable_iter) {
            Ok(iterator) => Ok(Started::Drive(iterator)),
            Err(error) => Ok(Started::Finished(self.failed(call, error)?)),
        }
    }
}

/// The `PendingCall` type of one plan type, created once per interpreter.
pub(crate) struct PendingType(PyOnceLock<Py<PyType>>);

impl PendingType {
    pub(crate) const fn new() -> Self {
        Self(PyOnceLock::new())
    }
}

/// The `PendingCall` type of `P`'s calls.
fn pending_type<P: Plan>(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    P::pending_type()
        .0
        .get_or_try_init(py, || create_pending_type::<P>(py))
        .map(|class| class.bind(py))
}

/// The `PendingCall` type of `P`'s calls, for the module's namespace.
pub(crate) fn pending_call_type<P: Plan>(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    pending_type::<P>(py).cloned()
}

/// A new `PendingCall` of `call` under `plan`: nothing runs until it is awaited.
pub(crate) fn pending_call<P: Plan>(
    plan: &Bound<'_, P>,
    call: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let py = plan.py();
    let class = pending_type::<P>(py)?;
    // SAFETY: `PyType_GenericAlloc` returns a zeroed, GC-tracked `PendingCallObject` (the
    // type's basic size); the fields it holds are owned references set right here, the plan
    // one of the type `P` this `PendingCall` type was made for.
    unsafe {
        let object = ffi::PyType_GenericAlloc(class.as_type_ptr(), 0);
        if object.is_null() {
            return Err(PyErr::fetch(py));
        }
        let pending = object.cast::<PendingCallObject>();
        (*pending).plan = plan.clone().into_ptr();
        (*pending).call = call.clone().into_ptr();
        (*pending).phase = Phase::Start;
        Ok(Bound::from_owned_ptr(py, object).unbind())
    }
}

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
    /// The plan (owned), of the type this `PendingCall` type was made for.
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

    /// The plan, of type `P`: the caller is a slot of `P`'s `PendingCall` type, so it is one
    /// (checked all the same: a `Plan` implementation that shared its `PendingType` with another
    /// plan type would otherwise hand a slot the wrong type).
    fn plan<P: Plan>(self, py: Python<'_>) -> PyResult<Bound<'_, P>> {
        // SAFETY: as in `phase`.
        let plan = Self::field(py, unsafe { (*self.0).plan })
            .ok_or_else(|| PyRuntimeError::new_err("the tool call was cleared"))?;
        Ok(plan.cast_into::<P>()?)
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
    fn resume<'py, P: Plan>(self, py: Python<'py>, how: &Resume<'_, 'py>) -> PyResult<Step<'py>> {
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
        let step = self.step::<P>(py, phase, how);
        if self.phase() == Phase::Running {
            // A step that yields sets the phase to resume in; one that stops early ends the call.
            self.finish();
        }
        step
    }

    fn step<'py, P: Plan>(
        self,
        py: Python<'py>,
        phase: Phase,
        how: &Resume<'_, 'py>,
    ) -> PyResult<Step<'py>> {
        let plan = self.plan::<P>(py)?;
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
    fn drive<'py, P: Plan>(
        self,
        plan: &Bound<'py, P>,
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

unsafe extern "C" fn pending_send<P: Plan>(
    slf: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
    out: *mut *mut ffi::PyObject,
) -> ffi::PySendResult {
    // SAFETY: called by the interpreter with the GIL held, on a `PendingCall`, with a borrowed
    // `arg` and a valid `out`.
    unsafe {
        slot(ffi::PySendResult::PYGEN_ERROR, |py| {
            let arg = Bound::from_borrowed_ptr(py, arg);
            let step = Pending(slf.cast()).resume::<P>(py, &Resume::Send(&arg))?;
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

unsafe extern "C" fn pending_next<P: Plan>(slf: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: `__next__` is `send(None)`; `None` is immortal for the call's duration.
    unsafe { pending_send_method::<P>(slf, ffi::Py_None()) }
}

unsafe extern "C" fn pending_send_method<P: Plan>(
    slf: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: a METH_O method: the GIL is held and `arg` is borrowed.
    unsafe {
        slot(ptr::null_mut(), |py| {
            let arg = Bound::from_borrowed_ptr(py, arg);
            iterator_outcome(Pending(slf.cast()).resume::<P>(py, &Resume::Send(&arg))?)
        })
    }
}

unsafe extern "C" fn pending_throw<P: Plan>(
    slf: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: a METH_VARARGS method: the GIL is held and `args` is a borrowed tuple.
    unsafe {
        slot(ptr::null_mut(), |py| {
            let args = Bound::from_borrowed_ptr(py, args).cast_into::<PyTuple>()?;
            iterator_outcome(Pending(slf.cast()).resume::<P>(py, &Resume::Throw(&args))?)
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
    // SAFETY: the object is untracked before its fields are released, then freed by its
    // type's `tp_free` (`PyObject_GC_Del`, set in its spec); the heap type's reference held by
    // the instance is released last.
    unsafe {
        ffi::PyObject_GC_UnTrack(slf.cast());
        pending_clear(slf);
        let class = ffi::Py_TYPE(slf);
        ffi::PyObject_GC_Del(slf.cast());
        ffi::Py_DECREF(class.cast());
    }
}

fn create_pending_type<P: Plan>(py: Python<'_>) -> PyResult<Py<PyType>> {
    // The method table lives as long as the type, that is for good.
    let methods: &'static mut [ffi::PyMethodDef; 4] = Box::leak(Box::new([
        ffi::PyMethodDef {
            ml_name: c"send".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: pending_send_method::<P>,
            },
            ml_flags: ffi::METH_O,
            ml_doc: c"send(value): resume the call.".as_ptr(),
        },
        ffi::PyMethodDef {
            ml_name: c"throw".as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunction: pending_throw::<P>,
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
        slot(ffi::Py_tp_free, ffi::PyObject_GC_Del as *mut c_void),
        slot(ffi::Py_tp_traverse, pending_traverse as *mut c_void),
        slot(ffi::Py_tp_clear, pending_clear as *mut c_void),
        slot(ffi::Py_tp_iternext, pending_next::<P> as *mut c_void),
        slot(ffi::Py_am_await, pending_await as *mut c_void),
        slot(ffi::Py_am_send, pending_send::<P> as *mut c_void),
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
    if value.get_type_ptr() == coroutine.as_ptr().cast() {
        return Ok(value);
    }
    value.call_method0(pyo3::intern!(py, "__await__"))
}

static COROUTINE_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A frozen pyclass whose instances hand out a method of two arguments that Python calls
/// through vectorcall, with no argument parsing in between when both come by position
/// ([`two_args_method`]): what a call through the onion calls once per call, such as the route
/// inside it.
pub(crate) trait TwoArgs: PyClass<Frozen = True> + Sync {
    /// The names of the two arguments, for a call that passes them by name.
    const PARAMETERS: [&'static str; 2];
    /// The method's definition, in a static: `TwoArgsDef::new::<Self>(name, doc)`.
    fn definition() -> &'static TwoArgsDef;
    /// The method itself.
    fn call_two(&self, first: &Bound<'_, PyAny>, second: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>>;
}

/// The definition of a [`TwoArgs`] method (a `METH_FASTCALL | METH_KEYWORDS` one).
pub(crate) struct TwoArgsDef(ffi::PyMethodDef);

// SAFETY: the definition holds a function pointer and pointers to static strings, never
// written: it can be read from any thread.
unsafe impl Sync for TwoArgsDef {}

impl TwoArgsDef {
    pub(crate) const fn new<T: TwoArgs>(name: &'static CStr, doc: &'static CStr) -> Self {
        Self(ffi::PyMethodDef {
            ml_name: name.as_ptr(),
            ml_meth: ffi::PyMethodDefPointer {
                PyCFunctionFastWithKeywords: two_args::<T>,
            },
            ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
            ml_doc: doc.as_ptr(),
        })
    }

    /// The method's name.
    fn name(&self) -> std::borrow::Cow<'static, str> {
        // SAFETY: `ml_name` comes from a static `CStr` (see `new`).
        unsafe { CStr::from_ptr(self.0.ml_name) }.to_string_lossy()
    }
}

/// `object`'s [`TwoArgs`] method, bound to it.
pub(crate) fn two_args_method<'py, T: TwoArgs>(
    object: &Bound<'py, T>,
) -> PyResult<Bound<'py, PyAny>> {
    let definition = ptr::from_ref(&T::definition().0).cast_mut();
    // SAFETY: the definition is static and never written (CPython only reads it); the new
    // function holds its own reference to `object`; the result is a new reference or null with
    // an exception set.
    unsafe {
        Bound::from_owned_ptr_or_err(
            object.py(),
            ffi::PyCFunction_NewEx(definition, object.as_ptr(), ptr::null_mut()),
        )
    }
}

unsafe extern "C" fn two_args<T: TwoArgs>(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: a METH_FASTCALL | METH_KEYWORDS function called with the GIL held: `slf` is the
    // object it was bound to (a `T`, checked all the same), `args` holds `nargs` positional
    // arguments then one per name in `kwnames` (a tuple, or null), all borrowed and alive for
    // the call.
    unsafe {
        slot(ptr::null_mut(), |py| {
            let object = Borrowed::from_ptr(py, slf).cast::<T>()?;
            if kwnames.is_null() && nargs == 2 {
                let first = Borrowed::from_ptr(py, *args);
                let second = Borrowed::from_ptr(py, *args.add(1));
                return Ok(object.get().call_two(&first, &second)?.into_ptr());
            }
            let positional = usize::try_from(nargs).unwrap_or(0);
            let names = Borrowed::from_ptr_or_opt(py, kwnames);
            let values = (0..positional + names.map_or(0, |names| names.len().unwrap_or(0)))
                .map(|index| Bound::from_borrowed_ptr(py, *args.add(index)))
                .collect::<Vec<_>>();
            let [first, second] = named_two::<T>(&values, positional, names.as_deref())?;
            Ok(object.get().call_two(&first, &second)?.into_ptr())
        })
    }
}

/// The two arguments of a [`TwoArgs`] call that passes some by name, or too few or too many:
/// `values` holds the `positional` ones, then one per name in `names`.
#[cold]
fn named_two<'py, T: TwoArgs>(
    values: &[Bound<'py, PyAny>],
    positional: usize,
    names: Option<&Bound<'py, PyAny>>,
) -> PyResult<[Bound<'py, PyAny>; 2]> {
    let method = T::definition().name();
    if positional > 2 {
        return Err(PyTypeError::new_err(format!(
            "{method}() takes 2 positional arguments but {positional} were given"
        )));
    }
    let mut found: [Option<Bound<'py, PyAny>>; 2] = [None, None];
    for (slot, value) in found.iter_mut().zip(&values[..positional]) {
        *slot = Some(value.clone());
    }
    if let Some(names) = names {
        for (name, value) in names.try_iter()?.zip(&values[positional..]) {
            let name = name?;
            let name = name.cast::<pyo3::types::PyString>()?.to_str()?;
            let Some(index) = T::PARAMETERS.iter().position(|known| *known == name) else {
                return Err(PyTypeError::new_err(format!(
                    "{method}() got an unexpected keyword argument '{name}'"
                )));
            };
            if found[index].replace(value.clone()).is_some() {
                return Err(PyTypeError::new_err(format!(
                    "{method}() got multiple values for argument '{name}'"
                )));
            }
        }
    }
    match found {
        [Some(first), Some(second)] => Ok([first, second]),
        [first, _] => {
            let missing = T::PARAMETERS[usize::from(first.is_some())];
            Err(PyTypeError::new_err(format!(
                "{method}() missing required argument '{missing}'"
            )))
        }
    }
}

/// `$callable($args...)`, the arguments handed over without a tuple.
///
/// `PyObject_CallFunctionObjArgs` passes them on a small array through vectorcall, which the
/// limited API of Python 3.11 offers no other way; `call1` would build a tuple per call.
macro_rules! call_on_stack {
    ($callable:expr, $($arg:expr),+) => {{
        let callable: &Bound<'_, PyAny> = $callable;
        // SAFETY: every argument is a live object borrowed for the call, the list ends with
        // null, and the result is a new reference or null with an exception set.
        unsafe {
            Bound::from_owned_ptr_or_err(
                callable.py(),
                ffi::PyObject_CallFunctionObjArgs(
                    callable.as_ptr(),
                    $($arg.as_ptr(),)+
                    ptr::null_mut::<ffi::PyObject>(),
                ),
            )
        }
    }};
}

/// `callable(first, second)` (see [`call_on_stack!`]): the route inside the onion.
pub(crate) fn call2<'py>(
    callable: &Bound<'py, PyAny>,
    first: &Bound<'py, PyAny>,
    second: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    call_on_stack!(callable, first, second)
}

/// `callable(first, second, third)` (see [`call_on_stack!`]): a middleware layer's call.
pub(crate) fn call3<'py>(
    callable: &Bound<'py, PyAny>,
    first: &Bound<'py, PyAny>,
    second: &Bound<'py, PyAny>,
    third: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    call_on_stack!(callable, first, second, third)
}
