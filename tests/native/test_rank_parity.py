"""Parity of recall's ranking: Rust core, pure-Python reference and numpy version agree.

``rank_and_pack`` is the recall hot path (SPEC R2.1-R2.6, R6.2). The three implementations take the
same ``RankRequest`` and must return the same positions, counts and tokens used, scores within
1e-6, and raise the same exception with the same message for bad input. Beside agreement on random
input, the properties the specification asks for are checked directly: packing never exceeds the
budget; with a query and a match, no unmatched candidate is returned; an old exact match beats 500
newer unmatched candidates; a collapsed group reports its size.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import rank_numpy
from tutor_memory.domain.recall import ranking
from tutor_memory.domain.recall.ranking import RankRequest, Weights
from tutor_memory.domain.recall.scoring import (
    RECENCY_HALF_LIFE_DAYS,
    W_RECENCY,
    W_RELEVANCE,
    W_SALIENCE,
)
from tutor_memory.native import _core, _reference
from tutor_memory.native._core import NativeInputError, NativeTypeError

Args = dict[str, Any]
Result = tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], int]
RankFn = Callable[..., Result]

# Typed loosely on purpose: the tests feed deliberately ill-typed arguments.
RUST: RankFn = _core.rank_and_pack
REFERENCE: RankFn = _reference.rank_and_pack
NUMPY: RankFn = rank_numpy.rank_and_pack
IMPLS: tuple[tuple[str, RankFn], ...] = (("rust", RUST), ("python", REFERENCE), ("numpy", NUMPY))
IMPL_IDS = [name for name, _ in IMPLS]
IMPL_FNS = [fn for _, fn in IMPLS]

# The request's attributes, in the order the core reads them.
FIELDS = tuple(f.name for f in dataclasses.fields(RankRequest))
WEIGHT_FIELDS = tuple(f.name for f in dataclasses.fields(Weights))
CHAIN_ARRAYS = {
    "chain_ids": np.int64,
    "occurred_at_us": np.int64,
    "salience": np.float32,
    "dup_key": np.uint64,
    "tokens": np.uint32,
    "flagged": np.uint8,
}
CAND_ARRAYS = {"cand_ids": np.int64, "cand_relevance": np.float32, "cand_matched": np.uint8}

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
DAY = 86_400_000_000
NOW = 1_750_000_000_000_000


def call(fn: RankFn, args: Args) -> Result:
    """One call with a RankRequest of ``args`` (which the dataclass does not type-check, so the
    bad-type tests can build ill-typed ones)."""
    return fn(RankRequest(**args))


def assert_same(expected: Result, got: Result) -> None:
    positions, counts, scores, tokens_used = got
    assert positions.dtype == np.int64
    assert counts.dtype == np.uint32
    assert scores.dtype == np.float32
    assert type(tokens_used) is int
    np.testing.assert_array_equal(positions, expected[0])
    np.testing.assert_array_equal(counts, expected[1])
    np.testing.assert_allclose(scores, expected[2], rtol=1e-6, atol=1e-6)
    assert tokens_used == expected[3]


def all_agree(args: Args) -> Result:
    expected = call(REFERENCE, args)
    for fn in (RUST, NUMPY):
        assert_same(expected, call(fn, args))
    return expected


# -- random inputs ----------------------------------------------------------------------------

ids_st = st.integers(-1_000, 1_000) | st.sampled_from([I64_MIN, I64_MAX, 0])
times_st = (
    st.sampled_from([NOW - k * DAY for k in (0, 1, 2, 60, 200, 365)] + [NOW + DAY])
    | st.integers(NOW - 1_000 * DAY, NOW + DAY)
    | st.sampled_from([I64_MIN, I64_MAX])
)
unit_st = st.sampled_from([0.0, 0.156, 0.35, 0.6, 0.7, 0.85, 1.0]) | st.floats(0, 1, width=32)
dup_st = st.integers(0, 4) | st.integers(0, U64_MAX)
tokens_st = st.integers(0, 60) | st.just(U32_MAX)
weight_st = st.sampled_from([W_RELEVANCE, W_SALIENCE, W_RECENCY, 0.0, 1.0, -0.5]) | st.floats(
    -2, 2, allow_nan=False, allow_infinity=False
)
half_life_st = st.sampled_from([RECENCY_HALF_LIFE_DAYS, 1.0]) | st.floats(1e-3, 1e4)
budget_st = st.integers(0, 200) | st.sampled_from([0, U64_MAX]) | st.integers(0, U64_MAX)
max_items_st = st.integers(0, 40) | st.just(U64_MAX)


@st.composite
def rank_inputs(draw: st.DrawFn) -> Args:
    n = draw(st.integers(0, 30))
    ids = sorted(draw(st.sets(ids_st, min_size=n, max_size=n)))
    chain: Args = {
        "chain_ids": ids,
        "occurred_at_us": draw(st.lists(times_st, min_size=n, max_size=n)),
        "salience": draw(st.lists(unit_st, min_size=n, max_size=n)),
        "dup_key": draw(st.lists(dup_st, min_size=n, max_size=n)),
        "tokens": draw(st.lists(tokens_st, min_size=n, max_size=n)),
        "flagged": draw(st.lists(st.sampled_from([0, 0, 0, 1, 255]), min_size=n, max_size=n)),
    }
    # Candidate sets, concatenated: ids of the chain (repeating across sets) and unknown ids.
    cand_id_st = st.sampled_from(ids) | ids_st if ids else ids_st
    cand_ids: list[int] = []
    relevance: list[float] = []
    matched: list[int] = []
    for _ in range(draw(st.integers(0, 4))):
        size = draw(st.integers(0, 12))
        set_matches = draw(st.sampled_from([0, 1, None]))  # None: per item, as a threshold does
        cand_ids += draw(st.lists(cand_id_st, min_size=size, max_size=size))
        relevance += draw(st.lists(unit_st, min_size=size, max_size=size))
        matched += (
            draw(st.lists(st.sampled_from([0, 1, 3]), min_size=size, max_size=size))
            if set_matches is None
            else [set_matches] * size
        )
    args: Args = {name: np.array(chain[name], dtype=dtype) for name, dtype in CHAIN_ARRAYS.items()}
    args["cand_ids"] = np.array(cand_ids, dtype=np.int64)
    args["cand_relevance"] = np.array(relevance, dtype=np.float32)
    args["cand_matched"] = np.array(matched, dtype=np.uint8)
    args.update(
        now_us=draw(st.just(NOW) | times_st),
        has_query=draw(st.booleans()),
        window_start_us=draw(st.none() | times_st),
        window_end_us=draw(st.none() | times_st),
        exclude_flagged=draw(st.booleans()),
        budget_tokens=draw(budget_st),
        max_items=draw(max_items_st),
        weights=Weights(
            relevance=draw(weight_st),
            salience=draw(weight_st),
            recency=draw(weight_st),
            recency_half_life_days=draw(half_life_st),
        ),
    )
    return args


# Hypothesis' example database would write .hypothesis/ into the work tree.
parity_settings = settings(max_examples=500, deadline=None, database=None)


@parity_settings
@given(rank_inputs())
def test_three_implementations_agree(args: Args) -> None:
    all_agree(args)


@parity_settings
@given(rank_inputs())
def test_positional_and_keyword_calls_agree(args: Args) -> None:
    expected = call(REFERENCE, args)
    for fn in IMPL_FNS:
        assert_same(expected, fn(request=RankRequest(**args)))


@parity_settings
@given(rank_inputs())
def test_any_object_with_the_attributes_will_do(args: Args) -> None:
    # The core reads the request by attribute name, not by type.
    request = SimpleNamespace(**{**args, "weights": SimpleNamespace(**vars_of(args["weights"]))})
    expected = call(REFERENCE, args)
    for fn in IMPL_FNS:
        assert_same(expected, fn(request))


def vars_of(weights: Weights) -> dict[str, float]:
    return {name: getattr(weights, name) for name in WEIGHT_FIELDS}


def _in_scope(args: Args, pos: int) -> bool:
    at = int(args["occurred_at_us"][pos])
    start, end = args["window_start_us"], args["window_end_us"]
    return (
        (start is None or at >= start)
        and (end is None or at < end)
        and not (args["exclude_flagged"] and args["flagged"][pos])
    )


@parity_settings
@given(rank_inputs())
def test_properties_of_the_result(args: Args) -> None:
    positions, counts, scores, tokens_used = all_agree(args)
    chain_ids = args["chain_ids"].tolist()
    position_of = {episode_id: pos for pos, episode_id in enumerate(chain_ids)}
    candidates = {position_of[i] for i in args["cand_ids"].tolist() if i in position_of}
    in_scope = {pos for pos in candidates if _in_scope(args, pos)}
    matched = {
        position_of[i]
        for i, m in zip(args["cand_ids"].tolist(), args["cand_matched"].tolist(), strict=True)
        if m and i in position_of
    } & in_scope
    packed = positions.tolist()

    # Packing never exceeds the budget (R6.2), and reports what it used.
    assert tokens_used <= args["budget_tokens"]
    assert tokens_used == sum(int(args["tokens"][p]) for p in packed)
    assert len(packed) <= args["max_items"]
    # Only candidates in scope, each once, one per memory (R2.4), in rank order.
    assert set(packed) <= in_scope
    assert len(set(packed)) == len(packed)
    assert len({int(args["dup_key"][p]) for p in packed}) == len(packed)
    assert all(c >= 1 for c in counts.tolist())
    assert sum(counts.tolist()) <= len(in_scope)
    assert all(a >= b for a, b in zip(scores.tolist(), scores.tolist()[1:], strict=False))
    # With a query and a match, no unmatched candidate is ever returned (R2.2).
    if args["has_query"] and matched:
        assert set(packed) <= matched


# -- realistic sizes --------------------------------------------------------------------------


def realistic_args(seed: int, n: int, **overrides: Any) -> Args:
    """A chain of n episodes over two years and overlapping candidate sets, as recall builds."""
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(50 * n, size=n, replace=False)).astype(np.int64)
    occurred = np.sort(rng.integers(NOW - 730 * DAY, NOW, size=n)).astype(np.int64)
    recent = ids[-min(500, n) :]
    text = rng.choice(ids, size=n // 20)
    concept = rng.choice(ids, size=n // 10)
    neighbours = rng.choice(ids, size=n // 5)
    unknown = rng.integers(-100, 60 * n, size=50)
    sets = [
        (recent, np.zeros(recent.size), np.zeros(recent.size)),
        (text, rng.random(text.size), np.ones(text.size)),
        (concept, np.ones(concept.size), np.ones(concept.size)),
        (neighbours, rng.random(neighbours.size), rng.random(neighbours.size) < 0.05),
        (unknown, rng.random(unknown.size), np.ones(unknown.size)),
    ]
    args: Args = {
        "chain_ids": ids,
        "occurred_at_us": occurred,
        "salience": rng.choice([0.35, 0.5, 0.6, 0.7, 0.85], size=n).astype(np.float32),
        # About one episode in ten repeats an earlier one.
        "dup_key": rng.integers(0, n - n // 10, size=n).astype(np.uint64),
        "tokens": rng.integers(5, 120, size=n).astype(np.uint32),
        "flagged": (rng.random(n) < 0.05).astype(np.uint8),
        "cand_ids": np.concatenate([s[0] for s in sets]).astype(np.int64),
        "cand_relevance": np.concatenate([s[1] for s in sets]).astype(np.float32),
        "cand_matched": np.concatenate([s[2] for s in sets]).astype(np.uint8),
        "now_us": NOW,
        "has_query": True,
        "window_start_us": None,
        "window_end_us": None,
        "exclude_flagged": False,
        "budget_tokens": 1_500,
        "max_items": 20,
        "weights": Weights(),
    }
    args.update(overrides)
    return args


REALISTIC_CASES: list[tuple[str, Args]] = [
    ("query", {}),
    ("no query", {"has_query": False}),
    ("no match", {"cand_matched": None}),
    ("window", {"window_start_us": NOW - 200 * DAY, "window_end_us": NOW - 150 * DAY}),
    ("window excludes all", {"window_start_us": NOW, "window_end_us": NOW + DAY}),
    ("exclude flagged", {"exclude_flagged": True}),
    ("tight budget skips", {"budget_tokens": 60, "max_items": 1_000}),
    ("huge budget", {"budget_tokens": U64_MAX, "max_items": U64_MAX, "has_query": False}),
    ("budget 0", {"budget_tokens": 0}),
    ("max_items 0", {"max_items": 0}),
]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "overrides", [o for _, o in REALISTIC_CASES], ids=[name for name, _ in REALISTIC_CASES]
)
def test_agree_on_realistic_chains(seed: int, overrides: Args) -> None:
    args = realistic_args(seed, 3_000, **overrides)
    if "cand_matched" in overrides:
        args["cand_matched"] = np.zeros_like(args["cand_ids"], dtype=np.uint8)
    all_agree(args)


def test_strided_and_reversed_views_agree() -> None:
    # Non-contiguous arrays are copied by the extension instead of borrowed.
    args = realistic_args(7, 2_000)
    expected = all_agree(args)
    doubled = {name: np.repeat(args[name], 2)[::2] for name in (*CHAIN_ARRAYS, *CAND_ARRAYS)}
    assert not doubled["chain_ids"].flags.c_contiguous
    all_agree({**args, **doubled})
    assert_same(expected, call(RUST, {**args, **doubled}))
    reversed_cands = {name: np.ascontiguousarray(args[name][::-1])[::-1] for name in CAND_ARRAYS}
    assert_same(expected, call(RUST, {**args, **reversed_cands}))


def test_empty_inputs() -> None:
    empty = {name: np.zeros(0, dtype=dtype) for name, dtype in CHAIN_ARRAYS.items()}
    empty |= {name: np.zeros(0, dtype=dtype) for name, dtype in CAND_ARRAYS.items()}
    args = realistic_args(0, 100) | empty
    for fn in IMPL_FNS:
        positions, counts, scores, tokens_used = call(fn, args)
        assert (positions.size, counts.size, scores.size, tokens_used) == (0, 0, 0, 0)
    no_candidates = realistic_args(0, 100) | {
        name: np.zeros(0, dtype=dtype) for name, dtype in CAND_ARRAYS.items()
    }
    assert all_agree(no_candidates)[0].size == 0


def test_numpy_scalars_are_accepted() -> None:
    args = realistic_args(3, 500)
    scalars = {
        "now_us": np.int64(NOW),
        "has_query": np.bool_(True),
        "exclude_flagged": np.bool_(False),
        "budget_tokens": np.uint32(1_500),
        "max_items": np.int8(20),
        "weights": Weights(relevance=np.float32(0.5), salience=1),  # type: ignore[arg-type]
    }
    all_agree(args | scalars)


# -- what the specification asks for ----------------------------------------------------------


def chain_args(
    occurred_at_us: list[int],
    candidates: list[tuple[int, float, int]],
    **overrides: Any,
) -> Args:
    """A chain with ids 0..n-1, salience 0.5, 10 tokens and distinct dup keys per episode."""
    n = len(occurred_at_us)
    args: Args = {
        "chain_ids": np.arange(n, dtype=np.int64),
        "occurred_at_us": np.array(occurred_at_us, dtype=np.int64),
        "salience": np.full(n, 0.5, dtype=np.float32),
        "dup_key": np.arange(n, dtype=np.uint64),
        "tokens": np.full(n, 10, dtype=np.uint32),
        "flagged": np.zeros(n, dtype=np.uint8),
        "cand_ids": np.array([c[0] for c in candidates], dtype=np.int64),
        "cand_relevance": np.array([c[1] for c in candidates], dtype=np.float32),
        "cand_matched": np.array([c[2] for c in candidates], dtype=np.uint8),
        "now_us": NOW,
        "has_query": True,
        "window_start_us": None,
        "window_end_us": None,
        "exclude_flagged": False,
        "budget_tokens": 10_000,
        "max_items": 1_000,
        "weights": Weights(),
    }
    args.update(overrides)
    return args


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_an_old_exact_match_beats_500_newer_unmatched_candidates(fn: RankFn) -> None:
    # Episode 0 is from 200 days ago and is the only match, a weak one (relevance 0.156); the 500
    # newest are semantic noise (relevance 0.4, no match) from the last 500 minutes.
    times = [NOW - 200 * DAY] + [NOW - 60_000_000 * k for k in range(500, 0, -1)]
    noise = [(i, 0.4, 0) for i in range(1, 501)]
    args = chain_args(times, [*noise, (0, 0.156, 1)], max_items=1)
    assert call(fn, args)[0].tolist() == [0]
    # It is the filter, not a weight, that makes it win: without a query it would lose.
    assert call(fn, args | {"has_query": False})[0].tolist() != [0]


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_without_a_match_the_recent_past_is_offered(fn: RankFn) -> None:
    times = [NOW - k * DAY for k in range(5, 0, -1)]  # ids 0..4, oldest first
    args = chain_args(times, [(i, 0.0, 0) for i in range(5)], max_items=3)
    assert call(fn, args)[0].tolist() == [4, 3, 2]


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_a_collapsed_group_reports_its_size(fn: RankFn) -> None:
    # "What is a cell" asked nine times in three months, among other episodes.
    n = 20
    times = [NOW - (n - i) * 10 * DAY for i in range(n)]
    cell = [1, 3, 5, 7, 9, 11, 13, 15, 17]
    args = chain_args(times, [(i, 1.0 if i in cell else 0.2, 1) for i in range(n)])
    args["dup_key"][cell] = 424_242
    positions, counts, _, _ = call(fn, args)
    # The most recent asking stands for all nine; it is the only one of them returned.
    assert positions.tolist()[0] == 17
    assert counts.tolist()[0] == 9
    assert not set(positions.tolist()[1:]) & set(cell)
    assert sum(counts.tolist()) == n
    # A group member outside the window is not counted.
    windowed = call(fn, args | {"window_start_us": times[5]})
    assert windowed[0].tolist()[0] == 17
    assert windowed[1].tolist()[0] == 7


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_packing_skips_what_does_not_fit(fn: RankFn) -> None:
    args = chain_args([NOW] * 4, [(i, 1.0 - i / 10, 1) for i in range(4)])
    args["tokens"] = np.array([50, 70, 30, 20], dtype=np.uint32)
    positions, _, _, used = call(fn, args | {"budget_tokens": 100})
    assert (positions.tolist(), used) == ([0, 2, 3], 100)
    positions, _, _, used = call(fn, args | {"budget_tokens": 100, "max_items": 2})
    assert (positions.tolist(), used) == ([0, 2], 80)


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_a_zero_token_item_still_fits_a_spent_budget(fn: RankFn) -> None:
    args = chain_args([NOW] * 3, [(i, 1.0 - i / 10, 1) for i in range(3)], budget_tokens=100)
    args["tokens"] = np.array([100, 5, 0], dtype=np.uint32)
    positions, _, _, used = call(fn, args)
    assert (positions.tolist(), used) == ([0, 2], 100)


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_a_group_whose_best_does_not_fit_is_left_out_whole(fn: RankFn) -> None:
    # Collapse comes before packing: a smaller repetition does not stand in for its best.
    args = chain_args([NOW] * 3, [(i, 1.0 - i / 10, 1) for i in range(3)], budget_tokens=100)
    args["tokens"] = np.array([500, 5, 5], dtype=np.uint32)
    args["dup_key"][1] = args["dup_key"][0]
    positions, counts, _, _ = call(fn, args)
    assert (positions.tolist(), counts.tolist()) == ([2], [1])


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_time_window_and_flagged_narrations(fn: RankFn) -> None:
    times = [NOW - k * DAY for k in range(5, 0, -1)]  # ids 0..4
    args = chain_args(times, [(i, 0.5, 1) for i in range(5)])
    args["flagged"][2] = 1
    window = {"window_start_us": times[1], "window_end_us": times[3]}  # [start, end)
    assert call(fn, args | window)[0].tolist() == [2, 1]
    assert call(fn, args | window | {"exclude_flagged": True})[0].tolist() == [1]
    empty = {"window_start_us": times[3], "window_end_us": times[3]}
    assert call(fn, args | empty)[0].tolist() == []


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_ties_break_by_occurred_at_then_id(fn: RankFn) -> None:
    args = chain_args([NOW, NOW, NOW + DAY, NOW - DAY], [(i, 0.5, 1) for i in range(4)])
    args["weights"] = Weights(recency=0.0)
    assert call(fn, args)[0].tolist() == [2, 1, 0, 3]


# -- bad input --------------------------------------------------------------------------------

BASE = chain_args([NOW - 2 * DAY, NOW - DAY, NOW], [(0, 0.5, 1), (2, 1.0, 0)])

BAD_VALUES: list[tuple[str, Args, str]] = [
    (
        "occurred_at_us short",
        {"occurred_at_us": BASE["occurred_at_us"][:2]},
        "occurred_at_us has 2 items, expected 3 (one per item of chain_ids)",
    ),
    (
        "salience long",
        {"salience": np.zeros(4, np.float32)},
        "salience has 4 items, expected 3 (one per item of chain_ids)",
    ),
    (
        "dup_key empty",
        {"dup_key": np.zeros(0, np.uint64)},
        "dup_key has 0 items, expected 3 (one per item of chain_ids)",
    ),
    ("tokens short", {"tokens": np.zeros(1, np.uint32)}, "tokens has 1 items, expected 3"),
    ("flagged long", {"flagged": np.zeros(9, np.uint8)}, "flagged has 9 items, expected 3"),
    (
        "cand_relevance short",
        {"cand_relevance": np.zeros(1, np.float32)},
        "cand_relevance has 1 items, expected 2 (one per item of cand_ids)",
    ),
    ("cand_matched long", {"cand_matched": np.zeros(3, np.uint8)}, "cand_matched has 3 items"),
    (
        "chain_ids repeat",
        {"chain_ids": np.array([5, 7, 7], np.int64)},
        "chain_ids must be strictly ascending, but chain_ids[2] = 7 follows 7",
    ),
    (
        "chain_ids descend",
        {"chain_ids": np.array([I64_MAX, 0, 1], np.int64)},
        f"chain_ids must be strictly ascending, but chain_ids[1] = 0 follows {I64_MAX}",
    ),
    (
        "salience NaN",
        {"salience": np.array([0.5, np.nan, 0.5], np.float32)},
        "salience must be in [0, 1], but salience[1] is not",
    ),
    ("salience above 1", {"salience": np.array([0.5, 0.5, 1.5], np.float32)}, "salience[2]"),
    ("salience negative", {"salience": np.array([-0.1, 0, 0], np.float32)}, "salience[0]"),
    (
        "cand_relevance inf",
        {"cand_relevance": np.array([0.5, np.inf], np.float32)},
        "cand_relevance must be in [0, 1], but cand_relevance[1] is not",
    ),
    ("now_us above i64", {"now_us": I64_MAX + 1}, f"now_us must be in {I64_MIN}..={I64_MAX}"),
    (
        "now_us wider than 128 bits",
        {"now_us": -(2**200)},
        "now_us must be in -9223372036854775808..=9223372036854775807, "
        "got an integer wider than 128 bits",
    ),
    ("window_start_us below i64", {"window_start_us": I64_MIN - 1}, "window_start_us must be"),
    ("window_end_us above i64", {"window_end_us": 2**64}, "window_end_us must be"),
    (
        "budget negative",
        {"budget_tokens": -1},
        "budget_tokens must be in 0..=18446744073709551615, got -1",
    ),
    ("budget above u64", {"budget_tokens": U64_MAX + 1}, "budget_tokens must be"),
    ("max_items negative", {"max_items": -5}, "max_items must be in 0..=18446744073709551615"),
    (
        "relevance weight NaN",
        {"weights": Weights(relevance=float("nan"))},
        "weights.relevance must be finite",
    ),
    (
        "salience weight inf",
        {"weights": Weights(salience=float("inf"))},
        "weights.salience must be finite",
    ),
    (
        "recency weight -inf",
        {"weights": Weights(recency=float("-inf"))},
        "weights.recency must be finite",
    ),
    (
        "half-life 0",
        {"weights": Weights(recency_half_life_days=0.0)},
        "weights.recency_half_life_days must be finite and > 0",
    ),
    (
        "half-life negative",
        {"weights": Weights(recency_half_life_days=-60)},
        "weights.recency_half_life_days must be",
    ),
    (
        "half-life NaN",
        {"weights": Weights(recency_half_life_days=float("nan"))},
        "weights.recency_half_life_days",
    ),
    (
        "half-life inf",
        {"weights": Weights(recency_half_life_days=float("inf"))},
        "weights.recency_half_life_days",
    ),
    (
        "weight int too large for a float",
        {"weights": Weights(salience=10**400)},
        "weights.salience: int too large to convert to float",
    ),
    # With several problems, all report the first in the documented order.
    (
        "int range before lengths",
        {"tokens": np.zeros(1, np.uint32), "max_items": -1},
        "max_items must be",
    ),
    (
        "lengths before order",
        {"chain_ids": np.array([3, 2, 1], np.int64), "cand_matched": np.zeros(0, np.uint8)},
        "cand_matched has 0 items",
    ),
    (
        "order before ranges of values",
        {"chain_ids": np.array([3, 2, 1], np.int64), "salience": np.full(3, 2, np.float32)},
        "chain_ids must be strictly ascending",
    ),
    (
        "values before weights",
        {"cand_relevance": np.full(2, -1, np.float32), "weights": Weights(relevance=float("nan"))},
        "cand_relevance must be in [0, 1]",
    ),
]

BAD_TYPES: list[tuple[str, Args, str]] = [
    ("chain_ids list", {"chain_ids": [0, 1, 2]}, "chain_ids"),
    ("chain_ids int32", {"chain_ids": np.arange(3, dtype=np.int32)}, "chain_ids"),
    ("chain_ids big-endian", {"chain_ids": np.arange(3, dtype=">i8")}, "chain_ids"),
    ("salience float64", {"salience": np.full(3, 0.5)}, "salience"),
    ("dup_key int64", {"dup_key": np.arange(3, dtype=np.int64)}, "dup_key"),
    ("flagged bool", {"flagged": np.zeros(3, dtype=bool)}, "flagged"),
    ("cand_ids 2-d", {"cand_ids": np.zeros((2, 1), dtype=np.int64)}, "cand_ids"),
    ("cand_matched None", {"cand_matched": None}, "cand_matched"),
    ("now_us float", {"now_us": float(NOW)}, "now_us"),
    ("has_query int", {"has_query": 1}, "has_query"),
    ("exclude_flagged None", {"exclude_flagged": None}, "exclude_flagged"),
    ("window_start_us float", {"window_start_us": 1.5}, "window_start_us"),
    ("budget_tokens str", {"budget_tokens": "5"}, "budget_tokens"),
    ("recency weight str", {"weights": Weights(recency="0.15")}, "weights.recency"),  # type: ignore[arg-type]
    ("weights a tuple", {"weights": (0.5, 0.3, 0.2, 60.0)}, "weights"),
    # Types are all checked before any value: a later bad type wins over an earlier bad value.
    ("type before value", {"now_us": -(2**70), "budget_tokens": "5"}, "budget_tokens"),
]


def _outcome(fn: RankFn, args: Args) -> tuple[type[BaseException], str]:
    try:
        call(fn, args)
    except Exception as exc:
        return type(exc), str(exc)
    pytest.fail(f"{fn.__module__}.rank_and_pack accepted bad input")


@pytest.mark.parametrize(
    ("override", "message"),
    [(o, m) for _, o, m in BAD_VALUES],
    ids=[name for name, _, _ in BAD_VALUES],
)
def test_bad_values_raise_the_same_native_input_error(override: Args, message: str) -> None:
    outcomes = [_outcome(fn, BASE | override) for fn in IMPL_FNS]
    assert outcomes[0][0] is NativeInputError
    assert issubclass(outcomes[0][0], ValueError)
    assert message in outcomes[0][1]
    # The message names the attribute first.
    assert outcomes[0][1].split()[0].split(".")[0].rstrip(":") in FIELDS
    assert outcomes[1] == outcomes[0]
    assert outcomes[2] == outcomes[0]


@pytest.mark.parametrize(
    ("override", "path"),
    [(o, p) for _, o, p in BAD_TYPES],
    ids=[name for name, _, _ in BAD_TYPES],
)
def test_bad_types_raise_native_type_error_naming_the_attribute(override: Args, path: str) -> None:
    for fn in IMPL_FNS:
        kind, message = _outcome(fn, BASE | override)
        assert kind is NativeTypeError, (fn, message)
        assert issubclass(kind, TypeError)
        # "{path}: {reason}"; the reason is pyo3's or Python's own wording.
        assert message.split(": ")[0] == path, (fn, message)


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_a_missing_attribute_is_a_type_error(fn: RankFn) -> None:
    request = SimpleNamespace(**BASE)
    del request.weights
    with pytest.raises(NativeTypeError, match=r"^request: .*'weights'") as info:
        fn(request)
    assert isinstance(info.value.__cause__, AttributeError)
    nested = SimpleNamespace(**{**BASE, "weights": SimpleNamespace(relevance=0.5)})
    with pytest.raises(NativeTypeError, match=r"^weights: .*'salience'"):
        fn(nested)


def test_the_base_of_the_bad_input_cases_is_valid() -> None:
    assert all_agree(BASE)[0].tolist() == [0]


# -- the extension as a citizen ---------------------------------------------------------------


def test_concurrent_calls_agree() -> None:
    # The extension releases the GIL while ranking; results must not depend on interleaving.
    cases = [realistic_args(seed, 2_000, has_query=seed % 2 == 0) for seed in range(16)]
    expected = [call(NUMPY, args) for args in cases]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda args: call(RUST, args), cases))
    for e, g in zip(expected, got, strict=True):
        assert_same(e, g)


def test_inputs_are_not_modified() -> None:
    args = realistic_args(5, 1_000)
    before = {name: args[name].copy() for name in (*CHAIN_ARRAYS, *CAND_ARRAYS)}
    for fn in IMPL_FNS:
        call(fn, args)
    for name, array in before.items():
        np.testing.assert_array_equal(args[name], array)


def test_signatures_match() -> None:
    for fn in (REFERENCE, NUMPY):
        assert tuple(inspect.signature(fn).parameters) == ("request",)
    assert RUST.__text_signature__ == "(request)"  # type: ignore[attr-defined]


# -- the server's wrapper ---------------------------------------------------------------------


def test_ranking_wraps_one_native_call() -> None:
    args = realistic_args(11, 2_000)
    ranked = ranking.rank_and_pack(RankRequest(**args))
    assert isinstance(ranked, ranking.Ranked)
    assert_same(
        call(REFERENCE, args), (ranked.positions, ranked.counts, ranked.scores, ranked.tokens_used)
    )


def test_default_weights_are_recalls_policy() -> None:
    assert Weights() == Weights(W_RELEVANCE, W_SALIENCE, W_RECENCY, RECENCY_HALF_LIFE_DAYS)
    request = RankRequest(**{**BASE, "weights": Weights()})
    assert request.weights == Weights()
    assert request.window_start_us is None
    assert request.window_end_us is None
    assert request.exclude_flagged is False
