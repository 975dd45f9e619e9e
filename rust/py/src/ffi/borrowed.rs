//! Python values read as JSON in place through borrowed pointers, for one validation walk.
//!
//! [`PyInstance`](crate::instance::PyInstance) holds a strong reference to every value it visits,
//! which under the stable ABI costs two calls into the interpreter per value. A [`PyValue`]
//! instead borrows: it is only ever created inside [`walk`], which keeps the interpreter from
//! running any Python code until it returns (no call here can reach Python code, and the cyclic
//! garbage collector, whose finalizers could, is paused), so no container reachable from the root
//! can change or be freed while the walk looks at it.
//!
//! The few inputs that would need Python code, or a lookup that would be slow without it, make
//! the walk ask for a rerun with `PyInstance` instead (see [`walk`]).
//!
//! All of this rests on the GIL: "no Python code runs" means no other thread runs either. On a
//! free-threaded interpreter another thread could change a container mid-walk, so the module
//! declares `gil_used = true` (`lib.rs`); the abi3 wheel cannot load on such an interpreter
//! today in any case. Before a free-threaded build, this walk needs per-object critical sections
//! or must give way to `PyInstance`.

use std::borrow::Cow;
use std::cell::Cell;
use std::ffi::c_int;
use std::marker::PhantomData;
use std::ptr::NonNull;

use ferrotool_core::json::{Instance, Kind, Number};
use pyo3::ffi;
use pyo3::prelude::*;
use serde_json::Value;

use crate::instance::instance_to_value;

/// Objects up to this size are searched by scanning their keys; a lookup in a larger one asks
/// for a rerun (a hashed lookup may call a key's `__eq__`, which is Python code).
const SCAN_LIMIT: usize = 32;

thread_local! {
    /// Set during a walk when its verdict must not be used (see [`walk`]).
    static RERUN: Cell<bool> = const { Cell::new(false) };
}

fn ask_rerun() {
    RERUN.with(|rerun| rerun.set(true));
}

/// Pauses the cyclic garbage collector for the life of the guard, if it was running.
struct PausedGc(bool);

impl PausedGc {
    fn new(_py: Python<'_>) -> Self {
        // SAFETY: the token proves the thread is attached to the interpreter.
        Self(unsafe { ffi::PyGC_Disable() } != 0)
    }
}

impl Drop for PausedGc {
    fn drop(&mut self) {
        if self.0 {
            // SAFETY: the guard lives inside `walk`, on the attached thread that created it.
            unsafe { ffi::PyGC_Enable() };
        }
    }
}

/// Runs `check` on `root` read through borrowed pointers. `None` when the walk met something it
/// leaves to `PyInstance` (a key that is not a `str`, or a key lookup in a large dict): the
/// caller then validates again with `PyInstance`, which gives the authoritative answer.
///
/// `check` must not run Python code; it only sees the value through [`Instance`], whose methods
/// here call nothing that can.
pub(crate) fn walk<R>(
    root: &Bound<'_, PyAny>,
    check: impl for<'a> FnOnce(&PyValue<'a>) -> R,
) -> Option<R> {
    let _gc = PausedGc::new(root.py());
    RERUN.with(|rerun| rerun.set(false));
    let value = PyValue::new(root.as_ptr());
    let result = check(&value);
    (!RERUN.with(Cell::take)).then_some(result)
}

/// A Python value borrowed for the duration of a [`walk`]: `dict` is an object, `list` and
/// `tuple` are arrays, `bool` is not a number; anything else is `Kind::Other`.
#[derive(Clone, Copy)]
pub(crate) struct PyValue<'a> {
    object: NonNull<ffi::PyObject>,
    walk: PhantomData<&'a ffi::PyObject>,
}

/// What a value is, as far as reading it is concerned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Str,
    Dict,
    Int,
    Float,
    List,
    Tuple,
    Bool,
    None,
    Other,
}

impl<'a> PyValue<'a> {
    /// Wraps a pointer borrowed from the root or from a container met during the walk; a null
    /// pointer (never handed out by the calls used here) reads as `None`.
    #[inline]
    fn new(object: *mut ffi::PyObject) -> Self {
        let object = NonNull::new(object).unwrap_or_else(|| {
            // SAFETY: `Py_None` is the address of a static object, never null.
            unsafe { NonNull::new_unchecked(ffi::Py_None()) }
        });
        Self {
            object,
            walk: PhantomData,
        }
    }

    fn ptr(self) -> *mut ffi::PyObject {
        self.object.as_ptr()
    }

