//! Where a typed validator reads from: raw JSON text by the fast reader ([`Scan`]) or by a full
//! JSON stream ([`Stream`]), or a tree (an already parsed Python value, or a JSON value captured
//! from the text to try union variants).
//!
//! Kept in one module, over the usual size: it is one trait, [`Source`], implemented for the
//! three readers, and they must stay in step. A typed validator's outcome and errors must not
//! depend on which reader it runs on, so each must give the same [`Shape`], [`Head`] and
//! [`Scalar`] for the same value (a JSON number beyond a float's range is [`Head::Overflow`]
//! whichever reads it, through the shared `json_float`), visit items, entries and fields the same
//! way, and skip and capture alike. Side by side, a change to one reader is read against the other
//! two.
use std::borrow::Cow;

use ferrotool_core::json::scan::{self, Cursor, Scanner, Token};
use jiter::{Jiter, JiterError, JsonValue, NumberAny, NumberInt, Peek};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::compile::RecordNode;
use super::outcome::Fatal;
use crate::convert::{big_int, json_to_python};

/// The kind of the next value, known without consuming it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
    Other,
}

/// The head of the next value. Scalars are consumed by `head`; arrays and objects are not, and
/// are then read with `items` / `entries` or dropped with `skip`.
pub(crate) enum Head<'s> {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer beyond `i64`, as decimal digits (boxed: kept small, `Head` is returned often).
    BigInt(Box<str>),
    Float(f64),
    /// A JSON number beyond a float's range (`1e400`; negative when it is below), which JSON
    /// decoders read as an infinity: JSON has none, so it is refused rather than read as one.
    Overflow {
        negative: bool,
    },
    Str(Cow<'s, str>),
    Array,
    Object,
    /// A Python value with no JSON meaning; carries its type name.
    Other(Box<str>),
}

/// A scalar read straight from the source for a leaf node (see [`Source::scalar`]).
pub(crate) enum Scalar<'s> {
    Str(&'s str),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// Consumed, but not one of the above (an integer beyond `i64`): read on from its head.
    Head(Head<'s>),
    /// Not of the shape asked for: nothing consumed, the general path reads the value.
    Untouched,
}

/// A value captured for replay (to try several union variants).
pub(crate) enum Captured<'a, 'py> {
    Owned(JsonValue<'static>),
    Json(&'a JsonValue<'static>),
    Python(Bound<'py, PyAny>),
}

impl<'py> Captured<'_, 'py> {
    pub(crate) fn tree(&self, py: Python<'py>) -> Tree<'_, 'py> {
        match self {
            Self::Owned(value) => Tree::json(py, value),
            Self::Json(value) => Tree::json(py, value),
            Self::Python(value) => Tree::python(value.clone()),
        }
    }
}

/// A reader of one JSON-like value at a time.
pub(crate) trait Source<'py> {
    fn py(&self) -> Python<'py>;
    /// The kind of the next value, without consuming it.
    fn shape(&mut self) -> Result<Shape, Fatal>;
    /// The next value's head (see [`Head`]).
    fn head(&mut self) -> Result<Head<'_>, Fatal>;
    /// The next value when it is a scalar of shape `want` (`String`, `Number` or `Bool`),
    /// consumed; otherwise [`Scalar::Untouched`] and nothing is consumed. A fast path for leaf
    /// nodes: a source may always answer `Untouched`.
    fn scalar(&mut self, want: Shape) -> Result<Scalar<'_>, Fatal> {
        let _ = want;
        Ok(Scalar::Untouched)
    }
    /// The next value as the caller handed it in, when it is already a Python object.
    fn original(&self) -> Option<Bound<'py, PyAny>>;
    /// After `head` returned `Array`: calls `visit` once per item, positioned on it.
    fn items(
        &mut self,
        visit: &mut impl FnMut(&mut Self, usize) -> Result<(), Fatal>,
    ) -> Result<(), Fatal>;
    /// After `head` returned `Object`: for each entry, maps the key with `key` and calls `visit`
    /// positioned on the value.
    fn entries<K>(
        &mut self,
        key: &mut impl FnMut(&str) -> K,
        visit: &mut impl FnMut(&mut Self, K) -> Result<(), Fatal>,
    ) -> Result<(), Fatal>;
    /// At an object (its shape read): for each entry, the index of the field of `record` its
    /// key names (the field after the last one matched is tried first), or the unknown key,
    /// and `visit` positioned on the value.
    fn fields(
        &mut self,
        record: &RecordNode,
        visit: &mut impl FnMut(&mut Self, Result<usize, Box<str>>) -> Result<(), Fatal>,
    ) -> Result<(), Fatal> {
        let mut expected = 0;
        self.entries(
            &mut |key| {
                let index = record.field_after(expected, key);
                if let Some(index) = index {
                    expected = index + 1;
                }
                index.ok_or_else(|| Box::<str>::from(key))
            },
            visit,
        )
    }
    /// Drops the next value (or the array/object whose head was just read).
    fn skip(&mut self) -> Result<(), Fatal>;
    /// Captures the next value so it can be read several times.
    fn capture(&mut self) -> Result<Captured<'_, 'py>, Fatal>;
    /// The next value as a plain Python value (for `Any`).
    fn to_python(&mut self, max_depth: u16) -> Result<Bound<'py, PyAny>, Fatal>;
    /// The raw JSON text of the next value, when reading raw JSON.
    fn raw(&mut self) -> Result<Option<&[u8]>, Fatal>;
}

