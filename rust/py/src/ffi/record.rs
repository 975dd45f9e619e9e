//! Named tuples built without calling their `__new__`, and exact type checks on the results a
//! tool returns.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};

/// A named tuple class checked to be a tuple subclass of a known number of fields, whose
/// instances [`RecordType::build`] allocates directly (as `tuple.__new__(class, items)` does).
pub(crate) struct RecordType {
    class: Py<PyType>,
    fields: usize,
}

impl RecordType {
    /// `class`, once checked to be a tuple subclass with `fields` fields (a `NamedTuple`).
    pub(crate) fn new(class: &Bound<'_, PyType>, fields: usize) -> PyResult<Self> {
        let names = class.getattr(pyo3::intern!(class.py(), "_fields"))?;
        if !class.is_subclass_of::<PyTuple>()? || names.len()? != fields {
            return Err(PyTypeError::new_err(format!(
                "{} is not a named tuple of {fields} fields",
                class.name()?
            )));
        }
        Ok(Self {
            class: class.clone().unbind(),
            fields,
        })
    }

    /// A new instance holding `items`, one per field.
    pub(crate) fn build<'py>(
        &self,
        py: Python<'py>,
        items: &[&Bound<'py, PyAny>],
    ) -> PyResult<Bound<'py, PyAny>> {
        if items.len() != self.fields {
            return Err(PyValueError::new_err(format!(
                "a record of {} fields given {} items",
                self.fields,
                items.len()
            )));
        }
        let Ok(count) = ffi::Py_ssize_t::try_from(items.len()) else {
            return Err(PyValueError::new_err("too many items for a record"));
        };
        let class = self.class.bind(py);
        // SAFETY: `class` is a tuple subclass (checked by `RecordType::new`), so its `tp_alloc`
        // returns a zeroed tuple of `count` items that nothing else references yet;
        // `PyTuple_SetItem` accepts tuple subclasses and steals the reference it is given.
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
}

/// Whether `value` is exactly a `str` (no subclass).
pub(crate) fn is_exact_str(value: &Bound<'_, PyAny>) -> bool {
    // SAFETY: an exact type check on a live object.
    unsafe { ffi::PyUnicode_CheckExact(value.as_ptr()) != 0 }
}

/// Whether `value` is exactly an `int` (no subclass, so no `bool`).
pub(crate) fn is_exact_int(value: &Bound<'_, PyAny>) -> bool {
    // SAFETY: an exact type check on a live object.
    unsafe { ffi::PyLong_CheckExact(value.as_ptr()) != 0 }
}
