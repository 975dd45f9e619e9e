//! Typed validators: raw JSON (or a parsed mapping) in, the typed Python values an annotation asks
//! for out, validated and built in one pass.
mod build;
mod compile;
pub(crate) mod outcome;
mod source;

use ferrotool_core::error::{ErrorCode, Limits, LineError};
use ferrotool_core::ir::Root;
use jiter::{JiterErrorType, JsonErrorType};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

use build::{Arguments, Context, Engine};
use outcome::{Fatal, Invalid};
use source::{Scan, Stream, Tree};

/// Validates input against a derived type and builds typed Python values.
#[pyclass(module = "ferrotool._core", frozen)]
pub(crate) struct TypedValidator {
    engine: Engine,
    /// The JSON Schema of the same IR, derived from the one parse of it.
    schema: Py<PyBytes>,
    limits: Limits,
    lenient: bool,
    function: Option<Py<PyAny>>,
    /// How many leading parameters of the function may be passed by position (from the IR).
    positional: usize,
}

/// Borrows the UTF-8 bytes of a `str` or `bytes` argument without copying.
pub(crate) fn input_bytes<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    input_text(data).map(str::as_bytes)
}

/// Borrows the text of a `str` or `bytes` (checked to be UTF-8) argument without copying.
pub(crate) fn input_text<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<&'a str> {
    match read_input(data, usize::MAX)? {
        Ok(text) => Ok(text),
        Err(error) => Err(PyValueError::new_err(format!(
            "input is not valid: {}",
            error.message()
        ))),
    }
}

/// The JSON text of a model's input, checked for size before anything is copied.
///
/// A `str` longer than `max_bytes` code points is refused before its UTF-8 form is made (each
/// code point takes at least one byte); `bytes` must be UTF-8, and a `str` must encode to it
/// (a lone surrogate does not). Input that is too large or not text a model could have sent is
/// an error of the input (`input_too_large`, `invalid_json`), never an exception; only a value
/// that is not `str` or `bytes` at all is a programmer's mistake (`TypeError`).
pub(crate) fn read_input<'a>(
    data: &'a Bound<'_, PyAny>,
    max_bytes: usize,
) -> PyResult<Result<&'a str, LineError>> {
    let limits = |size: usize| {
        LineError::new(
            ErrorCode::InputTooLarge,
            Vec::new(),
            format!("at most {max_bytes} bytes"),
            format!("{size} bytes"),
        )
    };
    if let Ok(bytes) = data.cast::<PyBytes>() {
        let raw = bytes.as_bytes();
        if raw.len() > max_bytes {
            return Ok(Err(limits(raw.len())));
        }
        return Ok(std::str::from_utf8(raw).map_err(|error| {
            LineError::new(
                ErrorCode::InvalidJson,
                Vec::new(),
                "UTF-8 text",
                format!("invalid UTF-8 at byte {}", error.valid_up_to()),
            )
        }));
    }
    if let Ok(text) = data.cast::<PyString>() {
        let length = text.len()?;
        if length > max_bytes {
            return Ok(Err(limits(length)));
        }
        return Ok(text.to_str().map_err(|_| {
            LineError::new(
                ErrorCode::InvalidJson,
                Vec::new(),
                "text that UTF-8 can encode",
                "a lone surrogate code point",
            )
        }));
    }
    Err(PyTypeError::new_err(format!(
        "expected str or bytes of JSON, got {}",
        data.get_type().name()?
    )))
}

/// The `invalid_json` or `nesting_too_deep` error for a JSON syntax problem.
pub(crate) fn json_error(
    stream_position: &jiter::LinePosition,
    error_type: &JiterErrorType,
) -> LineError {
    if matches!(
        error_type,
        JiterErrorType::JsonError(JsonErrorType::RecursionLimitExceeded)
    ) {
        return LineError::new(
            ErrorCode::NestingTooDeep,
            Vec::new(),
            "less deeply nested JSON",
            "deeper nesting",
        );
    }
    LineError::new(
        ErrorCode::InvalidJson,
        Vec::new(),
        "valid JSON",
        format!(
            "{error_type} at line {} column {}",
            stream_position.line, stream_position.column
        ),
    )
}

