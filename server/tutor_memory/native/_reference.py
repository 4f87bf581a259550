"""Pure-Python twin of :mod:`tutor_memory.native._core`: the parity oracle.

Every function here must return exactly what its Rust counterpart returns and raise the same
exception type for the same bad input; ``tests/parity`` checks that on random inputs. The
Rust build is the one the server uses, this module exists so the encoding can be read,
reviewed and checked without a compiler.

Validation runs in the same order as the extension so that an input with several problems
fails the same way on both sides: first every argument's type, in parameter order (pyo3
extracts all arguments before the function body runs), then every value range, in parameter
order. (``rank_and_pack`` documents its own order of value checks.)

numpy is used only to accept and return arrays; the logic is plain Python.
"""

from __future__ import annotations

import hashlib
import math
import operator
import struct
from collections.abc import Sequence
from typing import Any, Final, SupportsFloat, SupportsIndex

import numpy as np
import numpy.typing as npt

__all__ = ["EPISODE_DOMAIN_TAG", "HASH_LEN", "episode_hash", "rank_and_pack"]

EPISODE_DOMAIN_TAG: Final = "tutor-memory/episode/v1"
HASH_LEN: Final = 32

_U32_MAX: Final = (1 << 32) - 1
_U64_MAX: Final = (1 << 64) - 1
_I64_MIN: Final = -(1 << 63)
_I64_MAX: Final = (1 << 63) - 1
_I128_MIN: Final = -(1 << 127)
_I128_MAX: Final = (1 << 127) - 1

_EvidenceItem = tuple[str, int, str]


def _type_name(value: object) -> str:
    return type(value).__name__


def _utf8(value: object) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"expected str, got {_type_name(value)}")
    # Strict encoding: a lone surrogate raises UnicodeEncodeError, as pyo3's String extraction does.
    return value.encode("utf-8")


def _index(value: SupportsIndex) -> int:
    # operator.index is what pyo3's integer extraction calls (PyNumber_Index): it accepts bool
    # and numpy integers, and refuses float and str with TypeError.
    return operator.index(value)


def _float(value: SupportsFloat | SupportsIndex) -> float:
    # float() would parse str/bytes; PyFloat_AsDouble (pyo3's extraction) refuses them.
    if isinstance(value, str | bytes | bytearray):
        raise TypeError(f"must be real number, not {_type_name(value)}")
    return float(value)


def _str_sequence(value: object) -> list[bytes]:
    # pyo3 refuses to turn a str into a Vec even though a str is a sequence.
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"expected a sequence of str, got {_type_name(value)}")
    return [_utf8(item) for item in value]


def _evidence_items(value: object) -> list[tuple[bytes, int, bytes]]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"expected a sequence of tuples, got {_type_name(value)}")
    items: list[tuple[bytes, int, bytes]] = []
    for item in value:
        if not isinstance(item, tuple):
            raise TypeError(f"expected tuple, got {_type_name(item)}")
        if len(item) != 3:
            # Same type and wording as pyo3's tuple extraction.
            raise ValueError(f"expected tuple of length 3, but got tuple of length {len(item)}")
        file_id, page, fingerprint = item
        items.append((_utf8(file_id), _index(page), _utf8(fingerprint)))
    return items


def _in_range(field: str, value: int, lo: int, hi: int) -> int:
    if lo <= value <= hi:
        return value
    # The extension cannot see the value of an int wider than 128 bits, so neither message
    # prints one.
    got = str(value) if _I128_MIN <= value <= _I128_MAX else "an integer wider than 128 bits"
    raise ValueError(f"{field} must be in {lo}..={hi}, got {got}")


def _length_prefixed(data: bytes) -> bytes:
    if len(data) > _U32_MAX:
        raise ValueError(f"value of {len(data)} bytes is too long to length-prefix")
    return struct.pack(">I", len(data)) + data


