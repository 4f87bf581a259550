"""Recall's candidate sets (SPEC R2.1): widen first, narrow second. Each set reaches the whole
history; only their union is scored. Everything here is arrays in, arrays out: no Python object
per candidate, so a set of thousands of ids costs microseconds.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import Kind
from tutor_memory.domain.recall.facts import KIND_CODES, Snapshot
from tutor_memory.domain.recall.timewindow import TimeWindow

# Candidate sets (R2.1). Each reaches the whole history; only their union is scored.
RECENT_CANDIDATES = 500  # the most recent episodes
SEMANTIC_CANDIDATES = 50  # nearest neighbours of the query embedding
# A neighbour counts as matching the query (for the filter of R2.2) from this cosine similarity
# of the multilingual USE embedder. Set by hand from its measured spread, not tuned on
# evaluation data: paraphrases across en/it/es/ar scored 0.52-0.94, unrelated sentences <= 0.25.
SEMANTIC_MATCH_MIN = 0.45
# Most memories one block shows.
MAX_MEMORIES = 40
# WINDOW mode: the last this many conversation turns.
WINDOW_TURNS = 20
# Kinds that are the conversation itself (WINDOW mode, and kept in record mode: R6.4).
CONVERSATION_KINDS = (Kind.QUESTION, Kind.ANSWER)
# Kinds that make up the student's record, all of which a record question considers.
RECORD_KINDS = (Kind.CHECK, Kind.QUIZ, Kind.TAUGHT)


class CandidateSets:
    """The turn's candidate sets, concatenated as ranking takes them: one item per occurrence,
    with its relevance and whether its set says it matches the query (R2.2)."""

    def __init__(self) -> None:
        self._ids: list[npt.NDArray[np.int64]] = []
        self._relevance: list[npt.NDArray[np.float32]] = []
        self._matched: list[npt.NDArray[np.uint8]] = []

    def add(
        self, ids: npt.NDArray[np.int64], relevance: npt.NDArray[np.float32] | float, match: bool
    ) -> None:
        """A set whose members all match (or all don't)."""
        if len(ids) == 0:
            return
        self._ids.append(ids.astype(np.int64, copy=False))
        self._relevance.append(np.broadcast_to(np.float32(relevance), ids.shape).astype(np.float32))
        self._matched.append(np.full(len(ids), 1 if match else 0, dtype=np.uint8))

    def add_neighbours(
        self, ids: npt.NDArray[np.int64], similarities: npt.NDArray[np.float32]
    ) -> None:
        """The vector index's neighbours: relevance is the similarity, and a neighbour matches
        from SEMANTIC_MATCH_MIN on."""
        if len(ids) == 0:
            return
        self._ids.append(ids)
        self._relevance.append(np.clip(similarities, 0.0, 1.0).astype(np.float32))
        self._matched.append((similarities >= SEMANTIC_MATCH_MIN).astype(np.uint8))

    def arrays(
        self,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.uint8]]:
        if not self._ids:
            return np.empty(0, np.int64), np.empty(0, np.float32), np.empty(0, np.uint8)
        return (
            np.concatenate(self._ids),
            np.concatenate(self._relevance),
            np.concatenate(self._matched),
        )


def most_recent(occurred: npt.NDArray[np.int64], k: int) -> npt.NDArray[np.int64]:
    """Positions of the k most recent episodes (any order)."""
    if len(occurred) <= k:
        return np.arange(len(occurred), dtype=np.int64)
    return np.argpartition(occurred, len(occurred) - k)[-k:].astype(np.int64)


def window_positions(snap: Snapshot, window: TimeWindow | None) -> npt.NDArray[np.int64]:
    """Positions of the episodes inside a named period; the tutor's own narrations do not make a
    period "recorded" (R2.6)."""
    if window is None:
        return np.empty(0, np.int64)
    inside = (snap.occurred_at_us >= window.start_us) & (snap.occurred_at_us < window.end_us)
    return np.flatnonzero(inside & (snap.flagged == 0)).astype(np.int64)


def record_positions(snap: Snapshot) -> npt.NDArray[np.int64]:
    """Positions of every check, quiz and taught note: the record a record question is about."""
    return np.flatnonzero(np.isin(snap.kind, [KIND_CODES[k] for k in RECORD_KINDS]))


def last_turns(snap: Snapshot) -> npt.NDArray[np.int64]:
    """Positions of the last WINDOW_TURNS conversation turns, newest first (WINDOW mode)."""
    conversation = np.flatnonzero(np.isin(snap.kind, [KIND_CODES[k] for k in CONVERSATION_KINDS]))
    order = np.argsort(snap.occurred_at_us[conversation], kind="stable")
    return conversation[order[-WINDOW_TURNS:]][::-1].astype(np.int64)


def same_as(
    copies: npt.NDArray[np.int64], snap: Snapshot, pos: int, window: TimeWindow | None
) -> tuple[int, ...]:
    """Ids of every episode a collapsed memory stands for, itself first: all its `copies`
    (positions in the chain; inside the period, when one was named), not only those that were
    candidates."""
    if window is not None:
        at = snap.occurred_at_us[copies]
        copies = copies[(at >= window.start_us) & (at < window.end_us)]
    own = int(snap.ids[pos])
    return (own, *(int(i) for i in snap.ids[copies] if int(i) != own))
