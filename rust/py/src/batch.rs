//! A batch's plan, and its runs of calls that never yield, without a Python frame per call.
//!
//! `plan_batch` splits a batch's calls into slots (`ferrotool._execution.batch`): runs of
//! consecutive concurrency-safe calls, each other call alone, asking the Python side once per
//! tool name how a call of it runs. `run_on_the_spot` runs the calls of a slot of a batch (`ferrotool._execution.batch`) by
//! their Rust direct calls, in turn, and keeps each final result in the batch's list. It hands
//! back to the Python side the first call that needs more than that: one whose direct call
//! raised an `Exception` (the Python side decides whether that is the call's error result or a
//! programmer's mistake that goes on), one whose result is still `RUNNING` (to be settled), or,
//! when `one` is set (someone listens to the batch's events), every call, each after it ran.
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::call::{DirectCall, Field, field};

/// The slots of a batch, in order: `[(indices, direct calls or None), ...]`.
///
/// `kind_of(name)` says how a call of `name` runs: `(concurrency_safe, direct call that runs it
/// on the spot or None)`, asked once per name (an unhashable name, a model's mistake, is asked
/// as it is at each call). With `parallel`, consecutive concurrency-safe calls share a slot;
/// every other call has one of its own. A slot of two or more calls that all run on the spot
/// carries their direct calls; any other slot `None`.
#[pyfunction]
pub(crate) fn plan_batch<'py>(
    calls: &Bound<'py, PyTuple>,
    kind_of: &Bound<'py, PyAny>,
    parallel: bool,
) -> PyResult<Bound<'py, PyList>> {
    let py = calls.py();
    let kinds = PyDict::new(py);
    let planned = PyList::empty(py);
    let mut run: Vec<usize> = Vec::new();
    let mut direct: Option<Vec<Bound<'py, PyAny>>> = Some(Vec::new());
    let close = |run: &mut Vec<usize>, direct: &mut Option<Vec<Bound<'py, PyAny>>>| {
        let carried = match direct.take() {
            Some(direct) if run.len() > 1 => PyList::new(py, direct)?.into_any(),
            _ => py.None().into_bound(py),
        };
        planned.append((PyList::new(py, run.drain(..))?, carried))?;
        *direct = Some(Vec::new());
        PyResult::Ok(())
    };
    for (index, call) in calls.iter().enumerate() {
        let name = field(&call, Field::Name)?;
        let kind = match kinds.get_item(&name) {
            Ok(Some(kind)) => kind,
            Ok(None) => {
                let kind = kind_of.call1((&name,))?;
                kinds.set_item(&name, &kind)?;
                kind
            }
            Err(error) if error.is_instance_of::<PyTypeError>(py) => kind_of.call1((&name,))?,
            Err(error) => return Err(error),
        };
        let kind = kind.cast_into::<PyTuple>()?;
        if parallel && kind.get_item(0)?.is_truthy()? {
            run.push(index);
            let immediate = kind.get_item(1)?;
            match &mut direct {
                Some(_) if immediate.is_none() => direct = None,
                Some(direct) => direct.push(immediate),
                None => {}
            }
            continue;
        }
        if !run.is_empty() {
            close(&mut run, &mut direct)?;
        }
        planned.append((PyList::new(py, [index])?, py.None()))?;
    }
    if !run.is_empty() {
        close(&mut run, &mut direct)?;
    }
    Ok(planned)
}

/// Where `state` is in a `ToolResultBlock` (a named tuple: id, name, output, state, ...).
const STATE: usize = 3;

/// Runs `calls[slot[k]]` by `direct[k]` for `k` from `start`, keeping each final result in
/// `results[slot[k]]`; stops at the first call the Python side must see, giving its position
/// and what it gave (its result, or the `Exception` it raised), or `(len(slot), None)`.
///
/// An exception that is no `Exception` (a cancellation, `KeyboardInterrupt`) goes on.
#[pyfunction]
#[pyo3(signature = (calls, slot, direct, results, start, *, running, one))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_on_the_spot<'py>(
    calls: &Bound<'py, PyTuple>,
    slot: &Bound<'py, PyList>,
    direct: &Bound<'py, PyList>,
    results: &Bound<'py, PyList>,
    start: usize,
    running: &Bound<'py, PyAny>,
    one: bool,
) -> PyResult<(usize, Option<Bound<'py, PyAny>>)> {
    let py = calls.py();
    let count = slot.len();
    for position in start..count {
        let index: usize = slot.get_item(position)?.extract()?;
        let call = calls.get_item(index)?;
        let run = direct.get_item(position)?;
        let result = match run.cast::<DirectCall>()?.get().run(&call) {
            Ok(result) => result,
            Err(error) if error.is_instance_of::<PyException>(py) => {
                return Ok((
                    position,
                    Some(error.into_value(py).into_bound(py).into_any()),
                ));
            }
            Err(error) => return Err(error),
        };
        let settled = result
            .cast::<PyTuple>()
            .is_ok_and(|fields| fields.get_item(STATE).is_ok_and(|state| !state.is(running)));
        if one || !settled {
            return Ok((position, Some(result)));
        }
        results.set_item(index, result)?;
    }
    Ok((count, None))
}
