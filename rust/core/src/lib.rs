//! ferrotool-core: the pure-Rust heart of ferrotool.
//!
//! Nothing here knows about Python. The binding crate (`rust/py`) adapts Python values to the
//! [`json::Instance`] trait and calls into this crate.
#![forbid(unsafe_code)]

pub mod checks;
pub mod derive;
pub mod dialect;
pub mod duration;
pub mod error;
pub mod formats;
pub mod ir;
pub mod json;
pub mod jsonschema;
pub mod pattern;