    /// The value's shape: exact built-in types by one pointer comparison each, then subclasses.
    #[inline]
    fn shape(self) -> Shape {
        let object = self.ptr();
        // SAFETY: `object` is alive for the walk (module docs); the type statics are addresses
        // of the interpreter's built-in type objects, only compared, never written.
        unsafe {
            let kind = ffi::Py_TYPE(object);
            if kind == &raw mut ffi::PyUnicode_Type {
                Shape::Str
            } else if kind == &raw mut ffi::PyDict_Type {
                Shape::Dict
            } else if kind == &raw mut ffi::PyLong_Type {
                Shape::Int
            } else if kind == &raw mut ffi::PyFloat_Type {
                Shape::Float
            } else if kind == &raw mut ffi::PyList_Type {
                Shape::List
            } else if kind == &raw mut ffi::PyBool_Type {
                Shape::Bool
            } else if object == ffi::Py_None() {
                Shape::None
            } else if kind == &raw mut ffi::PyTuple_Type {
                Shape::Tuple
            } else {
                subclass_shape(kind)
            }
        }
    }

    /// The UTF-8 text of a `str` (or subclass), borrowed from the object's cached encoding, or
    /// `None` when it holds a lone surrogate.
    #[inline]
    fn utf8(self) -> Option<&'a str> {
        let mut size: ffi::Py_ssize_t = 0;
        // SAFETY: the object is a live `str`; on failure the pending exception is cleared
        // (with the collector paused, creating it runs no Python code).
        let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(self.ptr(), &raw mut size) };
        if data.is_null() {
            // SAFETY: the thread is attached and holds the exception just raised.
            unsafe { ffi::PyErr_Clear() };
            return None;
        }
        let length = usize::try_from(size).ok()?;
        // SAFETY: CPython keeps `size` bytes of valid UTF-8 at `data` for the life of the `str`,
        // which the walk keeps alive (its container cannot change meanwhile).
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) };
        // SAFETY: CPython only ever caches valid UTF-8 here.
        Some(unsafe { std::str::from_utf8_unchecked(bytes) })
    }

    /// A `str` holding lone surrogates, rendered with U+FFFD in their place.
    fn lossy(self) -> String {
        // SAFETY: the object is a live `str`; "surrogatepass" is handled in C, so encoding runs
        // no Python code. The result is a new reference, released below.
        unsafe {
            let bytes = ffi::PyUnicode_AsEncodedString(
                self.ptr(),
                c"utf-8".as_ptr(),
                c"surrogatepass".as_ptr(),
            );
            if bytes.is_null() {
                ffi::PyErr_Clear();
                return String::new();
            }
            let data = ffi::PyBytes_AsString(bytes);
            let size = usize::try_from(ffi::PyBytes_Size(bytes)).unwrap_or(0);
            let text = if data.is_null() {
                String::new()
            } else {
                String::from_utf8_lossy(std::slice::from_raw_parts(data.cast::<u8>(), size))
                    .into_owned()
            };
            ffi::Py_DecRef(bytes);
            text
        }
    }

    fn float(self) -> f64 {
        // SAFETY: the object is a live `float` (or subclass), read without calling `__float__`.
        unsafe { ffi::PyFloat_AsDouble(self.ptr()) }
    }

    /// An `int` (not `bool`) as a JSON number: exact when it fits 64 bits, else the nearest
    /// float, else `None`.
    #[inline]
    fn int(self) -> Option<Number> {
        let mut overflow: c_int = 0;
        // SAFETY: the object is a live `int` (or subclass); this reads its digits directly and
        // reports overflow without calling `__index__`. An error is cleared at once.
        unsafe {
            let value = ffi::PyLong_AsLongLongAndOverflow(self.ptr(), &raw mut overflow);
            if overflow != 0 {
                return self.wide_int(overflow);
            }
            if value == -1 && !ffi::PyErr_Occurred().is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            Some(Number::I64(value))
        }
    }

    /// An `int` beyond `i64` (`overflow` is its sign): a `u64` if it fits, else a float.
    #[cold]
    #[inline(never)]
    fn wide_int(self, overflow: c_int) -> Option<Number> {
        let object = self.ptr();
        // SAFETY: the object is a live `int` (or subclass), read as in `int`.
        unsafe {
            if overflow > 0 {
                let value = ffi::PyLong_AsUnsignedLongLong(object);
                if ffi::PyErr_Occurred().is_null() {
                    return Some(Number::U64(value));
                }
                ffi::PyErr_Clear();
            }
            let value = ffi::PyLong_AsDouble(object);
            if !ffi::PyErr_Occurred().is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            Some(Number::F64(value))
        }
    }

    /// An `int`'s exact value as `0x`-prefixed hexadecimal text (`-0x1f`), which unlike decimal
    /// text has no length limit.
    #[cold]
    #[inline(never)]
    fn hex(self) -> Option<String> {
        // SAFETY: the object is a live `int` (or subclass): `PyNumber_ToBase` takes it as it is
        // (no `__index__` call) and formats it in C. The new `str` is released below; its UTF-8
        // is copied before that.
        unsafe {
            let text = ffi::PyNumber_ToBase(self.ptr(), 16);
            if text.is_null() {
                ffi::PyErr_Clear();
                return None;
            }
            let mut size: ffi::Py_ssize_t = 0;
            let data = ffi::PyUnicode_AsUTF8AndSize(text, &raw mut size);
            let out = if data.is_null() {
                ffi::PyErr_Clear();
                None
            } else {
                let length = usize::try_from(size).unwrap_or(0);
                std::str::from_utf8(std::slice::from_raw_parts(data.cast::<u8>(), length))
                    .ok()
                    .map(str::to_owned)
            };
            ffi::Py_DecRef(text);
            out
        }
    }

    fn dict_len(self) -> usize {
        // SAFETY: the object is a live `dict` (or subclass).
        usize::try_from(unsafe { ffi::PyDict_Size(self.ptr()) }).unwrap_or(0)
    }

    fn sequence_len(self, shape: Shape) -> usize {
        // SAFETY: the object is a live `list` or `tuple` (or subclass), as `shape` says.
        let length = unsafe {
            if shape == Shape::List {
                ffi::PyList_Size(self.ptr())
            } else {
                ffi::PyTuple_Size(self.ptr())
            }
        };
        usize::try_from(length).unwrap_or(0)
    }

    fn entries(self) -> Entries<'a> {
        let remaining = if self.shape() == Shape::Dict {
            self.dict_len()
        } else {
            0
        };
        Entries {
            dict: self,
            position: 0,
            remaining,
        }
    }
}

