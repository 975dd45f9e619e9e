//! `ferrotool._core`: the only place where `PyO3` appears.
mod borrowed;
mod call;
mod derive;
mod dialect;
mod errors;
mod ffi;
mod instance;
mod schema_validator;
mod typed;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "ValidationError",
        m.py().get_type::<errors::ValidationError>(),
    )?;
    m.add_class::<errors::ErrorDetail>()?;
    m.add_class::<typed::TypedValidator>()?;
    m.add_class::<schema_validator::PySchemaValidator>()?;
    m.add_class::<call::PlainCall>()?;
    m.add_class::<call::ToolCaller>()?;
    m.add("PendingCall", call::pending_call_type(m.py())?)?;
    m.add_function(wrap_pyfunction!(derive::derive_schema, m)?)?;
    m.add_function(wrap_pyfunction!(errors::invalid_arguments, m)?)?;
    m.add_function(wrap_pyfunction!(dialect::provider_schema, m)?)?;
    Ok(())
}
