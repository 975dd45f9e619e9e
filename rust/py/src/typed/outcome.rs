//! How a validation run ends when it gives no value: [`Fatal`] stops a run from inside (bad
//! JSON, a Python error, enough errors found, the fast reader declining), [`Invalid`] is what
//! the caller is told. A leaf: everything in `typed/` and `convert.rs` may name these.
use ferrotool_core::error::LineError;
use ferrotool_core::json::scan::Declined;
use jiter::JiterError;
use pyo3::prelude::*;

use crate::errors::validation_error;

/// Stops a validation run: the input is not JSON, Python raised, or enough errors were found.
///
/// The errors are boxed so that a `Fatal` is two words: every value read returns a `Result`
/// carrying it, which is then 16 bytes instead of 72, cheap to pass back and move around.
pub(crate) enum Fatal {
    Json(Box<JiterError>),
    Python(Box<PyErr>),
    Stop,
    /// The fast reader declines the input here (see [`Scan`](super::source::Scan)): read it
    /// again with [`Stream`](super::source::Stream).
    Reread,
}

impl From<Declined> for Fatal {
    #[inline]
    fn from(_: Declined) -> Self {
        Self::Reread
    }
}

impl From<JiterError> for Fatal {
    #[cold]
    fn from(error: JiterError) -> Self {
        Self::Json(Box::new(error))
    }
}

impl From<std::convert::Infallible> for Fatal {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

impl From<PyErr> for Fatal {
    #[cold]
    fn from(error: PyErr) -> Self {
        Self::Python(Box::new(error))
    }
}

/// Why input was not turned into a value.
pub(crate) enum Invalid {
    /// It did not validate: every error found.
    Lines(Vec<LineError>),
    /// Python raised while building a value (or the input was not `str`/`bytes`).
    Python(PyErr),
}

impl Invalid {
    /// The Python exception: `ValidationError` for line errors.
    pub(crate) fn into_error(self, py: Python<'_>) -> PyErr {
        match self {
            Self::Lines(errors) => validation_error(py, errors),
            Self::Python(error) => error,
        }
    }
}
