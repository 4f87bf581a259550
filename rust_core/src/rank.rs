//! Recall's hot path: from the candidate sets of one turn to the packed slice of a chain's
//! history (SPEC R2.1–R2.6, R6.2).
//!
//! Everything arrives as parallel arrays, never as one object per candidate: per episode of the
//! chain ([`Chain`], ids strictly ascending) and per candidate occurrence ([`Candidates`], the
//! candidate sets concatenated). The steps, in order, each mirrored by `rank_and_pack` in
//! `tutor_memory/native/_reference.py`:
//!
//! 1. Union (R2.1): occurrences of one id become one candidate; relevance is the maximum over
//!    them, matched is true if any of them matched. Ids that are not in the chain are ignored.
//! 2. Scope (R2.5, R2.6): a candidate outside the time window `[start, end)`, or flagged when
//!    `exclude_flagged`, is dropped. Time is a filter, not a hint.
//! 3. Relevance filter (R2.2): with a query and at least one match, non-matches are dropped, not
//!    ranked, so no weight can let a non-match outrank a match.
//! 4. Score (R2.3) and rank: score descending, then `occurred_at` descending, then id descending.
//! 5. Collapse (R2.4): of candidates sharing a `dup_key` the best-ranked stands for all of them.
//! 6. Pack (R6.2): greedily in rank order, skipping what does not fit, never over budget.
//!
//! Only the candidates that survive steps 1–3 are scored, and only as many of them as the walk
//! in rank order needs are ever ordered: never the whole chain, rarely all the candidates. Cost:
//! O(N) over the chain (validation, per-position merge arrays), O(M log N) to look up the M
//! candidate ids, O(S) to heap the S survivors and O(log S) per survivor walked.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::errors::RankError;

/// Microseconds in a day: the half-life is given in days, timestamps in microseconds.
pub const US_PER_DAY: f64 = 86_400_000_000.0;

/// Scoring metadata of every episode of one chain, one item per episode in each array.
#[derive(Debug, Clone, Copy)]
pub struct Chain<'a> {
    /// Episode ids, strictly ascending; a candidate is addressed by its position here.
    pub ids: &'a [i64],
    pub occurred_at_us: &'a [i64],
    /// Fixed at write time, in `[0, 1]` (R1.3).
    pub salience: &'a [f32],
    /// Equal for episodes that are the same memory repeated (R2.4).
    pub dup_key: &'a [u64],
    pub tokens: &'a [u32],
    /// Non-zero for the tutor's own narrations (R2.6).
    pub flagged: &'a [u8],
}

/// The candidate sets of one turn, concatenated: one item per occurrence, ids may repeat.
#[derive(Debug, Clone, Copy)]
pub struct Candidates<'a> {
    pub ids: &'a [i64],
    /// How well this occurrence's set relates it to the query, in `[0, 1]`.
    pub relevance: &'a [f32],
    /// Non-zero if this occurrence's set says it matches the query.
    pub matched: &'a [u8],
}

/// The hand-set weights of the score (defined for the server in `domain/recall/scoring.py`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub relevance: f64,
    pub salience: f64,
    pub recency: f64,
    pub recency_half_life_days: f64,
}

impl Weights {
    /// `0.5 ** (age / half_life)`: 1.0 for now or the future, 0.5 one half-life ago.
    #[must_use]
    pub fn recency(&self, now_us: i64, occurred_at_us: i64) -> f64 {
        // The exact age (an i64 difference can overflow), rounded once to f64 as Python's
        // int-to-float conversion does: round to nearest, ties to even.
        #[allow(clippy::cast_precision_loss)]
        let age_us = if occurred_at_us < now_us {
            now_us.abs_diff(occurred_at_us) as f64
        } else {
            0.0
        };
        // Written as exp2, which LLVM would turn `0.5.powf(x)` into anyway, so that the
        // reference can call the very same libm function (`math.exp2`) and agree to the bit.
        (-(age_us / (self.recency_half_life_days * US_PER_DAY))).exp2()
    }

    /// The weighted sum, in f64 and in this order of operations, as the reference computes it.
    #[must_use]
    pub fn score(&self, relevance: f32, salience: f32, recency: f64) -> f64 {
        self.relevance * f64::from(relevance)
            + self.salience * f64::from(salience)
            + self.recency * recency
    }
}

