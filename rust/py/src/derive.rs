//! `derive_schema`: IR JSON in, JSON Schema bytes out.
use ferrotool_core::derive;
use ferrotool_core::ir::Root;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Derive the JSON Schema (draft 2020-12) of a type IR document, as JSON bytes.
///
/// Raises `ValueError` when the IR does not parse or cannot become a schema.
#[pyfunction]
#[pyo3(signature = (ir_json, /))]
pub(crate) fn derive_schema<'py>(py: Python<'py>, ir_json: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let root: Root = serde_json::from_slice(ir_json)
        .map_err(|error| PyValueError::new_err(format!("invalid type IR: {error}")))?;
    Ok(PyBytes::new(py, &schema_json(&root)?))
}

/// The JSON Schema of a parsed IR document, serialized.
pub(crate) fn schema_json(root: &Root) -> PyResult<Vec<u8>> {
    let schema = derive::derive_schema(root)
        .map_err(|error| PyValueError::new_err(format!("cannot derive a schema: {error}")))?;
    serde_json::to_vec(&schema)
        .map_err(|error| PyValueError::new_err(format!("cannot serialize the schema: {error}")))
}
