"""GetReport (SPEC R7.3, R7.5): what the memory holds about the student, from the store's own
rows — beliefs, checks, answers the files could not ground, calibration, the working set — in
numbers and in sentences that never invent."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from tutor_memory.app.answers import GROUNDING_ANNOTATION
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.maps import MapCache
from tutor_memory.domain.beliefs.calibration import Calibration, calibrate
from tutor_memory.domain.beliefs.history import belief_line
from tutor_memory.domain.beliefs.routing import Routing, evaluation_of, route_topic
from tutor_memory.domain.clock import us_to_datetime
from tutor_memory.domain.episodes import ChainKey, Kind, Outcome, StoredEpisode
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


class Reporter:
    def __init__(self, ledger: Ledger, maps: MapCache) -> None:
        self.ledger = ledger
        self.maps = maps

    async def report(self, chain: ChainKey, now_us: int) -> Report:
        return await self.ledger.read(lambda: self._report(chain, now_us))

    def _report(self, chain: ChainKey, now_us: int) -> Report:
        store = self.ledger.store
        chain_map = self.maps.get(chain)
        beliefs = store.current_beliefs(chain)
        turns = store.episodes_of_kind(chain, (Kind.QUESTION, Kind.ANSWER, Kind.CHECK))
        checks = [e for e in turns if e.kind is Kind.CHECK and e.check is not None]
        right = sum(1 for c in checks if c.check and c.check.outcome is Outcome.RIGHT)
        # Routed by today's rules, once per check (as beliefs are).
        routings = [
            route_topic(c.check.topic, evaluation_of(c.text), chain_map.matcher)[0]
            for c in checks
            if c.check is not None
        ]
        linked = sum(r in (Routing.NAME, Routing.EVALUATION) for r in routings)
        spoken = sum(r is Routing.SPOKEN_EXPRESSION for r in routings)
        conversation = [e for e in turns if e.kind is not Kind.CHECK]
        unanswered: list[StoredEpisode] = []
        grounding = store.latest_annotations(chain, GROUNDING_ANNOTATION)
        graded = 0
        for answer in reversed([e for e in conversation if e.kind is Kind.ANSWER]):
            body = grounding.get(answer.episode_id)
            if body is None:
                continue
            graded += 1
            if json.loads(body).get("status") in UNGROUNDED:
                unanswered.append(question_before(conversation, answer))
        calibration = calibrate(
            [
                (c.check.predicted_mastery, c.check.outcome is Outcome.RIGHT)
                for c in checks
                if c.check is not None and c.check.predicted_mastery is not None
            ]
        )
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
            map_concepts=len(chain_map.map.nodes),
        )
        lines = report_lines(facts)
        composed = store.self_model_composed_at(chain)
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
