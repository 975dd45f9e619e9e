//! The binding's C-API code: every `unsafe` block of the crate is under this module, and the
//! workspace's `unsafe_code = "deny"` holds everywhere else.
//!
//! - [`pending`]: the `PendingCall` awaitable, a C type because its `am_send` slot has no `PyO3`
//!   equivalent.
//! - [`borrowed`]: Python values read as JSON through borrowed pointers, for one validation walk.
//! - [`record`]: named tuples allocated directly through their type's `tp_alloc`, and exact
//!   type checks.
//! - [`object`]: a plain class instance built the way its generated `__init__` does (`tp_new`,
//!   then `object.__setattr__`).
//!
//! # Why it is sound
//!
//! Each module exports only safe functions and types; the rest of the crate never sees a raw
//! pointer. Inside, every `unsafe` block carries its own `// SAFETY:` argument, and they all
//! rest on the same five rules:
//!
//! - **Attached thread.** A C-API call is made only while the thread is attached to the
//!   interpreter: with a `Python<'py>` token or a `Bound` in hand, or inside a slot, which the
//!   interpreter calls with the GIL held.
//! - **Live objects.** A pointer is dereferenced only while something keeps its object alive: a
//!   `Bound` or `Py` held for the call, a field the object owns (cleared to null before its
//!   reference is released, since the release may run code that looks at the object again), or
//!   a container met during a borrowed walk, in which no Python code can run
//!   ([`borrowed`], which relies on the GIL: see `gil_used` in `lib.rs`).
//! - **Owned or borrowed, never both.** A new reference is wrapped at once in an owning `Bound`
//!   or stored in a field that `tp_clear`/`tp_dealloc` release; a borrowed one is never
//!   released. A reference handed to a function that steals it (`PyTuple_SetItem`) is not used
//!   again.
//! - **The stable ABI only.** Only limited-API functions (abi3, Python 3.11) are called, so the
//!   only layout assumed is the stable one: the object header first in `PendingCallObject`, and
//!   type slots read through `PyType_GetSlot`, never through `PyTypeObject` fields.
//! - **No unwinding into C.** Every slot runs its body under `catch_unwind`; a panic becomes a
//!   Python `RuntimeError`.
//!
//! Preconditions a safe caller could break are checked, not assumed: a [`record::RecordType`]
//! is a tuple subclass of a known width because its constructor checked it, and a
//! `PendingCall`'s slots check the type of the plan they read back.
#![expect(
    unsafe_code,
    reason = "the C API calls that PyO3's safe API does not offer, each with its safety argument"
)]

pub(crate) mod borrowed;
pub(crate) mod object;
pub(crate) mod pending;
pub(crate) mod record;
