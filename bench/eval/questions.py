"""The pre-registered question set: generated from what each history recorded, before any version
is asked anything, and the same for every version (SPEC §9).

Per history (its own seeded `random.Random`, independent of the history's):
- what did I get wrong: one question, when some concept's latest check was wrong. Expected: each
  such concept, with the ids of its wrong checks and of the tutor's turns that told the student;
- what should I review before X: up to REVIEW_PER_HISTORY concepts that build on others.
  Expected: X's direct prerequisites (the course's builds_on);
- explain X: up to EXPLAIN_PER_HISTORY concepts. Expected: X's definition sentence;
- what did we cover in <active month>: one month with sessions, not the month the questions are
  asked in. Expected: that month's episodes except the tutor's narrations;
- what did we cover in <empty month>: every quiet month of the span. Expected: no record;
- the old exact match: the memorable exchange of the first active month, asked for by its own
  unusual words. Expected: that tutor answer.

Questions are in the history's language; in a non-English history each question except the old
exact match is asked in English with probability CROSS_LANGUAGE_PROBABILITY (the concept keeps
its course name: students switch languages, their course does not). The old exact match stays in
the history's language because its words are the point of it.
"""

from __future__ import annotations

import enum
import hashlib
import json
import random
from dataclasses import asdict, dataclass

from bench.eval.history import History, Month
from bench.eval.language import CROSS_LANGUAGE, Language, load


class Category(enum.Enum):
    WRONG = "wrong"
    REVIEW = "review"
    EXPLAIN = "explain"
    ACTIVE_MONTH = "active_month"
    EMPTY_MONTH = "empty_month"
    OLD_MATCH = "old_match"

    @property
    def title(self) -> str:
        return CATEGORY_TITLES[self]


CATEGORY_TITLES = {
    Category.WRONG: "what did I get wrong",
    Category.REVIEW: "what should I review before X",
    Category.EXPLAIN: "explain X",
    Category.ACTIVE_MONTH: "what did we cover in <active month>",
    Category.EMPTY_MONTH: "what did we cover in <empty month>",
    Category.OLD_MATCH: "old exact match beats recent noise",
}

REVIEW_PER_HISTORY = 3
EXPLAIN_PER_HISTORY = 3
CROSS_LANGUAGE_PROBABILITY = 0.2
# "Active month" passes when the block shows at least this many of the month's memories (or all
# of them, when the month has fewer): enough that the tutor can say what the month held, not
# just that it happened.
ACTIVE_MONTH_MIN_SHOWN = 3


@dataclass(frozen=True, slots=True)
class WrongConcept:
    name: str
    # Event keys of its wrong checks and of the tutor's turns that gave those verdicts.
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Expected:
    """What the graders compare a block with; which fields a category uses is in
    bench.eval.grading."""

    wrong: tuple[WrongConcept, ...] = ()
    names: tuple[str, ...] = ()  # prerequisites to be named
    definition: str = ""
    keys: tuple[str, ...] = ()  # the month's episodes, or the old exact match
    min_shown: int = 0
    month: Month | None = None  # the month asked about
    narration_keys: tuple[str, ...] = ()  # every tutor narration of the history


@dataclass(frozen=True, slots=True)
class Question:
    qid: str  # "<student>/<category>/<n>"
    history: int
    category: Category
    text: str
    language: str  # the language the question is asked in
    cross_language: bool
    target: str  # the concept or month ("YYYY-MM") asked about; "" when none
    expected: Expected


def wrong_concepts(history: History) -> tuple[WrongConcept, ...]:
    """Concepts whose latest check was wrong, in course order."""
    latest: dict[str, bool] = {}
    keys: dict[str, list[str]] = {}
    for check in history.checks:  # oldest first
        latest[check.concept] = check.right
        if not check.right:
            keys.setdefault(check.concept, []).extend((check.key, check.verdict_key))
    return tuple(
        WrongConcept(c.name, tuple(keys[c.name]))
        for c in history.course.concepts
        if latest.get(c.name) is False
    )


def month_keys(history: History, month: Month) -> tuple[str, ...]:
    """Every event of the month, except the tutor's narrations."""
    narrations = {t.key for t in history.narrations}
    return tuple(e.key for e in history.events if month.holds(e.at) and e.key not in narrations)