/// The deepest `max_depth` accepted: the JSON parser's own bound stays above it.
pub(crate) const MAX_DEPTH_CEILING: u16 = 128;

/// Rejects a `max_depth` the parsers cannot honour.
pub(crate) fn check_max_depth(max_depth: u16) -> PyResult<()> {
    if max_depth == 0 || max_depth > MAX_DEPTH_CEILING {
        return Err(PyValueError::new_err(format!(
            "max_depth must be between 1 and {MAX_DEPTH_CEILING}, got {max_depth}"
        )));
    }
    Ok(())
}

/// The `input_too_large` error.
pub(crate) fn too_large(size: usize, limits: &Limits) -> LineError {
    LineError::new(
        ErrorCode::InputTooLarge,
        Vec::new(),
        format!("at most {} bytes", limits.max_bytes),
        format!("{size} bytes"),
    )
}

impl TypedValidator {
    /// The outcome of a run: the value (and a call's arguments), or why there is none.
    fn finish<'py>(
        built: Result<Option<Bound<'py, PyAny>>, Fatal>,
        context: Context<'py>,
    ) -> Result<(Bound<'py, PyAny>, Option<Arguments<'py>>), Invalid> {
        match built {
            Ok(Some(value)) if context.errors.is_empty() => Ok((value, context.arguments)),
            Ok(_) | Err(Fatal::Stop) => Err(Invalid::Lines(context.into_errors())),
            Err(Fatal::Python(error)) => Err(Invalid::Python(*error)),
            Err(Fatal::Json(_) | Fatal::Reread) => Err(Invalid::Python(PyValueError::new_err(
                "unexpected JSON error while reading a parsed value",
            ))),
        }
    }

    /// Parses and validates raw JSON (`str` or `bytes`) into the typed value.
    pub(crate) fn validate_raw<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.validate_raw_lines(py, data)
            .map_err(|invalid| invalid.into_error(py))
    }

    /// [`Self::validate_raw`], with the validation errors left as line errors.
    pub(crate) fn validate_raw_lines<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> Result<Bound<'py, PyAny>, Invalid> {
        self.read_raw(py, data, None).map(|(value, _)| value)
    }

    /// A function's raw JSON arguments, validated, as the arguments of a call: `(args, kwargs)`
    /// with the leading parameters by position (see `positional`), `kwargs` `None` when empty.
    pub(crate) fn validate_args_raw<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> Result<(Bound<'py, PyTuple>, Option<Bound<'py, PyDict>>), Invalid> {
        let (_, arguments) = self.read_raw(py, data, Some(self.positional))?;
        arguments.ok_or_else(|| {
            Invalid::Python(PyTypeError::new_err("this validator is not a function's"))
        })
    }

    /// Reads raw JSON into the typed value; with `call_args`, as a function's arguments (see
    /// [`Context::call_args`]), then also returned as the call's [`Arguments`].
    fn read_raw<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        call_args: Option<usize>,
    ) -> Result<(Bound<'py, PyAny>, Option<Arguments<'py>>), Invalid> {
        let text = read_input(data, self.limits.max_bytes)
            .map_err(Invalid::Python)?
            .map_err(|error| Invalid::Lines(vec![error]))?;
        if text.len() > self.limits.max_bytes {
            return Err(Invalid::Lines(vec![too_large(text.len(), &self.limits)]));
        }
        let fresh = || {
            let mut context =
                Context::new(self.limits.max_errors, self.limits.max_depth, self.lenient);
            context.call_args = call_args;
            context
        };
        // Well-formed input is read once, by the fast reader; what it declines is read again
        // by the stream, whose outcome stands (see `Scan`).
        let mut scan = Scan::new(py, text);
        let mut context = fresh();
        let built = self.engine.run(&mut scan, &mut context).and_then(|value| {
            scan.finish()?;
            Ok(value)
        });
        if !matches!(built, Err(Fatal::Reread)) {
            return Self::finish(built, context);
        }
        self.read_stream(py, text.as_bytes(), fresh())
    }

    /// [`Self::read_raw`] by the stream: jiter's syntax errors, with their positions.
    #[cold]
    #[inline(never)]
    fn read_stream<'py>(
        &self,
        py: Python<'py>,
        raw: &[u8],
        mut context: Context<'py>,
    ) -> Result<(Bound<'py, PyAny>, Option<Arguments<'py>>), Invalid> {
        let mut stream = Stream::new(py, raw);
        let built = self
            .engine
            .run(&mut stream, &mut context)
            .and_then(|value| {
                stream.finish()?;
                Ok(value)
            });
        if let Err(Fatal::Json(error)) = &built {
            let position = stream.error_position(error.index);
            return Err(Invalid::Lines(vec![json_error(
                &position,
                &error.error_type,
            )]));
        }
        Self::finish(built, context)
    }
}