/// One pass over raw JSON bytes.
pub(crate) struct Stream<'j, 'py> {
    py: Python<'py>,
    jiter: Jiter<'j>,
}

impl<'j, 'py> Stream<'j, 'py> {
    pub(crate) fn new(py: Python<'py>, data: &'j [u8]) -> Self {
        Self {
            py,
            jiter: Jiter::new(data),
        }
    }

    pub(crate) fn finish(&mut self) -> Result<(), Fatal> {
        self.jiter.finish().map_err(Fatal::from)
    }

    pub(crate) fn error_position(&self, index: usize) -> jiter::LinePosition {
        self.jiter.error_position(index)
    }
}

fn peek_shape(peek: Peek) -> Shape {
    match peek {
        Peek::Null => Shape::Null,
        Peek::True | Peek::False => Shape::Bool,
        Peek::String => Shape::String,
        Peek::Array => Shape::Array,
        Peek::Object => Shape::Object,
        _ if peek.is_num() => Shape::Number,
        _ => Shape::Other,
    }
}

fn number_head(number: NumberAny) -> Head<'static> {
    match number {
        NumberAny::Int(NumberInt::Int(value)) => Head::Int(value),
        NumberAny::Int(NumberInt::BigInt(value)) => Head::BigInt(value.to_string().into()),
        NumberAny::Float(value) => json_float(value),
    }
}

/// A float decoded from JSON text. JSON has no infinity, so an infinite one is a number beyond
/// a float's range that the decoder rounded (`1e400`): every JSON source reads floats here.
#[inline]
fn json_float(value: f64) -> Head<'static> {
    if value.is_finite() {
        Head::Float(value)
    } else {
        overflow(value)
    }
}

#[cold]
#[inline(never)]
fn overflow(value: f64) -> Head<'static> {
    Head::Overflow {
        negative: value.is_sign_negative(),
    }
}

