"""Recall's candidate sets (SPEC R2.1): widen first, narrow second. Each set reaches the whole
history; only their union is scored. Everything here is arrays in, arrays out: no Python object
per candidate, so a set of thousands of ids costs microseconds.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import Kind
from tutor_memory.domain.recall.explain import FoundBy, Source
from tutor_memory.domain.recall.facts import KIND_CODES, Snapshot, duplicate_key
from tutor_memory.domain.recall.timewindow import TimeWindow
from tutor_memory.domain.text.normalise import normalise

# Candidate sets (R2.1). Each reaches the whole history; only their union is scored.
RECENT_CANDIDATES = 500  # the most recent episodes
SEMANTIC_CANDIDATES = 50  # nearest neighbours of the query embedding
# A neighbour counts as matching the query (for the filter of R2.2) from this cosine similarity
# of the multilingual USE embedder. Set by hand from its measured spread, not tuned on
# evaluation data: paraphrases across en/it/es/ar scored 0.52-0.94, unrelated sentences <= 0.25.
SEMANTIC_MATCH_MIN = 0.45
# The same threshold for cosines about the chain's mean (`index.vectors.VectorIndex.neighbours`):
# the value at which as few unrelated turns match as at SEMANTIC_MATCH_MIN uncentred. Measured
# over every (question, turn that is not its evidence) pair of LoCoMo's development split: 1.56 %
# of them reach 0.45 uncentred, 1.47 % reach 0.30 centred (and of the evidence turns, 21 % and
# 28 %). Set from that false-match rate, not from recall.
CENTRED_MATCH_MIN = 0.30
# How the lexical and the dense set weigh against each other (`set_weights`): each set's best is
# graded by how well it matches the query on a scale of its own, from 0 to 1:
# - lexical: its BM25 coverage of the query's words (`lexical.coverage`) itself;
# - dense: how far its similarity is past the match threshold, over DENSE_FULL_SPAN.
# Chosen on LoCoMo's development split and bench_centring's ten paraphrases together, among
# lexical grades full from a coverage of 0.7, 0.85 or 1 (the coverage itself) and spans 0.25-0.3:
# the one pair that showed 5 / 5 / 5 paraphrases of 10 at 150 / 300 / 750 tokens (3 / 5 / 5
# ungraded), with 3.6 and 1.1 points more LoCoMo dev recall at 150 and 300 tokens than ungraded.
# The others lost a paraphrase at some budget, among them the pair with the most recall (full
# from 0.7, span 0.3: 1.3 points more at 150 tokens, 60.1 at 300).
DENSE_FULL_SPAN = 0.25
# Most memories one block shows.
MAX_MEMORIES = 60
# Neighbouring turns (a cheap second hop): the turns just before and after each of the best
# matches, in the same session, join the candidates with this share of the match's relevance:
# the question before an answer, the answer after a question.
# Chosen on LoCoMo's development split among 0.3, 0.5, 0.7, 0.85 and 1.0 (a neighbour as
# relevant as its match crowds the matches out; much less and it never makes the block).
NEIGHBOUR_MATCHES = 20
NEIGHBOUR_SHARE = 0.7
# How far a neighbour may be, in turns: each turn further away gets NEIGHBOUR_SHARE once more.
NEIGHBOUR_HOPS = 2
# Two turns are of one session when they happened at most this far apart.
SESSION_GAP_US = 60 * 60 * 1_000_000
# The turn's own question (stored by the chat service just before it asks for the block) is the
# current turn, not a memory of it: the newest question that says exactly the query, stored at
# most this long before the block's `now`, among the chain's last CURRENT_TURN_ROWS episodes.
CURRENT_TURN_US = 120 * 1_000_000
CURRENT_TURN_ROWS = 8
# WINDOW mode: the last this many conversation turns.
WINDOW_TURNS = 20
# Kinds that are the conversation itself (WINDOW mode, and kept in record mode: R6.4).
CONVERSATION_KINDS = (Kind.QUESTION, Kind.ANSWER)
# Kinds that make up the student's record, all of which a record question considers.
RECORD_KINDS = (Kind.CHECK, Kind.QUIZ, Kind.TAUGHT)


def _kind_table(kinds: tuple[Kind, ...]) -> npt.NDArray[np.bool_]:
    """Indexed by a kind's code (a uint8): whether it is one of `kinds`. One gather over the
    chain's kind column, where `np.isin` sorted it."""
    table = np.zeros(256, dtype=bool)
    table[[KIND_CODES[k] for k in kinds]] = True
    return table


_RECORD_KIND = _kind_table(RECORD_KINDS)
_CONVERSATION_KIND = _kind_table(CONVERSATION_KINDS)