/// Everything about one turn's request except the arrays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub now_us: i64,
    pub has_query: bool,
    /// Inclusive start of the time window, if any.
    pub window_start_us: Option<i64>,
    /// Exclusive end of the time window, if any.
    pub window_end_us: Option<i64>,
    pub exclude_flagged: bool,
    pub budget_tokens: u64,
    pub max_items: usize,
    pub weights: Weights,
}

impl Request {
    fn in_scope(&self, chain: &Chain<'_>, pos: usize) -> bool {
        let at = chain.occurred_at_us[pos];
        self.window_start_us.is_none_or(|start| at >= start)
            && self.window_end_us.is_none_or(|end| at < end)
            && !(self.exclude_flagged && chain.flagged[pos] != 0)
    }
}

/// The packed memories in rank order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Packed {
    /// Positions into the chain's arrays.
    pub positions: Vec<i64>,
    /// How many remaining candidates each packed one stands for, itself included.
    pub counts: Vec<u32>,
    pub scores: Vec<f32>,
    /// Sum of the packed items' tokens, never above the budget.
    pub tokens_used: u64,
}

/// Ranks the candidates of one turn and packs the best into the token budget.
///
/// # Errors
/// A [`RankError`] for arrays of mismatched lengths, `chain.ids` not strictly ascending,
/// salience or relevance outside `[0, 1]`, a non-finite weight or a half-life that is not a
/// finite number above zero. Checked in that order, as the reference does.
pub fn rank_and_pack(
    chain: &Chain<'_>,
    candidates: &Candidates<'_>,
    request: &Request,
) -> Result<Packed, RankError> {
    validate(chain, candidates, &request.weights)?;
    let pool = gather(chain, candidates, request);
    let chosen = walk_and_pack(chain, score(chain, &pool, request), request);
    let counts = group_sizes(chain, &pool, &chosen);
    Ok(Packed {
        positions: chosen.iter().map(|r| position(r.pos)).collect(),
        counts,
        // The output is f32 by design.
        #[allow(clippy::cast_possible_truncation)]
        scores: chosen.iter().map(|r| r.score as f32).collect(),
        tokens_used: chosen.iter().map(|r| u64::from(chain.tokens[r.pos])).sum(),
    })
}

fn validate(
    chain: &Chain<'_>,
    candidates: &Candidates<'_>,
    weights: &Weights,
) -> Result<(), RankError> {
    let n = chain.ids.len();
    let m = candidates.ids.len();
    let lengths = [
        ("occurred_at_us", chain.occurred_at_us.len(), "chain_ids", n),
        ("salience", chain.salience.len(), "chain_ids", n),
        ("dup_key", chain.dup_key.len(), "chain_ids", n),
        ("tokens", chain.tokens.len(), "chain_ids", n),
        ("flagged", chain.flagged.len(), "chain_ids", n),
        ("cand_relevance", candidates.relevance.len(), "cand_ids", m),
        ("cand_matched", candidates.matched.len(), "cand_ids", m),
    ];
    for (name, len, like, expected) in lengths {
        if len != expected {
            return Err(RankError::LengthMismatch {
                name,
                len,
                like,
                expected,
            });
        }
    }
    // Every call checks the whole chain, so the checks scan without stopping at the first bad
    // item, which vectorises (a third of the time at 100k episodes); only a bad array is scanned
    // again for where it went wrong.
    let next = chain.ids.get(1..).unwrap_or_default();
    let out_of_order = chain.ids.iter().zip(next).filter(|(a, b)| a >= b).count();
    if out_of_order != 0
        && let Some(i) = chain.ids.windows(2).position(|w| w[0] >= w[1])
    {
        return Err(RankError::NotAscending {
            index: i + 1,
            prev: chain.ids[i],
            id: chain.ids[i + 1],
        });
    }
    check_unit_range("salience", chain.salience)?;
    check_unit_range("cand_relevance", candidates.relevance)?;
    let named = [
        ("weights.relevance", weights.relevance),
        ("weights.salience", weights.salience),
        ("weights.recency", weights.recency),
    ];
    for (name, value) in named {
        if !value.is_finite() {
            return Err(RankError::NotFinite { name });
        }
    }
    let half_life = weights.recency_half_life_days;
    if !(half_life.is_finite() && half_life > 0.0) {
        return Err(RankError::HalfLife);
    }
    Ok(())
}