impl<'py> Source<'py> for Stream<'_, 'py> {
    fn py(&self) -> Python<'py> {
        self.py
    }

    fn shape(&mut self) -> Result<Shape, Fatal> {
        Ok(peek_shape(self.jiter.peek()?))
    }

    fn head(&mut self) -> Result<Head<'_>, Fatal> {
        let peek = self.jiter.peek()?;
        Ok(match peek {
            Peek::Null => {
                self.jiter.known_null()?;
                Head::Null
            }
            Peek::True | Peek::False => Head::Bool(self.jiter.known_bool(peek)?),
            Peek::String => Head::Str(Cow::Borrowed(self.jiter.known_str()?)),
            Peek::Array => Head::Array,
            Peek::Object => Head::Object,
            _ => number_head(self.jiter.known_number(peek)?),
        })
    }

    #[inline]
    fn scalar(&mut self, want: Shape) -> Result<Scalar<'_>, Fatal> {
        let peek = self.jiter.peek()?;
        Ok(match want {
            Shape::String if peek == Peek::String => Scalar::Str(self.jiter.known_str()?),
            Shape::Number if peek.is_num() => {
                // Matched in place: only the scalar's own word is read back from the result
                // (a copy of the whole result, straight after the call, reads it back slowly).
                let number = self.jiter.known_number(peek);
                match &number {
                    Ok(NumberAny::Int(NumberInt::Int(value))) => Scalar::Int(*value),
                    Ok(NumberAny::Float(value)) if value.is_finite() => Scalar::Float(*value),
                    _ => Scalar::Head(number_head(number?)),
                }
            }
            Shape::Bool if matches!(peek, Peek::True | Peek::False) => {
                Scalar::Bool(self.jiter.known_bool(peek)?)
            }
            _ => Scalar::Untouched,
        })
    }

    fn original(&self) -> Option<Bound<'py, PyAny>> {
        None
    }

    fn items(
        &mut self,
        visit: &mut impl FnMut(&mut Self, usize) -> Result<(), Fatal>,
    ) -> Result<(), Fatal> {
        let mut next = self.jiter.known_array()?;
        let mut index = 0;
        while next.is_some() {
            visit(self, index)?;
            index += 1;
            next = self.jiter.array_step()?;
        }
        Ok(())
    }

    fn entries<K>(
        &mut self,
        key: &mut impl FnMut(&str) -> K,
        visit: &mut impl FnMut(&mut Self, K) -> Result<(), Fatal>,
    ) -> Result<(), Fatal> {
        let mut mapped = self.jiter.known_object()?.map(&mut *key);
        while let Some(current) = mapped {
            visit(self, current)?;
            mapped = self.jiter.next_key()?.map(&mut *key);
        }
        Ok(())
    }

    fn skip(&mut self) -> Result<(), Fatal> {
        let peek = self.jiter.peek()?;
        self.jiter.known_skip(peek)?;
        Ok(())
    }

    fn capture(&mut self) -> Result<Captured<'_, 'py>, Fatal> {
        let peek = self.jiter.peek()?;
        Ok(Captured::Owned(self.jiter.known_value_owned(peek)?))
    }

    fn to_python(&mut self, max_depth: u16) -> Result<Bound<'py, PyAny>, Fatal> {
        let peek = self.jiter.peek()?;
        let value = self.jiter.known_value(peek)?;
        json_to_python(self.py, &value, max_depth)
    }

    fn raw(&mut self) -> Result<Option<&[u8]>, Fatal> {
        let peek = self.jiter.peek()?;
        let start = self.jiter.current_index();
        self.jiter.known_skip(peek)?;
        Ok(Some(self.jiter.slice_to_current(start)))
    }
}

/// One pass over raw JSON text by core's fast reader ([`Scanner`]), declining what it does not
/// read.
///
/// `Scan` reads a subset of what [`Stream`] reads, and where it reads, it gives exactly what
/// `Stream` gives. Whatever it does not read (malformed JSON, `NaN`, a lone surrogate escape)
/// ends its run with [`Fatal::Reread`]; the caller then reads the input again with `Stream`,
/// whose outcome, exact syntax errors and positions included, stands. Well-formed input is never
/// read twice. Numbers the scanner leaves as text are decoded by jiter's own decoder, as
/// `Stream` decodes them; values it only passes over or keeps whole (skipped, captured for
/// union variants, `Any`, a pydantic model's raw text) are handed to jiter from the current
/// position.
pub(crate) struct Scan<'j, 'py> {
    py: Python<'py>,
    scanner: Scanner<'j>,
}

