"""How the checks on one concept become a belief about the student (SPEC R5.2-R5.4, R5.6, R8.2).

Pure functions over plain values: no storage, no clock (time is always passed in), no model.

The evidence score. Checks are taken oldest first (by `occurred_at`, then episode id, so the order
a caller passes them in cannot change the result). Each check adds +1 when right and -1 when
wrong, and every step back in the history multiplies a check's weight by `RECENCY_FACTOR`:

    score = sum over checks i of sign(i) * RECENCY_FACTOR ** (number of checks newer than i)

so the newest check weighs 1, the one before 0.85, then 0.72, ... The newest check is the heaviest
single piece of evidence, but a long agreeing history (up to 1 / (1 - 0.85) = 6.7 in weight) is
not overturned by one slip. The claim is the score's sign (`understands` when positive, `struggles
with` when negative; an exact tie goes to the newest check). Confidence grows with the score's
size and is capped:

    confidence = min(MAX_CONFIDENCE, BASE_CONFIDENCE + CONFIDENCE_PER_EVIDENCE * |score|)

One right check gives 0.60; four agreeing 0.82; seven or more agreeing reach the cap of 0.95. A
wrong check after four rights leaves "understands" at 0.67; three wrongs in a row after them flip
the claim to "struggles with". Mixed evidence sits near 0.5, which is what it is worth.

Rows are never updated into another claim (R5.3): the caller inserts a new row for each new
`Derived`, unless `same_belief` says it would say nothing new. When any rule here changes,
`RULES_VERSION` changes, and re-derivation (R5.6) replays the recorded checks under the new rules.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from tutor_memory.domain.episodes import Outcome

# Stored with every derived row; bump it whenever a constant or formula of this module changes,
# so that rows derived under older rules can be told apart and re-derived (R5.6).
RULES_VERSION = "1"

# How much one step back in the history discounts a check (see the module docstring). 0.85 makes
# the newest check the heaviest single one while keeping the last handful of checks in play: the
# fifth-newest still weighs half as much as the newest.
RECENCY_FACTOR = 0.85

# Confidence of a claim backed by no net evidence: a coin toss.
BASE_CONFIDENCE = 0.5

# Confidence gained per unit of net evidence score; chosen so one right check reads 0.60 and
# four agreeing checks read above 0.8.
CONFIDENCE_PER_EVIDENCE = 0.1

# No run of checks makes the tutor certain: a student can always forget or have guessed.
MAX_CONFIDENCE = 0.95

# A net score closer to zero than this is a tie (floating-point sums of powers of 0.85 are never
# meant to cancel exactly); the newest check then decides the claim.
TIE_TOLERANCE = 1e-9

# Confidences are kept to four decimals: more digits carry no information and only make equal
# beliefs print differently.
CONFIDENCE_DECIMALS = 4

# A belief lists at most this many supporting checks (the newest that agree with it): enough to
# show why, few enough to keep a row small when a concept has been checked hundreds of times.
MAX_SUPPORTING = 20

# Two confidences closer than this are the same belief: a new row would say nothing new, and the
# block shows confidences to two decimals anyway.
SAME_CONFIDENCE_TOLERANCE = 0.005

# R8.2: a belief no check has touched for this long loses DECAY_FACTOR of its confidence
# (decays by 15%) and is flagged for the next check to reconfirm. A decay is a new row (R5.3), and
# a belief is decayed at most once per DECAY_AFTER.
DECAY_AFTER = timedelta(days=45)
DECAY_FACTOR = 0.85

# What the block appends to a decayed belief's line.
RECONFIRM_FLAG = " [decayed: reconfirm]"


class Claim(enum.Enum):
    """What a belief says about the student on one concept. Values are shown to the tutor."""

    UNDERSTANDS = "understands"
    STRUGGLES_WITH = "struggles with"


@dataclass(frozen=True, slots=True)
class CheckEvidence:
    """One recorded check on the concept: its episode, its outcome and when it happened.

    `predicted_mastery` is not used by the rules (it feeds calibration, R8.3); it rides along so
    one list of checks serves both.
    """

    episode_id: int
    right: bool
    occurred_at: datetime
    predicted_mastery: float | None


@dataclass(frozen=True, slots=True)
class Derived:
    """The current belief on one concept, as the checks so far support it."""

    claim: Claim
    confidence: float
    # The checks that agree with the claim, newest first, at most MAX_SUPPORTING.
    supporting_ids: tuple[int, ...]
    # One sentence naming the newest check: "check 412 wrong: now struggles with".
    reason: str
    # When the newest check happened (decay counts from here, not from when the row was written).
    evidence_at: datetime


def _outcome(check: CheckEvidence) -> str:
    return (Outcome.RIGHT if check.right else Outcome.WRONG).value


def _sign(check: CheckEvidence) -> float:
    return 1.0 if check.right else -1.0


def _judge(score: float, newest: CheckEvidence) -> tuple[Claim, float]:
    """The claim and confidence a net evidence score supports."""
    if abs(score) < TIE_TOLERANCE:
        claim = Claim.UNDERSTANDS if newest.right else Claim.STRUGGLES_WITH
    else:
        claim = Claim.UNDERSTANDS if score > 0 else Claim.STRUGGLES_WITH
    confidence = min(MAX_CONFIDENCE, BASE_CONFIDENCE + CONFIDENCE_PER_EVIDENCE * abs(score))
    return claim, round(confidence, CONFIDENCE_DECIMALS)


def derive(checks: Sequence[CheckEvidence]) -> Derived | None:
    """The current belief on one concept from all its checks so far; None when there are none.

    Deterministic: the same checks, in any order, give the same belief.
    """
    if not checks:
        return None
    ordered = sorted(checks, key=lambda c: (c.occurred_at, c.episode_id))
    # Horner's scheme: each new check adds +-1 after discounting everything before it once more.
    score_before_newest = 0.0
    score = 0.0
    for check in ordered:
        score_before_newest = score
        score = score * RECENCY_FACTOR + _sign(check)
    newest = ordered[-1]
    claim, confidence = _judge(score, newest)

    if len(ordered) == 1:
        change = f"first check, {claim.value}"
    else:
        previous_claim, _ = _judge(score_before_newest, ordered[-2])
        change = f"{'still' if previous_claim is claim else 'now'} {claim.value}"
    # The reason names the newest check even when it disagrees with the claim ("check 9 wrong:
    # still understands"): that check is why this row exists.
    supports_right = claim is Claim.UNDERSTANDS
    supporting = tuple(c.episode_id for c in reversed(ordered) if c.right is supports_right)
    return Derived(
        claim=claim,
        confidence=confidence,
        supporting_ids=supporting[:MAX_SUPPORTING],
        reason=f"check {newest.episode_id} {_outcome(newest)}: {change}",
        evidence_at=newest.occurred_at,
    )


def same_belief(a: Derived, b_claim: Claim, b_confidence: float) -> bool:
    """True when `a` would say nothing new over a row claiming `b_claim` at `b_confidence`, so no
    row is inserted."""
    return a.claim is b_claim and abs(a.confidence - b_confidence) <= SAME_CONFIDENCE_TOLERANCE


def decay_due(evidence_at: datetime, last_decay_at: datetime | None, now: datetime) -> bool:
    """Whether a belief is due to decay at `now` (R8.2): no check has touched it for DECAY_AFTER
    and it has not already decayed within the last DECAY_AFTER."""
    if now - evidence_at < DECAY_AFTER:
        return False
    return last_decay_at is None or now - last_decay_at >= DECAY_AFTER


def decayed_confidence(confidence: float) -> float:
    """The confidence a belief keeps after one decay (R8.2: 15% less)."""
    return round(confidence * DECAY_FACTOR, CONFIDENCE_DECIMALS)


def decay_reason(evidence_at: datetime, now: datetime) -> str:
    """Why a decay row exists: "decay: untouched 46 days"."""
    days = (now - evidence_at).days
    return f"decay: untouched {days} day{'' if days == 1 else 's'}"


def render_belief(concept: str, claim: Claim, confidence: float, needs_reconfirmation: bool) -> str:
    """A belief as the block shows it (about twenty tokens, R5.4):
    "- struggles with osmosis (0.74)", plus " [decayed: reconfirm]" when flagged."""
    flag = RECONFIRM_FLAG if needs_reconfirmation else ""
    return f"- {claim.value} {concept} ({confidence:.2f}){flag}"


def describe_change(
    old_claim: Claim | None,
    old_conf: float | None,
    new_claim: Claim,
    new_conf: float,
    reason: str,
) -> str:
    """One sentence for a belief's history: what changed from one row to the next, and why.

    `old_claim`/`old_conf` are None for the first row of a concept.
    """
    new = f"{new_claim.value} ({new_conf:.2f})"
    if old_claim is None or old_conf is None:
        return f"first belief: {new}: {reason}"
    if old_claim is not new_claim:
        return f"changed from {old_claim.value} ({old_conf:.2f}) to {new}: {reason}"
    return f"still {new_claim.value}, confidence {old_conf:.2f} to {new_conf:.2f}: {reason}"