class _Asker:
    """Writes one history's questions, numbering them per category."""

    def __init__(self, history: History, seed: int) -> None:
        self.history = history
        self.rng = random.Random(f"tutor-memory-eval-questions:{seed}:{history.index}")
        self.counts: dict[Category, int] = {}
        self.out: list[Question] = []

    def language(self, category: Category) -> tuple[Language, bool]:
        own = self.history.language
        if category is Category.OLD_MATCH or own.code == CROSS_LANGUAGE:
            return own, False
        if self.rng.random() < CROSS_LANGUAGE_PROBABILITY:
            return load(CROSS_LANGUAGE), True
        return own, False

    def template(self, templates: tuple[str, ...]) -> str:
        return templates[self.rng.randrange(len(templates))]

    def add(
        self,
        category: Category,
        text: str,
        language: Language,
        cross: bool,
        expected: Expected,
        target: str = "",
    ) -> None:
        n = self.counts.get(category, 0) + 1
        self.counts[category] = n
        qid = f"{self.history.student_id}/{category.value}/{n}"
        self.out.append(
            Question(
                qid, self.history.index, category, text, language.code, cross, target, expected
            )
        )


def questions_for(history: History, seed: int) -> list[Question]:
    asker = _Asker(history, seed)
    rng = asker.rng
    course = history.course

    wrong = wrong_concepts(history)
    if wrong:
        language, cross = asker.language(Category.WRONG)
        text = asker.template(language.queries.wrong)
        asker.add(Category.WRONG, text, language, cross, Expected(wrong=wrong))

    with_prerequisites = [c for c in course.concepts if c.builds_on]
    chosen = rng.sample(with_prerequisites, min(REVIEW_PER_HISTORY, len(with_prerequisites)))
    for concept in sorted(chosen, key=course.concepts.index):
        language, cross = asker.language(Category.REVIEW)
        text = asker.template(language.queries.review).format(ref=concept.ref)
        expected = Expected(names=concept.builds_on)
        asker.add(Category.REVIEW, text, language, cross, expected, concept.name)

    chosen = rng.sample(list(course.concepts), min(EXPLAIN_PER_HISTORY, len(course.concepts)))
    for concept in sorted(chosen, key=course.concepts.index):
        language, cross = asker.language(Category.EXPLAIN)
        text = asker.template(language.queries.explain).format(ref=concept.ref)
        expected = Expected(definition=concept.definition)
        asker.add(Category.EXPLAIN, text, language, cross, expected, concept.name)

    asked_in = history.month_of(history.now)
    active = [m for m in history.months if m.active and m != asked_in]
    month = active[rng.randrange(len(active))]
    keys = month_keys(history, month)
    language, cross = asker.language(Category.ACTIVE_MONTH)
    text = _month_question(asker, language, month)
    expected = Expected(keys=keys, min_shown=min(ACTIVE_MONTH_MIN_SHOWN, len(keys)), month=month)
    asker.add(Category.ACTIVE_MONTH, text, language, cross, expected, month.key)

    narrations = tuple(t.key for t in history.narrations)
    for month in (m for m in history.months if not m.active):
        language, cross = asker.language(Category.EMPTY_MONTH)
        text = _month_question(asker, language, month)
        # Empty by construction; kept so that the grader's rule does not depend on it.
        keys = month_keys(history, month)
        expected = Expected(keys=keys, month=month, narration_keys=narrations)
        asker.add(Category.EMPTY_MONTH, text, language, cross, expected, month.key)

    expected = Expected(keys=(history.anecdote_key,))
    asker.add(Category.OLD_MATCH, history.anecdote_query, history.language, False, expected)
    return asker.out


def _month_question(asker: _Asker, language: Language, month: Month) -> str:
    return asker.template(language.queries.month).format(month=language.month_name(month.month))


def question_set(histories: list[History], seed: int) -> list[Question]:
    return [q for h in histories for q in questions_for(h, seed)]


def fingerprint(questions: list[Question]) -> str:
    """sha256 of the question set, to show that two runs asked the same questions."""
    rows = [{**asdict(q), "category": q.category.value} for q in questions]
    text = json.dumps(rows, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