def _count(n: int) -> bytes:
    if n > _U32_MAX:
        raise ValueError(f"{n} items are too many to count in a u32")
    return struct.pack(">I", n)


def episode_hash(
    prev_hash: bytes,
    tenant: str,
    student: str,
    subject: str,
    seq: int,
    kind: str,
    summary: str,
    text: str,
    concepts: Sequence[str],
    salience: float,
    occurred_at_us: int,
    recorded_at_us: int,
    evidence: Sequence[_EvidenceItem],
    check_outcome: str,
    check_topic: str,
    predicted_mastery: float | None,
    quiz_correct: int,
    quiz_total: int,
    client_key: str,
) -> bytes:
    """Return the 32-byte SHA-256 chaining one ledger episode to ``prev_hash``.

    See ``tutor_memory/native/_core.pyi`` for the canonical encoding this hashes.
    """
    # Phase 1: types, in parameter order.
    if not isinstance(prev_hash, bytes):
        raise TypeError(f"expected bytes, got {_type_name(prev_hash)}")
    tenant_b = _utf8(tenant)
    student_b = _utf8(student)
    subject_b = _utf8(subject)
    seq_i = _index(seq)
    kind_b = _utf8(kind)
    summary_b = _utf8(summary)
    text_b = _utf8(text)
    concepts_b = _str_sequence(concepts)
    salience_f = _float(salience)
    occurred_i = _index(occurred_at_us)
    recorded_i = _index(recorded_at_us)
    evidence_b = _evidence_items(evidence)
    check_outcome_b = _utf8(check_outcome)
    check_topic_b = _utf8(check_topic)
    mastery_f = None if predicted_mastery is None else _float(predicted_mastery)
    quiz_correct_i = _index(quiz_correct)
    quiz_total_i = _index(quiz_total)
    client_key_b = _utf8(client_key)

    # Phase 2: values, in parameter order.
    if len(prev_hash) != HASH_LEN:
        raise ValueError(f"prev_hash must be {HASH_LEN} bytes, got {len(prev_hash)}")
    seq_i = _in_range("seq", seq_i, 0, _U64_MAX)
    occurred_i = _in_range("occurred_at_us", occurred_i, _I64_MIN, _I64_MAX)
    recorded_i = _in_range("recorded_at_us", recorded_i, _I64_MIN, _I64_MAX)
    pages = [_in_range("evidence page", page, 0, _U32_MAX) for _, page, _ in evidence_b]
    quiz_correct_i = _in_range("quiz_correct", quiz_correct_i, 0, _U32_MAX)
    quiz_total_i = _in_range("quiz_total", quiz_total_i, 0, _U32_MAX)

    # Phase 3: the canonical encoding. Every variable-length field carries its length so that
    # no two different episodes can produce the same byte string.
    parts: list[bytes] = [
        _length_prefixed(EPISODE_DOMAIN_TAG.encode("utf-8")),
        _length_prefixed(prev_hash),
        _length_prefixed(tenant_b),
        _length_prefixed(student_b),
        _length_prefixed(subject_b),
        struct.pack(">Q", seq_i),
        _length_prefixed(kind_b),
        _length_prefixed(summary_b),
        _length_prefixed(text_b),
        _count(len(concepts_b)),
        *(_length_prefixed(c) for c in concepts_b),
        struct.pack(">d", salience_f),
        struct.pack(">q", occurred_i),
        struct.pack(">q", recorded_i),
        _count(len(evidence_b)),
    ]
    for (file_id, _, fingerprint), page in zip(evidence_b, pages, strict=True):
        parts += [_length_prefixed(file_id), struct.pack(">I", page), _length_prefixed(fingerprint)]
    parts += [
        _length_prefixed(check_outcome_b),
        _length_prefixed(check_topic_b),
        b"\x00" if mastery_f is None else b"\x01" + struct.pack(">d", mastery_f),
        struct.pack(">I", quiz_correct_i),
        struct.pack(">I", quiz_total_i),
        _length_prefixed(client_key_b),
    ]
    return hashlib.sha256(b"".join(parts)).digest()