#[pymethods]
impl TypedValidator {
    #[new]
    #[expect(
        clippy::too_many_arguments,
        reason = "the keyword arguments of the Python constructor"
    )]
    #[pyo3(signature = (ir, objects, *, function=None, lenient=false, max_depth=128, max_bytes=8_388_608, max_errors=20))]
    fn new(
        py: Python<'_>,
        ir: &[u8],
        objects: &Bound<'_, PyDict>,
        function: Option<Py<PyAny>>,
        lenient: bool,
        max_depth: u16,
        max_bytes: usize,
        max_errors: usize,
    ) -> PyResult<Self> {
        check_max_depth(max_depth)?;
        let root: Root = serde_json::from_slice(ir)
            .map_err(|error| PyValueError::new_err(format!("invalid type IR: {error}")))?;
        if root.version != ferrotool_core::ir::IR_VERSION {
            return Err(PyValueError::new_err(format!(
                "type IR version {} is not supported (expected {})",
                root.version,
                ferrotool_core::ir::IR_VERSION
            )));
        }
        let compiled = compile::compile(py, &root, objects)?;
        let positional = match &root.root {
            ferrotool_core::ir::RootType::Function { positional, .. } => *positional,
            ferrotool_core::ir::RootType::Type { .. } => 0,
        };
        let schema = PyBytes::new(py, &crate::derive::schema_json(&root)?).unbind();
        Ok(Self {
            engine: Engine { compiled },
            schema,
            limits: Limits {
                max_depth,
                max_bytes,
                max_errors: max_errors.max(1),
            },
            lenient,
            function,
            positional,
        })
    }

    /// Parses and validates raw JSON; returns the typed value (keyword arguments for a function).
    fn validate_json<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.validate_raw(py, data)
    }

    /// Validates an already parsed value (a mapping for a function).
    fn validate_python<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut tree = Tree::python(data.clone());
        let mut context = Context::new(self.limits.max_errors, self.limits.max_depth, self.lenient);
        let built = self.engine.run(&mut tree, &mut context);
        Self::finish(built, context)
            .map(|(value, _)| value)
            .map_err(|invalid| invalid.into_error(py))
    }

    /// Validates raw JSON arguments and calls the function with them.
    fn call_json<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(function) = &self.function else {
            return Err(PyTypeError::new_err(
                "this validator has no function to call",
            ));
        };
        let (args, kwargs) = self
            .validate_args_raw(py, data)
            .map_err(|invalid| invalid.into_error(py))?;
        function.bind(py).call(args, kwargs.as_ref())
    }

    /// The JSON Schema (draft 2020-12) of the validated type, serialized.
    #[getter]
    fn schema_json(&self, py: Python<'_>) -> Py<PyBytes> {
        self.schema.clone_ref(py)
    }

    #[getter]
    fn lenient(&self) -> bool {
        self.lenient
    }

    #[getter]
    fn max_depth(&self) -> u16 {
        self.limits.max_depth
    }

    #[getter]
    fn max_bytes(&self) -> usize {
        self.limits.max_bytes
    }

    #[getter]
    fn max_errors(&self) -> usize {
        self.limits.max_errors
    }
}
