"""Graders: id and string comparisons over what one version showed for one question. They were
written, with the rules below, before any version was run (pre-registered), and they are the
same for every version.

What a version shows (`Shown`): its BuildBlock reply (the block's text, its structured sections,
its memories with every episode id each stands for, the no-record flag) and the file passages
that every version gets alike (SearchPassages with the question: a chat service's prompt always
carries its file passages; for NONE they are all the prompt has).

Terms:
- a name is *named* when it occurs in the block's text or in a passage as whole words (not inside
  a longer word), ignoring case, after Unicode NFC normalisation;
- the *shown ids* are every episode id in the reply: each memory's id, the ids of the identical
  episodes it stands for (a collapsed memory stands for all its repeats), and each section's ids.

Rules, by category:
1. What did I get wrong: passes when, for every concept whose latest check was wrong, a shown id
   is one of its wrong checks or one of the tutor's turns that told the student so (the
   conversation is the record), or the belief section has a line about that concept that says
   "struggles with". A check whose topic was the student's spoken words counts like any other:
   the generator knows what it was about.
2. What should I review before X: passes when every direct prerequisite of X (the course's
   builds_on) is named.
3. Explain X: passes when X's definition sentence occurs in the block's text or in a passage,
   ignoring case, with runs of white space folded.
4. What did we cover in <active month>: passes when at least min(3, n) memories each stand for
   an episode of that month other than the tutor's narrations (n: how many such episodes the
   month has; a collapsed memory counts once).
5. What did we cover in <empty month>: passes when the reply's no_record is set, no memory stands
   for an episode of that month (by id, or by the memory's own occurred_at) and no memory is a
   tutor narration.
6. Old exact match: passes when the old tutor answer's id is among the shown ids.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bench.eval.questions import Category, Question
from tutor_memory.domain.beliefs.rules import Claim
from tutor_memory.domain.recall.sections import BELIEFS_TITLE
from tutor_memory_client._proto import memory_pb2 as pb


@dataclass(frozen=True, slots=True)
class Memory:
    ids: frozenset[int]  # its own id and those of the identical episodes it stands for
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class Shown:
    """Everything one version put in front of the tutor for one question."""

    text: str
    passages: tuple[str, ...]
    memories: tuple[Memory, ...]
    section_ids: frozenset[int]
    beliefs: tuple[tuple[str, str], ...]  # (concept, line) of the belief section
    no_record: bool

    @property
    def ids(self) -> frozenset[int]:
        return self.section_ids.union(*(m.ids for m in self.memories))

    @classmethod
    def of(cls, reply: pb.BuildBlockReply, passages: Sequence[str]) -> Shown:
        memories = tuple(
            Memory(
                frozenset((m.episode_id, *m.repeated_ids)),
                m.occurred_at.ToDatetime(tzinfo=UTC),
            )
            for m in reply.memories
        )
        beliefs: list[tuple[str, str]] = []
        for section in reply.sections:
            if section.title == BELIEFS_TITLE:
                beliefs += zip(section.concepts, section.lines, strict=False)
        return cls(
            text=reply.text,
            passages=tuple(passages),
            memories=memories,
            section_ids=frozenset(i for s in reply.sections for i in s.episode_ids),
            beliefs=tuple(beliefs),
            no_record=reply.no_record,
        )


@dataclass(frozen=True, slots=True)
class Grade:
    passed: bool
    # Why it failed (what was missing or wrong), "" when it passed.
    reason: str = ""


PASS = Grade(True)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def named(name: str, shown: Shown) -> bool:
    pattern = re.compile(rf"(?<!\w){re.escape(_fold(name))}(?!\w)")
    return any(pattern.search(_fold(t)) for t in (shown.text, *shown.passages))


def _ids(keys: Sequence[str], ids: Mapping[str, int]) -> set[int]:
    return {ids[k] for k in keys}


def _struggles_with(concept: str, shown: Shown) -> bool:
    want = _fold(concept)
    return any(_fold(c) == want and Claim.STRUGGLES_WITH.value in line for c, line in shown.beliefs)


def grade_wrong(q: Question, shown: Shown, ids: Mapping[str, int]) -> Grade:
    seen = shown.ids
    missing = [
        w.name
        for w in q.expected.wrong
        if not (_ids(w.keys, ids) & seen or _struggles_with(w.name, shown))
    ]
    return Grade(False, f"not named as got wrong: {', '.join(missing)}") if missing else PASS


def grade_review(q: Question, shown: Shown, ids: Mapping[str, int]) -> Grade:
    missing = [n for n in q.expected.names if not named(n, shown)]
    return Grade(False, f"prerequisites not named: {', '.join(missing)}") if missing else PASS


def grade_explain(q: Question, shown: Shown, ids: Mapping[str, int]) -> Grade:
    definition = _fold(q.expected.definition)
    if any(definition in _fold(t) for t in (shown.text, *shown.passages)):
        return PASS
    return Grade(False, "definition not in the block or the passages")


def grade_active_month(q: Question, shown: Shown, ids: Mapping[str, int]) -> Grade:
    month_ids = _ids(q.expected.keys, ids)
    count = sum(1 for m in shown.memories if m.ids & month_ids)
    if count >= q.expected.min_shown:
        return PASS
    return Grade(False, f"{count} of the month's memories shown, {q.expected.min_shown} needed")


def grade_empty_month(q: Question, shown: Shown, ids: Mapping[str, int]) -> Grade:
    month = q.expected.month
    assert month is not None
    problems = []
    if not shown.no_record:
        problems.append("no_record not set")
    month_ids = _ids(q.expected.keys, ids)
    narrations = _ids(q.expected.narration_keys, ids)
    for memory in shown.memories:
        if memory.ids & month_ids or month.holds(memory.occurred_at):
            problems.append(f"memory {min(memory.ids)} is of that month")
        if memory.ids & narrations:
            problems.append(f"memory {min(memory.ids)} is a tutor narration")
    return Grade(False, "; ".join(problems)) if problems else PASS


def grade_old_match(q: Question, shown: Shown, ids: Mapping[str, int]) -> Grade:
    if _ids(q.expected.keys, ids) & shown.ids:
        return PASS
    return Grade(False, "the old answer is not shown")


GRADERS = {
    Category.WRONG: grade_wrong,
    Category.REVIEW: grade_review,
    Category.EXPLAIN: grade_explain,
    Category.ACTIVE_MONTH: grade_active_month,
    Category.EMPTY_MONTH: grade_empty_month,
    Category.OLD_MATCH: grade_old_match,
}


def grade(q: Question, shown: Shown, ids: Mapping[str, int]) -> Grade:
    """Grades one version's reply to `q`; `ids` maps the history's event keys to episode ids."""
    return GRADERS[q.category](q, shown, ids)


def expected_ids(q: Question, ids: Mapping[str, int]) -> list[int]:
    """The episode ids a question's grader looks for (for printing a failure)."""
    keys = [k for w in q.expected.wrong for k in w.keys] + list(q.expected.keys)
    keys += list(q.expected.narration_keys)
    return sorted(ids[k] for k in keys if k in ids)