/// Values in `[0, 1]` keep every score finite or infinite, never NaN, so ranking is total.
fn check_unit_range(name: &'static str, values: &[f32]) -> Result<(), RankError> {
    // Counted without stopping first, as in `validate`; NaN is outside the range.
    if values.iter().filter(|v| !(0.0..=1.0).contains(*v)).count() == 0 {
        return Ok(());
    }
    match values.iter().position(|v| !(0.0..=1.0).contains(v)) {
        Some(index) => Err(RankError::OutsideUnitRange { name, index }),
        None => Ok(()),
    }
}

/// One distinct candidate after the union: its chain position and best relevance.
#[derive(Debug, Clone, Copy)]
struct Pooled {
    pos: usize,
    relevance: f32,
}

/// Steps 1 to 3: the distinct candidates in scope, only the matching ones when the filter
/// applies.
fn gather(chain: &Chain<'_>, candidates: &Candidates<'_>, request: &Request) -> Vec<Pooled> {
    // Relevance is never negative (see `validate`), so a negative value marks "not a candidate".
    const ABSENT: f32 = -1.0;
    const UNKNOWN: usize = usize::MAX;
    // Every id is looked up first and merged after, without a data-dependent branch: done in one
    // loop with an `if`, mispredicted branches stall the lookups' memory accesses, which
    // measured twice as slow on 100k random candidates. Each lookup starts from the previous
    // one's position (`locate`): the sets come as runs of ascending ids.
    let mut hint = 0;
    let positions: Vec<usize> = candidates
        .ids
        .iter()
        .map(|&id| match locate(chain.ids, id, hint) {
            Some(pos) => {
                hint = pos;
                pos
            }
            None => UNKNOWN,
        })
        .collect();
    let n = chain.ids.len();
    let mut best = vec![ABSENT; n];
    let mut matched = vec![false; n];
    // Positions in order of first occurrence: each is written, and kept only if it is new.
    let mut distinct = vec![0_usize; positions.len()];
    let mut len = 0;
    let occurrences = positions
        .iter()
        .zip(candidates.relevance)
        .zip(candidates.matched);
    for ((&pos, &relevance), &is_match) in occurrences {
        if pos == UNKNOWN {
            continue; // not an episode of this chain
        }
        distinct[len] = pos;
        len += usize::from(best[pos] == ABSENT);
        best[pos] = best[pos].max(relevance);
        matched[pos] |= is_match != 0;
    }
    distinct.truncate(len);
    let pooled = |&pos: &usize| Pooled {
        pos,
        relevance: best[pos],
    };
    if request.has_query {
        let hits: Vec<Pooled> = distinct
            .iter()
            .filter(|&&pos| matched[pos] && request.in_scope(chain, pos))
            .map(pooled)
            .collect();
        if !hits.is_empty() {
            return hits; // R2.2: what matches nothing is discarded, not ranked
        }
    }
    distinct
        .iter()
        .filter(|&&pos| request.in_scope(chain, pos))
        .map(pooled)
        .collect()
}

/// The position of `id` in the ascending `ids`, searched outward from `hint` in doubling steps
/// and then by bisection of the bracket found: a few steps when `id` is near `hint`, as in a run
/// of ascending ids (a whole set of a common word's matches is one), and at most about twice a
/// plain binary search's steps when it is not.
fn locate(ids: &[i64], id: i64, hint: usize) -> Option<usize> {
    let n = ids.len();
    if n == 0 {
        return None;
    }
    let hint = hint.min(n - 1);
    let (lo, hi) = if ids[hint] < id {
        // After `hint`: the first probe at or past `id` closes the bracket.
        let (mut lo, mut step) = (hint + 1, 1);
        loop {
            let probe = hint.saturating_add(step);
            if probe >= n {
                break (lo, n);
            }
            if ids[probe] >= id {
                break (lo, probe + 1);
            }
            lo = probe + 1;
            step *= 2;
        }
    } else {
        // At or before `hint`: the first probe at or before `id` closes the bracket.
        let (mut hi, mut step) = (hint + 1, 1);
        loop {
            if step > hint {
                break (0, hi);
            }
            let probe = hint - step;
            if ids[probe] <= id {
                break (probe, hi);
            }
            hi = probe;
            step *= 2;
        }
    };
    ids[lo..hi].binary_search(&id).ok().map(|i| lo + i)
}

