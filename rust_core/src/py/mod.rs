//! The Python face of the core: thin wrappers that extract their arguments, check their values,
//! then do the work with the GIL released. All logic lives in the pure-Rust modules.
//!
//! Every wrapper runs in the same three phases, mirrored by `_reference.py`: extract every
//! argument (a wrong type is a `NativeTypeError`), check every value in field order (a bad value
//! is a `NativeInputError`), then detach from the interpreter and compute.

mod episode;
mod errors;
mod extract;
mod rank;

use pyo3::prelude::*;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add(
        "NativeInputError",
        py.get_type::<errors::NativeInputError>(),
    )?;
    m.add("NativeTypeError", py.get_type::<errors::NativeTypeError>())?;
    m.add_class::<episode::ChainWalk>()?;
    m.add_class::<episode::LinkBreak>()?;
    m.add_function(wrap_pyfunction!(episode::episode_hash, m)?)?;
    m.add_function(wrap_pyfunction!(episode::verify_chain, m)?)?;
    m.add_function(wrap_pyfunction!(rank::rank_and_pack, m)?)?;
    Ok(())
}
