"""Precision and recall of one yes/no decision, and when a predicted topic counts as right."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Topic words this short are mostly articles and prepositions ("the", "des", "der", "di"), which
# would make any two topics match; a label with no longer word keeps all its words ("DNA").
MIN_TOPIC_WORD = 4
_WORD = re.compile(r"\w+")
# Arabic writes its article glued to the word ("الكسور", the fractions), where the labels leave
# it out as they do every language's leading article ("كسور"); a word longer than the article
# alone is compared without it. Written here for the scorer, not taken from the server's
# language files, so that the server's own folding grades nothing.
_ARABIC_ARTICLE = "ال"


@dataclass(frozen=True, slots=True)
class Outcome:
    """One item under one decision: the hand label, the detector's answer, and whether what the
    detector produced with a yes was right (only topics can be a wrong yes)."""

    text: str
    expected: bool
    predicted: bool
    right: bool = True

    @property
    def true_positive(self) -> bool:
        return self.expected and self.predicted and self.right

    @property
    def false_positive(self) -> bool:
        # A wrong topic is both a yes that should not have been given and a missed right one.
        return self.predicted and not (self.expected and self.right)

    @property
    def false_negative(self) -> bool:
        return self.expected and not (self.predicted and self.right)


@dataclass(frozen=True, slots=True)
class Counts:
    true_positives: int
    false_positives: int
    false_negatives: int
    items: int

    @classmethod
    def of(cls, outcomes: list[Outcome]) -> Counts:
        return cls(
            sum(o.true_positive for o in outcomes),
            sum(o.false_positive for o in outcomes),
            sum(o.false_negative for o in outcomes),
            len(outcomes),
        )

    @property
    def precision(self) -> float | None:
        """None when the detector said yes to nothing."""
        said_yes = self.true_positives + self.false_positives
        return self.true_positives / said_yes if said_yes else None

    @property
    def recall(self) -> float | None:
        """None when no item is labelled yes."""
        labelled_yes = self.true_positives + self.false_negatives
        return self.true_positives / labelled_yes if labelled_yes else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0:
            return None
        return 2 * p * r / (p + r)


def _folded_words(text: str) -> set[str]:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return set(_WORD.findall(plain))


def _without_article(word: str) -> str:
    glued = word.startswith(_ARABIC_ARTICLE) and len(word) > len(_ARABIC_ARTICLE) + 1
    return word[len(_ARABIC_ARTICLE) :] if glued else word


def topic_matches(predicted: str, labelled: str) -> bool:
    """The predicted topic shares a word with the labelled one (case and accents folded; only
    words of MIN_TOPIC_WORD letters or more when the label has any)."""
    label_words = _folded_words(labelled)
    # Long as written: "الدم" (the blood) counts, though "دم" alone would not.
    long_words = {w for w in label_words if len(w) >= MIN_TOPIC_WORD}
    wanted = {_without_article(w) for w in long_words or label_words}
    return bool(wanted & {_without_article(w) for w in _folded_words(predicted)})