/// A scored candidate, with its sort keys inline.
#[derive(Debug, Clone, Copy)]
struct Ranked {
    score: f64,
    occurred_at_us: i64,
    pos: usize,
}

impl Ranked {
    /// Rank order as "greater is better": score, then `occurred_at`, then id. Positions follow
    /// the ascending ids, so the last key is the position. Scores are never NaN (`validate`).
    fn rank_cmp(&self, other: &Self) -> Ordering {
        self.score
            .partial_cmp(&other.score)
            .unwrap_or(Ordering::Equal)
            .then(self.occurred_at_us.cmp(&other.occurred_at_us))
            .then(self.pos.cmp(&other.pos))
    }
}

// Only for `BinaryHeap`, which pops the greatest, i.e. the best-ranked, first. Positions are
// unique, so two candidates are equal only if they are the same candidate.
impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.rank_cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank_cmp(other)
    }
}

/// Step 4: score the candidates that survived steps 1-3.
fn score(chain: &Chain<'_>, pool: &[Pooled], request: &Request) -> Vec<Ranked> {
    let weights = &request.weights;
    pool.iter()
        .map(|c| {
            let occurred_at_us = chain.occurred_at_us[c.pos];
            let recency = weights.recency(request.now_us, occurred_at_us);
            Ranked {
                score: weights.score(c.relevance, chain.salience[c.pos], recency),
                occurred_at_us,
                pos: c.pos,
            }
        })
        .collect()
}

/// Steps 4 (the order), 5 (who survives) and 6: the packed candidates, in rank order.
///
/// Walks the candidates in rank order without sorting all of them: a heap yields the next best
/// in O(log S), and the walk ends once `max_items` are packed or nothing can fit any more.
/// Everything walked past was ranked above what is left, so the first of each `dup_key` met in
/// the walk is the best of its group, and a later one is a repetition it stands for.
fn walk_and_pack(chain: &Chain<'_>, ranked: Vec<Ranked>, request: &Request) -> Vec<Ranked> {
    let tokens = |r: &Ranked| u64::from(chain.tokens[r.pos]);
    let smallest = ranked.iter().map(tokens).min().unwrap_or(0);
    let mut heap = BinaryHeap::from(ranked);
    let mut met: FxHashSet<u64> = FxHashSet::default();
    let mut chosen: Vec<Ranked> = Vec::new();
    let mut left = request.budget_tokens;
    while chosen.len() < request.max_items && left >= smallest {
        let Some(r) = heap.pop() else { break };
        if met.insert(chain.dup_key[r.pos]) && tokens(&r) <= left {
            left -= tokens(&r);
            chosen.push(r);
        }
    }
    chosen
}

/// Step 5's counts: how many of the candidates left after step 3 share each chosen one's
/// `dup_key`, itself included.
fn group_sizes(chain: &Chain<'_>, pool: &[Pooled], chosen: &[Ranked]) -> Vec<u32> {
    let mut counts = vec![0_u32; chosen.len()];
    if chosen.is_empty() {
        return counts;
    }
    // The walk chose at most one candidate per dup_key.
    let index: FxHashMap<u64, usize> = chosen
        .iter()
        .enumerate()
        .map(|(i, r)| (chain.dup_key[r.pos], i))
        .collect();
    for c in pool {
        if let Some(&i) = index.get(&chain.dup_key[c.pos]) {
            counts[i] = counts[i].saturating_add(1);
        }
    }
    counts
}

