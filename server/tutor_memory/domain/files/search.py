"""SearchPassages (SPEC R3): a chain's current passages ranked by cosine similarity to the query's
embedding (the vectors are unit length, so a dot product is the cosine)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.records import StoredPassage

# SearchPassages: at most this many passages per call, and how many when the caller says 0.
MAX_PASSAGES = 50
DEFAULT_PASSAGES = 5

# A chain's current passages and their embeddings (row i is passage i's).
Passages = tuple[list[StoredPassage], npt.NDArray[np.float32]]


def passages_bytes(passages: Passages) -> int:
    """What a chain's passages hold in memory: the embedding matrix, and each passage's record
    with its strings (the text dominates; the small ints are shared objects)."""
    stored, matrix = passages
    held = matrix.nbytes + sys.getsizeof(stored)
    for p in stored:
        held += sys.getsizeof(p) + sys.getsizeof(p.text) + sys.getsizeof(p.file_id)
        held += sys.getsizeof(p.fingerprint)
    return held


@dataclass(frozen=True, slots=True)
class FoundPassage:
    passage: StoredPassage
    score: float


def nearest(
    passages: Sequence[StoredPassage],
    matrix: npt.NDArray[np.float32],
    query: npt.NDArray[np.float32],
    limit: int,
) -> list[FoundPassage]:
    """The `limit` passages most similar to `query`, best first; ties keep their stored order.
    Only the passages at or above the `limit`-th best score are sorted (a partition finds it in
    linear time), which gives the order a sort of them all would."""
    if limit <= 0 or not len(passages):
        return []
    sims = matrix @ query
    candidates = np.arange(len(sims))
    if limit < len(sims):
        cut = len(sims) - limit
        candidates = np.flatnonzero(sims >= np.partition(sims, cut)[cut])
    best = candidates[np.argsort(-sims[candidates], kind="stable")][:limit]
    return [FoundPassage(passages[i], float(sims[i])) for i in best]
