"""GetReport's content (SPEC R7.3, R7.5): what the memory holds about the student, from the
store's own rows, in numbers and in sentences that never invent."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tutor_memory.domain.beliefs.calibration import Calibration, calibrate
from tutor_memory.domain.beliefs.history import belief_line, calibration_pairs
from tutor_memory.domain.beliefs.routing import Routing, evaluation_of, route_topic
from tutor_memory.domain.clock import us_to_datetime
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.episodes import Kind, Outcome, StoredEpisode
from tutor_memory.domain.recall.block_text import DATE_FORMAT
from tutor_memory.domain.records import BeliefRow
from tutor_memory.domain.reporting.report_lines import ReportFacts, report_lines, working_set

# Grounding statuses that make an answer's question one "the files could not answer".
UNGROUNDED = ("partial", "impossible")
# Questions listed as not answered by the files, newest first.
MAX_UNANSWERED = 20


@dataclass(frozen=True, slots=True)
class Report:
    beliefs: tuple[BeliefRow, ...]
    checks: int
    checks_right: int
    checks_wrong: int
    checks_linked: int
    unanswered: tuple[StoredEpisode, ...]
    calibration: Calibration
    working_set: tuple[str, ...]
    lines: tuple[str, ...]


def question_before(episodes: Sequence[StoredEpisode], answer: StoredEpisode) -> StoredEpisode:
    """The question an answer closes: the last question before it in the chain, else itself."""
    best = answer
    for ep in episodes:
        if ep.seq >= answer.seq:
            break
        if ep.kind is Kind.QUESTION:
            best = ep
    return best


def build_report(
    matcher: NameMatcher,
    map_concepts: int,
    beliefs: Sequence[BeliefRow],
    turns: Sequence[StoredEpisode],
    grounding: Mapping[int, str],
    composed_at_us: int | None,
    now_us: int,
) -> Report:
    """The report from the chain's own rows: its current beliefs, its questions, answers and
    checks in seq order, each answer's latest grounding annotation, and when the nightly cycle
    last composed the self-model."""
    checks = [e for e in turns if e.kind is Kind.CHECK and e.check is not None]
    right = sum(1 for c in checks if c.check and c.check.outcome is Outcome.RIGHT)
    # Routed by today's rules, once per check (as beliefs are).
    routings = [
        route_topic(c.check.topic, evaluation_of(c.text), matcher)[0]
        for c in checks
        if c.check is not None
    ]
    linked = sum(r in (Routing.NAME, Routing.EVALUATION) for r in routings)
    spoken = sum(r is Routing.SPOKEN_EXPRESSION for r in routings)
    conversation = [e for e in turns if e.kind is not Kind.CHECK]
    unanswered: list[StoredEpisode] = []
    graded = 0
    for answer in reversed([e for e in conversation if e.kind is Kind.ANSWER]):
        body = grounding.get(answer.episode_id)
        if body is None:
            continue
        graded += 1
        if json.loads(body).get("status") in UNGROUNDED:
            unanswered.append(question_before(conversation, answer))
    calibration = calibrate(calibration_pairs(checks))
    now = us_to_datetime(now_us)
    work = working_set(beliefs, now)
    facts = ReportFacts(
        checks=len(checks),
        checks_right=right,
        checks_wrong=len(checks) - right,
        checks_linked=linked,
        spoken_topics=spoken,
        belief_lines=tuple(belief_line(b) for b in beliefs),
        needing_reconfirmation=sum(1 for b in beliefs if b.needs_reconfirmation),
        unanswered=len(unanswered),
        unanswered_examples=tuple(e.summary for e in unanswered[:3]),
        answers_graded=graded,
        calibration=calibration,
        working_set=tuple(work),
        map_concepts=map_concepts,
    )
    lines = report_lines(facts)
    composed = composed_at_us
    lines.append(
        "The nightly cycle has not run for this student and subject yet."
        if composed is None
        else "The nightly cycle last composed the working set and self-model on "
        f"{us_to_datetime(composed).strftime(DATE_FORMAT)}."
    )
    return Report(
        beliefs=tuple(beliefs),
        checks=len(checks),
        checks_right=right,
        checks_wrong=len(checks) - right,
        checks_linked=linked,
        unanswered=tuple(unanswered[:MAX_UNANSWERED]),
        calibration=calibration,
        working_set=tuple(work),
        lines=tuple(lines),
    )