impl<'j, 'py> Scan<'j, 'py> {
    pub(crate) fn new(py: Python<'py>, text: &'j str) -> Self {
        Self {
            py,
            scanner: Scanner::new(text),
        }
    }

    /// After the whole value: only whitespace may follow.
    pub(crate) fn finish(&mut self) -> Result<(), Fatal> {
        Ok(self.scanner.finish()?)
    }

    /// The next value as the plain Python value `json.loads` gives, built as the scanner reads
    /// it (no intermediate tree), at most `depth` levels deep. What `Stream` would read another
    /// way is declined ([`Fatal::Reread`]): a number beyond a finite float, nesting beyond
    /// `depth` (where `Stream`'s outcome, the depth error or jiter's own, stands).
    fn python_value(&mut self, depth: u16) -> Result<Bound<'py, PyAny>, Fatal> {
        let py = self.py;
        let scanner = &mut self.scanner;
        Ok(match scanner.token() {
            Some(Token::Null) => {
                scanner.null()?;
                py.None().into_bound(py)
            }
            Some(Token::Bool) => PyBool::new(py, scanner.boolean()?).to_owned().into_any(),
            Some(Token::String) => PyString::new(py, scanner.string()?).into_any(),
            Some(Token::Number) => {
                let head = match scanner.number()? {
                    scan::Number::Int(value) => Head::Int(value),
                    scan::Number::Float(value) => json_float(value),
                    scan::Number::Spelled(text) => spelled_head(text)?,
                };
                match head {
                    Head::Int(value) => value.into_pyobject(py)?.into_any(),
                    Head::BigInt(digits) => big_int(py, &digits)?,
                    Head::Float(value) => PyFloat::new(py, value).into_any(),
                    _ => return Err(Fatal::Reread),
                }
            }
            Some(Token::Array) => {
                let inner = depth.checked_sub(1).ok_or(Fatal::Reread)?;
                let list = PyList::empty(py);
                Cursor::items(self, &mut |scan: &mut Self, _| -> Result<(), Fatal> {
                    list.append(scan.python_value(inner)?)?;
                    Ok(())
                })?;
                list.into_any()
            }
            Some(Token::Object) => {
                let inner = depth.checked_sub(1).ok_or(Fatal::Reread)?;
                let dict = PyDict::new(py);
                Cursor::object(
                    self,
                    &mut |scan: &mut Self| -> Result<_, Fatal> {
                        Ok(PyString::new(py, scan.scanner.string()?))
                    },
                    &mut |scan: &mut Self, key| -> Result<(), Fatal> {
                        dict.set_item(key, scan.python_value(inner)?)?;
                        Ok(())
                    },
                )?;
                dict.into_any()
            }
            None => return Err(Fatal::Reread),
        })
    }

    /// Runs `read` on a jiter over the next value; the scanner goes on after what it read.
    fn jiter<T>(
        &mut self,
        read: impl FnOnce(&mut Jiter<'j>) -> Result<T, JiterError>,
    ) -> Result<T, Fatal> {
        self.scanner.with_rest(|rest| {
            let mut jiter = Jiter::new(rest);
            let value = read(&mut jiter).map_err(|_| Fatal::Reread)?;
            Ok((value, jiter.current_index()))
        })
    }
}

impl<'j> Cursor<'j> for Scan<'j, '_> {
    #[inline]
    fn scanner(&mut self) -> &mut Scanner<'j> {
        &mut self.scanner
    }
}

/// A number the scanner left as text (long, or with an exponent), by jiter's decoder.
fn spelled_head(text: &str) -> Result<Head<'static>, Fatal> {
    match NumberAny::from_bytes(text.as_bytes(), false) {
        Ok(NumberAny::Int(NumberInt::Int(value))) => Ok(Head::Int(value)),
        Ok(NumberAny::Int(NumberInt::BigInt(value))) => Ok(Head::BigInt(value.to_string().into())),
        Ok(NumberAny::Float(value)) => Ok(json_float(value)),
        Err(_) => Err(Fatal::Reread),
    }
}

