//! What a schema is compiled with, and what a schema that cannot be compiled reports.
use std::fmt;

use crate::error::Limits;

/// How a schema is compiled and applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Accept strings that read as the integer, number or boolean the schema wants (`"5"`).
    pub lenient: bool,
    /// Treat `format` as an assertion rather than an annotation.
    pub assert_formats: bool,
    /// Depth and error-count limits applied while validating.
    pub limits: Limits,
}

/// A schema that cannot be compiled: where (JSON pointer into the schema) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// JSON pointer to the offending part of the schema (`""` for the root).
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "invalid schema: {}", self.message)
        } else {
            write!(f, "invalid schema at {}: {}", self.pointer, self.message)
        }
    }
}

impl std::error::Error for SchemaError {}
