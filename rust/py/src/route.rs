//! Which way a call goes: whether its context lets it take a plain tool's direct call, and
//! which direct call that is.
//!
//! A call may take the direct route only when its context carries no request config (a view
//! other than the default one); a context that is no `RuntimeContext` is the caller's mistake,
//! raised as a `TypeError` naming the call.
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

use crate::call::{DirectCall, Field, field, misuse, misused_context};

static RUNTIME_CONTEXT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Whether a sync call with this context may take the plain route: the context is none, or a
/// `RuntimeContext` without a request config. Anything else where the context goes is the
/// `TypeError` saying how to build one (after the one for a call that is no call).
pub(crate) fn sync_context_is_plain(
    call: &Bound<'_, PyAny>,
    context: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    let Some(context) = context.filter(|context| !context.is_none()) else {
        return Ok(true);
    };
    let py = context.py();
    let class = RUNTIME_CONTEXT.import(py, "ferrotool._values.context", "RuntimeContext")?;
    if !context.is_instance(class)? {
        let error = PyTypeError::new_err("call_tool_sync takes a RuntimeContext as its context");
        return Err(misuse(
            call,
            misused_context("call_tool_sync", context, error),
        ));
    }
    Ok(!carries_request_config(context)?)
}

static REQUEST_CONFIG: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Whether a call's context carries a request config (its view is not the default one).
fn carries_request_config(context: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = context.py();
    let config = REQUEST_CONFIG.import(py, "ferrotool._requests.config", "ToolRequestConfig")?;
    let values = context.getattr(pyo3::intern!(py, "values"))?;
    if values.len()? == 0 {
        return Ok(false);
    }
    values.contains(config)
}

/// Whether a call's context carries a request config; a context that cannot say is the
/// `TypeError` that shows what to pass.
pub(crate) fn carries_config(
    call: &Bound<'_, PyAny>,
    context: Option<&Bound<'_, PyAny>>,
) -> PyResult<bool> {
    match context {
        None => Ok(false),
        Some(context) if context.is_none() => Ok(false),
        Some(context) => carries_request_config(context)
            .map_err(|error| misuse(call, misused_context("call_tool", context, error))),
    }
}

/// The direct call that runs `call` as a plain tool's, if its route is plain: its context
/// carries no request config and `direct` holds its tool's name.
pub(crate) fn plain_direct<'py>(
    direct: &Bound<'py, PyDict>,
    call: &Bound<'py, PyAny>,
    context: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<Bound<'py, DirectCall>>> {
    if carries_config(call, context)? {
        return Ok(None);
    }
    let name = field(call, Field::Name)?;
    // A name no dict can hold (unhashable) is no plain tool's: the pipeline answers it.
    if let Ok(Some(found)) = direct.get_item(&name)
        && let Ok(found) = found.cast_into::<DirectCall>()
    {
        return Ok(Some(found));
    }
    Ok(None)
}
