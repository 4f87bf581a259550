"""Record questions that no rule of `record_mode` recognises, recognised by example (issue 13).

Students ask about their record in more shapes than any trigger list holds: "am I improving?",
"Wo lieg ich denn immer daneben?", Italian and Portuguese questions with no pronoun ("sto
migliorando?", "fui bem?"). The query's embedding is computed once per turn anyway, so it is
compared with labelled example phrasings (`record_examples.json`: questions about the record, and
others that are not: subject questions, requests to explain, questions about other people's past),
written in every language for this decision and kept apart from the phrasing set that measures it
(no item of it, nor a near copy of one: see below).

The decision: a question or a request (the rule `record_mode` applies to periods), carrying no
exercise of its own and naming no one else without the student or the tutor in it, whose
embedding is closer to the record examples than to the others, by `MARGIN` in the mean cosine of
the `NEAREST` closest of each. Rules still come first: a trigger or a period with the student in
it decides without the embedding.

`NEAREST` and `MARGIN` were chosen on the examples alone, never on the phrasing set. No example may
be a near copy of a phrasing item (most of its words inside one item, or most of the two items'
words shared: tests/domain/recall/test_record_intent.py); the 35 that were are gone. Scored on the
remaining 249 examples, each against the others with itself and its closest example in every other
language (its likely translation) left out, 3 and 0.08 give precision 86.6 % and recall 68.9 %
(0.06: 84.8 / 73.0; 0.10: 86.4 / 62.3): the margin trades recall for precision, and BuildBlock
would rather miss a record question (EPISODES-like recall still answers it) than take a subject
question for one.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.recall.record_mode import (
    about_someone_else,
    asks,
    carries_exercise,
    is_record_question,
)

# How many of the closest examples of each label are averaged: one would let a single near
# example decide; more blur a label whose examples spread over several shapes.
NEAREST = 3
# How much closer (in mean cosine) to the record examples than to the others a question must be.
MARGIN = 0.08

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
    """Whether the examples may make `query` a record question when no rule did: it asks
    something, carries no exercise of its own and is not about someone else by name ("What
    exercises has John done?" sits near "what exercises have I done" in meaning). Only then does
    the caller need the query's embedding before it knows the mode."""
    return asks(query) and not carries_exercise(query) and not about_someone_else(query)
