"""Record questions that no rule of `record_mode` recognises, recognised by example (issue 13).

Students ask about their record in more shapes than any trigger list holds: "am I improving?",
"Wo lieg ich denn immer daneben?", Italian and Portuguese questions with no pronoun ("sto
migliorando?", "fui bem?"). The query's embedding is computed once per turn anyway, so it is
compared with labelled example phrasings (`record_examples.json`: questions about the record, and
others that are not: subject questions, requests to explain, questions about other people's past),
written in every language for this decision and kept apart from the phrasing set that measures it
(no item of it, nor a near copy of one: see below).

The decision: a message carrying no exercise of its own, naming no one else without the student
or the tutor in it, and either asking something or teaching nothing, whose embedding is closer to
the record examples than to the others, by `MARGIN` in the mean cosine of the `NEAREST` closest of
each. A question mark is not required: students leave it out ("list the stuff i got wrong pls",
"che esercizi ho sbagliato tre giorni fa"); a message that tells the tutor something to keep
("remember that my exams are multiple choice") is about the student too, and never a record
question. Rules still come first: a trigger or a period with the student in it decides without
the embedding.

`NEAREST` and `MARGIN` were chosen on the examples alone, never on the phrasing sets. No example
may be a near copy of a phrasing item (most of its words inside one item, or most of the two
items' words shared: tests/domain/recall/test_record_intent.py); the 35 that were are gone. Each
example is scored against the others with itself and its closest example in every other language
(its likely translation) left out. On the first 249 examples 3 and 0.08 gave precision 86.6 % and
recall 68.9 % (0.06: 84.8 / 73.0; 0.10: 86.4 / 62.3). The 77 added since (requests for a list of
mistakes, marks on a named test, results since a date, unfinished exercises, "didn't you already
show me X"; and among the others greetings, plans for the coming days, how the student feels) give
on all 326: 0.06 81.0 / 75.6, 0.08 81.8 / 68.3, 0.10 85.0 / 55.5 (looked at again because, with
them, the second phrasing set's development half lost recall at 0.08). The margin trades recall for
precision, and BuildBlock would rather miss a record question (EPISODES-like recall still answers
it) than take a subject question for one; 0.06 buys 7.3 points of recall for 0.8 of precision.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.conceptmap.teaching import detect_teaching
from tutor_memory.domain.recall.asking import asks
from tutor_memory.domain.recall.record_mode import (
    about_someone_else,
    carries_exercise,
    is_record_question,
)

# How many of the closest examples of each label are averaged: one would let a single near
# example decide; more blur a label whose examples spread over several shapes.
NEAREST = 3
# How much closer (in mean cosine) to the record examples than to the others a question must be
# (chosen on the examples alone: see the module docstring).
MARGIN = 0.06

_EXAMPLES_FILE = "record_examples.json"


@dataclass(frozen=True, slots=True)
class ExampleTexts:
    """The example phrasings of both labels, every language together."""

    record: tuple[str, ...]
    other: tuple[str, ...]


@functools.cache
def example_texts() -> ExampleTexts:
    raw = json.loads(
        resources.files(__package__).joinpath(_EXAMPLES_FILE).read_text(encoding="utf-8")
    )
    languages = [v for k, v in raw.items() if k != "about"]
    return ExampleTexts(
        tuple(t for v in languages for t in v["record"]),
        tuple(t for v in languages for t in v["other"]),
    )


@dataclass(frozen=True, slots=True)
class RecordExamples:
    """The examples' unit vectors, by the model that embeds the queries (rows of each label)."""

    record: npt.NDArray[np.float32]
    other: npt.NDArray[np.float32]

    def closer_to_record(self, vector: npt.NDArray[np.float32]) -> bool:
        """Whether `vector` (unit length) sits closer to the record examples than to the others
        by `MARGIN`."""

        def nearest(rows: npt.NDArray[np.float32]) -> float:
            sims = rows @ vector
            k = min(NEAREST, len(sims))
            return float(np.partition(sims, len(sims) - k)[-k:].mean()) if k else -1.0

        return nearest(self.record) - nearest(self.other) > MARGIN


def is_record_intent(
    query: str, vector: npt.NDArray[np.float32] | None, examples: RecordExamples | None
) -> bool:
    """A record question by the rules of `record_mode`, or a question or request whose embedding
    is closer to the record examples (see the module docstring)."""
    if is_record_question(query):
        return True
    if vector is None or examples is None or not open_to_examples(query):
        return False
    return examples.closer_to_record(vector)


def open_to_examples(query: str) -> bool:
    """Whether the examples may make `query` a record question when no rule did: it carries no
    exercise of its own, is not about someone else by name ("What exercises has John done?" sits
    near "what exercises have I done" in meaning), and asks something or teaches nothing. Only
    then does the caller need the query's embedding before it knows the mode."""
    return (
        not carries_exercise(query)
        and not about_someone_else(query)
        and (asks(query) or detect_teaching(query) is None)
    )
