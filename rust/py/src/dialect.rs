//! `provider_schema`: a canonical JSON Schema → a provider's dialect, with the changes made.
use ferrotool_core::dialect::{self, Dialect};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use serde_json::Value;

/// Transform a JSON Schema (JSON bytes) into a provider dialect (`openai_strict`,
/// `anthropic_strict` or `gemini`).
///
/// Returns `(schema JSON bytes, ((pointer, keyword, message, lossy), ...), faithful)`. Raises
/// `ValueError` on invalid JSON or an unknown dialect.
#[pyfunction]
#[pyo3(signature = (schema, dialect, /))]
pub(crate) fn provider_schema<'py>(
    py: Python<'py>,
    schema: &[u8],
    dialect: &str,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyTuple>, bool)> {
    let Some(dialect) = Dialect::parse(dialect) else {
        let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
        return Err(PyValueError::new_err(format!(
            "unknown schema dialect {dialect:?}: expected one of {}",
            names.join(", ")
        )));
    };
    let value: Value = serde_json::from_slice(schema)
        .map_err(|error| PyValueError::new_err(format!("invalid JSON schema: {error}")))?;
    let transformed = py.detach(|| dialect::transform(&value, dialect));
    let bytes = serde_json::to_vec(&transformed.schema)
        .map_err(|error| PyValueError::new_err(format!("cannot serialize the schema: {error}")))?;
    let changes = PyTuple::new(
        py,
        transformed
            .changes
            .into_iter()
            .map(|change| (change.pointer, change.keyword, change.message, change.lossy)),
    )?;
    Ok((PyBytes::new(py, &bytes), changes, transformed.faithful))
}