fn position(pos: usize) -> i64 {
    // A slice index is at most isize::MAX.
    i64::try_from(pos).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000_000;
    const NOW: i64 = 1_000 * DAY;

    /// Owned arrays for a test chain, built one episode at a time.
    #[derive(Default)]
    struct TestChain {
        ids: Vec<i64>,
        occurred_at_us: Vec<i64>,
        salience: Vec<f32>,
        dup_key: Vec<u64>,
        tokens: Vec<u32>,
        flagged: Vec<u8>,
    }

    impl TestChain {
        /// Episodes with ids 0..n, one a day ending today, distinct dup keys, 10 tokens each.
        fn daily(n: usize) -> Self {
            let mut chain = Self::default();
            let n = i64::try_from(n).unwrap();
            for id in 0..n {
                let days_ago = n - 1 - id;
                chain.push(id, NOW - days_ago * DAY, 0.5, 10);
            }
            chain
        }

        fn push(&mut self, id: i64, occurred_at_us: i64, salience: f32, tokens: u32) {
            self.ids.push(id);
            self.occurred_at_us.push(occurred_at_us);
            self.salience.push(salience);
            self.dup_key.push(u64::try_from(id).unwrap() + 1_000);
            self.tokens.push(tokens);
            self.flagged.push(0);
        }

        fn view(&self) -> Chain<'_> {
            Chain {
                ids: &self.ids,
                occurred_at_us: &self.occurred_at_us,
                salience: &self.salience,
                dup_key: &self.dup_key,
                tokens: &self.tokens,
                flagged: &self.flagged,
            }
        }
    }

    #[derive(Default)]
    struct TestCandidates {
        ids: Vec<i64>,
        relevance: Vec<f32>,
        matched: Vec<u8>,
    }

    impl TestCandidates {
        fn of(items: &[(i64, f32, bool)]) -> Self {
            Self {
                ids: items.iter().map(|c| c.0).collect(),
                relevance: items.iter().map(|c| c.1).collect(),
                matched: items.iter().map(|c| u8::from(c.2)).collect(),
            }
        }

        fn view(&self) -> Candidates<'_> {
            Candidates {
                ids: &self.ids,
                relevance: &self.relevance,
                matched: &self.matched,
            }
        }
    }

    fn request() -> Request {
        Request {
            now_us: NOW,
            has_query: true,
            window_start_us: None,
            window_end_us: None,
            exclude_flagged: false,
            budget_tokens: 1_000_000,
            max_items: 1_000,
            weights: Weights {
                relevance: 0.55,
                salience: 0.30,
                recency: 0.15,
                recency_half_life_days: 60.0,
            },
        }
    }

    fn run(chain: &TestChain, candidates: &TestCandidates, request: &Request) -> Packed {
        rank_and_pack(&chain.view(), &candidates.view(), request).expect("valid input")
    }

    #[test]
    fn recency_halves_every_half_life() {
        let w = request().weights;
        assert!((w.recency(NOW, NOW) - 1.0).abs() < f64::EPSILON);
        assert!((w.recency(NOW, NOW + DAY) - 1.0).abs() < f64::EPSILON);
        assert!((w.recency(NOW, NOW - 60 * DAY) - 0.5).abs() < 1e-12);
        assert!((w.recency(NOW, NOW - 120 * DAY) - 0.25).abs() < 1e-12);
        // No overflow at the extremes of the i64 range.
        assert!(w.recency(i64::MAX, i64::MIN) >= 0.0);
    }

    #[test]
    fn union_takes_max_relevance_and_any_match() {
        let chain = TestChain::daily(3);
        let candidates = TestCandidates::of(&[(1, 0.2, false), (1, 0.9, false), (1, 0.1, true)]);
        let packed = run(&chain, &candidates, &request());
        assert_eq!(packed.positions, vec![1]);
        assert_eq!(packed.counts, vec![1]);
        let w = request().weights;
        let expected = w.score(0.9, 0.5, w.recency(NOW, chain.occurred_at_us[1]));
        #[allow(clippy::cast_possible_truncation)]
        let expected = expected as f32;
        assert!((packed.scores[0] - expected).abs() < 1e-7);
    }

    #[test]
    fn locate_finds_every_id_from_any_hint_and_nothing_else() {
        let ids: Vec<i64> = (0..300).map(|i| 3 * i + 1).collect();
        for hint in [0, 1, 7, 150, 298, 299, 5_000] {
            for (pos, &id) in ids.iter().enumerate() {
                assert_eq!(locate(&ids, id, hint), Some(pos), "id {id} from {hint}");
                assert_eq!(
                    locate(&ids, id + 1, hint),
                    None,
                    "id {} from {hint}",
                    id + 1
                );
            }
            assert_eq!(locate(&ids, 0, hint), None);
            assert_eq!(locate(&ids, i64::MAX, hint), None);
        }
        assert_eq!(locate(&[], 5, 0), None);
    }

    #[test]
    fn unknown_ids_are_ignored() {
        let chain = TestChain::daily(3);
        let candidates = TestCandidates::of(&[(-5, 1.0, true), (2, 0.0, false), (99, 1.0, true)]);
        assert_eq!(run(&chain, &candidates, &request()).positions, vec![2]);
    }

    #[test]
    fn an_old_exact_match_beats_500_recent_non_matches() {
        let chain = TestChain::daily(1_000);
        let mut items: Vec<(i64, f32, bool)> = (500..1_000).map(|id| (id, 0.0, false)).collect();
        items.push((0, 1.0, true)); // 999 days old
        let candidates = TestCandidates::of(&items);
        let packed = run(&chain, &candidates, &request());
        assert_eq!(packed.positions, vec![0]);
    }

    #[test]
    fn without_a_query_or_a_match_everything_is_ranked() {
        let chain = TestChain::daily(4);
        let candidates = TestCandidates::of(&[(0, 0.0, false), (3, 0.0, false), (1, 0.0, true)]);
        let no_query = Request {
            has_query: false,
            ..request()
        };
        // Same relevance and salience: recency decides, newest first.
        assert_eq!(run(&chain, &candidates, &no_query).positions, vec![3, 1, 0]);
        let no_match = TestCandidates::of(&[(0, 0.0, false), (3, 0.0, false)]);
        assert_eq!(run(&chain, &no_match, &request()).positions, vec![3, 0]);
    }

    #[test]
    fn window_is_half_open_and_flagged_can_be_excluded() {
        let chain = TestChain::daily(5); // occurred_at = NOW - 4 days .. NOW
        let mut chain_flagged = chain;
        chain_flagged.flagged[2] = 1;
        let all = TestCandidates::of(&[
            (0, 0.5, true),
            (1, 0.5, true),
            (2, 0.5, true),
            (3, 0.5, true),
            (4, 0.5, true),
        ]);
        let window = Request {
            window_start_us: Some(NOW - 3 * DAY),
            window_end_us: Some(NOW - DAY),
            ..request()
        };
        assert_eq!(run(&chain_flagged, &all, &window).positions, vec![2, 1]);
        let excluding = Request {
            exclude_flagged: true,
            ..window
        };
        assert_eq!(run(&chain_flagged, &all, &excluding).positions, vec![1]);
        let empty = Request {
            window_start_us: Some(NOW),
            window_end_us: Some(NOW),
            ..request()
        };
        assert_eq!(run(&chain_flagged, &all, &empty), Packed::default());
    }

    #[test]
    fn ties_break_by_occurred_at_then_id() {
        let mut chain = TestChain::default();
        chain.push(10, NOW, 0.5, 1);
        chain.push(11, NOW, 0.5, 1);
        chain.push(12, NOW + DAY, 0.5, 1); // future: recency 1, like now
        let candidates = TestCandidates::of(&[(10, 0.5, true), (11, 0.5, true), (12, 0.5, true)]);
        assert_eq!(
            run(&chain, &candidates, &request()).positions,
            vec![2, 1, 0]
        );
    }

    #[test]
    fn duplicates_collapse_into_the_best_ranked_with_a_count() {
        let mut chain = TestChain::daily(6);
        for pos in [1, 3, 4] {
            chain.dup_key[pos] = 7;
        }
        let candidates = TestCandidates::of(&[
            (0, 0.1, true),
            (1, 0.9, true),
            (3, 0.2, true),
            (4, 0.3, true),
            (5, 0.0, false), // filtered out: not counted
        ]);
        let packed = run(&chain, &candidates, &request());
        assert_eq!(packed.positions, vec![1, 0]);
        assert_eq!(packed.counts, vec![3, 1]);
    }

    #[test]
    fn packing_skips_what_does_not_fit_and_never_exceeds_the_budget() {
        let mut chain = TestChain::default();
        chain.push(0, NOW, 0.9, 50);
        chain.push(1, NOW, 0.8, 70);
        chain.push(2, NOW, 0.7, 30);
        chain.push(3, NOW, 0.6, 20);
        let candidates = TestCandidates::of(&[
            (0, 0.0, false),
            (1, 0.0, false),
            (2, 0.0, false),
            (3, 0.0, false),
        ]);
        let budget = Request {
            budget_tokens: 100,
            ..request()
        };
        let packed = run(&chain, &candidates, &budget);
        assert_eq!(packed.positions, vec![0, 2, 3]);
        assert_eq!(packed.tokens_used, 100);
        let two = Request {
            max_items: 2,
            ..budget
        };
        assert_eq!(run(&chain, &candidates, &two).positions, vec![0, 2]);
        let zero = Request {
            budget_tokens: 0,
            ..request()
        };
        assert_eq!(run(&chain, &candidates, &zero), Packed::default());
    }

    #[test]
    fn a_zero_token_item_still_fits_a_spent_budget() {
        let mut chain = TestChain::default();
        chain.push(0, NOW, 0.9, 100);
        chain.push(1, NOW, 0.8, 5);
        chain.push(2, NOW, 0.7, 0);
        let candidates = TestCandidates::of(&[(0, 0.0, true), (1, 0.0, true), (2, 0.0, true)]);
        let budget = Request {
            budget_tokens: 100,
            ..request()
        };
        let packed = run(&chain, &candidates, &budget);
        assert_eq!(packed.positions, vec![0, 2]);
        assert_eq!(packed.tokens_used, 100);
    }

    #[test]
    fn a_group_whose_best_does_not_fit_is_left_out_whole() {
        let mut chain = TestChain::default();
        chain.push(0, NOW, 0.9, 500); // the best of the group, too big
        chain.push(1, NOW, 0.8, 5); // same memory: collapsed into 0, not packed instead
        chain.push(2, NOW, 0.1, 5);
        chain.dup_key[1] = chain.dup_key[0];
        let candidates = TestCandidates::of(&[(0, 0.0, true), (1, 0.0, true), (2, 0.0, true)]);
        let budget = Request {
            budget_tokens: 100,
            ..request()
        };
        let packed = run(&chain, &candidates, &budget);
        assert_eq!(packed.positions, vec![2]);
        assert_eq!(packed.counts, vec![1]);
    }

    #[test]
    fn empty_inputs_pack_nothing() {
        let empty = TestChain::default();
        let none = TestCandidates::default();
        assert_eq!(run(&empty, &none, &request()), Packed::default());
        assert_eq!(
            run(&TestChain::daily(3), &none, &request()),
            Packed::default()
        );
    }

    #[test]
    fn bad_input_is_reported_in_order() {
        let chain = TestChain::daily(3);
        let candidates = TestCandidates::of(&[(0, 0.5, true)]);
        let check = |chain: &TestChain, candidates: &TestCandidates, request: &Request| {
            rank_and_pack(&chain.view(), &candidates.view(), request)
                .unwrap_err()
                .to_string()
        };

        let mut short = TestChain::daily(3);
        short.tokens.pop();
        short.ids[2] = 0; // also not ascending, reported second
        assert_eq!(
            check(&short, &candidates, &request()),
            "tokens has 2 items, expected 3 (one per item of chain_ids)"
        );
        short.tokens.push(1);
        assert_eq!(
            check(&short, &candidates, &request()),
            "chain_ids must be strictly ascending, but chain_ids[2] = 0 follows 1"
        );

        let mut salient = TestChain::daily(3);
        salient.salience[1] = f32::NAN;
        assert_eq!(
            check(&salient, &candidates, &request()),
            "salience must be in [0, 1], but salience[1] is not"
        );

        let uneven = TestCandidates {
            matched: vec![],
            ..TestCandidates::of(&[(0, 1.5, true)])
        };
        assert_eq!(
            check(&chain, &uneven, &request()),
            "cand_matched has 0 items, expected 1 (one per item of cand_ids)"
        );
        let too_relevant = TestCandidates::of(&[(0, 1.5, true)]);
        assert_eq!(
            check(&chain, &too_relevant, &request()),
            "cand_relevance must be in [0, 1], but cand_relevance[0] is not"
        );

        let mut bad = request();
        bad.weights.salience = f64::INFINITY;
        assert_eq!(
            check(&chain, &candidates, &bad),
            "weights.salience must be finite"
        );
        for half_life in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let mut bad = request();
            bad.weights.recency_half_life_days = half_life;
            assert_eq!(
                check(&chain, &candidates, &bad),
                "weights.recency_half_life_days must be finite and > 0"
            );
        }
    }
}
