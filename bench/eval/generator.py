"""Deterministic, seeded student histories for the ablation benchmark (SPEC §9).

History `i` of seed `s` depends on `(s, i)` alone (its own `random.Random`), so a run on the first
N histories asks exactly what the full run asks of them. Each history is one student and one
subject in one language (languages in turn, then each language's subjects in turn), spread over
six to nine calendar months of 2025 in the student's time zone, with one to three quiet months
inside the span.

What a history holds, as a chat service would have sent it:
- two course files (Markdown): the first explains the course's first six concepts and arrives
  before the first session; the second explains the rest (re-explaining the sixth, so the map
  merges it) and arrives at the first session of the middle active month. The concepts go with
  them as caller-extracted concepts (name, summary, definition, builds_on, pages), as a chat
  service whose own model read the file would send them;
- sessions of a few minutes' conversation: each introduces the next concept of the course (or
  revisits earlier ones), the student asks, the tutor answers citing the file's page with its
  fingerprint; small talk; the student's habitual question asked again word for word;
- checks: the tutor asks, the student answers, the tutor says right or wrong (a conversation turn)
  and records the check. A few concepts are hard for this student (more often wrong). Most
  checks' topic is the concept's name; some are the student's spoken words ("ask me the
  questions"), with an evaluation that names the concept, or, less often, names nothing;
- taught notes ("Remember that ..."), at least one per history;
- the tutor's own narrations of earlier months ("In March we covered ..."), asked for by the
  student, at least one per history;
- one memorable exchange in the first active month (an analogy with words nothing else in the
  history uses), which the old-exact-match question asks for months later.

The probabilities below describe a plausible student; they were set before any run and are not
tuned to the benchmark's results.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bench.eval.history import (
    Check,
    Citation,
    CourseFile,
    Event,
    FileArrival,
    History,
    Month,
    Teaching,
    Turn,
)
from bench.eval.language import (
    LANGUAGES,
    Anecdote,
    Concept,
    Course,
    Language,
    SmallTalk,
    load,
)

DEFAULT_SEED = 20250
DEFAULT_HISTORIES = 45

# Histories start in the first session month of FIRST_START + 0..START_SPREAD_DAYS.
FIRST_START = date(2025, 1, 6)
START_SPREAD_DAYS = 56
# Calendar months from the first session's to the last's, and how many of the inner ones are quiet.
SPAN_MONTHS = (6, 9)
QUIET_MONTHS = (1, 3)
SESSIONS_PER_ACTIVE_MONTH = (2, 5)
# Session days are drawn from the first this-many days of a month (every month has them).
SESSION_DAYS = 28
# Sessions start at a whole hour in this range, local time.
SESSION_HOURS = (15, 19)
MINUTES_BETWEEN_MESSAGES = (1, 4)
# The course's first file explains its first FIRST_FILE_CONCEPTS concepts; the second file starts
# at SECOND_FILE_FROM (so one concept is explained by both).
FIRST_FILE_CONCEPTS = 6
SECOND_FILE_FROM = 5
# Minutes before its session that a file arrives.
FILE_LEAD_MINUTES = 30

NEW_CONCEPT_PROBABILITY = 0.7  # a session moves the course on to its next concept
REVIEW_PROBABILITY = 0.5  # a session revisits an earlier concept (always, when nothing is new)
QUESTIONS_PER_CONCEPT = (1, 2)
CHECK_PROBABILITY = 0.6  # per concept of a session
HARD_CONCEPTS = (2, 3)
WRONG_IF_HARD = 0.65
WRONG_IF_EASY = 0.2
SPOKEN_TOPIC_PROBABILITY = 0.25
UNNAMED_EVALUATION_PROBABILITY = 0.35  # of the checks with a spoken topic
PREDICTED_MASTERY = (0.3, 0.9)
SMALL_TALK_PROBABILITY = 0.3  # at a session's start, and again at its end
FAVOURITE_PROBABILITY = 0.3
TEACH_PROBABILITY = 0.08
RECAP_PROBABILITY = 0.2  # from the third active month on
NARRATED_CONCEPTS = 2  # most concepts one narration names
# The benchmark asks its questions the morning after the last session.
ASKED_AT = time(10, 0)


@dataclass
class _State:
    """What the generator tracks while it writes one history."""

    rng: random.Random
    history_id: str
    language: Language
    course: Course
    zone: ZoneInfo
    files: tuple[CourseFile, ...]
    hard: frozenset[str]
    events: list[Event] = field(default_factory=list)
    introduced: list[Concept] = field(default_factory=list)
    covered: dict[str, list[str]] = field(default_factory=dict)  # month key -> concept names
    file_of: dict[str, CourseFile] = field(default_factory=dict)  # concept -> its latest file
    anecdote_key: str = ""
    counter: int = 0

    def key(self) -> str:
        self.counter += 1
        return f"{self.history_id}/{self.counter:04d}"

    def pick(self, options: Sequence[str]) -> str:
        return options[self.rng.randrange(len(options))]


def course_files(course: Course, history_id: str) -> tuple[CourseFile, CourseFile]:
    first, second = course.files
    return (
        CourseFile(
            f"{history_id}-{course.subject}-1",
            first.title,
            first.intro,
            course.concepts[:FIRST_FILE_CONCEPTS],
        ),
        CourseFile(
            f"{history_id}-{course.subject}-2",
            second.title,
            second.intro,
            course.concepts[SECOND_FILE_FROM:],
        ),
    )


def assignment(index: int) -> tuple[Language, Course]:
    language = load(LANGUAGES[index % len(LANGUAGES)])
    subjects = sorted(language.courses)
    subject = subjects[(index // len(LANGUAGES)) % len(subjects)]
    return language, language.courses[subject]


def _month_starts(first: date, count: int) -> list[date]:
    out = []
    year, month = first.year, first.month
    for _ in range(count):
        out.append(date(year, month, 1))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def _months(starts: list[date], quiet: set[int], zone: ZoneInfo) -> tuple[Month, ...]:
    ends = [*starts[1:], _month_starts(starts[-1], 2)[1]]
    return tuple(
        Month(
            key=f"{s.year:04d}-{s.month:02d}",
            year=s.year,
            month=s.month,
            start=datetime.combine(s, time(), zone),
            end=datetime.combine(e, time(), zone),
            active=i not in quiet,
        )
        for i, (s, e) in enumerate(zip(starts, ends, strict=True))
    )


def _session_starts(state: _State, months: tuple[Month, ...]) -> list[datetime]:
    rng = state.rng
    starts = []
    for month in months:
        if not month.active:
            continue
        count = rng.randint(*SESSIONS_PER_ACTIVE_MONTH)
        for day in sorted(rng.sample(range(1, SESSION_DAYS + 1), count)):
            hour = rng.randint(*SESSION_HOURS)
            starts.append(datetime(month.year, month.month, day, hour, tzinfo=state.zone))
    return starts


class _Session:
    """One sitting: messages a few minutes apart, starting at `start`."""

    def __init__(self, state: _State, start: datetime) -> None:
        self.state = state
        self.clock = start
        self.month_key = f"{start.year:04d}-{start.month:02d}"

    def _tick(self) -> datetime:
        self.clock += timedelta(minutes=self.state.rng.randint(*MINUTES_BETWEEN_MESSAGES))
        return self.clock

    def say(
        self,
        text: str,
        *,
        student: bool,
        concept: Concept | None = None,
        cite: bool = False,
        narrates: str | None = None,
    ) -> Turn:
        citations: tuple[Citation, ...] = ()
        if cite and concept is not None:
            citations = (self.state.file_of[concept.name].cite(concept.name),)
        turn = Turn(
            key=self.state.key(),
            at=self._tick(),
            student=student,
            text=text,
            concepts=(concept.name,) if concept is not None else (),
            citations=citations,
            narrates=narrates,
        )
        self.state.events.append(turn)
        return turn

    def small_talk(self, options: Sequence[SmallTalk]) -> None:
        pair = options[self.state.rng.randrange(len(options))]
        self.say(pair.student, student=True)
        self.say(pair.tutor, student=False)

    def discuss(self, concept: Concept) -> None:
        state = self.state
        talk = state.language.conversation
        for _ in range(state.rng.randint(*QUESTIONS_PER_CONCEPT)):
            question = state.pick(talk.student_questions).format(ref=concept.ref)
            self.say(question, student=True, concept=concept)
            self.answer(concept, state.pick(talk.tutor_answers))
        state.covered.setdefault(self.month_key, [])
        if concept.name not in state.covered[self.month_key]:
            state.covered[self.month_key].append(concept.name)

    def answer(self, concept: Concept, template: str) -> None:
        text = template.format(
            ref=concept.ref, definition=concept.definition, summary=concept.summary
        )
        self.say(text, student=False, concept=concept, cite=True)

    def check(self, concept: Concept) -> None:
        state = self.state
        rng = state.rng
        talk = state.language.conversation
        others = [c for c in state.introduced if c.name != concept.name] or [
            c for c in state.course.concepts if c.name != concept.name
        ]
        other = others[rng.randrange(len(others))]
        wrong_rate = WRONG_IF_HARD if concept.name in state.hard else WRONG_IF_EASY
        right = rng.random() >= wrong_rate
        spoken = rng.random() < SPOKEN_TOPIC_PROBABILITY
        unnamed = spoken and rng.random() < UNNAMED_EVALUATION_PROBABILITY
        topic = state.pick(talk.spoken_topics) if spoken else concept.name
        if unnamed:
            evaluation = state.pick(
                talk.evaluations_unnamed_right if right else talk.evaluations_unnamed_wrong
            )
        else:
            evaluation = state.pick(talk.evaluations_right if right else talk.evaluations_wrong)
        evaluation = evaluation.format(ref=concept.ref, other_ref=other.ref)
        answer = state.pick(talk.check_answers_right if right else talk.check_answers_wrong)
        answer = answer.format(
            ref=concept.ref,
            other_ref=other.ref,
            definition=concept.definition,
            summary=concept.summary,
        )
        self.say(
            state.pick(talk.check_prompts).format(ref=concept.ref), student=False, concept=concept
        )
        self.say(answer, student=True)
        verdict = self.say(evaluation, student=False)
        state.events.append(
            Check(
                key=state.key(),
                at=verdict.at + timedelta(seconds=1),
                concept=concept.name,
                topic=topic,
                right=right,
                evaluation=evaluation,
                student_answer=answer,
                predicted_mastery=round(rng.uniform(*PREDICTED_MASTERY), 2),
                verdict_key=verdict.key,
            )
        )

    def teach(self, concept: Concept) -> None:
        state = self.state
        text = state.pick(state.language.conversation.teachings).format(ref=concept.ref)
        state.events.append(Teaching(state.key(), self._tick(), concept.name, text))

    def recap(self, month: Month) -> None:
        state = self.state
        talk = state.language.conversation
        name = state.language.month_name(month.month)
        self.say(state.pick(talk.recap_requests).format(month=name), student=True)
        covered = state.covered[month.key][:NARRATED_CONCEPTS]
        refs = state.language.join([state.course.concept(c).ref for c in covered])
        narration = state.pick(talk.narrations).format(month=name, refs=refs)
        self.say(narration, student=False, narrates=month.key)


def _chance(rng: random.Random, probability: float, count: int, forced: int) -> list[bool]:
    """`count` independent draws, with draw `forced` made true when none came out true."""
    out = [rng.random() < probability for _ in range(count)]
    if count and not any(out):
        out[forced] = True
    return out


@dataclass(frozen=True, slots=True)
class _Plan:
    """A history's calendar and the sessions that carry its one-off events."""

    months: tuple[Month, ...]
    starts: list[datetime]  # every session's start, in order
    second_file_at: int  # the session the second file arrives before
    anecdote_at: int  # the session of the memorable exchange
    anecdote: Anecdote
    favourite: tuple[str, str]  # the student's habitual question and the tutor's answer
    teach: list[bool]  # per session: the student teaches something
    recap: list[bool]  # per session: the student asks what an earlier month held

    @property
    def active(self) -> list[Month]:
        return [m for m in self.months if m.active]


