"""Sentences of a text: the one sentence scanner of the server, linear in the length of the text.

What can end a sentence:
- a run of sentence-end marks (`SENTENCE_END_MARKS`: . ! ? … and the Arabic question mark, the
  Arabic full stop, the ideographic full stop, the full-width ! and ?), with the closing quotes and
  brackets that follow it (`CLOSING_MARKS`), when white space or the end of the text comes next.
  A mark inside a word or a number ("3.5", "e.g.x") therefore never ends a sentence;
- with `SentenceRule.semicolons`, a run that holds ; or the Arabic semicolon, likewise;
- with `SentenceRule.line_breaks`, every line break, whatever comes before it (list items,
  headings, one message per line).

A run that starts with a full stop may still not end the sentence, by `SentenceRule.abbreviations`:
- `Abbreviations.SHAPE`: the word before it is a single letter or a letter, a dot and a letter
  ("A. thaliana", "e.g. osmosis", "(p. 3)"), standing after white space, an opening bracket or the
  start of the text. Needs no lexicon, so it suits course files in any language.
- `Abbreviations.LISTED`: the run is made of dots and ellipses only and the next word starts with
  a lower-case letter ("approx. ten minutes", "details... then"), or it is a single dot after an
  abbreviation of a language file (`abbreviations`: "Dr. Rossi", "p. 12", "z.B. das").
- `Abbreviations.NONE`: every run ends a sentence.

Callers pick one of the rules below, so that each kind of text is cut the same way everywhere.

Cost. The scanner looks for candidates with patterns made only of greedy runs of character classes
with nothing after them that could fail (`[marks]+[closing]*`, a line break), so the regular
expression engine never backtracks: each attempt fails on its first character or takes its run.
Deciding a candidate looks at a fixed number of characters around it, at the white space after it
(which belongs to no other candidate) and, for a listed abbreviation, at the word before it (which
lies between this candidate and the previous one). Every character is therefore looked at a fixed
number of times, whatever the text.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tutor_memory.domain import lang
from tutor_memory.domain.text.normalise import normalise

# Marks that end a sentence: Latin . ! ?, the ellipsis, the Arabic question mark and full stop, the
# ideographic full stop, the full-width exclamation and question marks.
SENTENCE_END_MARKS = ".!?\u2026\u061f\u06d4\u3002\uff01\uff1f"

# Marks that make a sentence a question, in the scripts students write in: Latin, the Spanish
# inverted mark that opens one, Arabic, full-width.
QUESTION_MARKS = frozenset("?\u00bf\u061f\uff1f")
INVERTED_QUESTION_MARK = "\u00bf"

# Latin and Arabic semicolons: they end a sentence only for rules with `semicolons`.
SEMICOLONS = ";\u061b"

# Closing quotes and brackets that belong to the sentence they follow: straight and curly quotes,
# the closing guillemet, round and square brackets.
CLOSING_MARKS = "\"')]\u201d\u2019\u00bb"

# Punctuation that a phrase, a name or a note may end with and that callers strip from it: the
# sentence-end marks of Latin script, clause punctuation, and their Arabic and full-width forms.
TERMINAL_PUNCTUATION = ".!?;:,\u061f\u061b\u060c\u2026\uff01\uff1f"

# The marks after which a sentence may go on under `Abbreviations.LISTED`: dots and the ellipsis.
_SOFT_MARKS = frozenset(".\u2026")

# Opening brackets and quotes, taken off the word before a dot before it is looked up among the
# listed abbreviations: "(e.g." is "e.g".
_OPENERS = "([{\"'\u201c\u2018\u00ab"

_LINE_BREAK = "\n"


class Abbreviations(enum.Enum):
    """When a full stop is not the end of a sentence (see the module docstring)."""

    NONE = "none"
    SHAPE = "shape"
    LISTED = "listed"


@dataclass(frozen=True, slots=True)
class SentenceRule:
    """Which candidate ends end a sentence (see the module docstring)."""

    line_breaks: bool = True
    semicolons: bool = False
    abbreviations: Abbreviations = Abbreviations.SHAPE


# Course files and messages (the concept map, teaching detection): a line break ends a sentence,
# an abbreviation is recognised by its shape.
PROSE = SentenceRule()

# A tutor's answer, traced sentence by sentence to its sources (grounding): abbreviations of the
# language files and a following lower-case word keep a sentence going.
ANSWER = SentenceRule(abbreviations=Abbreviations.LISTED)

# Clauses of a recap (narration): a semicolon separates two statements as a full stop does.
CLAUSES = SentenceRule(semicolons=True, abbreviations=Abbreviations.NONE)

# Text cut into pieces that must fit a size (pages, passages): line breaks are the paragraph
# splitter's business, and an early cut at an abbreviation costs nothing.
LINES_JOINED = SentenceRule(line_breaks=False, abbreviations=Abbreviations.NONE)

_SPACES = re.compile(r"\s*")
_NEXT_VISIBLE = re.compile(r"\s*(\S)")


@functools.cache
def _candidates(line_breaks: bool, semicolons: bool) -> re.Pattern[str]:
    marks = SENTENCE_END_MARKS + (SEMICOLONS if semicolons else "")
    pattern = f"([{re.escape(marks)}]+)[{re.escape(CLOSING_MARKS)}]*"
    return re.compile(pattern + ("|\n" if line_breaks else ""))


@functools.cache
def listed_abbreviations() -> frozenset[str]:
    """The `abbreviations` of every language file, normalised (inner dots kept: "e.g")."""
    return frozenset(normalise(a) for data in lang.all_languages() for a in data.abbreviations)


def _is_letter(char: str) -> bool:
    # A letter as regular expressions see one ([^\W\d_]): alphanumeric but not a decimal digit.
    return char.isalnum() and not char.isdecimal()


def _word_starts(text: str, start: int, index: int) -> bool:
    """Whether a word starts at `index` of the sentence that begins at `start`: at the start of
    the text, or after white space or an opening bracket inside the sentence."""
    return index == 0 or (index > start and (text[index - 1].isspace() or text[index - 1] == "("))


def _shaped_abbreviation(text: str, start: int, dot: int) -> bool:
    """Whether the word before the dot at `dot` is a single letter or letter-dot-letter."""
    if dot - 1 >= start and _is_letter(text[dot - 1]) and _word_starts(text, start, dot - 1):
        return True
    return (
        dot - 3 >= start
        and _is_letter(text[dot - 3])
        and text[dot - 2] == "."
        and _is_letter(text[dot - 1])
        and _word_starts(text, start, dot - 3)
    )


def _word_before(text: str, start: int, index: int) -> str:
    """The last white-space-separated word of text[start:index] ("" when there is none)."""
    end = index
    while end > start and text[end - 1].isspace():
        end -= 1
    begin = end
    while begin > start and not text[begin - 1].isspace():
        begin -= 1
    return text[begin:end]


def _listed_abbreviation(text: str, start: int, first: int, marks: str, after: int) -> bool:
    """Whether the soft marks `marks` at `first` (closing quotes end at `after`) leave the sentence
    that began at `start` going (`Abbreviations.LISTED`)."""
    if not set(marks) <= _SOFT_MARKS:
        return False
    following = _NEXT_VISIBLE.match(text, after)
    if following is not None and following.group(1).islower():
        return True
    if marks != ".":
        return False
    word = _word_before(text, start, first)
    return normalise(word.lstrip(_OPENERS)) in listed_abbreviations()


def sentence_ends(text: str, rule: SentenceRule = PROSE) -> Iterator[tuple[int, int]]:
    """(end, resume) for each sentence end of `text`, in order: the sentence ends at `end` (its
    marks and closing quotes included, a line break excluded) and the next one starts at
    `resume`, after the white space that follows."""
    pattern = _candidates(rule.line_breaks, rule.semicolons)
    sentence_start = pos = 0
    length = len(text)
    while (match := pattern.search(text, pos)) is not None:
        first, after = match.span()
        if text[first] == _LINE_BREAK:
            yield first, after
            sentence_start = pos = after
            continue
        pos = after
        if after < length and not text[after].isspace():
            continue  # inside a word or a number: "3.5", "e.g.x"
        marks = match.group(1)
        if (
            rule.abbreviations is Abbreviations.SHAPE
            and marks[0] == "."
            and _shaped_abbreviation(text, sentence_start, first)
        ):
            continue
        if rule.abbreviations is Abbreviations.LISTED and _listed_abbreviation(
            text, sentence_start, first, marks, after
        ):
            continue
        spaces = _SPACES.match(text, after)
        resume = spaces.end() if spaces is not None else after  # \s* always matches
        yield after, resume
        sentence_start = pos = resume


def sentence_spans(text: str, rule: SentenceRule = PROSE) -> list[tuple[int, int]]:
    """(start, end) of each non-blank sentence of `text`, white space around it excluded."""
    spans: list[tuple[int, int]] = []
    start = 0
    for end, resume in sentence_ends(text, rule):
        _add_span(spans, text, start, end)
        start = resume
    _add_span(spans, text, start, len(text))
    return spans


def _add_span(spans: list[tuple[int, int]], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        first = start + len(piece) - len(piece.lstrip())
        spans.append((first, first + len(stripped)))


def split_sentences(text: str, rule: SentenceRule = PROSE) -> list[str]:
    """The non-blank sentences of `text`, stripped, in order."""
    return [text[start:end] for start, end in sentence_spans(text, rule)]


def sentence_pieces(text: str, rule: SentenceRule = LINES_JOINED) -> list[str]:
    """`text` cut after each sentence end and the white space after it; the pieces concatenate
    back to `text` (none is empty)."""
    pieces: list[str] = []
    start = 0
    for _, resume in sentence_ends(text, rule):
        if start < resume < len(text):
            pieces.append(text[start:resume])
            start = resume
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def ends_with_sentence_end(text: str) -> bool:
    """Whether `text` ends with sentence-end marks, closing quotes or brackets aside."""
    bare = text.rstrip(CLOSING_MARKS)
    return bool(bare) and bare[-1] in SENTENCE_END_MARKS
