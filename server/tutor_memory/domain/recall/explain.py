"""Why a block showed what it showed (BuildBlock's ``explain``): for every candidate of the turn,
which candidate sets found it, the parts of its score, and the step that left it out.

An explained build is the same build: the same sets, the same request, ranked by the pure-Python
twin of the Rust core (``native._reference.rank_and_trace``), which records each step as it takes
it. The parity tests hold the twin to the core, and a test holds the explained block to the normal
one, so the reasons describe the block the caller would have got.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.records import MemoryRow
from tutor_memory.native._reference import CandidateTrace

# The most candidates one explanation lists: every shown memory, then the dropped ones in rank
# order. A named period can make thousands of episodes candidates; past this many the reasons of
# the lowest-ranked add nothing a person reads, and the reply stays small.
EXPLAIN_MAX_CANDIDATES = 500


class Source(enum.StrEnum):
    """The candidate sets of a turn (SPEC R2.1)."""

    RECENT = "recent"  # the most recent episodes
    PERIOD = "period"  # inside the period the query named
    RECORD = "record"  # the checks, quizzes and taught notes a record question is about
    LEXICAL = "lexical"  # BM25 over the whole history
    TAGGED = "tagged"  # tagged with a concept the query names
    DENSE = "dense"  # nearest neighbours of the query's embedding
    NEIGHBOUR = "neighbour"  # the turns next to the best matches
    CONCEPT = "concept"  # tagged with a concept the map routed the query to
    LAST_TURNS = "last_turns"  # WINDOW mode: the last conversation turns


class Outcome(enum.StrEnum):
    """What became of a candidate: shown, or the step that dropped it."""

    SHOWN = "shown"
    CURRENT_TURN = "current_turn"  # the question of this very turn, never a memory of it
    WINDOW = "window"  # outside the named period
    NARRATION = "narration"  # the tutor's own narration, left out of a period or record question
    FILTER = "filter"  # matched nothing while other candidates matched the query (R2.2)
    COLLAPSE = "collapse"  # a copy of a better-ranked memory, which stands for it (R2.4)
    LIMIT = "limit"  # past the most memories one block shows
    BUDGET = "budget"  # did not fit the tokens left when packing (R6.2)
    FIT = "fit"  # packed, then left out because the composed block overshot the budget


_DROPPED = {o.value: o for o in Outcome}


@dataclass(frozen=True, slots=True)
class CandidateReason:
    episode_id: int
    found_by: tuple[Source, ...]
    relevance: float
    matched: bool
    salience: float
    recency: float
    score: float
    rank: int  # 1-based place in the score order; 0 when it was dropped before scoring
    outcome: Outcome
    collapsed_into: int  # the episode that stands for it (COLLAPSE), else 0
    row: MemoryRow | None = None  # what it is, filled in by the use case


@dataclass(slots=True)
class Explanation:
    candidates: list[CandidateReason] = field(default_factory=list)
    # Distinct candidates of the turn; more than len(candidates) when the list was cut.
    considered: int = 0
    # The factors on the lexical and the dense set's relevance (`candidates.set_weights`).
    lexical_weight: float = 1.0
    dense_weight: float = 1.0


@dataclass(slots=True)
class FoundBy:
    """Which sets found which episode ids, gathered while the sets are built."""

    sets: list[tuple[Source, npt.NDArray[np.int64]]] = field(default_factory=list)

    def add(self, source: Source, ids: npt.NDArray[np.int64]) -> None:
        if len(ids):
            self.sets.append((source, ids))

    def by_id(self) -> dict[int, tuple[Source, ...]]:
        found: dict[int, list[Source]] = {}
        for source, ids in self.sets:
            for i in ids.tolist():
                sources = found.setdefault(int(i), [])
                if source not in sources:
                    sources.append(source)
        return {i: tuple(s) for i, s in found.items()}


def explain_ranking(
    found: FoundBy,
    chain_ids: npt.NDArray[np.int64],
    salience: npt.NDArray[np.float32],
    traces: dict[int, CandidateTrace],
    shown_ids: Collection[int],
    current_turn_id: int | None,
) -> Explanation:
    """The reasons of a ranked turn: `traces` (by chain position) from ``rank_and_trace``,
    `shown_ids` the memories the final block shows."""
    reasons = []
    for episode_id, sources in found.by_id().items():
        pos = int(np.searchsorted(chain_ids, episode_id))
        if pos >= len(chain_ids) or int(chain_ids[pos]) != episode_id:
            continue  # not of the chain's snapshot: ranking never saw it either
        trace = traces.get(pos)
        if trace is None:
            # Only the current turn is taken out of the candidates before ranking.
            outcome = Outcome.CURRENT_TURN if episode_id == current_turn_id else Outcome.FILTER
            trace = CandidateTrace(0.0, False)
        elif trace.dropped:
            outcome = _DROPPED[trace.dropped]
        else:
            outcome = Outcome.SHOWN if episode_id in shown_ids else Outcome.FIT
        into = int(chain_ids[trace.collapsed_into]) if trace.collapsed_into >= 0 else 0
        reasons.append(
            CandidateReason(
                episode_id=episode_id,
                found_by=sources,
                relevance=trace.relevance,
                matched=trace.matched,
                salience=float(salience[pos]),
                recency=trace.recency,
                score=trace.score,
                rank=trace.rank,
                outcome=outcome,
                collapsed_into=into,
            )
        )
    return _ordered(reasons)


def explain_window(
    turn_ids: Sequence[int],
    chain_ids: npt.NDArray[np.int64],
    salience: npt.NDArray[np.float32],
    shown_ids: Collection[int],
) -> Explanation:
    """WINDOW mode: the last turns, newest first, are the memories; nothing is scored."""
    reasons = [
        CandidateReason(
            episode_id=i,
            found_by=(Source.LAST_TURNS,),
            relevance=0.0,
            matched=False,
            salience=float(salience[int(np.searchsorted(chain_ids, i))]),
            recency=0.0,
            score=0.0,
            rank=place,
            outcome=Outcome.SHOWN if i in shown_ids else Outcome.FIT,
            collapsed_into=0,
        )
        for place, i in enumerate(turn_ids, start=1)
    ]
    return _ordered(reasons)


def _ordered(reasons: list[CandidateReason]) -> Explanation:
    """Shown first, then the ranked in rank order, then the rest by score; cut to the limit."""
    reasons.sort(
        key=lambda r: (r.outcome is not Outcome.SHOWN, r.rank == 0, r.rank, -r.score, r.episode_id)
    )
    return Explanation(reasons[:EXPLAIN_MAX_CANDIDATES], len(reasons))
