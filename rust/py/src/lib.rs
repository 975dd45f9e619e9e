//! `ferrotool._core`: the only place where `PyO3` appears.
mod batch;
mod call;
mod caller;
mod convert;
mod derive;
mod dialect;
mod errors;
mod ffi;
mod instance;
mod onion;
mod route;
mod schema_validator;
mod typed;

use pyo3::prelude::*;

// `gil_used = true`: the module relies on the GIL. The borrowed walk (`ffi/borrowed.rs`) is
// sound because no other thread runs Python code while it reads containers through borrowed
// pointers; `PyO3`'s default, `false`, would tell a free-threaded interpreter otherwise. The
// question is latent today (the abi3 wheel cannot load on a free-threaded interpreter); the
// flag may become `false` once that walk no longer needs the GIL. (Plain comments: doc comments
// on this function would become the module's `__doc__`.)
#[pymodule(gil_used = true)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<errors::ErrorDetail>()?;
    m.add_class::<typed::TypedValidator>()?;
    m.add_class::<schema_validator::PySchemaValidator>()?;
    m.add_class::<call::DirectCall>()?;
    m.add_class::<caller::ToolCaller>()?;
    m.add("PendingCall", call::pending_call_type(m.py())?)?;
    m.add_class::<onion::Onion>()?;
    m.add_class::<onion::IsSet>()?;
    m.add_class::<onion::NextLayer>()?;
    m.add_class::<onion::DirectRoute>()?;
    m.add("LayeredCall", onion::layered_call_type(m.py())?)?;
    m.add_function(wrap_pyfunction!(batch::plan_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch::run_on_the_spot, m)?)?;
    m.add_function(wrap_pyfunction!(derive::derive_schema, m)?)?;
    m.add_function(wrap_pyfunction!(errors::invalid_arguments, m)?)?;
    m.add_function(wrap_pyfunction!(dialect::provider_schema, m)?)?;
    Ok(())
}
