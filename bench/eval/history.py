"""A generated student history: what happened, when, and what the generator knows about it.

A history is a list of events in the order they happened, each with a key unique in the history
(sent as the client key where the API takes one, and used to map the server's episode ids back
to events). The generator also keeps the ground truth the question set is built from: the concept
each check was about (which the server may not be able to tell), which tutor answers narrate an
earlier month, and which months were quiet.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from bench.eval.language import Concept, Course, Language


@dataclass(frozen=True, slots=True)
class Citation:
    file_id: str
    page: int
    fingerprint: str


@dataclass(frozen=True, slots=True)
class CourseFile:
    """A Markdown course file: `# title`, an intro, then one `##` section per concept, so that
    the server reads page 1 as the title and intro and page k + 1 as the k-th concept."""

    file_id: str
    title: str
    intro: str
    concepts: tuple[Concept, ...]

    @property
    def filename(self) -> str:
        return f"{self.file_id}.md"

    @property
    def text(self) -> str:
        parts = [f"# {self.title}", self.intro]
        for concept in self.concepts:
            parts += [f"## {concept.name}", f"{concept.definition} {concept.summary}"]
        return "\n\n".join(parts) + "\n"

    @property
    def content(self) -> bytes:
        return self.text.encode("utf-8")

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    def page_of(self, name: str) -> int:
        for position, concept in enumerate(self.concepts):
            if concept.name == name:
                return position + 2
        raise KeyError(name)

    def cite(self, name: str) -> Citation:
        return Citation(self.file_id, self.page_of(name), self.fingerprint)


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation message, sent through IngestEpisodes: the student's (a question episode)
    or the tutor's (an answer episode)."""

    key: str
    at: datetime
    student: bool
    text: str
    concepts: tuple[str, ...] = ()
    citations: tuple[Citation, ...] = ()
    # The month ("YYYY-MM") a tutor answer narrates ("In March we covered ..."), when it does.
    narrates: str | None = None


@dataclass(frozen=True, slots=True)
class FileArrival:
    key: str
    at: datetime
    file: CourseFile


@dataclass(frozen=True, slots=True)
class Check:
    """A check of the student's understanding, sent through RecordCheck. `concept` is what the
    generator knows it was about; `topic` is what the tutor recorded (the concept's name, or a
    spoken expression of the student's)."""

    key: str
    at: datetime
    concept: str
    topic: str
    right: bool
    evaluation: str
    student_answer: str
    predicted_mastery: float
    # The tutor's turn that told the student the outcome (the conversation is the record).
    verdict_key: str


@dataclass(frozen=True, slots=True)
class Teaching:
    """The student teaches the tutor something ("Remember that ..."), sent through Teach."""

    key: str
    at: datetime
    concept: str
    text: str


Event = Turn | FileArrival | Check | Teaching


@dataclass(frozen=True, slots=True)
class Month:
    """A calendar month of the history's span, in the student's time zone."""

    key: str  # "YYYY-MM"
    year: int
    month: int
    start: datetime  # aware, in the student's zone
    end: datetime  # exclusive
    active: bool

    def holds(self, at: datetime) -> bool:
        return self.start <= at < self.end


@dataclass(frozen=True, slots=True)
class History:
    index: int
    student_id: str
    subject_id: str
    language: Language
    course: Course
    files: tuple[CourseFile, ...]
    events: tuple[Event, ...]  # in the order they happened
    months: tuple[Month, ...]  # every month from the first event's to the last's
    now: datetime  # when the benchmark's questions are asked
    anecdote_key: str  # the old tutor answer the old-exact-match question asks for
    anecdote_query: str

    @property
    def time_zone(self) -> str:
        return self.language.time_zone

    def month_of(self, at: datetime) -> Month | None:
        return next((m for m in self.months if m.holds(at)), None)

    @property
    def checks(self) -> list[Check]:
        return [e for e in self.events if isinstance(e, Check)]

    @property
    def narrations(self) -> list[Turn]:
        return [e for e in self.events if isinstance(e, Turn) and e.narrates is not None]
