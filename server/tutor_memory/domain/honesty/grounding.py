"""A deterministic trace of an answer to its sources (SPEC R7.2, R7.3): no model call.

An answer is cut into sentences (`split_sentences`: the shared scanner of
`tutor_memory.domain.text.sentences` with its `ANSWER` rule); each sentence is compared with every
source:
the file passages the tutor had, and the memories recalled for that turn (each labelled with when
it happened, R7.2). The rule, in words:

- A sentence's *terms* are its distinct content words (normalised by
  `tutor_memory.domain.text.normalise`; not a stop word of any language, not a conversational word
  of the language files' `discourse_words`, at least MIN_WORD_CHARS letters) and its numbers.
- A sentence with fewer than MIN_COUNTED_TERMS terms ("Sure!", "Great question!") claims nothing:
  it is neither grounded nor counted.
- A counted sentence traces to a source when every one of its numbers occurs in the source and
  enough of its content words do: at least TRACE_SHARE_PERCENT% of them and at least
  TRACE_MIN_WORDS, or all of them when it has fewer than that.
- Two words are the same when they are equal, or share at least STEM_MIN_CHARS letters and differ
  only in their last STEM_MAX_SUFFIX letters at most (cell/cells, membrane/membranes,
  cellula/cellule). Arabic words are also compared without a glued conjunction, preposition or
  article (والماء / الماء / ماء), from the `glued_prefixes` of the language files.

Status: every counted sentence traces -> answered; some do -> partial; none do -> impossible. An
answer with no counted sentence claims nothing: answered when there was a source to answer from,
impossible when there was none (or when the answer is empty).

Speed: reading a source (normalising it, collecting the forms of its words) is most of the work,
so it is cached by the source's text (SOURCE_CACHE_SIZE entries): passages recur from answer to
answer. Word forms are cached too.
"""

from __future__ import annotations

import enum
import functools
import operator
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from tutor_memory.domain import lang
from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.recall.block_text import DATE_FORMAT
from tutor_memory.domain.text import sentences
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.words import split_words, stop_words, words

# A sentence needs this many terms (content words plus numbers) to claim anything: one word alone
# ("Sure!", "Exactly.") is conversation, two ("Osmosis needs membranes.") already a claim.
MIN_COUNTED_TERMS = 2

# Share of a sentence's content words that must occur in a source for the sentence to trace to
# it: most of them, so a paraphrase still traces, but not a sentence that only shares the topic.
TRACE_SHARE_PERCENT = 60

# ...and never fewer than this many words, so a long passage cannot ground a sentence through two
# words it happens to share; a sentence with fewer content words must match all of them.
TRACE_MIN_WORDS = 3

# Tokens shorter than this are dropped (the "e", "g" of "e.g.", stray initials).
MIN_WORD_CHARS = 2

# Word variants (see the module docstring): a shared stem of at least STEM_MIN_CHARS letters,
# with at most STEM_MAX_SUFFIX letters after it in either word. Short enough to join plurals and
# gender endings, long enough to keep fraction and fractal apart.
STEM_MIN_CHARS = 4
STEM_MAX_SUFFIX = 2

# An Arabic word without its glued prefix must keep this many letters (a triliteral root), so
# that stripping never reduces a word to a fragment.
GLUED_REST_MIN_CHARS = 3

# A sentence lists at most this many file passages and this many memories (the best matches):
# a trace is for a person to follow, and a general sentence can match dozens of passages.
MAX_TRACES_PER_KIND = 3

# Numbers in normalised text, with decimal and thousands separators (3.5, 3,5, 1.000).
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# A word in normalised text, as `tutor_memory.domain.text.words` cuts them.
_WORD = re.compile(r"[^\W_]+")
# What separates words in ASCII text (everything but letters and digits), as a translation to
# spaces.
_ASCII_NON_WORD = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})


class GroundingStatus(enum.StrEnum):
    """How much of an answer traces to its sources (R7.3). Values are stored."""

    ANSWERED = "answered"
    PARTIAL = "partial"
    IMPOSSIBLE = "impossible"


