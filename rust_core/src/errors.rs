//! Bad-input errors of the canonical encoding and chain walk (`ChainError`) and of recall's
//! ranking (`RankError`).
//!
//! Kept free of pyo3 so the logic can be used and tested as plain Rust; `py/errors.rs` is the one
//! place that turns every variant into the Python exception `NativeInputError` (a `ValueError`),
//! which the server reports as `INVALID_ARGUMENT`. Every message starts with the name of the
//! field it is about, spelled as the Python attribute path (`check.predicted_mastery`).

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
        field: String,
        value: Option<i128>,
        min: i128,
        max: i128,
    },
    /// A float is NaN, which has no canonical encoding (see `chain::canonical_f64`).
    NotANumber { field: String },
    /// A string or byte field longer than its `u32` length prefix can express.
    TooLong { field: &'static str, len: usize },
    /// A list with more items than its `u32` count can express.
    TooMany { field: &'static str, count: usize },
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
            Self::NotANumber { field } => write!(f, "{field} must not be NaN"),
            Self::TooLong { field, len } => {
                write!(f, "{field} of {len} bytes is too long to length-prefix")
            }
            Self::TooMany { field, count } => {
                write!(f, "{field} has {count} items, too many to count in a u32")
            }
        }
    }
}

impl std::error::Error for ChainError {}

/// Bad-input errors of recall's ranking (`rank::rank_and_pack`).
///
/// Messages name the field as the Python `RankRequest` spells it and never print a float: Rust
/// and Python format floats differently, and the message must be identical on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RankError {
    /// An array has another length than the array it runs parallel to.
    LengthMismatch {
        name: &'static str,
        len: usize,
        like: &'static str,
        expected: usize,
    },
    /// `chain_ids` repeats or goes back at `index`.
    NotAscending { index: usize, prev: i64, id: i64 },
    /// A value of a `[0, 1]` array (salience, relevance) is outside `[0, 1]` or NaN.
    OutsideUnitRange { name: &'static str, index: usize },
    /// A scoring weight is NaN or infinite.
    NotFinite { name: &'static str },
    /// The recency half-life is not a finite number of days above zero.
    HalfLife,
}

impl fmt::Display for RankError {
    // The wording is mirrored byte for byte in `_reference.py` and `bench/rank_numpy.py`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LengthMismatch {
                name,
                len,
                like,
                expected,
            } => write!(
                f,
                "{name} has {len} items, expected {expected} (one per item of {like})"
            ),
            Self::NotAscending { index, prev, id } => write!(
                f,
                "chain_ids must be strictly ascending, but chain_ids[{index}] = {id} follows {prev}"
            ),
            Self::OutsideUnitRange { name, index } => {
                write!(f, "{name} must be in [0, 1], but {name}[{index}] is not")
            }
            Self::NotFinite { name } => write!(f, "{name} must be finite"),
            Self::HalfLife => {
                write!(f, "weights.recency_half_life_days must be finite and > 0")
            }
        }
    }
}

impl std::error::Error for RankError {}