def scaled_to_best(scores: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """A set's scores as relevance in [0, 1]: each divided by the set's best.

    How sets combine (R2.1, R2.2): each set's scores are normalised by the set's own best, the
    lexical and the dense set are then weighed by how well their best matches (`set_weights`),
    and a candidate found by several sets keeps its best relevance. So a neighbour clearly closer
    than any lexical match does not lose to one merely for sharing no word, and a neighbour just
    past its threshold does not count as much as a match of every query word. Chosen over
    reciprocal rank fusion, which measured worse on LoCoMo's development split (18-20 points at
    150-300 tokens): ranks make relevance nearly flat across the top candidates, and salience and
    recency then reorder them.
    """
    if len(scores) == 0:
        return scores.astype(np.float32)
    best = float(scores.max())
    return (scores / best if best > 0 else np.zeros_like(scores)).astype(np.float32)


# Reciprocal rank fusion's constant (Cormack et al. 2009; 60 as published, not tuned): the
# uncalibrated alternative recall's calibration lever falls back to (`levers.Lever.CALIBRATION`).
RRF_K = 60


def reciprocal_rank_relevance(scores: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """A set's scores as relevance from their ranks alone: (RRF_K + 1) / (RRF_K + rank), rank 1
    for the best (ties in index order), so that the best of each set counts 1 as with
    `scaled_to_best`. Only for measuring the calibration (an ablation), never recall's policy."""
    ranks = np.empty(len(scores), dtype=np.float64)
    ranks[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
    return ((RRF_K + 1) / (RRF_K + ranks)).astype(np.float32)


def match_threshold(*, centred: bool) -> float:
    """The similarity from which a dense neighbour matches the query."""
    return CENTRED_MATCH_MIN if centred else SEMANTIC_MATCH_MIN


def set_weights(
    lexical_coverage: float, similarities: npt.NDArray[np.float32], *, centred: bool
) -> tuple[float, float]:
    """The factors for the lexical and the dense set's relevance (each already scaled to its own
    best): the set whose best matches better counts 1 and the other its grade over the better
    one's (see DENSE_FULL_SPAN). Scaling each set to its own best alone made the nearest
    dense neighbour count as much as a lexical match of every query word however far it was: on
    LoCoMo's development split the block gained 5 points at 150 tokens without the dense set at
    all. Grading only the dense neighbour (by its similarity alone) lost the paraphrases whose
    question shares only its form words with other questions: a lexical match of those words
    covers little of the query, and it is the grade of both that tells the two cases apart."""
    if len(similarities) == 0:
        return 1.0, 1.0
    past = float(similarities.max()) - match_threshold(centred=centred)
    dense = min(1.0, max(0.0, past) / DENSE_FULL_SPAN)
    better = max(lexical_coverage, dense)
    if better == 0.0:
        return 1.0, 1.0
    return lexical_coverage / better, dense / better


class CandidateSets:
    """The turn's candidate sets, concatenated as ranking takes them: one item per occurrence,
    with its relevance and whether its set says it matches the query (R2.2)."""

    def __init__(self, *, explain: bool = False) -> None:
        self._ids: list[npt.NDArray[np.int64]] = []
        self._relevance: list[npt.NDArray[np.float32]] = []
        self._matched: list[npt.NDArray[np.uint8]] = []
        # Which set found what, kept only for an explained build.
        self.found = FoundBy() if explain else None

    def add(
        self,
        ids: npt.NDArray[np.int64],
        relevance: npt.NDArray[np.float32] | float,
        match: bool,
        source: Source,
    ) -> None:
        """A set whose members all match (or all don't)."""
        if len(ids) == 0:
            return
        if self.found is not None:
            self.found.add(source, ids)
        self._ids.append(ids.astype(np.int64, copy=False))
        self._relevance.append(np.broadcast_to(np.float32(relevance), ids.shape).astype(np.float32))
        self._matched.append(np.full(len(ids), 1 if match else 0, dtype=np.uint8))

    def add_neighbours(
        self,
        ids: npt.NDArray[np.int64],
        similarities: npt.NDArray[np.float32],
        *,
        centred: bool = False,
        calibrated: bool = True,
        weight: float = 1.0,
    ) -> npt.NDArray[np.float32]:
        """The vector index's neighbours, which match from SEMANTIC_MATCH_MIN on
        (CENTRED_MATCH_MIN for cosines about the chain's mean, `centred`); returns their
        relevance: the similarity scaled so that the threshold is 0 and the query's nearest
        neighbour is 1 (see `scaled_to_best`), times `weight` (`set_weights`). Not `calibrated`
        (an ablation): the matching neighbours' reciprocal rank relevance instead."""
        if len(ids) == 0:
            return np.empty(0, np.float32)
        if self.found is not None:
            self.found.add(Source.DENSE, ids)
        threshold = match_threshold(centred=centred)
        matched = similarities >= threshold
        if calibrated:
            span = max(float(similarities.max()) - threshold, 1e-6)
            rel = np.clip((similarities - threshold) / span, 0.0, 1.0) * weight
        else:
            rel = np.where(matched, reciprocal_rank_relevance(similarities), 0.0)
        self._ids.append(ids)
        self._relevance.append(rel.astype(np.float32))
        self._matched.append(matched.astype(np.uint8))
        return self._relevance[-1]

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


def neighbours(
    snap: Snapshot, positions: npt.NDArray[np.int64], relevance: npt.NDArray[np.float32]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The turns up to NEIGHBOUR_HOPS away from the NEIGHBOUR_MATCHES most relevant of
    `positions`, in the same session, each with NEIGHBOUR_SHARE ** hops of the relevance of the
    match it neighbours (positions may repeat)."""
    # Only matches have neighbours: a candidate no set says matches brings in nothing.
    matched = relevance > 0
    positions, relevance = positions[matched], relevance[matched]
    if len(positions) == 0:
        return np.empty(0, np.int64), np.empty(0, np.float32)
    best = top_indices(relevance, NEIGHBOUR_MATCHES)
    found, share = [], []
    for hops in range(1, NEIGHBOUR_HOPS + 1):
        for step in (-hops, hops):
            near = positions[best] + step
            ok = (near >= 0) & (near < len(snap))
            src, near = positions[best][ok], near[ok]
            close = np.abs(snap.occurred_at_us[near] - snap.occurred_at_us[src]) <= SESSION_GAP_US
            found.append(near[close])
            share.append(relevance[best][ok][close] * NEIGHBOUR_SHARE**hops)
    return np.concatenate(found), np.concatenate(share).astype(np.float32)


def top_indices(values: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.int64]:
    """Indices of the k largest values, largest first, ties in index order: exactly
    `np.argsort(-values, kind="stable")[:k]`, without sorting all of them (the lexical set of a
    common word holds tens of thousands)."""
    if len(values) <= k:
        return np.argsort(-values, kind="stable")
    kth = np.partition(values, len(values) - k)[len(values) - k]
    # Every value from the k-th largest on, ties included, in index order; then the stable sort.
    at_least = np.flatnonzero(values >= kth)
    return at_least[np.argsort(-values[at_least], kind="stable")][:k]


def current_turn(snap: Snapshot, query: str, now_us: int) -> int | None:
    """Position of the question that is this turn itself, if the chat service stored it."""
    said = normalise(query)
    if not said:
        return None
    # A client stores the question as its summary, with or without the same text.
    keys = {duplicate_key(Kind.QUESTION, said, said), duplicate_key(Kind.QUESTION, said, "")}
    question = KIND_CODES[Kind.QUESTION]
    for pos in range(len(snap) - 1, max(-1, len(snap) - 1 - CURRENT_TURN_ROWS), -1):
        recent = now_us - CURRENT_TURN_US <= int(snap.occurred_at_us[pos]) <= now_us
        if snap.kind[pos] == question and int(snap.dup_key[pos]) in keys and recent:
            return pos
    return None


def latest(
    positions: npt.NDArray[np.int64], occurred: npt.NDArray[np.int64], k: int
) -> npt.NDArray[np.int64]:
    """The `k` of `positions` (distinct rows of a chain) whose episodes occurred last, in no
    particular order; of episodes at the same time, the later rows (the later written) win."""
    if len(positions) <= k:
        return positions
    # lexsort's last key is the primary one: time, then the row.
    return positions[np.lexsort((positions, occurred[positions]))[-k:]]


def window_positions(snap: Snapshot, window: TimeWindow | None) -> npt.NDArray[np.int64]:
    """Positions of the episodes inside a named period; the tutor's own narrations do not make a
    period "recorded" (R2.6)."""
    if window is None:
        return np.empty(0, np.int64)
    inside = (snap.occurred_at_us >= window.start_us) & (snap.occurred_at_us < window.end_us)
    return np.flatnonzero(inside & (snap.flagged == 0)).astype(np.int64)


def record_positions(snap: Snapshot) -> npt.NDArray[np.int64]:
    """Positions of every check, quiz and taught note: the record a record question is about."""
    return np.flatnonzero(_RECORD_KIND[snap.kind])


def last_turns(snap: Snapshot) -> npt.NDArray[np.int64]:
    """Positions of the last WINDOW_TURNS conversation turns, newest first (WINDOW mode)."""
    conversation = np.flatnonzero(_CONVERSATION_KIND[snap.kind])
    order = np.argsort(snap.occurred_at_us[conversation], kind="stable")
    return conversation[order[-WINDOW_TURNS:]][::-1].astype(np.int64)


def same_as(
    copies: npt.NDArray[np.int64],
    snap: Snapshot,
    pos: int,
    window: TimeWindow | None,
    leave_out: int | None = None,
) -> tuple[int, ...]:
    """Ids of every episode a collapsed memory stands for, itself first: all its `copies`
    (positions in the chain; inside the period, when one was named; never the current turn,
    `leave_out`), not only those that were candidates."""
    if window is not None:
        at = snap.occurred_at_us[copies]
        copies = copies[(at >= window.start_us) & (at < window.end_us)]
    if leave_out is not None:
        copies = copies[copies != leave_out]
    own = snap.ids[pos]
    others = snap.ids[copies]
    return (int(own), *others[others != own].tolist())