impl<'py> Source<'py> for Scan<'_, 'py> {
    fn py(&self) -> Python<'py> {
        self.py
    }

    #[inline]
    fn shape(&mut self) -> Result<Shape, Fatal> {
        Ok(match self.scanner.token() {
            Some(Token::Null) => Shape::Null,
            Some(Token::Bool) => Shape::Bool,
            Some(Token::String) => Shape::String,
            Some(Token::Array) => Shape::Array,
            Some(Token::Object) => Shape::Object,
            Some(Token::Number) => Shape::Number,
            None => return Err(Fatal::Reread),
        })
    }

    fn head(&mut self) -> Result<Head<'_>, Fatal> {
        let scanner = &mut self.scanner;
        Ok(match scanner.token() {
            Some(Token::Null) => {
                scanner.null()?;
                Head::Null
            }
            Some(Token::Bool) => Head::Bool(scanner.boolean()?),
            Some(Token::String) => Head::Str(Cow::Borrowed(scanner.string()?)),
            Some(Token::Array) => Head::Array,
            Some(Token::Object) => Head::Object,
            Some(Token::Number) => match scanner.number()? {
                scan::Number::Int(value) => Head::Int(value),
                scan::Number::Float(value) => Head::Float(value),
                scan::Number::Spelled(text) => spelled_head(text)?,
            },
            None => return Err(Fatal::Reread),
        })
    }

    #[inline]
    fn scalar(&mut self, want: Shape) -> Result<Scalar<'_>, Fatal> {
        let scanner = &mut self.scanner;
        Ok(match (want, scanner.token()) {
            (Shape::String, Some(Token::String)) => Scalar::Str(scanner.string()?),
            (Shape::Number, Some(Token::Number)) => match scanner.number()? {
                scan::Number::Int(value) => Scalar::Int(value),
                scan::Number::Float(value) => Scalar::Float(value),
                scan::Number::Spelled(text) => match spelled_head(text)? {
                    Head::Int(value) => Scalar::Int(value),
                    Head::Float(value) => Scalar::Float(value),
                    head => Scalar::Head(head),
                },
            },
            (Shape::Bool, Some(Token::Bool)) => Scalar::Bool(scanner.boolean()?),
            _ => Scalar::Untouched,
        })
    }

    fn original(&self) -> Option<Bound<'py, PyAny>> {
        None
    }

    fn items(
        &mut self,
        visit: &mut impl FnMut(&mut Self, usize) -> Result<(), Fatal>,
    ) -> Result<(), Fatal> {
        Cursor::items(self, visit)
    }

    fn entries<K>(
        &mut self,
        key: &mut impl FnMut(&str) -> K,
        visit: &mut impl FnMut(&mut Self, K) -> Result<(), Fatal>,
    ) -> Result<(), Fatal> {
        Cursor::object(
            self,
            &mut |scan: &mut Self| Ok(scan.scanner.string().map(&mut *key)?),
            visit,
        )
    }

    /// A key is first compared, as bytes, with the field expected next (when its name needs no
    /// escape); anything else is read as a string and looked up.
    fn fields(
        &mut self,
        record: &RecordNode,
        visit: &mut impl FnMut(&mut Self, Result<usize, Box<str>>) -> Result<(), Fatal>,
    ) -> Result<(), Fatal> {
        let mut expected = 0;
        let mut key = |scan: &mut Self| {
            let spelled = record
                .fields
                .get(expected)
                .and_then(|field| field.spelled.as_deref());
            let index = match spelled {
                Some(spelled) if scan.scanner.key_is(spelled) => Ok(expected),
                _ => {
                    let text = scan.scanner.string()?;
                    record
                        .field_index(text)
                        .ok_or_else(|| Box::<str>::from(text))
                }
            };
            if let Ok(index) = index {
                expected = index + 1;
            }
            Ok(index)
        };
        Cursor::object(self, &mut key, visit)
    }

    fn skip(&mut self) -> Result<(), Fatal> {
        self.jiter(Jiter::next_skip)
    }

    fn capture(&mut self) -> Result<Captured<'_, 'py>, Fatal> {
        self.jiter(Jiter::next_value_owned).map(Captured::Owned)
    }

    fn to_python(&mut self, max_depth: u16) -> Result<Bound<'py, PyAny>, Fatal> {
        self.python_value(max_depth)
    }

    fn raw(&mut self) -> Result<Option<&[u8]>, Fatal> {
        self.jiter(|jiter| {
            let start = jiter.current_index();
            jiter.next_skip()?;
            Ok(jiter.slice_to_current(start))
        })
        .map(Some)
    }
}

