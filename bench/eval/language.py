"""The generator's language packs: each language's course material and the way its students and
tutor talk, read from `data/<code>.json` and checked.

Every word of a natural language the benchmark writes (concept names, definitions, questions,
answers, evaluations, month names) lives in those files; code only picks and fills templates.
Templates use `str.format` fields; each field of a pack allows a fixed set of them
(`_PLACEHOLDERS`), and a pack that uses another, or names a prerequisite its course does not
explain, is refused when it is loaded.

`ref` is how a concept is written inside a sentence ("la membrana cellulare", "the cell
membrane"): the generator never builds grammar (articles, contractions) itself.
"""

from __future__ import annotations

import functools
import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"

# The languages histories are written in, in the order histories take them.
LANGUAGES = ("en", "it", "es", "fr", "ar")
# The language cross-language questions are asked in (students switch to it mid-course).
CROSS_LANGUAGE = "en"
MONTHS_PER_YEAR = 12

# The `str.format` fields each template may use.
_CONCEPT = frozenset({"ref"})
_ANSWER = frozenset({"ref", "definition", "summary"})
_CONFUSION = frozenset({"ref", "other_ref"})
_PLACEHOLDERS: dict[str, frozenset[str]] = {
    "student_questions": _CONCEPT,
    "tutor_answers": _ANSWER,
    "check_prompts": _CONCEPT,
    "check_answers_right": _ANSWER,
    "check_answers_wrong": _CONFUSION,
    "evaluations_right": _CONCEPT,
    "evaluations_wrong": _CONFUSION,
    "evaluations_unnamed_right": frozenset(),
    "evaluations_unnamed_wrong": frozenset(),
    "spoken_topics": frozenset(),
    "teachings": _CONCEPT,
    "recap_requests": frozenset({"month"}),
    "narrations": frozenset({"month", "refs"}),
    "small_talk": frozenset(),
    "anecdote.question": _CONCEPT,
    "anecdote.answer": _CONCEPT,
    "anecdote.query": frozenset(),
    "queries.wrong": frozenset(),
    "queries.review": _CONCEPT,
    "queries.explain": _CONCEPT,
    "queries.month": frozenset({"month"}),
}


class PackError(ValueError):
    """A language pack that the generator cannot use as written."""


@dataclass(frozen=True, slots=True)
class Concept:
    name: str
    ref: str
    definition: str
    summary: str
    builds_on: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FileText:
    title: str
    intro: str


@dataclass(frozen=True, slots=True)
class Course:
    subject: str
    files: tuple[FileText, ...]
    concepts: tuple[Concept, ...]

    def concept(self, name: str) -> Concept:
        for concept in self.concepts:
            if concept.name == name:
                return concept
        raise KeyError(name)


@dataclass(frozen=True, slots=True)
class Anecdote:
    """An old, memorable exchange: a question, an answer holding words nothing else in the
    history uses, and the later query that asks for it by those words."""

    question: str
    answer: str
    query: str


@dataclass(frozen=True, slots=True)
class SmallTalk:
    """A message of the student's that is not about the subject, and the tutor's reply."""

    student: str
    tutor: str


@dataclass(frozen=True, slots=True)
class Conversation:
    student_questions: tuple[str, ...]
    tutor_answers: tuple[str, ...]
    check_prompts: tuple[str, ...]
    check_answers_right: tuple[str, ...]
    check_answers_wrong: tuple[str, ...]
    evaluations_right: tuple[str, ...]
    evaluations_wrong: tuple[str, ...]
    evaluations_unnamed_right: tuple[str, ...]
    evaluations_unnamed_wrong: tuple[str, ...]
    spoken_topics: tuple[str, ...]
    teachings: tuple[str, ...]
    recap_requests: tuple[str, ...]
    narrations: tuple[str, ...]
    openings: tuple[SmallTalk, ...]  # at the start of a session
    closings: tuple[SmallTalk, ...]  # at its end
    anecdotes: tuple[Anecdote, ...]


