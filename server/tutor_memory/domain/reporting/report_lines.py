"""What the memory holds about a student, in sentences that never invent (SPEC R7.5, R8.5).

Every sentence states what the numbers say and no more: "32 checks are recorded, but none could
yet be linked to a concept in the map" rather than "no checks yet"; "No check is recorded." only
when there really is none; no claim about answers when none was traced.

The working set is the small set of concepts to work on next, most pressing first:
1. "struggles with" beliefs, the most confident first (the surest gaps; a decayed one sorts by
   its decayed confidence), then the newest evidence, then the name;
2. "understands" beliefs that decayed and wait to be reconfirmed, the longest untouched first;
3. "understands" beliefs no check has touched for REVIEW_AFTER, that will decay unless checked
   soon, the longest untouched first.
At most WORKING_SET_SIZE concepts; a concept appears once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from tutor_memory.domain.beliefs.calibration import Calibration
from tutor_memory.domain.beliefs.rules import DECAY_AFTER, Claim

# A working set is what one session can take on: a handful of concepts, not a syllabus.
WORKING_SET_SIZE = 7

# An understood concept left unchecked this long joins the working set (group 3 above), two
# thirds of the way to its decay: checking it now keeps a true belief from going stale.
REVIEW_AFTER = DECAY_AFTER * 2 // 3

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)

# The report quotes at most this many of the questions the files could not answer.
MAX_UNANSWERED_EXAMPLES = 3


class CurrentBelief(Protocol):
    """A current belief as the working set reads it (a stored belief row has these fields)."""

    @property
    def concept(self) -> str: ...
    @property
    def claim(self) -> str:
        """A `Claim` value: "understands" or "struggles with"."""
        ...

    @property
    def confidence(self) -> float: ...
    @property
    def needs_reconfirmation(self) -> bool: ...
    @property
    def evidence_at_us(self) -> int:
        """When the newest check behind it happened (not when it last decayed), in microseconds
        since the epoch."""
        ...


@dataclass(frozen=True, slots=True)
class BeliefState:
    """A plain `CurrentBelief`."""

    concept: str
    claim: str
    confidence: float
    needs_reconfirmation: bool
    evidence_at_us: int


@dataclass(frozen=True, slots=True)
class ReportFacts:
    """The numbers a report states, all counted by the caller from the store."""

    checks: int
    checks_right: int
    checks_wrong: int
    # Checks whose topic routed to a concept of the map.
    checks_linked: int
    # Checks whose topic read as spoken expression: kept as evidence, never a belief (R5.5).
    spoken_topics: int
    # Current beliefs as the block shows them (`rules.render_belief`).
    belief_lines: tuple[str, ...]
    # Current beliefs that decayed and wait for a check to reconfirm them.
    needing_reconfirmation: int
    # Questions whose answers the files and memory could not (fully) answer (grounding partial
    # or impossible), and the summaries of a few of them.
    unanswered: int
    unanswered_examples: tuple[str, ...]
    calibration: Calibration
    working_set: tuple[str, ...]
    map_concepts: int
    # Answers that have a grounding status at all; None when the caller did not count them (the
    # report then says nothing about the answers that were grounded).
    answers_graded: int | None = None


def _n(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


def _checks_lines(f: ReportFacts) -> list[str]:
    if f.checks == 0:
        return ["No check is recorded."]
    recorded = f"{_n(f.checks, 'check is', 'checks are')} recorded"
    if f.checks_linked == 0:
        first = f"{recorded}, but none could yet be linked to a concept in the map."
    elif f.checks_linked >= f.checks:
        both = "linked" if f.checks == 1 else "all linked"
        first = f"{recorded}, {both} to a concept in the map."
    else:
        first = f"{recorded}; {f.checks_linked} of them could be linked to a concept in the map."
    outcomes = f"Outcomes: {f.checks_right} right, {f.checks_wrong} wrong"
    missing = f.checks - f.checks_right - f.checks_wrong
    if missing > 0:
        outcomes += f", {missing} without an outcome"
    lines = [first, outcomes + "."]
    if f.spoken_topics:
        lines.append(
            f"{f.spoken_topics} of them had a topic that reads as spoken expression "
            "rather than a concept: kept as evidence, never turned into a belief."
        )
    return lines


def _belief_lines(f: ReportFacts) -> list[str]:
    if f.belief_lines:
        lines = [
            "Current beliefs about the student (from their checks; confidence 0-1):",
            *f.belief_lines,
        ]
    elif f.checks == 0:
        lines = ["No belief about the student is held yet, since no check is recorded."]
    elif f.checks_linked == 0:
        lines = [
            "No belief about the student is held yet, since no check could be linked to a concept."
        ]
    else:
        lines = ["No belief about the student is currently held."]
    if k := f.needing_reconfirmation:
        lines.append(
            f"{_n(k, 'belief', 'beliefs')} went {DECAY_AFTER.days} days without a check, "
            f"decayed and {'needs' if k == 1 else 'need'} a check to reconfirm "
            f"{'it' if k == 1 else 'them'} (marked [decayed: reconfirm])."
        )
    return lines


def _answer_lines(f: ReportFacts) -> list[str]:
    graded = f.answers_graded
    if graded == 0:
        return ["No answer has been traced to its sources yet."]
    if f.unanswered == 0:
        if graded is None:
            return ["No question is recorded as one the files could not answer."]
        if graded == 1:
            return ["The 1 traced answer was answered from the files or the memory."]
        return [f"All {graded} traced answers were answered from the files or the memory."]
    if graded is None:
        subject = _n(f.unanswered, "question was", "questions were")
    else:
        subject = f"{f.unanswered} of {_n(graded, 'traced answer', 'traced answers')}"
        subject += " was" if f.unanswered == 1 else " were"
    examples = f.unanswered_examples[:MAX_UNANSWERED_EXAMPLES]
    lines = [
        f"{subject} not fully answered from the files or the memory"
        + (", for example:" if examples else ".")
    ]
    lines += [f"- {q}" for q in examples]
    return lines


def report_lines(facts: ReportFacts) -> list[str]:
    """The report, one sentence (or belief line) per item, in a fixed order: checks, the map,
    beliefs, answers, calibration, the working set."""
    if facts.map_concepts:
        map_line = f"The subject map holds {_n(facts.map_concepts, 'concept', 'concepts')}."
    else:
        map_line = "The subject map holds no concept yet."
    if facts.working_set:
        work = f"Working set (most pressing first): {_names(facts.working_set)}."
    else:
        work = "The working set is empty: no belief calls for work yet."
    return [
        *_checks_lines(facts),
        map_line,
        *_belief_lines(facts),
        *_answer_lines(facts),
        f"Calibration: {facts.calibration.statement}.",
        work,
    ]


def working_set(beliefs: Sequence[CurrentBelief], now: datetime) -> list[str]:
    """The concepts to work on next, most pressing first (order in the module docstring)."""
    now_us = (now - _EPOCH) // _MICROSECOND
    review_us = REVIEW_AFTER // _MICROSECOND
    struggles = sorted(
        (b for b in beliefs if Claim(b.claim) is Claim.STRUGGLES_WITH),
        key=lambda b: (-b.confidence, -b.evidence_at_us, b.concept),
    )
    by_age = sorted(
        (b for b in beliefs if Claim(b.claim) is Claim.UNDERSTANDS),
        key=lambda b: (b.evidence_at_us, b.concept),
    )
    reconfirm = [b for b in by_age if b.needs_reconfirmation]
    review = [
        b for b in by_age if not b.needs_reconfirmation and now_us - b.evidence_at_us >= review_us
    ]
    chosen = dict.fromkeys(b.concept for b in (*struggles, *reconfirm, *review))
    return list(chosen)[:WORKING_SET_SIZE]
