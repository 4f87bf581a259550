"""The concept-name validator (SPEC R3.2): a section heading is the file's furniture, not an idea.

`rejection_reason` says why a proposed name is not a concept name, or returns None. It applies to
the built-in extractor's names and to names a caller's own model sends. What it rejects:

- empty names, and names with no letters ("---", or "3.1": a section number);
- section numbers: a label of any language followed by a number ("Chapter 3", "Section 2.1",
  "Unit 4: Cells", "Parte II", "Appendix A", "الفصل الثالث");
- furniture headings of any language ("Introduction", "Common mistakes", "Esercizi", "Resumen",
  "Übungen", "ملخص"), compared by canonical key (so "The Summary", "EXERCISE" and "المقدمة" count),
  with numbering before or after ignored ("1. Introduction", "Exercises 3.2"), and headings that
  open with one and name their topic ("Introduction to cells", "Esercizi sulla cellula");
- questions ("What is osmosis?") and anything longer than `MAX_NAME_WORDS` words (a sentence).

A label alone ("Unit", "Module") is accepted: both are concepts in some subjects. `clean_name` turns
a heading into the name it carries ("2.1 Osmosis" -> "Osmosis", "Unit 4: Cells" -> "Cells").
"""

from __future__ import annotations

import functools
import re

from tutor_memory.domain import lang
from tutor_memory.domain.conceptmap.canonical import (
    canonical_key,
    fold_word,
    key_tokens,
    name_words,
)
from tutor_memory.domain.conceptmap.markup import strip_markup
from tutor_memory.domain.text.sentences import INVERTED_QUESTION_MARK, QUESTION_MARKS
from tutor_memory.domain.text.spans import Token

# A concept name is a name: longer than this, it is a sentence.
MAX_NAME_WORDS = 6

EMPTY = "empty"
NO_LETTERS = "no letters"
SECTION_NUMBER = "a chapter/section number"
SECTION_HEADING = "a section heading, not a concept"
QUESTION = "a question, not a name"
TOO_LONG = f"longer than {MAX_NAME_WORDS} words: a sentence, not a name"


# Numbering in front of a heading: "1.", "2.1", "2.1.3", "II.", "a)", "3)", and bare digits when an
# upper-case word follows ("3 Osmosis"; "5 kingdoms" is a name).
_LEADING_NUMBERING = re.compile(
    r"^(?:\d+(?:\.\d+)+\.?|\d+[.):]|(?i:[ivxlcdm]+[.):]|[a-z][.)])|\d+(?=\s+[A-Z]))(?:\s+|$)"
)
_ROMAN = re.compile(
    r"^(?=[ivxlcdm]+$)m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})$"
)
_NUMBER = re.compile(r"^\d+[a-z]?$")
_EDGE_PUNCTUATION = " \t:.;,-\u2013\u2014*#|\u2022"
_LEADING_BULLETS = " \t-*+#|\u2022"


@functools.cache
def _heading_keys() -> frozenset[str]:
    return frozenset(canonical_key(h) for d in lang.all_languages() for h in d.section_headings)


@functools.cache
def _openers() -> dict[str, frozenset[tuple[str, ...]]]:
    """Heading openers as canonical word sequences, by first word."""
    by_first: dict[str, set[tuple[str, ...]]] = {}
    for data in lang.all_languages():
        for opener in data.section_heading_openers:
            words = name_words(opener)
            by_first.setdefault(words[0], set()).add(words)
    return {first: frozenset(openers) for first, openers in by_first.items()}


@functools.cache
def _labels() -> frozenset[str]:
    return frozenset(
        fold_word(t.norm)
        for d in lang.all_languages()
        for w in d.section_labels
        for t in key_tokens(w)
    )


@functools.cache
def _number_words() -> frozenset[str]:
    return frozenset(
        fold_word(t.norm)
        for d in lang.all_languages()
        for w in d.number_words
        for t in key_tokens(w)
    )


def _is_numbering(word: str) -> bool:
    """Whether a normalised word can number a section: 3, 4b, IV, A, "three", الثالث."""
    return bool(
        _NUMBER.match(word)
        or _ROMAN.match(word)
        or (len(word) == 1 and word.isalpha())
        or fold_word(word) in _number_words()
    )


def _label_end(tokens: list[Token]) -> int:
    """How many leading tokens are a section label and its number ("Chapter 3"); 0 if none."""
    if len(tokens) < 2 or fold_word(tokens[0].norm) not in _labels():
        return 0
    end = 1
    while end < len(tokens) and _is_numbering(tokens[end].norm):
        end += 1
    return end if end > 1 else 0


def _without_numbering(text: str) -> str:
    """`text` without list bullets and section numbering in front, nor punctuation around it."""
    text = _LEADING_NUMBERING.sub("", text.lstrip(_LEADING_BULLETS).rstrip(), count=1)
    return text.strip(_EDGE_PUNCTUATION)


def _is_question(text: str) -> bool:
    return text[-1:] in QUESTION_MARKS or text.startswith(INVERTED_QUESTION_MARK)


def clean_name(name: str) -> str:
    """The name a heading carries: markup, numbering and a "Chapter 3:" label removed."""
    text = _without_numbering(strip_markup(name))
    tokens = key_tokens(text)
    end = _label_end(tokens)
    if end:
        text = text[tokens[end - 1].end :] if end < len(tokens) else ""
    return text.strip(_EDGE_PUNCTUATION)


def rejection_reason(name: str) -> str | None:
    """Why `name` is not a concept name (see the module docstring), or None if it may be one."""
    plain = strip_markup(name)
    if not plain:
        return EMPTY
    if not any(c.isalpha() for c in plain):
        return SECTION_NUMBER if any(c.isdigit() for c in plain) else NO_LETTERS
    if _is_question(plain):
        return QUESTION
    core = _without_numbering(plain)
    if not any(c.isalpha() for c in core):
        return SECTION_NUMBER
    tokens = key_tokens(core)
    if len(tokens) > MAX_NAME_WORDS:
        return TOO_LONG
    if _label_end(tokens):
        return SECTION_NUMBER
    words = name_words(core)
    trimmed = list(words)
    while len(trimmed) > 1 and _NUMBER.match(trimmed[-1]):
        trimmed.pop()  # "Exercises 3.2"
    headings = _heading_keys()
    if " ".join(words) in headings or " ".join(trimmed) in headings:
        return SECTION_HEADING
    openers = _openers().get(words[0], frozenset()) if words else frozenset()
    if any(len(words) > len(o) and words[: len(o)] == o for o in openers):
        return SECTION_HEADING
    return None
