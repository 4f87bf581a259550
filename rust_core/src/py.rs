//! Thin Python wrappers: extract and own (or borrow) the arguments, then do the work with the
//! GIL released. All logic lives in `chain` and `rank`; bad values surface as `ValueError`.

use std::borrow::Cow;

use numpy::{Element, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::chain::{self, EpisodeRecord, Evidence};
use crate::errors::{ChainError, RankError};
use crate::rank::{self, Candidates, Chain, Request, Weights};

impl From<ChainError> for PyErr {
    fn from(err: ChainError) -> Self {
        PyValueError::new_err(err.to_string())
    }
}

impl From<RankError> for PyErr {
    fn from(err: RankError) -> Self {
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

/// The elements of a borrowed 1-d array: the array's own memory when it is contiguous (no copy),
/// else an owned copy in logical order (a strided or reversed view).
///
/// The borrow stays registered with numpy's borrow checker for as long as `array` lives, which
/// rust-numpy documents as valid across `py.detach`.
fn elements<'a, T: Element + Copy>(array: &'a PyReadonlyArray1<'_, T>) -> Cow<'a, [T]> {
    match array.as_slice() {
        Ok(slice) => Cow::Borrowed(slice),
        Err(_) => Cow::Owned(array.as_array().iter().copied().collect()),
    }
}

/// Arrays of positions, counts and scores, and the tokens used: see `rank::Packed`.
type PackedArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<f32>>,
    u64,
);

/// Rank one turn's candidates and pack the best into the token budget.
///
/// The arrays are borrowed, not copied, and the work runs with the GIL released; see
/// `tutor_memory/_core.pyi` for the semantics and `rank` for the implementation.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // mirrors the Python signature; `Request` names them
#[allow(clippy::needless_pass_by_value)] // pyo3 hands over owned extractions
pub fn rank_and_pack<'py>(
    py: Python<'py>,
    chain_ids: PyReadonlyArray1<'py, i64>,
    occurred_at_us: PyReadonlyArray1<'py, i64>,
    salience: PyReadonlyArray1<'py, f32>,
    dup_key: PyReadonlyArray1<'py, u64>,
    tokens: PyReadonlyArray1<'py, u32>,
    flagged: PyReadonlyArray1<'py, u8>,
    cand_ids: PyReadonlyArray1<'py, i64>,
    cand_relevance: PyReadonlyArray1<'py, f32>,
    cand_matched: PyReadonlyArray1<'py, u8>,
    now_us: WideInt,
    has_query: bool,
    window_start_us: Option<WideInt>,
    window_end_us: Option<WideInt>,
    exclude_flagged: bool,
    budget_tokens: WideInt,
    max_items: WideInt,
    w_relevance: f64,
    w_salience: f64,
    w_recency: f64,
    recency_half_life_days: f64,
) -> PyResult<PackedArrays<'py>> {
    // Integer ranges first, in parameter order, as `_reference.py` does; the rest is checked
    // by `rank::rank_and_pack`.
    let now_us = chain::checked_int::<i64>("now_us", now_us.0)?;
    let window_start_us = window_start_us
        .map(|v| chain::checked_int::<i64>("window_start_us", v.0))
        .transpose()?;
    let window_end_us = window_end_us
        .map(|v| chain::checked_int::<i64>("window_end_us", v.0))
        .transpose()?;
    let budget_tokens = chain::checked_int::<u64>("budget_tokens", budget_tokens.0)?;
    let max_items = chain::checked_int::<u64>("max_items", max_items.0)?;
    let request = Request {
        now_us,
        has_query,
        window_start_us,
        window_end_us,
        exclude_flagged,
        budget_tokens,
        max_items: usize::try_from(max_items).unwrap_or(usize::MAX),
        weights: Weights {
            relevance: w_relevance,
            salience: w_salience,
            recency: w_recency,
            recency_half_life_days,
        },
    };

    let (ids, at, sal, dup, tok, flag) = (
        elements(&chain_ids),
        elements(&occurred_at_us),
        elements(&salience),
        elements(&dup_key),
        elements(&tokens),
        elements(&flagged),
    );
    let (c_ids, c_rel, c_matched) = (
        elements(&cand_ids),
        elements(&cand_relevance),
        elements(&cand_matched),
    );
    let packed = py.detach(|| {
        let chain = Chain {
            ids: &ids,
            occurred_at_us: &at,
            salience: &sal,
            dup_key: &dup,
            tokens: &tok,
            flagged: &flag,
        };
        let candidates = Candidates {
            ids: &c_ids,
            relevance: &c_rel,
            matched: &c_matched,
        };
        rank::rank_and_pack(&chain, &candidates, &request)
    })?;
    Ok((
        PyArray1::from_vec(py, packed.positions),
        PyArray1::from_vec(py, packed.counts),
        PyArray1::from_vec(py, packed.scores),
        packed.tokens_used,
    ))
}