/// The shape of an instance of a subclass of a built-in JSON type (or of anything else).
#[cold]
#[inline(never)]
fn subclass_shape(kind: *mut ffi::PyTypeObject) -> Shape {
    // SAFETY: `kind` is the live type of a live object; these only read its flags and MRO.
    unsafe {
        let flags = ffi::PyType_GetFlags(kind);
        if flags & ffi::Py_TPFLAGS_UNICODE_SUBCLASS != 0 {
            Shape::Str
        } else if flags & ffi::Py_TPFLAGS_LONG_SUBCLASS != 0 {
            // `bool` cannot be subclassed, so this is an `int`.
            Shape::Int
        } else if ffi::PyType_IsSubtype(kind, &raw mut ffi::PyFloat_Type) != 0 {
            Shape::Float
        } else if flags & ffi::Py_TPFLAGS_DICT_SUBCLASS != 0 {
            Shape::Dict
        } else if flags & ffi::Py_TPFLAGS_LIST_SUBCLASS != 0 {
            Shape::List
        } else if flags & ffi::Py_TPFLAGS_TUPLE_SUBCLASS != 0 {
            Shape::Tuple
        } else {
            Shape::Other
        }
    }
}

/// The (key, value) pairs of a `dict`, in insertion order.
pub(crate) struct Entries<'a> {
    dict: PyValue<'a>,
    position: ffi::Py_ssize_t,
    /// Entries left: counted once, which spares the call that would only report the end.
    remaining: usize,
}

impl<'a> Iterator for Entries<'a> {
    type Item = (PyValue<'a>, PyValue<'a>);

    #[expect(
        clippy::inline_always,
        reason = "measured: run once per entry, in the validator's loop"
    )]
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let mut key: *mut ffi::PyObject = std::ptr::null_mut();
        let mut value: *mut ffi::PyObject = std::ptr::null_mut();
        // SAFETY: `dict` is a live `dict` (`remaining` is 0 otherwise); the pointers it hands
        // out are borrowed from it and stay valid for the walk, during which it cannot change.
        let more = unsafe {
            ffi::PyDict_Next(
                self.dict.ptr(),
                &raw mut self.position,
                &raw mut key,
                &raw mut value,
            )
        };
        if more == 0 {
            self.remaining = 0;
            return None;
        }
        Some((PyValue::new(key), PyValue::new(value)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.remaining))
    }
}

/// The entries of a `dict` with their keys read as text.
pub(crate) struct KeyedEntries<'a>(Entries<'a>);

impl<'a> Iterator for KeyedEntries<'a> {
    type Item = (PyKey<'a>, PyValue<'a>);

    #[expect(
        clippy::inline_always,
        reason = "measured: run once per entry, in the validator's loop"
    )]
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let (key, value) = self.0.next()?;
        Some((PyKey::of(key), value))
    }
}

/// The items of a `list` or `tuple`.
pub(crate) struct Items<'a> {
    sequence: PyValue<'a>,
    list: bool,
    index: usize,
    length: usize,
}