# --- rank_and_pack --------------------------------------------------------------------------

_US_PER_DAY: Final = 86_400_000_000


def _array(name: str, value: object, dtype: type[np.generic]) -> list[Any]:
    # The extension borrows exactly these arrays and converts nothing: a list, a 2-d array or
    # another dtype (bool for uint8, int32 for int64, big-endian int64) is a TypeError.
    expected = np.dtype(dtype)
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype == expected:
        items: list[Any] = value.tolist()
        return items
    got = f"{value.ndim}-d {value.dtype}" if isinstance(value, np.ndarray) else _type_name(value)
    raise TypeError(f"{name} must be a 1-d numpy array of {expected}, got {got}")


def _ints(name: str, value: object, dtype: type[np.generic]) -> list[int]:
    return _array(name, value, dtype)


def _floats(name: str, value: object) -> list[float]:
    return _array(name, value, np.float32)


def _bool(value: object) -> bool:
    # pyo3's bool extraction: Python bool or numpy.bool_, nothing truthy.
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise TypeError(f"expected bool, got {_type_name(value)}")


def _check_lengths(lengths: Sequence[tuple[str, int, str, int]]) -> None:
    for name, length, like, expected in lengths:
        if length != expected:
            raise ValueError(
                f"{name} has {length} items, expected {expected} (one per item of {like})"
            )