def _plan(state: _State) -> _Plan:
    rng = state.rng
    talk = state.language.conversation
    first = FIRST_START + timedelta(days=rng.randint(0, START_SPREAD_DAYS))
    span = rng.randint(*SPAN_MONTHS)
    inner = list(range(1, span - 1))
    quiet = set(rng.sample(inner, min(len(inner), rng.randint(*QUIET_MONTHS))))
    months = _months(_month_starts(first, span), quiet, state.zone)
    active = [m for m in months if m.active]
    starts = _session_starts(state, months)

    def first_session_in(month: Month) -> int:
        return next(i for i, s in enumerate(starts) if month.holds(s))

    first_month = [i for i, s in enumerate(starts) if active[0].holds(s)]
    anecdote_at = first_month[rng.randrange(len(first_month))]
    anecdote = talk.anecdotes[rng.randrange(len(talk.anecdotes))]
    favourite = (state.pick(talk.student_questions), state.pick(talk.tutor_answers))
    # Recaps need an earlier month with sessions: from the third active month on.
    recap_from = first_session_in(active[min(2, len(active) - 1)])
    later = len(starts) - recap_from
    return _Plan(
        months=months,
        starts=starts,
        second_file_at=first_session_in(active[len(active) // 2]),
        anecdote_at=anecdote_at,
        anecdote=anecdote,
        favourite=favourite,
        teach=_chance(rng, TEACH_PROBABILITY, len(starts), len(starts) // 2),
        recap=[False] * recap_from + _chance(rng, RECAP_PROBABILITY, later, later - 1),
    )


def _write_session(state: _State, plan: _Plan, i: int) -> None:
    rng = state.rng
    course = state.course
    talk = state.language.conversation
    start = plan.starts[i]
    session = _Session(state, start)
    files = state.files
    for file in [files[0]] if i == 0 else [files[1]] if i == plan.second_file_at else []:
        at = start - timedelta(minutes=FILE_LEAD_MINUTES)
        state.events.append(FileArrival(state.key(), at, file))
        for concept in file.concepts:
            state.file_of[concept.name] = file
    if rng.random() < SMALL_TALK_PROBABILITY:
        session.small_talk(talk.openings)
    if plan.recap[i]:
        earlier = [m for m in plan.active if m.end <= start and m.key in state.covered]
        if earlier:
            session.recap(earlier[rng.randrange(len(earlier))])

    # The course moves on to its next concept (the first session always starts it), as far as
    # the files that have arrived explain; earlier concepts come back for review.
    focus: list[Concept] = []
    frontier = len(state.introduced)
    if frontier < len(state.file_of) and (frontier == 0 or rng.random() < NEW_CONCEPT_PROBABILITY):
        focus.append(course.concepts[frontier])
        state.introduced.append(course.concepts[frontier])
    earlier_concepts = [c for c in state.introduced if c not in focus]
    if earlier_concepts and (not focus or rng.random() < REVIEW_PROBABILITY):
        focus.append(earlier_concepts[rng.randrange(len(earlier_concepts))])
    for concept in focus:
        session.discuss(concept)

    if i == plan.anecdote_at:
        concept = focus[0]
        anecdote = plan.anecdote
        session.say(anecdote.question.format(ref=concept.ref), student=True, concept=concept)
        answer = anecdote.answer.format(ref=concept.ref)
        state.anecdote_key = session.say(answer, student=False, concept=concept).key
    if i > 0 and rng.random() < FAVOURITE_PROBABILITY:
        favourite = course.concepts[0]
        question, answer = plan.favourite
        session.say(question.format(ref=favourite.ref), student=True, concept=favourite)
        session.answer(favourite, answer)
    for concept in focus:
        if rng.random() < CHECK_PROBABILITY:
            session.check(concept)
    if plan.teach[i]:
        session.teach(focus[0])
    if rng.random() < SMALL_TALK_PROBABILITY:
        session.small_talk(talk.closings)


def generate(index: int, seed: int = DEFAULT_SEED) -> History:
    """History `index` (0-based) of `seed`: the same arguments always give the same history."""
    rng = random.Random(f"tutor-memory-eval:{seed}:{index}")
    language, course = assignment(index)
    history_id = f"student-{index + 1:02d}-{language.code}"
    zone = ZoneInfo(language.time_zone)
    hard = frozenset(c.name for c in rng.sample(course.concepts, rng.randint(*HARD_CONCEPTS)))
    files = course_files(course, history_id)
    state = _State(rng, history_id, language, course, zone, files, hard)
    plan = _plan(state)
    for i in range(len(plan.starts)):
        _write_session(state, plan, i)
    last = max(e.at for e in state.events)
    return History(
        index=index,
        student_id=history_id,
        subject_id=course.subject,
        language=language,
        course=course,
        files=files,
        events=tuple(sorted(state.events, key=lambda e: e.at)),
        months=plan.months,
        now=datetime.combine(last.date() + timedelta(days=1), ASKED_AT, zone),
        anecdote_key=state.anecdote_key,
        anecdote_query=plan.anecdote.query,
    )


def generate_all(count: int = DEFAULT_HISTORIES, seed: int = DEFAULT_SEED) -> list[History]:
    return [generate(i, seed) for i in range(count)]