@dataclass(frozen=True, slots=True)
class SourcePassage:
    """A passage of a file the tutor had for the turn; `page` 0 means not page-specific."""

    file_id: str
    version: int
    page: int
    text: str


@dataclass(frozen=True, slots=True)
class SourceMemory:
    """A memory recalled for the turn (R7.2). A naive `occurred_at` is taken as UTC."""

    episode_id: int
    occurred_at: datetime
    text: str


PassageRef = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class SentenceTrace:
    sentence: str
    # (file_id, version, page) of the passages it traces to, best match first.
    passages: tuple[PassageRef, ...]
    # Recalled memories it traces to, best match first.
    episode_ids: tuple[int, ...]
    # "file bio-1 p.3" for each passage, then "memory of 12 Jul 2026" for each memory.
    labels: tuple[str, ...]
    # False for a sentence with too few terms to claim anything: it counts for no status.
    counted: bool


@dataclass(frozen=True, slots=True)
class GroundingResult:
    status: GroundingStatus
    sentences: tuple[SentenceTrace, ...]


@dataclass(frozen=True, slots=True)
class _Lexicon:
    discourse_words: frozenset[str]
    glued_prefixes: tuple[str, ...]


@functools.cache
def _lexicon() -> _Lexicon:
    languages = lang.all_languages()
    prefixes = {normalise(p) for data in languages for p in data.glued_prefixes}
    return _Lexicon(
        discourse_words=frozenset(
            w for data in languages for entry in data.discourse_words for w in words(entry)
        ),
        # Longest first, so that "وال" is tried before "و".
        glued_prefixes=tuple(sorted(prefixes, key=lambda p: (-len(p), p))),
    )


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped, in order; empty pieces are dropped.

    A sentence ends at . ! ? … (and the Arabic question mark and full stop) followed by white
    space or the end of the text, and at every line break.
    A dot does not end one before a lowercase word ("e.g. the cell") or after a known abbreviation
    ("Dr. Smith", "p. 3"); a dot inside a number (3.5) is not followed by white space.
    """
    return sentences.split_sentences(text, sentences.ANSWER)


def _rest(word: str) -> str | None:
    """A non-Latin word without its glued prefix (والماء -> ماء), or None when it has none."""
    if not word.isascii():
        for prefix in _lexicon().glued_prefixes:
            if word.startswith(prefix) and len(word) - len(prefix) >= GLUED_REST_MIN_CHARS:
                return word[len(prefix) :]
    return None


def _stems(base: str) -> list[str]:
    """`base`, and `base` without up to STEM_MAX_SUFFIX final letters while at least
    STEM_MIN_CHARS remain."""
    n = len(base)
    return [base[:k] for k in range(min(n, max(STEM_MIN_CHARS, n - STEM_MAX_SUFFIX)), n + 1)]


@functools.lru_cache(maxsize=1 << 16)
def _forms(word: str) -> frozenset[str]:
    """Every spelling under which `word` matches another word (see the module docstring): two
    words match when their forms intersect. A word with a glued prefix is shortened only
    without it (the article would otherwise count as stem: الما would join الماء and المال).
    Cached: a subject's vocabulary is small."""
    rest = _rest(word)
    return frozenset(_stems(word) if rest is None else [word, *_stems(rest)])


# Cutting the last 1..STEM_MAX_SUFFIX letters off a word, as C-level callables for map().
_CUTS = tuple(operator.itemgetter(slice(None, -cut)) for cut in range(1, STEM_MAX_SUFFIX + 1))


def _latin_forms(tokens: set[str]) -> set[str]:
    """`tokens` and every token cut by 1..STEM_MAX_SUFFIX letters, however short that leaves it.

    A superset of the union of `_forms` over ASCII tokens (which have no glued prefix) that
    differs from it only in strings shorter than STEM_MIN_CHARS; matching looks up a word's forms
    of at least that length here and shorter words among the tokens themselves, which makes the
    two equivalent. Built without a Python-level loop: it runs over every word of every source.
    """
    forms = set(tokens)
    for cut in _CUTS:
        forms.update(map(cut, tokens))
    return forms


def _numbers(normalised: str) -> frozenset[str]:
    # Decimal commas and points compare equal (3,5 is 3.5).
    return frozenset(n.replace(",", ".") for n in _NUMBER.findall(normalised))


