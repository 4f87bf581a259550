"""One turn's ranking: the request recall hands to the Rust core, and what comes back.

:class:`RankRequest` is the typed form of everything ``rank_and_pack`` needs (SPEC R2.1-R2.6,
R6.2): the chain's scoring arrays, the turn's candidate sets concatenated, the scope of the turn,
the budget, and the score's weights. The core reads it attribute by attribute (pyo3's
``#[derive(FromPyObject)]``), borrows the arrays without copying them, and ranks with the GIL
released; the semantics, and every error it raises, are documented in
``tutor_memory/native/_core.pyi``.

The weights are one nested :class:`Weights`, not four more fields: they are one policy, set once in
:mod:`tutor_memory.domain.recall.scoring`, and a request that does not name them gets that policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.recall import scoring
from tutor_memory.native import _core, _reference
from tutor_memory.native._reference import CandidateTrace

__all__ = ["CandidateTrace", "RankRequest", "Ranked", "Weights", "rank_and_pack", "rank_and_trace"]


@dataclass(frozen=True, slots=True)
class Weights:
    """The score's weights and the recency half-life (R2.3); the defaults are recall's policy."""

    relevance: float = scoring.W_RELEVANCE
    salience: float = scoring.W_SALIENCE
    recency: float = scoring.W_RECENCY
    recency_half_life_days: float = scoring.RECENCY_HALF_LIFE_DAYS


@dataclass(frozen=True, slots=True, kw_only=True)
class RankRequest:
    """One turn's ranking request. Keyword-only: nine arrays and five ints side by side are too
    easy to swap by position.

    Arrays are 1-d numpy arrays of exactly the dtype given (the core converts nothing): the chain's
    arrays have one item per episode, ids strictly ascending; the candidate arrays one item per
    occurrence in the turn's candidate sets.
    """

    # The chain (one student and subject), one item per episode.
    chain_ids: npt.NDArray[np.int64]
    occurred_at_us: npt.NDArray[np.int64]
    salience: npt.NDArray[np.float32]
    dup_key: npt.NDArray[np.uint64]
    tokens: npt.NDArray[np.uint32]
    flagged: npt.NDArray[np.uint8]
    # The candidate sets of this turn, concatenated.
    cand_ids: npt.NDArray[np.int64]
    cand_relevance: npt.NDArray[np.float32]
    cand_matched: npt.NDArray[np.uint8]
    # The turn.
    now_us: int
    has_query: bool
    window_start_us: int | None = None  # inclusive
    window_end_us: int | None = None  # exclusive
    exclude_flagged: bool = False
    budget_tokens: int
    max_items: int
    weights: Weights = Weights()


@dataclass(frozen=True, slots=True)
class Ranked:
    """The packed memories in rank order."""

    positions: npt.NDArray[np.int64]
    """Positions into the request's chain arrays."""
    counts: npt.NDArray[np.uint32]
    """How many candidates each packed memory stands for (its collapsed group), at least 1."""
    scores: npt.NDArray[np.float32]
    tokens_used: int
    """The sum of the packed memories' tokens, never above the budget."""


def rank_and_pack(request: RankRequest) -> Ranked:
    """Ranks the turn's candidates and packs the best into its token budget, in one call into the
    Rust core (GIL released while it ranks; call it off the event loop).

    Raises ``NativeInputError`` (a ``ValueError``) or ``NativeTypeError`` (a ``TypeError``) from
    :mod:`tutor_memory.native._core` for a malformed request, naming the attribute.
    """
    positions, counts, scores, tokens_used = _core.rank_and_pack(request)
    return Ranked(positions, counts, scores, tokens_used)


def rank_and_trace(request: RankRequest) -> tuple[Ranked, dict[int, CandidateTrace]]:
    """``rank_and_pack`` by the pure-Python twin of the core, with what each candidate (by chain
    position) went through: the ranking of an explained block (``domain.recall.explain``). Much
    slower than the core; only a caller who asked for the reasons pays for it."""
    (positions, counts, scores, tokens_used), traces = _reference.rank_and_trace(request)
    return Ranked(positions, counts, scores, tokens_used), traces
