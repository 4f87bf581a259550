"""``rank_and_pack`` vectorised with numpy: the benchmark's middle contender.

The server calls the Rust core (:func:`tutor_memory.native._core.rank_and_pack`, through
:func:`tutor_memory.domain.recall.ranking.rank_and_pack`); this version exists so that
``bench/bench_rank.py`` can show what the best plain-numpy code costs next to it. It takes the same
request, and has the same semantics, results and errors (``tests/parity/test_rank_parity.py``);
see ``tutor_memory/native/_core.pyi`` for the semantics. Reading the request and checking its
integer ranges is the pure-Python reference's (:func:`~tutor_memory.native._reference.
read_rank_request`, O(1) per attribute); the arrays' contents are checked here, vectorised.

Only packing is a Python loop, because greedy packing that skips what does not fit is
sequential; it works on windows of the ranked survivors, so it costs one numpy call per run of
items taken or skipped, never one Python step per candidate.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from tutor_memory.native._core import NativeInputError
from tutor_memory.native._reference import read_rank_request

if TYPE_CHECKING:
    from tutor_memory.native._core import _RankRequest

__all__ = ["rank_and_pack"]

_US_PER_DAY: Final = 86_400_000_000
# Survivors examined per numpy call while packing; doubled while nothing fits.
_PACK_WINDOW: Final = 64


def _first_outside_unit_range(values: npt.NDArray[np.float32]) -> int | None:
    bad = np.flatnonzero(~((values >= 0.0) & (values <= 1.0)))  # NaN is outside too
    return int(bad[0]) if bad.size else None


def rank_and_pack(
    request: _RankRequest,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], int]:
    """Rank one turn's candidates and pack the best into the token budget (numpy version)."""
    # Checks in the reference's order: types, integer ranges, then the arrays' contents.
    r = read_rank_request(request)
    chain_ids, occurred_at_us, salience = r.chain_ids, r.occurred_at_us, r.salience
    dup_key, tokens, flagged = r.dup_key, r.tokens, r.flagged
    cand_ids, cand_relevance, cand_matched = r.cand_ids, r.cand_relevance, r.cand_matched
    now, start, end = r.now_us, r.window_start_us, r.window_end_us
    budget, limit = r.budget_tokens, r.max_items
    w_rel, w_sal, w_rec, half_life_days = r.weights

    n, m = chain_ids.size, cand_ids.size
    lengths = [
        ("occurred_at_us", occurred_at_us.size, "chain_ids", n),
        ("salience", salience.size, "chain_ids", n),
        ("dup_key", dup_key.size, "chain_ids", n),
        ("tokens", tokens.size, "chain_ids", n),
        ("flagged", flagged.size, "chain_ids", n),
        ("cand_relevance", cand_relevance.size, "cand_ids", m),
        ("cand_matched", cand_matched.size, "cand_ids", m),
    ]
    for name, length, like, expected in lengths:
        if length != expected:
            raise NativeInputError(
                f"{name} has {length} items, expected {expected} (one per item of {like})"
            )
    descents = np.flatnonzero(chain_ids[1:] <= chain_ids[:-1])
    if descents.size:
        i = int(descents[0]) + 1
        raise NativeInputError(
            "chain_ids must be strictly ascending, "
            f"but chain_ids[{i}] = {chain_ids[i]} follows {chain_ids[i - 1]}"
        )
    for name, values in (("salience", salience), ("cand_relevance", cand_relevance)):
        index = _first_outside_unit_range(values)
        if index is not None:
            raise NativeInputError(f"{name} must be in [0, 1], but {name}[{index}] is not")
    for name, w in (
        ("weights.relevance", w_rel),
        ("weights.salience", w_sal),
        ("weights.recency", w_rec),
    ):
        if not math.isfinite(w):
            raise NativeInputError(f"{name} must be finite")
    if not (math.isfinite(half_life_days) and half_life_days > 0.0):
        raise NativeInputError("weights.recency_half_life_days must be finite and > 0")

    # 1. Union: ids to chain positions, merged over dense per-position arrays.
    found = np.searchsorted(chain_ids, cand_ids)
    known = found < n
    known[known] = chain_ids[found[known]] == cand_ids[known]
    pos = found[known]
    best = np.zeros(n, dtype=np.float32)
    np.maximum.at(best, pos, cand_relevance[known])
    any_match = np.zeros(n, dtype=bool)
    any_match[pos[cand_matched[known] != 0]] = True
    present = np.zeros(n, dtype=bool)
    present[pos] = True
    cand = np.flatnonzero(present)

    # 2. Scope: the time window [start, end) and the tutor's own narrations.
    at = occurred_at_us[cand]
    keep = np.ones(cand.size, dtype=bool)
    if start is not None:
        keep &= at >= start
    if end is not None:
        keep &= at < end
    if r.exclude_flagged:
        keep &= flagged[cand] == 0
    cand = cand[keep]

    # 3. Relevance filter: with a query and a match, non-matches are discarded.
    hits = any_match[cand]
    if r.has_query and hits.any():
        cand = cand[hits]

    # 4. Score and rank. The age is exact in uint64 (an int64 difference can overflow) and
    # rounded once to float64, as the reference's Python ints are.
    at = occurred_at_us[cand]
    older = at < now
    age = np.zeros(cand.size, dtype=np.uint64)
    age[older] = np.array(now, dtype=np.int64).view(np.uint64) - at[older].view(np.uint64)
    recency = np.exp2(-(age.astype(np.float64) / (half_life_days * _US_PER_DAY)))
    score = (
        w_rel * best[cand].astype(np.float64)
        + w_sal * salience[cand].astype(np.float64)
        + w_rec * recency
    )
    # lexsort: last key first. ~at is "at descending" without overflow; positions follow ids.
    order = np.lexsort((-cand, ~at, -score))
    ranked, ranked_score = cand[order], score[order]

    # 5. Collapse: np.unique reports each dup_key's first index in rank order, its best.
    _, first, inverse, group_size = np.unique(
        dup_key[ranked], return_index=True, return_inverse=True, return_counts=True
    )
    survivors = np.sort(first)
    counts = group_size[inverse[survivors]]

    # 6. Pack greedily; see the module docstring.
    sv_tokens = tokens[ranked[survivors]].astype(np.uint64)
    chosen: list[npt.NDArray[np.intp]] = []
    taken = 0
    remaining = budget
    i, window = 0, _PACK_WINDOW
    while i < sv_tokens.size and taken < limit:
        left = np.uint64(remaining)
        fits = sv_tokens[i : i + window] <= left
        if not fits.any():
            i += window
            window *= 2
            continue
        j = i + int(np.argmax(fits))
        # From j on, the run of items that all fit one after the other.
        running = np.cumsum(sv_tokens[j : j + window])
        run = min(int(np.searchsorted(running, left, side="right")), limit - taken)
        chosen.append(np.arange(j, j + run))
        taken += run
        remaining -= int(running[run - 1])
        i = j + run

    packed = np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.intp)
    picked = survivors[packed]
    return (
        ranked[picked].astype(np.int64),
        counts[packed].astype(np.uint32),
        ranked_score[picked].astype(np.float32),
        budget - remaining,
    )