@functools.cache
def _ignored() -> frozenset[str]:
    return stop_words() | _lexicon().discourse_words


def _is_content(token: str) -> bool:
    if len(token) < MIN_WORD_CHARS or token.isdigit():
        return False
    ignored = _ignored()
    if token in ignored:
        return False
    # An Arabic function word may carry a glued conjunction or preposition (وفي, "and in").
    rest = _rest(token)
    return rest is None or rest not in ignored


@dataclass(frozen=True, slots=True)
class _Word:
    """A content word of a sentence, as its forms: those of at least STEM_MIN_CHARS letters
    (looked up among a source's forms) and shorter ones (looked up among its exact forms)."""

    long_forms: frozenset[str]
    short_forms: frozenset[str]


_NO_FORMS: frozenset[str] = frozenset()


@functools.lru_cache(maxsize=1 << 16)
def _word(word: str) -> _Word:
    forms = _forms(word)
    if word.isascii():
        # No glued prefix: every form is at least STEM_MIN_CHARS long, or the word is shorter
        # and its only form.
        return _Word(forms, _NO_FORMS) if len(word) >= STEM_MIN_CHARS else _Word(_NO_FORMS, forms)
    return _Word(
        frozenset(f for f in forms if len(f) >= STEM_MIN_CHARS),
        frozenset(f for f in forms if len(f) < STEM_MIN_CHARS),
    )


@dataclass(frozen=True, slots=True)
class _Claim:
    """The terms of a sentence: its content words and its numbers."""

    words: tuple[_Word, ...]
    numbers: frozenset[str]
    counted: bool
    # How many of the words a source must hold to ground the sentence.
    required: int


