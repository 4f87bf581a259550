"""The weights of recall's score, defined once (SPEC R2.3).

A candidate that survives recall's filters is scored as

    W_RELEVANCE * relevance + W_SALIENCE * salience + W_RECENCY * recency
    recency = 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)

(``rank_and_pack`` in :mod:`tutor_memory.native._core`). All three inputs lie in ``[0, 1]``.

These are the design document's values: set by hand (inherited from an earlier memory built for
another product), NOT tuned on evaluation data, and they must not be: weights fitted to the
benchmark would make the benchmark meaningless.

Recency breaks ties; it does not rank. What makes an old exact match beat recent noise is the
relevance *filter* (R2.2), not these weights: when there is a query and something matches it,
candidates that match nothing are discarded before scoring, never ranked. The design document's
example of why weights alone cannot do it: a recent irrelevant note gets ``0.15 x 1.0 = 0.15``
from recency alone, while an exact match from 200 days before gets ``0.55 x 0.156 = 0.086``. No
setting of the weights that lets a non-match outrank a match is correct, so none is relied on.
"""

from __future__ import annotations

from typing import Final

__all__ = ["RECENCY_HALF_LIFE_DAYS", "W_RECENCY", "W_RELEVANCE", "W_SALIENCE"]

W_RELEVANCE: Final[float] = 0.55
"""How well the candidate relates to the query (0..1): the largest share of the score."""

W_SALIENCE: Final[float] = 0.30
"""What the episode is, fixed at write time (R1.3): a taught fact outweighs a passing question."""

W_RECENCY: Final[float] = 0.15
"""How recent the episode is: the smallest share, enough to order otherwise equal candidates."""

RECENCY_HALF_LIFE_DAYS: Final[float] = 60.0
"""Days after which an episode's recency has halved (1.0 today, 0.5 at 60 days, 0.25 at 120)."""