@dataclass(frozen=True, slots=True)
class Queries:
    """Templates of the benchmark's questions, by category."""

    wrong: tuple[str, ...]
    review: tuple[str, ...]
    explain: tuple[str, ...]
    month: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Language:
    code: str
    time_zone: str
    months: tuple[str, ...]  # January first, as the language writes them in a sentence
    list_and: str
    courses: dict[str, Course]
    conversation: Conversation
    queries: Queries

    def month_name(self, month: int) -> str:
        return self.months[month - 1]

    def join(self, items: list[str]) -> str:
        return self.list_and.join(items)


def _strings(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw or not all(isinstance(s, str) and s for s in raw):
        raise PackError(f"{where}: expected a non-empty list of non-empty strings")
    return tuple(raw)


def _check_fields(template: str, field: str, where: str) -> None:
    allowed = _PLACEHOLDERS[field]
    used = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    if not used <= allowed:
        raise PackError(
            f"{where}: {template!r} uses {sorted(used - allowed)}; {field} allows {sorted(allowed)}"
        )


def _templates(raw: dict[str, Any], field: str, key: str, where: str) -> tuple[str, ...]:
    out = _strings(raw.get(key), f"{where}.{key}")
    for template in out:
        _check_fields(template, field, f"{where}.{key}")
    return out


def _course(subject: str, raw: dict[str, Any], where: str) -> Course:
    files = tuple(FileText(f["title"], f["intro"]) for f in raw["files"])
    concepts = tuple(
        Concept(c["name"], c["ref"], c["definition"], c["summary"], tuple(c["builds_on"]))
        for c in raw["concepts"]
    )
    names = [c.name for c in concepts]
    if len(set(names)) != len(names):
        raise PackError(f"{where}: concept names repeat")
    for position, concept in enumerate(concepts):
        for prerequisite in concept.builds_on:
            # Prerequisites come earlier in the course: the files explain them first.
            if prerequisite not in names[:position]:
                raise PackError(
                    f"{where}: {concept.name!r} builds on {prerequisite!r}, which the course "
                    "does not explain before it"
                )
    return Course(subject, files, concepts)


def parse(raw: dict[str, Any]) -> Language:
    code = raw["code"]
    where = f"data/{code}.json"
    talk = raw["conversation"]
    fields: dict[str, Any] = {
        key: _templates(talk, key, key, f"{where}.conversation")
        for key in Conversation.__dataclass_fields__
        if key not in ("anecdotes", "openings", "closings")
    }
    for part in ("openings", "closings"):
        pairs = talk["small_talk"][part]
        if not pairs:
            raise PackError(f"{where}.conversation.small_talk.{part}: empty")
        for pair in pairs:
            for side in ("student", "tutor"):
                _check_fields(pair[side], "small_talk", f"{where}.conversation.small_talk.{part}")
        fields[part] = tuple(SmallTalk(p["student"], p["tutor"]) for p in pairs)
    anecdotes = []
    for i, a in enumerate(talk["anecdotes"]):
        for part in ("question", "answer", "query"):
            _check_fields(a[part], f"anecdote.{part}", f"{where}.conversation.anecdotes[{i}]")
        anecdotes.append(Anecdote(a["question"], a["answer"], a["query"]))
    if not anecdotes:
        raise PackError(f"{where}: no anecdotes")
    queries = raw["queries"]
    months = _strings(raw["months"], f"{where}.months")
    if len(months) != MONTHS_PER_YEAR:
        raise PackError(f"{where}.months: {len(months)} names, expected {MONTHS_PER_YEAR}")
    return Language(
        code=code,
        time_zone=raw["time_zone"],
        months=months,
        list_and=raw["list_and"],
        courses={s: _course(s, c, f"{where}.courses.{s}") for s, c in raw["courses"].items()},
        conversation=Conversation(**fields, anecdotes=tuple(anecdotes)),
        queries=Queries(
            **{
                k: _templates(queries, f"queries.{k}", k, f"{where}.queries")
                for k in Queries.__dataclass_fields__
            }
        ),
    )


@functools.cache
def load(code: str) -> Language:
    path = DATA_DIR / f"{code}.json"
    language = parse(json.loads(path.read_text(encoding="utf-8")))
    if language.code != code:
        raise PackError(f"{path.name} declares code {language.code!r}")
    return language
