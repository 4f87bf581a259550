//! Thin Python wrappers: extract and own the arguments, then encode and hash with the GIL
//! released. All logic lives in `chain`; bad values surface as `ValueError`.

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::chain::{self, EpisodeRecord, Evidence};
use crate::errors::ChainError;

impl From<ChainError> for PyErr {
    fn from(err: ChainError) -> Self {
        PyValueError::new_err(err.to_string())
    }
}

/// A Python int of any size. Ints wider than 128 bits are kept as `None` instead of failing
/// extraction with `OverflowError`, so that every out-of-range int raises the same
/// `ValueError` as the pure-Python reference does.
pub(crate) struct WideInt(Option<i128>);

impl<'py> FromPyObject<'_, 'py> for WideInt {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<i128>() {
            Ok(value) => Ok(Self(Some(value))),
            Err(err) if err.is_instance_of::<PyOverflowError>(obj.py()) => Ok(Self(None)),
            Err(err) => Err(err),
        }
    }
}

/// Return the 32-byte SHA-256 chaining one ledger episode to `prev_hash`.
///
/// Raises `ValueError` for a `prev_hash` that is not 32 bytes or an int outside its field's
/// range; see `tutor_memory/_core.pyi` for the encoding.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // mirrors the Python signature; `EpisodeRecord` names them
#[allow(clippy::needless_pass_by_value)] // pyo3 hands over owned extractions
pub fn episode_hash<'py>(
    py: Python<'py>,
    prev_hash: &[u8],
    tenant: String,
    student: String,
    subject: String,
    seq: WideInt,
    kind: String,
    summary: String,
    text: String,
    concepts: Vec<String>,
    salience: f64,
    occurred_at_us: WideInt,
    recorded_at_us: WideInt,
    evidence: Vec<(String, WideInt, String)>,
    check_outcome: String,
    check_topic: String,
    predicted_mastery: Option<f64>,
    quiz_correct: WideInt,
    quiz_total: WideInt,
    client_key: String,
) -> PyResult<Bound<'py, PyBytes>> {
    // Owned copy: nothing borrowed from a Python object crosses into the GIL-free section.
    let prev_hash = prev_hash.to_vec();
    let digest = py.detach(move || -> Result<_, ChainError> {
        // Range checks in parameter order, as `_reference.py` does, so an input with several
        // problems reports the same one on both sides.
        let prev_hash = chain::parse_prev_hash(&prev_hash)?;
        let seq = chain::checked_int("seq", seq.0)?;
        let occurred_at_us = chain::checked_int("occurred_at_us", occurred_at_us.0)?;
        let recorded_at_us = chain::checked_int("recorded_at_us", recorded_at_us.0)?;
        let evidence = evidence
            .iter()
            .map(|(file_id, page, fingerprint)| {
                Ok(Evidence {
                    file_id,
                    page: chain::checked_int("evidence page", page.0)?,
                    fingerprint,
                })
            })
            .collect::<Result<Vec<_>, ChainError>>()?;
        let quiz_correct = chain::checked_int("quiz_correct", quiz_correct.0)?;
        let quiz_total = chain::checked_int("quiz_total", quiz_total.0)?;
        let concepts: Vec<&str> = concepts.iter().map(String::as_str).collect();
        EpisodeRecord {
            prev_hash: &prev_hash,
            tenant: &tenant,
            student: &student,
            subject: &subject,
            seq,
            kind: &kind,
            summary: &summary,
            text: &text,
            concepts: &concepts,
            salience,
            occurred_at_us,
            recorded_at_us,
            evidence: &evidence,
            check_outcome: &check_outcome,
            check_topic: &check_topic,
            predicted_mastery,
            quiz_correct,
            quiz_total,
            client_key: &client_key,
        }
        .hash()
    })?;
    Ok(PyBytes::new(py, &digest))
}
