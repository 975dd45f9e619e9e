//! Validation errors as Python values: `ErrorDetail` records and the `ValidationError` exception.
use ferrotool_core::error::{ErrorCode, LineError, PathItem, json_pointer};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

// Defined in Python (`ferrotool.errors`, under `FerrotoolError`), raised from here.
pyo3::import_exception!(ferrotool.errors, ValidationError);

/// One problem found in an input: a stable code, where it is, what was expected and found.
#[pyclass(module = "ferrotool._core", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct ErrorDetail {
    code: ErrorCode,
    path: Vec<PathItem>,
    #[pyo3(get)]
    expected: String,
    #[pyo3(get)]
    found: String,
}

#[pymethods]
impl ErrorDetail {
    /// The stable `snake_case` error code, e.g. `"wrong_type"`.
    #[getter]
    fn code(&self) -> &'static str {
        self.code.as_str()
    }

    /// The location as a tuple of keys (`str`) and indices (`int`).
    #[getter]
    fn path<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let items: Vec<Bound<'py, PyAny>> = self
            .path
            .iter()
            .map(|item| match item {
                PathItem::Key(key) => Ok(PyString::new(py, key).into_any()),
                PathItem::Index(index) => Ok(index.into_pyobject(py)?.into_any()),
            })
            .collect::<PyResult<_>>()?;
        PyTuple::new(py, items)
    }

    /// The location as a JSON Pointer (`""` for the whole input).
    #[getter]
    fn pointer(&self) -> String {
        json_pointer(&self.path)
    }

    /// A one-line message, short enough to hand back to a model.
    #[getter]
    fn message(&self) -> String {
        self.line().message()
    }

    fn __repr__(&self) -> String {
        format!(
            "ErrorDetail(code={:?}, pointer={:?}, expected={:?}, found={:?})",
            self.code.as_str(),
            json_pointer(&self.path),
            self.expected,
            self.found
        )
    }

    fn __str__(&self) -> String {
        self.line().message()
    }
}

impl ErrorDetail {
    fn line(&self) -> LineError {
        LineError {
            code: self.code,
            path: self.path.clone(),
            expected: self.expected.clone().into(),
            found: self.found.clone().into(),
        }
    }
}

/// Builds the Python `ValidationError` for a list of line errors.
pub(crate) fn validation_error(py: Python<'_>, errors: Vec<LineError>) -> PyErr {
    match build_validation_error(py, errors) {
        Ok(error) | Err(error) => error,
    }
}

/// The `ErrorDetail` values of a list of line errors.
pub(crate) fn error_details(
    py: Python<'_>,
    errors: Vec<LineError>,
) -> PyResult<Bound<'_, PyTuple>> {
    let details: Vec<Bound<'_, ErrorDetail>> = errors
        .into_iter()
        .map(|error| {
            Bound::new(
                py,
                ErrorDetail {
                    code: error.code,
                    path: error.path,
                    expected: error.expected.into_owned(),
                    found: error.found.into_owned(),
                },
            )
        })
        .collect::<PyResult<_>>()?;
    PyTuple::new(py, details)
}

fn build_validation_error(py: Python<'_>, errors: Vec<LineError>) -> PyResult<PyErr> {
    let summary = summarize(&errors);
    let exception = py
        .get_type::<ValidationError>()
        .call1((summary, error_details(py, errors)?))?;
    Ok(PyErr::from_value(exception))
}

fn summarize(errors: &[LineError]) -> String {
    let count = errors.len();
    let noun = if count == 1 { "error" } else { "errors" };
    let mut out = format!("{count} validation {noun}");
    for error in errors {
        out.push_str("\n  ");
        out.push_str(&error.message());
    }
    out
}

/// The model-facing text for a call whose arguments did not validate: every error on a line.
pub(crate) fn invalid_arguments_text(tool: &str, errors: &[LineError]) -> String {
    let mut text = format!("Error: Invalid arguments for tool '{tool}':");
    for error in errors {
        text.push_str("\n- ");
        text.push_str(&error.message());
    }
    text.push_str("\nCorrect the arguments and call the tool again.");
    text
}

/// The errors as JSON-ready records: `{"code", "pointer", "expected", "found"}` each.
pub(crate) fn error_records<'py>(
    py: Python<'py>,
    errors: &[LineError],
) -> PyResult<Bound<'py, PyList>> {
    let records = PyList::empty(py);
    for error in errors {
        let record = PyDict::new(py);
        record.set_item(pyo3::intern!(py, "code"), error.code.as_str())?;
        record.set_item(pyo3::intern!(py, "pointer"), json_pointer(&error.path))?;
        record.set_item(pyo3::intern!(py, "expected"), error.expected.as_ref())?;
        record.set_item(pyo3::intern!(py, "found"), error.found.as_ref())?;
        records.append(record)?;
    }
    Ok(records)
}

/// `invalid_arguments(tool, details)`: the text and error records of a result for invalid
/// arguments (see [`invalid_arguments_text`] and [`error_records`]).
#[pyfunction]
pub(crate) fn invalid_arguments<'py>(
    py: Python<'py>,
    tool: &str,
    details: &Bound<'py, PyTuple>,
) -> PyResult<(String, Bound<'py, PyList>)> {
    let errors = details
        .iter()
        .map(|detail| Ok(detail.cast::<ErrorDetail>()?.get().line()))
        .collect::<PyResult<Vec<LineError>>>()?;
    Ok((
        invalid_arguments_text(tool, &errors),
        error_records(py, &errors)?,
    ))
}

/// Whether arguments that failed may hold a `null` at an optional property (what a strict
/// provider schema makes a model send for "not given"): readable JSON with a `null` in its text.
/// Such calls are validated again by the pipeline with those nulls read as left out; the Python
/// pipeline decides the same way (`retry_without_nulls`).
pub(crate) fn may_hold_nulls(errors: &[LineError], raw: &[u8]) -> bool {
    errors.iter().all(|error| {
        !matches!(
            error.code,
            ErrorCode::InvalidJson | ErrorCode::InputTooLarge | ErrorCode::NestingTooDeep
        )
    }) && raw.windows(4).any(|window| window == b"null")
}
