"""``rank_and_pack`` vectorised with numpy: the benchmark's middle contender.

The server calls the Rust core (:func:`tutor_memory.native._core.rank_and_pack`); this version
exists so that ``bench/bench_rank.py`` can show what the best plain-numpy code costs next to it.
It has the same signature, semantics, results and error messages
(``tests/parity/test_rank_parity.py``);
see ``tutor_memory/native/_core.pyi`` for the semantics.

Only packing is a Python loop, because greedy packing that skips what does not fit is
sequential; it works on windows of the ranked survivors, so it costs one numpy call per run of
items taken or skipped, never one Python step per candidate.
"""

from __future__ import annotations

import math
import operator
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["rank_and_pack"]

_US_PER_DAY: Final = 86_400_000_000
_I64_MIN: Final = -(1 << 63)
_I64_MAX: Final = (1 << 63) - 1
_U64_MAX: Final = (1 << 64) - 1
_I128_MIN: Final = -(1 << 127)
_I128_MAX: Final = (1 << 127) - 1
# Survivors examined per numpy call while packing; doubled while nothing fits.
_PACK_WINDOW: Final = 64


def _array(name: str, value: object, dtype: type[np.generic]) -> None:
    expected = np.dtype(dtype)
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype == expected:
        return
    got = f"{value.ndim}-d {value.dtype}" if isinstance(value, np.ndarray) else type(value).__name__
    raise TypeError(f"{name} must be a 1-d numpy array of {expected}, got {got}")


def _bool(value: object) -> bool:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise TypeError(f"expected bool, got {type(value).__name__}")


def _float(value: object) -> float:
    if isinstance(value, str | bytes | bytearray):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    return float(value)  # type: ignore[arg-type]


def _in_range(field: str, value: int, lo: int, hi: int) -> int:
    if lo <= value <= hi:
        return value
    got = str(value) if _I128_MIN <= value <= _I128_MAX else "an integer wider than 128 bits"
    raise ValueError(f"{field} must be in {lo}..={hi}, got {got}")


def _first_outside_unit_range(values: npt.NDArray[np.float32]) -> int | None:
    bad = np.flatnonzero(~((values >= 0.0) & (values <= 1.0)))  # NaN is outside too
    return int(bad[0]) if bad.size else None


def rank_and_pack(
    chain_ids: npt.NDArray[np.int64],
    occurred_at_us: npt.NDArray[np.int64],
    salience: npt.NDArray[np.float32],
    dup_key: npt.NDArray[np.uint64],
    tokens: npt.NDArray[np.uint32],
    flagged: npt.NDArray[np.uint8],
    cand_ids: npt.NDArray[np.int64],
    cand_relevance: npt.NDArray[np.float32],
    cand_matched: npt.NDArray[np.uint8],
    now_us: int,
    has_query: bool,
    window_start_us: int | None,
    window_end_us: int | None,
    exclude_flagged: bool,
    budget_tokens: int,
    max_items: int,
    w_relevance: float,
    w_salience: float,
    w_recency: float,
    recency_half_life_days: float,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], int]:
    """Rank one turn's candidates and pack the best into the token budget (numpy version)."""
    # Checks in the reference's order: types, integer ranges, then the arrays' contents.
    arrays: list[tuple[str, object, type[np.generic]]] = [
        ("chain_ids", chain_ids, np.int64),
        ("occurred_at_us", occurred_at_us, np.int64),
        ("salience", salience, np.float32),
        ("dup_key", dup_key, np.uint64),
        ("tokens", tokens, np.uint32),
        ("flagged", flagged, np.uint8),
        ("cand_ids", cand_ids, np.int64),
        ("cand_relevance", cand_relevance, np.float32),
        ("cand_matched", cand_matched, np.uint8),
    ]
    for name, value, dtype in arrays:
        _array(name, value, dtype)
    now = operator.index(now_us)
    query = _bool(has_query)
    start = None if window_start_us is None else operator.index(window_start_us)
    end = None if window_end_us is None else operator.index(window_end_us)
    skip_flagged = _bool(exclude_flagged)
    budget = operator.index(budget_tokens)
    limit = operator.index(max_items)
    w_rel, w_sal, w_rec = _float(w_relevance), _float(w_salience), _float(w_recency)
    half_life_days = _float(recency_half_life_days)

    now = _in_range("now_us", now, _I64_MIN, _I64_MAX)
    if start is not None:
        start = _in_range("window_start_us", start, _I64_MIN, _I64_MAX)
    if end is not None:
        end = _in_range("window_end_us", end, _I64_MIN, _I64_MAX)
    budget = _in_range("budget_tokens", budget, 0, _U64_MAX)
    limit = _in_range("max_items", limit, 0, _U64_MAX)

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
            raise ValueError(
                f"{name} has {length} items, expected {expected} (one per item of {like})"
            )
    descents = np.flatnonzero(chain_ids[1:] <= chain_ids[:-1])
    if descents.size:
        i = int(descents[0]) + 1
        raise ValueError(
            "chain_ids must be strictly ascending, "
            f"but chain_ids[{i}] = {chain_ids[i]} follows {chain_ids[i - 1]}"
        )
    for name, values in (("salience", salience), ("cand_relevance", cand_relevance)):
        index = _first_outside_unit_range(values)
        if index is not None:
            raise ValueError(f"{name} must be in [0, 1], but {name}[{index}] is not")
    for name, w in (("w_relevance", w_rel), ("w_salience", w_sal), ("w_recency", w_rec)):
        if not math.isfinite(w):
            raise ValueError(f"{name} must be finite")
    if not (math.isfinite(half_life_days) and half_life_days > 0.0):
        raise ValueError("recency_half_life_days must be finite and > 0")

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
    if skip_flagged:
        keep &= flagged[cand] == 0
    cand = cand[keep]

    # 3. Relevance filter: with a query and a match, non-matches are discarded.
    hits = any_match[cand]
    if query and hits.any():
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
