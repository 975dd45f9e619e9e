//! The two C-API steps of building a plain class instance the way its generated `__init__` does:
//! allocate it through the type's own `__new__`, then set each attribute with
//! `object.__setattr__`. Both are in the limited API.

use std::ffi::c_void;
use std::ptr;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};

/// `class.__new__(class)`, through the type's `tp_new` slot rather than a Python-level call.
/// For a class that keeps `object.__new__` this is exactly `object.__new__(class)`, including
/// whatever per-version set-up of the instance's attribute storage that performs.
pub(crate) fn new_instance<'py>(class: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    // SAFETY: `class` is a live type object, borrowed for the call; reading a slot neither
    // changes it nor takes a reference.
    let slot: *mut c_void = unsafe { ffi::PyType_GetSlot(class.as_type_ptr(), ffi::Py_tp_new) };
    if slot.is_null() {
        return Err(PyTypeError::new_err(format!(
            "cannot create '{}' instances",
            class.name()?
        )));
    }
    // SAFETY: the `Py_tp_new` slot, when set, holds a function of the `newfunc` signature.
    let new = unsafe { std::mem::transmute::<*mut c_void, ffi::newfunc>(slot) };
    let args = PyTuple::empty(py);
    // SAFETY: called as CPython calls a `tp_new`: the type, an argument tuple and no keywords,
    // all live and borrowed; it returns a new reference, or NULL with an exception set, which
    // `from_owned_ptr_or_err` turns into the error.
    unsafe {
        Bound::from_owned_ptr_or_err(py, new(class.as_type_ptr(), args.as_ptr(), ptr::null_mut()))
    }
}

/// `object.__setattr__(instance, key, value)`: honours data descriptors (such as `__slots__`
/// members) and bypasses an overriding `__setattr__`, as a frozen dataclass's `__init__` does.
pub(crate) fn set_attribute(
    instance: &Bound<'_, PyAny>,
    key: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: the three objects are live and borrowed for the call, which takes its own
    // references as it stores the value; it returns -1 with an exception set on failure.
    let status =
        unsafe { ffi::PyObject_GenericSetAttr(instance.as_ptr(), key.as_ptr(), value.as_ptr()) };
    if status < 0 {
        Err(PyErr::fetch(instance.py()))
    } else {
        Ok(())
    }
}