def _check_unit_range(name: str, values: Sequence[float]) -> None:
    for i, v in enumerate(values):
        if not 0.0 <= v <= 1.0:  # NaN fails too
            raise ValueError(f"{name} must be in [0, 1], but {name}[{i}] is not")


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
    """Rank one turn's candidates and pack the best into the token budget.

    See ``tutor_memory/native/_core.pyi`` for the semantics. Checks run in this order, each in
    parameter order: types; integer ranges; array lengths; ``chain_ids`` strictly ascending;
    ``salience`` then ``cand_relevance`` in ``[0, 1]``; weights finite; the half-life.
    """
    # Phase 1: types, in parameter order.
    ids = _ints("chain_ids", chain_ids, np.int64)
    at = _ints("occurred_at_us", occurred_at_us, np.int64)
    sal = _floats("salience", salience)
    dup = _ints("dup_key", dup_key, np.uint64)
    tok = _ints("tokens", tokens, np.uint32)
    flag = _ints("flagged", flagged, np.uint8)
    c_ids = _ints("cand_ids", cand_ids, np.int64)
    c_rel = _floats("cand_relevance", cand_relevance)
    c_matched = _ints("cand_matched", cand_matched, np.uint8)
    now = _index(now_us)
    query = _bool(has_query)
    start = None if window_start_us is None else _index(window_start_us)
    end = None if window_end_us is None else _index(window_end_us)
    skip_flagged = _bool(exclude_flagged)
    budget = _index(budget_tokens)
    limit = _index(max_items)
    weights = (_float(w_relevance), _float(w_salience), _float(w_recency))
    half_life_days = _float(recency_half_life_days)

    # Phase 2: integer ranges, in parameter order.
    now = _in_range("now_us", now, _I64_MIN, _I64_MAX)
    if start is not None:
        start = _in_range("window_start_us", start, _I64_MIN, _I64_MAX)
    if end is not None:
        end = _in_range("window_end_us", end, _I64_MIN, _I64_MAX)
    budget = _in_range("budget_tokens", budget, 0, _U64_MAX)
    limit = _in_range("max_items", limit, 0, _U64_MAX)

    # Phase 3: everything else.
    n, m = len(ids), len(c_ids)
    _check_lengths(
        [
            ("occurred_at_us", len(at), "chain_ids", n),
            ("salience", len(sal), "chain_ids", n),
            ("dup_key", len(dup), "chain_ids", n),
            ("tokens", len(tok), "chain_ids", n),
            ("flagged", len(flag), "chain_ids", n),
            ("cand_relevance", len(c_rel), "cand_ids", m),
            ("cand_matched", len(c_matched), "cand_ids", m),
        ]
    )
    for i in range(1, n):
        if ids[i - 1] >= ids[i]:
            raise ValueError(
                "chain_ids must be strictly ascending, "
                f"but chain_ids[{i}] = {ids[i]} follows {ids[i - 1]}"
            )
    _check_unit_range("salience", sal)
    _check_unit_range("cand_relevance", c_rel)
    for name, w in zip(("w_relevance", "w_salience", "w_recency"), weights, strict=True):
        if not math.isfinite(w):
            raise ValueError(f"{name} must be finite")
    if not (math.isfinite(half_life_days) and half_life_days > 0.0):
        raise ValueError("recency_half_life_days must be finite and > 0")

    # 1. Union (R2.1): one entry per chain position, in order of first occurrence.
    position_of = {episode_id: pos for pos, episode_id in enumerate(ids)}
    relevance: dict[int, float] = {}
    matched: dict[int, bool] = {}
    for cand_id, rel, is_match in zip(c_ids, c_rel, c_matched, strict=True):
        pos = position_of.get(cand_id)
        if pos is None:
            continue
        relevance[pos] = max(relevance[pos], rel) if pos in relevance else rel
        matched[pos] = matched.get(pos, False) or is_match != 0
    pool = list(relevance)

    # 2. Scope (R2.5, R2.6): time is a filter; the tutor's own narrations can be left out.
    if start is not None:
        pool = [pos for pos in pool if at[pos] >= start]
    if end is not None:
        pool = [pos for pos in pool if at[pos] < end]
    if skip_flagged:
        pool = [pos for pos in pool if flag[pos] == 0]

    # 3. Relevance filter (R2.2): with a query and a match, non-matches are discarded.
    if query and any(matched[pos] for pos in pool):
        pool = [pos for pos in pool if matched[pos]]

    # 4. Score (R2.3) and rank: score, then occurred_at, then id, all descending.
    w_rel, w_sal, w_rec = weights
    half_life_us = half_life_days * _US_PER_DAY
    scored: list[tuple[float, int, int]] = []
    for pos in pool:
        # 0.5 ** (age / half_life), written as exp2 because the extension calls libm's exp2.
        recency = math.exp2(-(max(0, now - at[pos]) / half_life_us))
        score = w_rel * relevance[pos] + w_sal * sal[pos] + w_rec * recency
        scored.append((score, at[pos], pos))
    # Positions follow the ascending ids, so "id descending" is "position descending".
    scored.sort(key=lambda s: (-s[0], -s[1], -s[2]))

    # 5. Collapse (R2.4): the best-ranked of each dup_key stands for its whole group.
    group_of: dict[int, int] = {}
    survivors: list[tuple[float, int]] = []
    counts: list[int] = []
    for score, _, pos in scored:
        key = dup[pos]
        if key in group_of:
            counts[group_of[key]] += 1
        else:
            group_of[key] = len(survivors)
            survivors.append((score, pos))
            counts.append(1)

    # 6. Pack (R6.2): in rank order, skip what does not fit, never exceed the budget.
    out_positions: list[int] = []
    out_counts: list[int] = []
    out_scores: list[float] = []
    tokens_used = 0
    for (score, pos), count in zip(survivors, counts, strict=True):
        if len(out_positions) >= limit:
            break
        if tokens_used + tok[pos] <= budget:
            tokens_used += tok[pos]
            out_positions.append(pos)
            out_counts.append(count)
            out_scores.append(score)

    return (
        np.array(out_positions, dtype=np.int64),
        np.array(out_counts, dtype=np.uint32),
        np.array(out_scores, dtype=np.float32),
        tokens_used,
    )
