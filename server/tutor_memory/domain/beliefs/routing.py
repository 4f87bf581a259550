"""Which concept a check is about (SPEC R5.5): by name, else through the tutor's evaluation text,
exact name matches only; a topic that reads as spoken expression never becomes a belief."""

from __future__ import annotations

import enum
from collections.abc import Sequence

from tutor_memory.domain.beliefs.spoken import is_spoken_expression
from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.episodes import Outcome, StoredEpisode

# A check episode's text is the tutor's evaluation, then the student's answer after this marker,
# so that routing can read the evaluation alone when it replays a check (R5.6).
ANSWER_MARKER = "\n\nStudent's answer: "


class Routing(enum.Enum):
    NAME = "name"
    EVALUATION = "evaluation"
    SPOKEN_EXPRESSION = "spoken_expression"
    UNMATCHED = "unmatched"


def check_text(evaluation: str, student_answer: str) -> str:
    return evaluation + (ANSWER_MARKER + student_answer if student_answer else "")


def evaluation_of(text: str) -> str:
    return text.split(ANSWER_MARKER, 1)[0]


def route_topic(
    topic: str, evaluation: str, matcher: NameMatcher, budget: WorkBudget | None = None
) -> tuple[Routing, str | None]:
    """The concept a check's topic routes to, and how. A topic that names a concept routes by
    name (the first named, when a phrase names several); a phrase that names none routes through
    the evaluation text when that names a concept (again the first). `budget` is checked
    between the steps."""
    budget = budget or unlimited()
    budget.check()
    named = matcher.find(topic)
    if named:
        return Routing.NAME, named[0]
    budget.check()
    in_evaluation = matcher.find(evaluation) if evaluation else []
    if in_evaluation:
        return Routing.EVALUATION, in_evaluation[0]
    budget.check()
    if is_spoken_expression(topic):
        return Routing.SPOKEN_EXPRESSION, None
    return Routing.UNMATCHED, None


def confirmed_keys(checks: Sequence[StoredEpisode], matcher: NameMatcher) -> set[str]:
    """Canonical keys of the concepts a right check routes to (readiness 0.85), routed by
    today's rules, as beliefs are."""
    keys = set()
    for ep in checks:
        if ep.check is None or ep.check.outcome is not Outcome.RIGHT:
            continue
        _, name = route_topic(ep.check.topic, evaluation_of(ep.text), matcher)
        if name is not None:
            keys.add(canonical_key(name))
    return keys