/// A value already in memory: parsed JSON or a Python object.
pub(crate) struct Tree<'a, 'py> {
    py: Python<'py>,
    current: Node<'a, 'py>,
}

#[derive(Clone)]
enum Node<'a, 'py> {
    Json(&'a JsonValue<'static>),
    Python(Bound<'py, PyAny>),
}

impl<'a, 'py> Tree<'a, 'py> {
    pub(crate) fn json(py: Python<'py>, value: &'a JsonValue<'static>) -> Self {
        Self {
            py,
            current: Node::Json(value),
        }
    }

    pub(crate) fn python(value: Bound<'py, PyAny>) -> Self {
        Self {
            py: value.py(),
            current: Node::Python(value),
        }
    }
}

fn python_head<'s>(value: &'s Bound<'_, PyAny>) -> Result<Head<'s>, Fatal> {
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Head::Str(text.to_cow()?));
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Head::Bool(flag.is_true()));
    }
    if value.is_instance_of::<PyInt>() {
        return Ok(match value.extract::<i64>() {
            Ok(number) => Head::Int(number),
            Err(_) => Head::BigInt(value.str()?.to_cow()?.into()),
        });
    }
    if let Ok(number) = value.cast::<PyFloat>() {
        return Ok(Head::Float(number.value()));
    }
    if value.is_none() {
        return Ok(Head::Null);
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        return Ok(Head::Array);
    }
    if value.is_instance_of::<PyDict>() {
        return Ok(Head::Object);
    }
    Ok(Head::Other(value.get_type().name()?.to_cow()?.into()))
}

/// Fails with `Fatal::Stop` when lists, tuples and dicts nest deeper than `max_depth` (walked
/// with an explicit stack, so no input can exhaust the native one).
fn check_depth(value: &Bound<'_, PyAny>, max_depth: u16) -> Result<(), Fatal> {
    let mut pending = vec![(value.clone(), 0u16)];
    while let Some((current, depth)) = pending.pop() {
        let children: Vec<Bound<'_, PyAny>> = if let Ok(list) = current.cast::<PyList>() {
            list.iter().collect()
        } else if let Ok(tuple) = current.cast::<PyTuple>() {
            tuple.iter().collect()
        } else if let Ok(dict) = current.cast::<PyDict>() {
            dict.values().iter().collect()
        } else {
            continue;
        };
        if depth >= max_depth {
            return Err(Fatal::Stop);
        }
        pending.extend(children.into_iter().map(|child| (child, depth + 1)));
    }
    Ok(())
}

fn python_shape(value: &Bound<'_, PyAny>) -> Shape {
    if value.is_instance_of::<PyString>() {
        Shape::String
    } else if value.is_instance_of::<PyBool>() {
        Shape::Bool
    } else if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
        Shape::Number
    } else if value.is_none() {
        Shape::Null
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        Shape::Array
    } else if value.is_instance_of::<PyDict>() {
        Shape::Object
    } else {
        Shape::Other
    }
}

