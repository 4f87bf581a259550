"""Recall's levers: named switches that turn one candidate set (or the fusion calibration) off.

They exist to measure what each lever adds (the LoCoMo ablation, `python -m bench.locomo
--ablation`): a server is started with some of them off (`tutor-memory serve --recall-off`).
The default, `ALL_ON`, is recall as designed; production never turns one off.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class Lever(enum.StrEnum):
    """One switchable part of recall (SPEC R2.1); the value is its name on the command line."""

    # BM25 over the whole history: the lexical set (and the neighbours of its matches).
    LEXICAL = "bm25"
    # Nearest neighbours of the query's embedding: the dense set (and the neighbours of its
    # matches). The query is still embedded: record intent and concept routing use it.
    DENSE = "dense"
    # The turns next to the best matches (the cheap second hop).
    NEIGHBOURS = "neighbours"
    # Dense neighbours found about the chain's mean (`VectorIndex.neighbours`): off, by plain
    # cosine, with the uncentred match threshold.
    CENTRING = "centring"
    # The period the query names: not read at all, so no period set, no filter to it and no
    # no-record statement.
    PERIOD = "period"
    # Concept routing: the sets of episodes tagged with a concept the query names or the
    # subject map routed the query to.
    CONCEPTS = "concepts"
    # The calibration of scores across sets (each set scaled to its best, the dense set from
    # its match threshold, the lexical and dense sets weighed by their best's grade,
    # `candidates.set_weights`): off, each set's relevance is its reciprocal rank instead
    # (`candidates.reciprocal_rank_relevance`), the plain rank-fusion alternative.
    CALIBRATION = "calibration"


@dataclass(frozen=True, slots=True)
class RecallLevers:
    """Which levers are off; none by default."""

    off: frozenset[Lever] = frozenset()

    def on(self, lever: Lever) -> bool:
        return lever not in self.off

    @classmethod
    def without(cls, levers: Iterable[Lever]) -> RecallLevers:
        return cls(frozenset(levers))


ALL_ON = RecallLevers()


def parse_levers(value: str) -> RecallLevers:
    """`bm25,dense` as the levers off; ValueError naming an unknown lever and the known ones."""
    names = [v.strip() for v in value.split(",") if v.strip()]
    known = {lever.value: lever for lever in Lever}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown recall lever {unknown[0]!r}; known: {', '.join(known)}")
    return RecallLevers.without(known[n] for n in names)
