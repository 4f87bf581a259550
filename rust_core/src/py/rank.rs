//! `rank_and_pack`: recall's ranking, with its request read from a Python `RankRequest`.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

use super::extract::{WideInt, argument, elements};
use crate::rank::{self, Candidates, Chain, Request, Weights};

/// The attributes of `tutor_memory.domain.recall.ranking.RankRequest`, read by name, in this
/// order (which is the order types are checked in).
#[derive(FromPyObject)]
struct RankRequest<'py> {
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
    weights: ScoreWeights,
}

/// The attributes of `RankRequest.weights` (`ranking.Weights`).
#[derive(FromPyObject)]
struct ScoreWeights {
    relevance: f64,
    salience: f64,
    recency: f64,
    recency_half_life_days: f64,
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
/// `tutor_memory/native/_core.pyi` for the semantics and `rank` for the implementation.
#[pyfunction]
pub fn rank_and_pack<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
) -> PyResult<PackedArrays<'py>> {
    let req: RankRequest<'py> = argument(request, "request")?;
    // Integer ranges first, in field order, as `_reference.py` does; the rest is checked by
    // `rank::rank_and_pack`.
    let now_us = req.now_us.checked::<i64>("now_us")?;
    let window_start_us = req
        .window_start_us
        .as_ref()
        .map(|v| v.checked::<i64>("window_start_us"))
        .transpose()?;
    let window_end_us = req
        .window_end_us
        .as_ref()
        .map(|v| v.checked::<i64>("window_end_us"))
        .transpose()?;
    let budget_tokens = req.budget_tokens.checked::<u64>("budget_tokens")?;
    let max_items = req.max_items.checked::<u64>("max_items")?;
    let request = Request {
        now_us,
        has_query: req.has_query,
        window_start_us,
        window_end_us,
        exclude_flagged: req.exclude_flagged,
        budget_tokens,
        max_items: usize::try_from(max_items).unwrap_or(usize::MAX),
        weights: Weights {
            relevance: req.weights.relevance,
            salience: req.weights.salience,
            recency: req.weights.recency,
            recency_half_life_days: req.weights.recency_half_life_days,
        },
    };

    let (ids, at, sal, dup, tok, flag) = (
        elements(&req.chain_ids),
        elements(&req.occurred_at_us),
        elements(&req.salience),
        elements(&req.dup_key),
        elements(&req.tokens),
        elements(&req.flagged),
    );
    let (c_ids, c_rel, c_matched) = (
        elements(&req.cand_ids),
        elements(&req.cand_relevance),
        elements(&req.cand_matched),
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
