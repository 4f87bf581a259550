//! Native core of tutor-memory, importable as `tutor_memory.native._core`.
//!
//! This file only registers the Python module; the logic lives in pure-Rust modules
//! (`chain`, `verify`, `rank`, `errors`) and `py` holds the thin wrappers, the only code that
//! imports pyo3.

pub mod chain;
pub mod errors;
mod py;
pub mod rank;
pub mod verify;

use pyo3::prelude::*;

/// The module name must match the last component of `module-name` in pyproject.toml.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    py::register(m)
}