impl<'a> Iterator for Items<'a> {
    type Item = PyValue<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.index >= self.length {
            return None;
        }
        let index = ffi::Py_ssize_t::try_from(self.index).ok()?;
        self.index += 1;
        // SAFETY: the sequence is a live `list`/`tuple` whose length was read at the start and
        // cannot change during the walk; the item is borrowed from it.
        let item = unsafe {
            if self.list {
                ffi::PyList_GetItem(self.sequence.ptr(), index)
            } else {
                ffi::PyTuple_GetItem(self.sequence.ptr(), index)
            }
        };
        if item.is_null() {
            // SAFETY: attached thread; the index error just raised is dropped.
            unsafe { ffi::PyErr_Clear() };
            self.index = self.length;
            return None;
        }
        Some(PyValue::new(item))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.length.saturating_sub(self.index);
        (left, Some(left))
    }
}

/// An object key, readable as `&str`.
pub(crate) enum PyKey<'a> {
    /// A `str` key's UTF-8, borrowed from the key object.
    Str(&'a str),
    /// A key holding a lone surrogate, rendered; or a placeholder for a key that is not a `str`
    /// (the walk has then asked for a rerun).
    Text(String),
}

impl AsRef<str> for PyKey<'_> {
    fn as_ref(&self) -> &str {
        match self {
            Self::Str(text) => text,
            Self::Text(text) => text,
        }
    }
}

impl<'a> PyKey<'a> {
    #[expect(
        clippy::inline_always,
        reason = "measured: run once per entry, in the validator's loop"
    )]
    #[inline(always)]
    fn of(key: PyValue<'a>) -> Self {
        if key.shape() != Shape::Str {
            // Rendering it takes `str(key)`, which is Python code.
            ask_rerun();
            return Self::Text(String::new());
        }
        match key.utf8() {
            Some(text) => Self::Str(text),
            None => Self::Text(key.lossy()),
        }
    }
}

impl<'a> Instance for PyValue<'a> {
    type Key = PyKey<'a>;

    #[inline]
    fn kind(&self) -> Kind {
        match self.shape() {
            Shape::Str => Kind::String,
            Shape::Dict => Kind::Object,
            Shape::Int => Kind::Integer,
            Shape::List | Shape::Tuple => Kind::Array,
            Shape::Bool => Kind::Bool,
            Shape::None => Kind::Null,
            Shape::Float => Kind::of_float(self.float()),
            Shape::Other => Kind::Other,
        }
    }

    fn as_bool(&self) -> Option<bool> {
        // SAFETY: `Py_True` is the address of an immortal static object, only compared.
        (self.shape() == Shape::Bool).then(|| self.ptr() == unsafe { ffi::Py_True() })
    }

    #[inline]
    fn as_number(&self) -> Option<Number> {
        match self.shape() {
            Shape::Int => self.int(),
            Shape::Float => Some(Number::F64(self.float())),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<Cow<'_, str>> {
        if self.shape() != Shape::Str {
            return None;
        }
        Some(match self.utf8() {
            Some(text) => Cow::Borrowed(text),
            None => Cow::Owned(self.lossy()),
        })
    }

    fn array_len(&self) -> Option<usize> {
        match self.shape() {
            shape @ (Shape::List | Shape::Tuple) => Some(self.sequence_len(shape)),
            _ => None,
        }
    }

    fn array_items(&self) -> impl Iterator<Item = Self> + '_ {
        let shape = self.shape();
        let length = match shape {
            Shape::List | Shape::Tuple => self.sequence_len(shape),
            _ => 0,
        };
        Items {
            sequence: *self,
            list: shape == Shape::List,
            index: 0,
            length,
        }
    }

    fn object_len(&self) -> Option<usize> {
        (self.shape() == Shape::Dict).then(|| self.dict_len())
    }

    fn object_get(&self, key: &str) -> Option<Self> {
        if self.shape() != Shape::Dict {
            return None;
        }
        if self.dict_len() > SCAN_LIMIT {
            ask_rerun();
            return None;
        }
        self.entries().find_map(|(name, value)| {
            (name.shape() == Shape::Str && name.utf8()? == key).then_some(value)
        })
    }

    fn object_items(&self) -> impl Iterator<Item = (Self::Key, Self)> + '_ {
        KeyedEntries(self.entries())
    }

    fn to_value(&self) -> Value {
        instance_to_value(self, 64).unwrap_or(Value::Null)
    }

    fn number_text(&self) -> Option<Cow<'_, str>> {
        if self.shape() != Shape::Int {
            return None;
        }
        self.hex().map(Cow::Owned)
    }
}