impl<'py> Source<'py> for Tree<'_, 'py> {
    fn py(&self) -> Python<'py> {
        self.py
    }

    fn shape(&mut self) -> Result<Shape, Fatal> {
        Ok(match &self.current {
            Node::Json(value) => match value {
                JsonValue::Null => Shape::Null,
                JsonValue::Bool(_) => Shape::Bool,
                JsonValue::Int(_) | JsonValue::BigInt(_) | JsonValue::Float(_) => Shape::Number,
                JsonValue::Str(_) => Shape::String,
                JsonValue::Array(_) => Shape::Array,
                JsonValue::Object(_) => Shape::Object,
            },
            Node::Python(value) => python_shape(value),
        })
    }

    fn head(&mut self) -> Result<Head<'_>, Fatal> {
        Ok(match &self.current {
            Node::Json(value) => match value {
                JsonValue::Null => Head::Null,
                JsonValue::Bool(flag) => Head::Bool(*flag),
                JsonValue::Int(number) => Head::Int(*number),
                JsonValue::BigInt(number) => Head::BigInt(number.to_string().into()),
                JsonValue::Float(number) => json_float(*number),
                JsonValue::Str(text) => Head::Str(Cow::Borrowed(text)),
                JsonValue::Array(_) => Head::Array,
                JsonValue::Object(_) => Head::Object,
            },
            Node::Python(value) => python_head(value)?,
        })
    }

    fn original(&self) -> Option<Bound<'py, PyAny>> {
        match &self.current {
            Node::Json(_) => None,
            Node::Python(value) => Some(value.clone()),
        }
    }

    fn items(
        &mut self,
        visit: &mut impl FnMut(&mut Self, usize) -> Result<(), Fatal>,
    ) -> Result<(), Fatal> {
        let parent = self.current.clone();
        let result = match &parent {
            Node::Json(JsonValue::Array(items)) => {
                items.iter().enumerate().try_for_each(|(index, item)| {
                    self.current = Node::Json(item);
                    visit(self, index)
                })
            }
            Node::Python(value) => {
                if let Ok(list) = value.cast::<PyList>() {
                    list.iter().enumerate().try_for_each(|(index, item)| {
                        self.current = Node::Python(item);
                        visit(self, index)
                    })
                } else if let Ok(tuple) = value.cast::<PyTuple>() {
                    tuple.iter().enumerate().try_for_each(|(index, item)| {
                        self.current = Node::Python(item);
                        visit(self, index)
                    })
                } else {
                    Ok(())
                }
            }
            Node::Json(_) => Ok(()),
        };
        self.current = parent;
        result
    }

    fn entries<K>(
        &mut self,
        key: &mut impl FnMut(&str) -> K,
        visit: &mut impl FnMut(&mut Self, K) -> Result<(), Fatal>,
    ) -> Result<(), Fatal> {
        let parent = self.current.clone();
        let result = match &parent {
            Node::Json(JsonValue::Object(entries)) => {
                entries.iter().try_for_each(|(name, value)| {
                    let mapped = key(name);
                    self.current = Node::Json(value);
                    visit(self, mapped)
                })
            }
            Node::Python(value) => match value.cast::<PyDict>() {
                Ok(dict) => dict.iter().try_for_each(|(name, value)| {
                    let mapped = match name.cast::<PyString>() {
                        Ok(text) => key(&text.to_cow()?),
                        Err(_) => key(&name.str()?.to_cow()?),
                    };
                    self.current = Node::Python(value);
                    visit(self, mapped)
                }),
                Err(_) => Ok(()),
            },
            Node::Json(_) => Ok(()),
        };
        self.current = parent;
        result
    }

    fn skip(&mut self) -> Result<(), Fatal> {
        Ok(())
    }

    fn capture(&mut self) -> Result<Captured<'_, 'py>, Fatal> {
        Ok(match &self.current {
            Node::Json(value) => Captured::Json(value),
            Node::Python(value) => Captured::Python(value.clone()),
        })
    }

    fn to_python(&mut self, max_depth: u16) -> Result<Bound<'py, PyAny>, Fatal> {
        match &self.current {
            Node::Json(value) => json_to_python(self.py, value, max_depth),
            Node::Python(value) => {
                check_depth(value, max_depth)?;
                Ok(value.clone())
            }
        }
    }

    fn raw(&mut self) -> Result<Option<&[u8]>, Fatal> {
        Ok(None)
    }
}
