//! Bad-input errors of the canonical encoding.
//!
//! Kept free of pyo3 so the encoding can be used and tested as plain Rust; `py.rs` turns every
//! variant into a Python `ValueError`, which the server reports as `INVALID_ARGUMENT`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainError {
    /// `prev_hash` is not a SHA-256 digest.
    PrevHashLength { got: usize },
    /// An integer does not fit the fixed-width field it is encoded into.
    ///
    /// `value` is `None` when the caller could not even represent it in 128 bits (a huge
    /// Python int), so the message cannot print it.
    OutOfRange {
        field: &'static str,
        value: Option<i128>,
        min: i128,
        max: i128,
    },
    /// A string or byte field longer than its `u32` length prefix can express.
    TooLong { len: usize },
    /// A list with more items than its `u32` count can express.
    TooMany { count: usize },
}

impl fmt::Display for ChainError {
    // The wording is mirrored byte for byte in `_reference.py`; change both or neither.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PrevHashLength { got } => {
                write!(
                    f,
                    "prev_hash must be {} bytes, got {got}",
                    crate::chain::HASH_LEN
                )
            }
            Self::OutOfRange {
                field,
                value: Some(value),
                min,
                max,
            } => write!(f, "{field} must be in {min}..={max}, got {value}"),
            Self::OutOfRange {
                field,
                value: None,
                min,
                max,
            } => write!(
                f,
                "{field} must be in {min}..={max}, got an integer wider than 128 bits"
            ),
            Self::TooLong { len } => {
                write!(f, "value of {len} bytes is too long to length-prefix")
            }
            Self::TooMany { count } => {
                write!(f, "{count} items are too many to count in a u32")
            }
        }
    }
}

impl std::error::Error for ChainError {}
