//! Native core of tutor-memory, importable as `tutor_memory.native._core`.
//!
//! This file only registers the Python module; the logic lives in pure-Rust modules
//! (`chain`, `rank`, `errors`) and `py` holds the thin wrappers.

pub mod chain;
pub mod errors;
mod py;
pub mod rank;

use pyo3::prelude::*;

/// The module name must match the last component of `module-name` in pyproject.toml.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py::episode_hash, m)?)?;
    m.add_function(wrap_pyfunction!(py::rank_and_pack, m)?)?;
    Ok(())
}
