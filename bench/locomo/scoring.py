"""Evidence recall of one retrieved set, and its averages over groups of questions.

For a QA item with evidence turns E and a retrieved set B of turns (a block's memories, or a
ranking's top k):
- evidence recall = |E ∩ B| / |E|;
- all evidence present = E ⊆ B (1 or 0);
- session recall = the same share on the sessions of E: a session counts as found when any turn
  of it is in B.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from bench.locomo.dataset import (
    ADVERSARIAL,
    CATEGORY_NAMES,
    MULTI_HOP,
    OPEN_DOMAIN,
    SINGLE_HOP,
    TEMPORAL,
    Qa,
    session_of,
)

# Groups every figure is reported for, in table order. "overall" is categories 1-4; adversarial
# questions (5) are reported on their own, since retrieving the turn a trick question is built on
# is not success; "month-named" is the non-adversarial questions that name a month.
OVERALL = "overall"
MONTH_NAMED = "month-named"
ANSWERABLE = (SINGLE_HOP, MULTI_HOP, TEMPORAL, OPEN_DOMAIN)
GROUPS = (*(CATEGORY_NAMES[c] for c in ANSWERABLE), OVERALL, MONTH_NAMED, "adversarial")


@dataclass(frozen=True, slots=True)
class QaScore:
    evidence_recall: float
    all_evidence: float
    session_recall: float


def score(evidence: Collection[str], retrieved: Collection[str]) -> QaScore:
    """Scores one retrieved set against non-empty evidence (dia_ids of one conversation)."""
    if not evidence:
        raise ValueError("a question without evidence has no recall")
    found = set(evidence) & set(retrieved)
    sessions = {session_of(d) for d in evidence}
    found_sessions = sessions & {session_of(d) for d in retrieved}
    return QaScore(
        evidence_recall=len(found) / len(set(evidence)),
        all_evidence=1.0 if len(found) == len(set(evidence)) else 0.0,
        session_recall=len(found_sessions) / len(sessions),
    )


def groups_of(qa: Qa) -> list[str]:
    """Every reporting group a (scored) question belongs to."""
    if qa.category == ADVERSARIAL:
        return [CATEGORY_NAMES[ADVERSARIAL]]
    out = [CATEGORY_NAMES[qa.category], OVERALL]
    if qa.names_month:
        out.append(MONTH_NAMED)
    return out


@dataclass(frozen=True, slots=True)
class Summary:
    n: int
    evidence_recall: float
    all_evidence: float
    session_recall: float

    def as_dict(self) -> dict[str, float | int]:
        return {
            "n": self.n,
            "evidence_recall": round(self.evidence_recall, 4),
            "all_evidence": round(self.all_evidence, 4),
            "session_recall": round(self.session_recall, 4),
        }


def summarise(scores: Sequence[QaScore]) -> Summary | None:
    if not scores:
        return None
    return Summary(
        n=len(scores),
        evidence_recall=statistics.fmean(s.evidence_recall for s in scores),
        all_evidence=statistics.fmean(s.all_evidence for s in scores),
        session_recall=statistics.fmean(s.session_recall for s in scores),
    )


def by_group(scored: Iterable[tuple[Qa, QaScore]]) -> dict[str, dict[str, float | int]]:
    """Averages per reporting group (groups without questions are left out)."""
    buckets: dict[str, list[QaScore]] = {g: [] for g in GROUPS}
    for qa, s in scored:
        for group in groups_of(qa):
            buckets[group].append(s)
    out = {}
    for group, scores in buckets.items():
        summary = summarise(scores)
        if summary is not None:
            out[group] = summary.as_dict()
    return out
