//! The keyword groups, one module each: they read the walk's [`Context`](super::context::Context)
//! and descend through it, never through the dispatcher itself.
pub(crate) mod annotations;
pub(crate) mod array;
pub(crate) mod big_number;
pub(crate) mod number;
pub(crate) mod object;
pub(crate) mod string;
