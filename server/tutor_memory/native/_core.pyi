"""Native core of tutor-memory, built from ``rust_core`` by maturin.

Every function here has a pure-Python twin in :mod:`tutor_memory.native._reference` that returns the
same value and raises the same exception type; ``tests/parity`` holds them to that.
"""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["episode_hash", "rank_and_pack"]

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
    evidence: Sequence[tuple[str, int, str]],
    check_outcome: str,
    check_topic: str,
    predicted_mastery: float | None,
    quiz_correct: int,
    quiz_total: int,
    client_key: str,
) -> bytes:
    """Return the 32-byte SHA-256 that chains one ledger episode to ``prev_hash``.

    This is the ledger's tamper evidence: the digest covers every field below, and the
    encoding is fixed by the domain tag ``"tutor-memory/episode/v1"``. Changing the encoding
    changes every stored hash, so it needs a new tag, never an edit of this one.

    The digest is SHA-256 of these fields concatenated in this order, where *str* means a
    ``u32`` big-endian byte length followed by the UTF-8 bytes, and all integers are
    big-endian:

     1. the domain tag ``"tutor-memory/episode/v1"``, as a str
     2. ``prev_hash``, length-prefixed like a str (always 32 bytes)
     3. ``tenant``, 4. ``student``, 5. ``subject``, each a str
     6. ``seq`` as ``u64``
     7. ``kind``, 8. ``summary``, 9. ``text``, each a str
    10. ``concepts``: ``u32`` count, then each concept as a str (order matters)
    11. ``salience`` as the IEEE-754 bits of an ``f64``
    12. ``occurred_at_us``, 13. ``recorded_at_us``, each ``i64`` (microseconds since the epoch)
    14. ``evidence``: ``u32`` count, then per ``(file_id, page, fingerprint)`` item the
        ``file_id`` as a str, ``page`` as ``u32`` and ``fingerprint`` as a str
    15. ``check_outcome``, 16. ``check_topic``, each a str
    17. ``predicted_mastery``: byte ``0x00`` if ``None``, else ``0x01`` and its ``f64`` bits
    18. ``quiz_correct``, 19. ``quiz_total``, each ``u32``
    20. ``client_key``, a str

    Length prefixes make the encoding injective: moving text from ``summary`` to ``text``,
    or splitting one concept in two, changes the digest. Floats are hashed by their bits, so
    ``0.0`` and ``-0.0`` hash differently; callers should not pass NaN.

    The encoding and hashing run with the GIL released.

    Raises:
        TypeError: an argument has the wrong type (for example ``prev_hash`` not ``bytes``,
            ``concepts`` a bare ``str``, a float where an int is expected, or an ``evidence``
            item that is not a tuple).
        ValueError: ``prev_hash`` is not 32 bytes; ``seq`` is outside ``0..=2**64-1``;
            a timestamp is outside the ``i64`` range; ``page``, ``quiz_correct`` or
            ``quiz_total`` is outside ``0..=2**32-1``; an ``evidence`` tuple does not have
            3 items; or a str contains a lone surrogate (``UnicodeEncodeError``).
    """

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
    """Rank one turn's recall candidates and pack the best into the token budget.

    Recall's hot path (SPEC R2.1-R2.6, R6.2). Everything per episode and per candidate is an
    array; no Python object is built per candidate.

    The chain (one student and subject) is given as parallel arrays with one item per episode:
    ``chain_ids`` (strictly ascending), ``occurred_at_us`` (microseconds since the epoch),
    ``salience`` (in ``[0, 1]``, fixed at write time), ``dup_key`` (equal for episodes that
    are one memory repeated), ``tokens`` (the episode's size in the block) and ``flagged``
    (non-zero for the tutor's own narrations). The candidates are the candidate sets of this
    turn concatenated, one item per occurrence: ``cand_ids`` (may repeat across sets; ids not
    in ``chain_ids`` are ignored), ``cand_relevance`` (in ``[0, 1]``) and ``cand_matched``
    (non-zero: this set says the candidate matches the query).

    Steps, in order:

    1. Union (R2.1): occurrences of one id become one candidate, with the largest relevance of
       its occurrences, matched if any occurrence matched.
    2. Scope (R2.5, R2.6): when ``window_start_us`` / ``window_end_us`` is given, a candidate
       that occurred outside ``[window_start_us, window_end_us)`` is dropped (either bound may
       be ``None``: unbounded). When ``exclude_flagged``, flagged candidates are dropped.
    3. Relevance filter (R2.2): when ``has_query`` and at least one remaining candidate is
       matched, every non-matched candidate is discarded, never ranked. With no query, or no
       match, all remaining candidates are kept.
    4. Score (R2.3), in float64: ``w_relevance * relevance + w_salience * salience +
       w_recency * recency``, where ``recency = 0.5 ** (max(0, now_us - occurred_at_us) /
       (recency_half_life_days * 86_400_000_000))``, evaluated as libm's ``exp2`` of the
       negated exponent. Rank by score descending, then ``occurred_at_us`` descending, then id
       descending (a total, deterministic order).
    5. Collapse (R2.4): candidates with the same ``dup_key`` are one memory; the best-ranked
       survives and its count is the size of its group among the candidates left after step 3.
    6. Pack (R6.2): walk the survivors in rank order and take each one whose tokens still fit
       (``tokens_used + tokens <= budget_tokens``), skipping one that does not and trying the
       next; stop after ``max_items``. ``tokens_used`` never exceeds ``budget_tokens``.

    Returns ``(positions, counts, scores, tokens_used)``: the packed items in rank order as
    positions into the chain's arrays (int64), how many candidates each stands for (uint32, at
    least 1), their scores (float32), and the sum of their tokens.

    The arrays are borrowed, not copied, when contiguous, and the work runs with the GIL
    released. Cost: O(N) over the chain (validation and a merge table), O(M log N) for the M
    candidate occurrences, and a sort of only the candidates that survive steps 1-3.

    Raises:
        TypeError: an array is not a 1-d ``numpy.ndarray`` of exactly the dtype above (no
            conversion is made: a list, a bool array for a uint8 one, or int32 ids are refused),
            a flag is not a ``bool``, or a number has the wrong type.
        ValueError: checked in this order, the first problem found: ``now_us`` or a window
            bound outside the int64 range; ``budget_tokens`` or ``max_items`` negative or above
            ``2**64 - 1``; an array whose length differs from ``chain_ids`` (chain arrays) or
            ``cand_ids`` (candidate arrays); ``chain_ids`` not strictly ascending; a
            ``salience`` or ``cand_relevance`` value outside ``[0, 1]`` or NaN; a weight that
            is NaN or infinite; ``recency_half_life_days`` not finite or not ``> 0``. The
            message names the argument.
    """
