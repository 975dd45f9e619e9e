//! The binding's C-API code: every `unsafe` block of the crate is under this module.
//!
//! - [`pending`]: the `PendingCall` awaitable, a C type because its `am_send` slot has no `PyO3`
//!   equivalent.
//! - [`record`]: named tuples allocated directly through their type's `tp_alloc`, and exact
//!   type checks.
//!
//! Each module exports safe functions and types; each `unsafe` block inside carries its own
//! `// SAFETY:` argument.
#![allow(
    unsafe_code,
    reason = "the C API calls that PyO3's safe API does not offer, each with its safety argument"
)]

pub(crate) mod pending;
pub(crate) mod record;
