"""Beliefs as plain data (SPEC R5.2-R5.6): the evidence a check gives, checks grouped by the concept
they route to today, the row a derivation inserts, a belief's line in a block, and a concept's
history with the reason for each change. Rules only; `app.beliefs` writes the rows."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tutor_memory.domain.beliefs.routing import evaluation_of, route_topic
from tutor_memory.domain.beliefs.rules import (
    RULES_VERSION,
    CheckEvidence,
    Claim,
    Derived,
    decay_due,
    decay_reason,
    decayed_confidence,
    describe_change,
    render_belief,
)
from tutor_memory.domain.budget import WorkBudget
from tutor_memory.domain.clock import us_to_datetime
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.episodes import Outcome, StoredEpisode
from tutor_memory.domain.records import BeliefRow, NewBelief


@dataclass(frozen=True, slots=True)
class History:
    concept: str
    rows: tuple[BeliefRow, ...]
    changes: tuple[str, ...]


def evidence_of(ep: StoredEpisode) -> CheckEvidence:
    assert ep.check is not None
    return CheckEvidence(
        ep.episode_id,
        ep.check.outcome is Outcome.RIGHT,
        us_to_datetime(ep.occurred_at_us),
        ep.check.predicted_mastery,
    )


def calibration_pairs(checks: Iterable[StoredEpisode]) -> list[tuple[float, bool]]:
    """(predicted mastery, the check was right) of every check that carries a prediction: what
    calibration compares (R8.3)."""
    return [
        (ep.check.predicted_mastery, ep.check.outcome is Outcome.RIGHT)
        for ep in checks
        if ep.check is not None and ep.check.predicted_mastery is not None
    ]


def new_row(name: str, derived: Derived, *, reason: str | None = None) -> NewBelief:
    return NewBelief(
        concept=name,
        concept_key=canonical_key(name),
        claim=derived.claim.value,
        confidence=derived.confidence,
        supporting=derived.supporting_ids,
        reason=reason or derived.reason,
        rules_version=RULES_VERSION,
        needs_reconfirmation=False,
        evidence_at_us=int(derived.evidence_at.timestamp() * 1_000_000),
    )


def belief_line(row: BeliefRow) -> str:
    return render_belief(row.concept, Claim(row.claim), row.confidence, row.needs_reconfirmation)


def history_of(rows: list[BeliefRow]) -> History:
    changes = []
    for old, new in itertools.pairwise(rows):
        changes.append(
            describe_change(
                Claim(old.claim), old.confidence, Claim(new.claim), new.confidence, new.reason
            )
        )
    return History(rows[-1].concept, tuple(rows), tuple(changes))


def decayed_row(belief: BeliefRow, now: int) -> NewBelief | None:
    """The decayed successor of a belief untouched for 45 days (R8.2) as of `now`, or None when
    not due. Every time here is on the evidence clock (when things happened, not when the server
    wrote them), so a replayed history decays as the live one did."""
    last_decay = None
    if belief.needs_reconfirmation:
        # Rows written before the cycle recorded it fall back to their creation time.
        last_us = belief.decayed_as_of_us
        last_decay = us_to_datetime(belief.created_at_us if last_us is None else last_us)
    if not decay_due(us_to_datetime(belief.evidence_at_us), last_decay, us_to_datetime(now)):
        return None
    return NewBelief(
        concept=belief.concept,
        concept_key=belief.concept_key,
        claim=belief.claim,
        confidence=decayed_confidence(belief.confidence),
        supporting=belief.supporting,
        reason=decay_reason(us_to_datetime(belief.evidence_at_us), us_to_datetime(now)),
        rules_version=belief.rules_version,
        needs_reconfirmation=True,
        evidence_at_us=belief.evidence_at_us,
        decayed_as_of_us=now,
    )


# What one check's evidence holds in memory: the record (64 bytes), its episode id (28-32), its
# time (a datetime, 48) and its predicted mastery (a float, 24).
CHECK_EVIDENCE_BYTES = 168


@dataclass(frozen=True, slots=True)
class CheckGroups:
    """A chain's checks grouped by the concept they route to (by `matcher`, today's rules), up
    to the check with seq `through`. Advancing it routes only the checks recorded since, so a new
    check costs its own routing, not a replay of the chain (R5.5)."""

    matcher: NameMatcher
    through: int
    # concept key -> (the concept's name, the evidence of every check routed to it)
    groups: Mapping[str, tuple[str, tuple[CheckEvidence, ...]]]

    @classmethod
    def empty(cls, matcher: NameMatcher) -> CheckGroups:
        return cls(matcher, 0, {})

    def advanced(
        self, checks: Sequence[StoredEpisode], budget: WorkBudget | None = None
    ) -> CheckGroups:
        """These groups with `checks` (recorded after `through`, in seq order) routed in;
        `budget` is checked before each check."""
        if not checks:
            return self
        groups = dict(self.groups)
        for ep in checks if budget is None else budget.each(checks):
            if ep.check is None:
                continue
            _, name = route_topic(ep.check.topic, evaluation_of(ep.text), self.matcher)
            if name is None:
                continue
            key = canonical_key(name)
            first_name, evidence = groups.get(key, (name, ()))
            groups[key] = (first_name, (*evidence, evidence_of(ep)))
        return CheckGroups(self.matcher, max(self.through, checks[-1].seq), groups)

    def nbytes(self) -> int:
        """About what the groups hold in memory, their matcher included (a cache weighs them by
        this; the matcher is often the one the chain's map holds too). The concepts' names are
        the matcher's own."""
        size = sys.getsizeof
        held = size(self) + size(self.groups) + self.matcher.nbytes()
        for key, (name, evidence) in self.groups.items():
            held += size(key) + size(evidence) + size((name, evidence))
            held += len(evidence) * CHECK_EVIDENCE_BYTES
        return held

    def evidence(self, concept: str) -> tuple[CheckEvidence, ...]:
        """The evidence of the checks routed to `concept`."""
        return self.groups.get(canonical_key(concept), (concept, ()))[1]