def _claim(sentence: str) -> _Claim:
    normalised = normalise(sentence)
    content = dict.fromkeys(t for t in split_words(normalised) if _is_content(t))
    numbers = _numbers(normalised)
    n = len(content)
    required = (
        n if n <= TRACE_MIN_WORDS else max(TRACE_MIN_WORDS, -(-n * TRACE_SHARE_PERCENT // 100))
    )
    return _Claim(
        words=tuple(map(_word, content)),
        numbers=numbers,
        counted=n + len(numbers) >= MIN_COUNTED_TERMS,
        required=required,
    )


class _Source:
    """A source as matching needs it: the forms of its words (`forms`, see `_latin_forms`; and
    `exact`, holding no string that is not truly a form), and its numbers, read only when a
    sentence has a number, which few do."""

    __slots__ = ("_numbers", "exact", "forms", "text")

    # Sets, not frozensets: built once per source and never changed, and copying them into
    # frozensets would cost a tenth of the reading.
    def __init__(self, text: str, forms: AbstractSet[str], exact: AbstractSet[str]) -> None:
        self.text = text
        self.forms = forms
        self.exact = exact
        self._numbers: frozenset[str] | None = None

    @property
    def numbers(self) -> frozenset[str]:
        if self._numbers is None:
            self._numbers = _numbers(self.text)
        return self._numbers

    def holds(self, word: _Word) -> bool:
        if not word.long_forms.isdisjoint(self.forms):
            return True
        return bool(word.short_forms) and not word.short_forms.isdisjoint(self.exact)


# Passages recur from answer to answer (the same files answer a subject's questions, the same
# memories are recalled), and reading one is most of the cost of `ground`; a bounded cache keeps
# the recent ones (a 1,200-character passage costs some tens of kilobytes).
SOURCE_CACHE_SIZE = 256


@functools.lru_cache(maxsize=SOURCE_CACHE_SIZE)
def _source(text: str) -> _Source:
    # On ASCII text normalise() only lower-cases (and unifies apostrophes, which separate words
    # anyway); most passages are ASCII, or become ASCII once accents are folded.
    normalised = text if text.isascii() else normalise(text)
    if normalised.isascii():
        # The word pattern of `words` on ASCII text is [A-Za-z0-9]+: C string methods give the
        # same words several times faster. Digits are never changed, so numbers read as is.
        tokens = set(normalised.lower().translate(_ASCII_NON_WORD).split())
        return _Source(normalised, _latin_forms(tokens), tokens)
    forms = frozenset().union(*map(_forms, set(_WORD.findall(normalised))))
    return _Source(normalised, forms, forms)


def _matches(claim: _Claim, source: _Source) -> int | None:
    """How many of the claim's words the source holds, or None when it does not ground it."""
    if claim.numbers and not claim.numbers <= source.numbers:
        return None
    misses_allowed = len(claim.words) - claim.required
    matched = 0
    for word in claim.words:
        if not source.holds(word):
            misses_allowed -= 1
            if misses_allowed < 0:
                return None
        else:
            matched += 1
    return matched


def _best(claim: _Claim, sources: Sequence[_Source]) -> list[int]:
    """Indexes of the sources that ground the claim, best match first, ties in input order."""
    scored = [(m, i) for i, s in enumerate(sources) if (m := _matches(claim, s)) is not None]
    scored.sort(key=lambda mi: (-mi[0], mi[1]))
    return [i for _, i in scored]


def passage_label(file_id: str, page: int) -> str:
    """How a trace names a file passage: "file bio-1 p.3" ("file bio-1" when page is 0)."""
    return f"file {file_id} p.{page}" if page > 0 else f"file {file_id}"


def memory_label(occurred_at: datetime, tz: ZoneInfo) -> str:
    """How a trace names a recalled memory: "memory of 12 Jul 2026", in the student's time zone."""
    aware = occurred_at if occurred_at.tzinfo is not None else occurred_at.replace(tzinfo=UTC)
    return f"memory of {aware.astimezone(tz).strftime(DATE_FORMAT)}"


def _trace(
    sentence: str,
    passages: Sequence[SourcePassage],
    passage_sources: Sequence[_Source],
    memories: Sequence[SourceMemory],
    memory_sources: Sequence[_Source],
    tz: ZoneInfo,
) -> SentenceTrace:
    claim = _claim(sentence)
    if not claim.counted:
        return SentenceTrace(sentence, (), (), (), counted=False)
    refs: dict[PassageRef, str] = {}
    for i in _best(claim, passage_sources):
        p = passages[i]
        refs.setdefault((p.file_id, p.version, p.page), passage_label(p.file_id, p.page))
        if len(refs) == MAX_TRACES_PER_KIND:
            break
    recalled: dict[int, str] = {}
    for i in _best(claim, memory_sources):
        m = memories[i]
        recalled.setdefault(m.episode_id, memory_label(m.occurred_at, tz))
        if len(recalled) == MAX_TRACES_PER_KIND:
            break
    return SentenceTrace(
        sentence,
        passages=tuple(refs),
        episode_ids=tuple(recalled),
        labels=(*refs.values(), *recalled.values()),
        counted=True,
    )


def ground(
    answer: str,
    passages: Sequence[SourcePassage],
    memories: Sequence[SourceMemory],
    tz_name: str = "UTC",
    budget: WorkBudget | None = None,
) -> GroundingResult:
    """Trace each sentence of `answer` to the passages and recalled memories (module docstring).

    `tz_name` (IANA) is the time zone in which memory labels give their dates. `budget` is
    checked at each source and each sentence.
    """
    budget = budget or unlimited()
    tz = ZoneInfo(tz_name)
    passage_sources = []
    for p in passages:
        budget.check()
        passage_sources.append(_source(p.text))
    memory_sources = []
    for m in memories:
        budget.check()
        memory_sources.append(_source(m.text))
    traced = []
    for s in split_sentences(answer):
        budget.check()
        traced.append(_trace(s, passages, passage_sources, memories, memory_sources, tz))
    traces = tuple(traced)
    counted = [t for t in traces if t.counted]
    grounded = sum(1 for t in counted if t.passages or t.episode_ids)
    if not counted:
        has_source = bool(passages or memories)
        status = GroundingStatus.ANSWERED if traces and has_source else GroundingStatus.IMPOSSIBLE
    elif grounded == len(counted):
        status = GroundingStatus.ANSWERED
    elif grounded:
        status = GroundingStatus.PARTIAL
    else:
        status = GroundingStatus.IMPOSSIBLE
    return GroundingResult(status, traces)
