"""Concept extraction (SPEC R3.1, R5.1): the interface, and a built-in extractor with no model.

`OfflineExtractor` ("builtin") reads a `Document` with patterns and the word lists of
`tutor_memory.domain.lang`, so it runs offline, deterministically and in any of the supported
languages (en, it, es, fr, de, pt, ar), in one pass. A caller with its own model sends its
concepts instead.

What it finds, strongest signal first:
- definitional sentences, term first: "Osmosis is the diffusion of water…", "Mitochondria are…",
  "X refers to…", "Il mitocondrio è un organello…", "La célula es la unidad…", "الخلية هي…"
  (`definition_links`); the term must be the whole subject of its clause (articles aside);
- naming sentences, term last: "This process is called osmosis", "si chiama", "يسمى"
  (`naming_links`), with the description before the link (or the sentence before) as definition;
- glossary entries: "Osmosis: the diffusion…", "- **Osmosis** - …", "**Osmosis:** …";
- a term at the start of a clause glossed in parentheses: "Osmosis (the diffusion of water) …";
- Markdown headings that name a concept (passing `rejection_reason`, so "Introduction" or
  "Chapter 3" are not concepts) and have text under them: the first sentence is their summary;
- `**bold**` terms in Markdown (weakest: the sentence around them is the summary).
Under a furniture heading ("Summary", "Common mistakes", "Exercises", "Glossary": see
`tutor_memory.domain.conceptmap.headings`) only glossary entries count: a summary restates, a list
of common mistakes states what is wrong, exercises ask.

Concepts are merged by canonical key; the `MAX_CONCEPTS_PER_FILE` with the strongest evidence are
kept (definitions weigh 3, glosses and headings 2, bold 1; ties go to the first seen), in the
order the file introduces them. `pages` lists every page that defines, glosses, heads or bolds it.

builds_on, in this order of precedence (an edge that would close a cycle among the file's concepts
is dropped, so the result is acyclic):
1. explicit cues (`prerequisite_cues`: "requires", "assumes", "builds on", "prerequisites",
   "presuppone", "requiere", "يتطلب"…) after a concept as subject, or anywhere in the section of a
   concept heading. The items listed after the cue are prerequisites; one that is not a concept of
   the file is kept by name (the map treats it as assumed, R3.4). The list is cut at commas and
   conjunctions and ends at a colon, semicolon, bracket or dash; an item that is not a name (a
   relative clause) interrupts it, and only an item repeating the cue's last word resumes it
   ("builds on the cytoplasm, where …, and on glucose"). "See also" is not a cue: it points
   sideways, not down.
2. definitions that name another concept of the file, exact name through canonical keys: "Osmosis
   is the diffusion of water across the cell membrane" builds on Diffusion and Cell membrane.
3. structure: a concept defined in a section whose heading is itself a concept builds on that
   heading concept (the section frames what it introduces: "Mitochondria" under "Organelles").

What it misses: definitions phrased any other way ("Water moves by osmosis, that is…"), concepts
only described and never named by a pattern, terms that are only function words ("Mean" is an
English stop word), Markdown tables, headings of PDFs and plain text (their lines carry no markup,
so they give structure only), prerequisites named by a cue but worded as a clause, Arabic lists
joined by a glued و. A definition mentioning "a membrane" does not build on "Cell membrane": only
exact names count.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.conceptmap.blocks import parse_blocks
from tutor_memory.domain.conceptmap.canonical import canonical_key, key_tokens
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.headings import (
    MAX_NAME_WORDS,
    SECTION_HEADING,
    clean_name,
    rejection_reason,
)
from tutor_memory.domain.conceptmap.language import guess_language
from tutor_memory.domain.conceptmap.markup import strip_markup, strong_spans
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.conceptmap.nounphrase import articles, is_content, noun_phrase
from tutor_memory.domain.files.document import Document
from tutor_memory.domain.text.phrases import PhraseIndex
from tutor_memory.domain.text.sentences import TERMINAL_PUNCTUATION, sentence_spans
from tutor_memory.domain.text.spans import (
    Phrase,
    Token,
    between,
    build_index,
    clause_break_before,
    longest_at,
    span_text,
    tokenize,
)

# The most concepts one file contributes: a chapter explains a few dozen ideas at most; more is
# noise that would drown the map.
MAX_CONCEPTS_PER_FILE = 40

# A definition shorter than this many words is not one ("Osmosis is important").
MIN_DEFINITION_WORDS = 3

# A name has at least this many letters ("Q: …" is not a glossary entry).
MIN_NAME_LETTERS = 2

# Summaries and definitions are one sentence, but PDF text can run on: cut at a word boundary.
MAX_SUMMARY_CHARS = 300
MAX_DEFINITION_CHARS = 200
_ELLIPSIS = "\u2026"

_GLOSSARY_BOLD = re.compile(
    r"^\s*(?:\*\*|__)(?P<term>.+?)(?:\*\*|__)\s*(?P<sep>[:\u2013\u2014-]?)\s*(?P<rest>.*)$"
)
_GLOSSARY_PLAIN = re.compile(
    r"^(?P<term>[^:\u2013\u2014]{1,80}?)\s*(?::|\s[-\u2013\u2014]\s)\s*(?P<rest>.+)$"
)
_PARENTHESIS = re.compile(r"\(([^()]+)\)")
# Punctuation after which the clause that a parenthesis glosses starts.
_CLAUSE_MARKS = ",;:\u060c\u061b"
_NAME_EDGES = " \t:.;,-\u2013\u2014*\"'\u201c\u201d()"

# Punctuation that ends a list of prerequisites (a comma only separates its items): "builds on the
# concentration gradient: the steeper it is, the faster…".
_LIST_END_MARKS = frozenset(":;()[]\u061b\u2013\u2014")


class Extractor(Protocol):
    """Reads one file into its concepts (R5.1). `name` says which extractor made a concept."""

    name: str

    def extract(
        self, document: Document, budget: WorkBudget | None = None
    ) -> list[ExtractedConcept]: ...


class _Signal(Enum):
    """What the file does with a term: (label, weight in ranking, rank for the summary). The label
    keeps signals of equal weight and rank distinct members (an Enum would alias them)."""

    DEFINITION = ("definition", 3, 3)
    NAMING = ("naming", 3, 3)
    GLOSSARY = ("glossary", 3, 3)
    PARENTHETICAL = ("parenthetical", 2, 2)
    HEADING = ("heading", 2, 1)
    BOLD = ("bold", 1, 0)

    def __init__(self, label: str, weight: int, rank: int) -> None:
        self.label = label
        self.weight = weight
        self.rank = rank


@dataclass(slots=True)
class _Candidate:
    key: str
    name: str
    name_rank: int
    order: int
    score: int = 0
    summary: str = ""
    definition: str = ""
    summary_rank: int = -1
    sections: tuple[str, ...] = ()
    definitions: list[str] = field(default_factory=list)
    pages: set[int] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class _Section:
    """A heading above the text being read: its level, its canonical key if it names a concept,
    and whether it is furniture ("Summary", "Common mistakes", "Glossary")."""

    level: int
    key: str | None
    furniture: bool

    @classmethod
    def of(cls, heading: str, level: int) -> _Section:
        name = clean_name(heading)
        key = canonical_key(name) if _valid_name(name, marked=False) else None
        return cls(level, key, rejection_reason(heading) == SECTION_HEADING)


@dataclass(frozen=True, slots=True)
class _Cue:
    owner: str | None
    sections: tuple[str, ...]
    items: tuple[str, ...]


@functools.cache
def _index(field_name: str) -> PhraseIndex[Phrase]:
    # A glued conjunction (Arabic "ويسمى", "and is called") starts a new clause with the same
    # link, except for a definition: "X وهو Y" is "X, and it is Y", not a definition of X.
    return build_index(field_name, glued_conjunctions=field_name != "definition_links")


def _word_count(text: str) -> int:
    return len(tokenize(text))


def _truncate(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[: cut if cut > 0 else limit - 1].rstrip(TERMINAL_PUNCTUATION + " ") + _ELLIPSIS


def _predicate(text: str) -> str:
    return text.strip().rstrip(TERMINAL_PUNCTUATION + " ")


def _display(name: str) -> str:
    """A name as shown: no leading article, capitalised when written all in lower case."""
    name = name.strip(_NAME_EDGES)
    tokens = key_tokens(name)
    if len(tokens) > 1 and tokens[0].norm in articles():
        name = name[tokens[1].start :]
    first = name.split(" ", 1)[0]
    if first.islower() and first[:1].isalpha():
        name = name[:1].upper() + name[1:]
    return name


def _valid_name(name: str, *, marked: bool) -> bool:
    """Whether `name` may be a concept: it passes the validator, and either the file marked it as a
    term (`marked`: bold, glossary) and it is not only function words, or it is one noun phrase."""
    if rejection_reason(name) is not None or sum(c.isalpha() for c in name) < MIN_NAME_LETTERS:
        return False
    tokens = tokenize(name)
    if not tokens or len(tokens) > MAX_NAME_WORDS:
        return False
    if marked:
        return any(is_content(t.norm) for t in tokens)
    phrase = noun_phrase(name, tokens, 0, len(tokens), max_words=MAX_NAME_WORDS)
    return phrase is not None and phrase[1] == len(tokens)


def _clause_start(text: str, tokens: Sequence[Token], pos: int) -> int:
    start = pos
    while start > 0 and not clause_break_before(text, tokens, start):
        start -= 1
    return start


def _subject(
    text: str, tokens: Sequence[Token], pos: int, language: str | None
) -> tuple[int, int] | None:
    """The name that is the whole subject of the clause ending right before token `pos`."""
    start = _clause_start(text, tokens, pos)
    phrase = noun_phrase(text, tokens, start, pos, max_words=MAX_NAME_WORDS + 1, language=language)
    if phrase is None or phrase[1] != pos or phrase[1] - phrase[0] > MAX_NAME_WORDS:
        return None
    return phrase


class _Reader:
    """Accumulates the evidence of one document, then ranks it into concepts."""

    def __init__(self) -> None:
        self.candidates: dict[str, _Candidate] = {}
        self.cues: list[_Cue] = []

    # --- evidence -------------------------------------------------------------------------------

    def add(
        self,
        signal: _Signal,
        name: str,
        summary: str,
        definition: str,
        page: int,
        sections: tuple[str, ...],
    ) -> None:
        key = canonical_key(name)
        if not key:
            return
        candidate = self.candidates.get(key)
        if candidate is None:
            candidate = _Candidate(key, _display(name), signal.rank, len(self.candidates))
            self.candidates[key] = candidate
        elif signal.rank > candidate.name_rank:
            candidate.name, candidate.name_rank = _display(name), signal.rank
        candidate.score += signal.weight
        candidate.pages.add(page)
        if signal.rank > candidate.summary_rank:
            candidate.summary = _truncate(summary, MAX_SUMMARY_CHARS)
            candidate.definition = _truncate(definition, MAX_DEFINITION_CHARS)
            candidate.summary_rank = signal.rank
            candidate.sections = sections
        if signal.rank >= _Signal.PARENTHETICAL.rank:
            candidate.definitions.append(definition)

    def read_page(self, text: str, page: int, headings: Sequence[str], *, markdown: bool) -> None:
        stack: list[_Section] = []
        pending: str | None = None
        for level, heading in enumerate(headings, start=1):
            stack.append(_Section.of(heading, level))
            pending = clean_name(heading) if markdown and stack[-1].key else None
        for block in parse_blocks(text, markdown=markdown):
            if block.kind == "heading":
                while stack and stack[-1].level >= block.level:
                    stack.pop()
                stack.append(_Section.of(block.text, block.level))
                pending = clean_name(block.text) if stack[-1].key and not block.soft else None
                continue
            sections = tuple(s.key for s in stack if s.key)
            furniture = bool(stack) and stack[-1].furniture
            self._read_block(block.text, page, sections, pending, furniture=furniture)
            pending = None

    def _read_block(
        self,
        raw: str,
        page: int,
        sections: tuple[str, ...],
        heading: str | None,
        *,
        furniture: bool,
    ) -> None:
        previous = ""
        for number, (start, end) in enumerate(sentence_spans(raw)):
            sentence = raw[start:end]
            plain = strip_markup(sentence)
            if not plain:
                continue
            if number == 0:
                self._glossary(sentence, plain, page, sections)
                if heading:
                    self.add(_Signal.HEADING, heading, plain, _predicate(plain), page, sections)
            if furniture:
                continue  # a summary restates, "common mistakes" states what is wrong
            tokens = tokenize(plain)
            language = guess_language(tokens)
            self._definition(plain, tokens, language, page, sections)
            self._naming(plain, tokens, language, previous, page, sections)
            self._parenthetical(plain, tokens, page, sections)
            self._cue(plain, tokens, language, sections)
            for term in strong_spans(sentence):
                term = term.strip(_NAME_EDGES)
                if _valid_name(term, marked=True):
                    self.add(_Signal.BOLD, term, plain, _predicate(plain), page, sections)
            previous = plain

    def _glossary(self, sentence: str, plain: str, page: int, sections: tuple[str, ...]) -> None:
        bold = _GLOSSARY_BOLD.match(sentence)
        if bold:
            term = bold.group("term").strip()
            if not (bold.group("sep") or term.endswith(":")):
                return  # "**Osmosis** is …": a definitional sentence, read as one
            term, rest, marked = term.rstrip(": "), strip_markup(bold.group("rest")), True
        else:
            plain_match = _GLOSSARY_PLAIN.match(plain)
            if not plain_match:
                return
            term, rest, marked = plain_match.group("term"), plain_match.group("rest"), False
        rest = _predicate(rest)
        if _word_count(rest) >= MIN_DEFINITION_WORDS and _valid_name(term, marked=marked):
            self.add(_Signal.GLOSSARY, term, plain, rest, page, sections)

    def _definition(
        self,
        plain: str,
        tokens: Sequence[Token],
        language: str | None,
        page: int,
        sections: tuple[str, ...],
    ) -> None:
        for pos in range(1, len(tokens)):
            link = longest_at(_index("definition_links"), tokens, pos, text=plain)
            if link is None:
                continue
            # Only the first link of a sentence is its main verb; a later one belongs to a clause.
            subject = _subject(plain, tokens, pos, language)
            definition_start = link.end
            if tokens[link.end - 1].norm in articles():
                definition_start -= 1  # "is *the* diffusion of water"
            if subject is None or definition_start >= len(tokens):
                return
            definition = _predicate(plain[tokens[definition_start].start :])
            if _word_count(definition) < MIN_DEFINITION_WORDS:
                return
            name = span_text(plain, tokens, *subject)
            if _valid_name(name, marked=False):
                self.add(_Signal.DEFINITION, name, plain, definition, page, sections)
            return

    def _naming(
        self,
        plain: str,
        tokens: Sequence[Token],
        language: str | None,
        previous: str,
        page: int,
        sections: tuple[str, ...],
    ) -> None:
        for pos in range(len(tokens)):
            link = longest_at(_index("naming_links"), tokens, pos, text=plain)
            if link is None:
                continue
            phrase = noun_phrase(
                plain, tokens, link.end, len(tokens), max_words=MAX_NAME_WORDS, language=language
            )
            if phrase is None:
                return
            name = span_text(plain, tokens, *phrase)
            before = _predicate(plain[: tokens[pos].start]) if pos else ""
            # What follows the name describes it only in the same clause: "Chiamiamo osmosi il
            # passaggio dell'acqua…", not "…se llama difusión pasiva, y no requiere energía".
            after = ""
            if phrase[1] < len(tokens) and not clause_break_before(plain, tokens, phrase[1]):
                after = _predicate(plain[tokens[phrase[1]].start :])
            candidates = (before, after, _predicate(previous))
            definition = next((d for d in candidates if _word_count(d) >= MIN_DEFINITION_WORDS), "")
            if definition and _valid_name(name, marked=False):
                summary = plain if definition != _predicate(previous) else f"{previous} {plain}"
                self.add(_Signal.NAMING, name, summary, definition, page, sections)
            return

    def _parenthetical(
        self, plain: str, tokens: Sequence[Token], page: int, sections: tuple[str, ...]
    ) -> None:
        """A name glossed by the parenthesis after it: the clause before the bracket, from the last
        clause mark on ("…, osmosis (the diffusion of water)")."""
        starts = [t.start for t in tokens]
        ends = [t.end for t in tokens]
        clause_start = scanned = 0
        for match in _PARENTHESIS.finditer(plain):
            gloss = _predicate(match.group(1))
            if any(c.isdigit() for c in gloss) or _word_count(gloss) < MIN_DEFINITION_WORDS:
                continue
            # Each stretch of the sentence is searched for clause marks once, whatever the number
            # of parentheses that follow it.
            last_mark = max(plain.rfind(mark, scanned, match.start()) for mark in _CLAUSE_MARKS)
            clause_start = max(clause_start, last_mark + 1)
            scanned = match.start()
            # A clause of more words than a name has is not one; counted from the sentence's
            # tokens, so that a long clause before many parentheses is not re-read for each.
            words = bisect.bisect_right(ends, match.start()) - bisect.bisect_left(
                starts, clause_start
            )
            if words > MAX_NAME_WORDS:
                continue
            clause = plain[clause_start : match.start()].strip()
            if _valid_name(clause, marked=False):
                self.add(_Signal.PARENTHETICAL, clause, plain, gloss, page, sections)

    def _cue(
        self,
        plain: str,
        tokens: Sequence[Token],
        language: str | None,
        sections: tuple[str, ...],
    ) -> None:
        for pos in range(len(tokens)):
            cue = longest_at(_index("prerequisite_cues"), tokens, pos)
            if cue is None:
                continue
            subject = _subject(plain, tokens, pos, language) if pos else None
            owner = canonical_key(span_text(plain, tokens, *subject)) if subject else None
            resume = tokens[cue.end - 1].norm
            items = tuple(_prerequisites(plain, tokens, cue.end, language, resume))
            if items:
                self.cues.append(_Cue(owner, sections, items))
            return

    # --- ranking --------------------------------------------------------------------------------

    def concepts(self) -> list[ExtractedConcept]:
        strongest = sorted(self.candidates.values(), key=lambda c: (-c.score, c.order))
        kept = sorted(strongest[:MAX_CONCEPTS_PER_FILE], key=lambda c: c.order)
        edges = _Edges({c.key: c.name for c in kept})
        matcher = NameMatcher(c.name for c in kept)
        for cue in self.cues:
            owner = cue.owner if cue.owner in edges.names else None
            owner = owner or next((k for k in reversed(cue.sections) if k in edges.names), None)
            if owner is None:
                continue
            for item in cue.items:
                named = matcher.find(item)
                for target in named or [n for n in [_assumed_name(item)] if n]:
                    edges.add(owner, target)
        for candidate in kept:
            for definition in candidate.definitions:
                for target in matcher.find(definition):
                    edges.add(candidate.key, target)
        for candidate in kept:
            parent = next(
                (
                    k
                    for k in reversed(candidate.sections)
                    if k in edges.names and k != candidate.key
                ),
                None,
            )
            if parent is not None:
                edges.add(candidate.key, edges.names[parent])
        return [
            ExtractedConcept(
                name=c.name,
                summary=c.summary,
                definition=c.definition,
                builds_on=tuple(edges.out[c.key]),
                pages=tuple(sorted(c.pages)),
            )
            for c in kept
        ]


def _list_spans(plain: str, tokens: Sequence[Token], start: int) -> Iterator[tuple[int, int]]:
    """Token ranges of the items of a list starting at `start`: cut at commas and conjunctions,
    ended by a colon, a semicolon, a bracket or a dash."""
    item_start = pos = start
    while pos < len(tokens):
        if pos > start and any(c in _LIST_END_MARKS for c in between(plain, tokens, pos)):
            break
        if pos > item_start and clause_break_before(plain, tokens, pos):
            yield item_start, pos
            item_start = pos
        conjunction = longest_at(_index("list_conjunctions"), tokens, pos)
        if conjunction is not None:
            if pos > item_start:
                yield item_start, pos
            item_start = pos = conjunction.end
            continue
        pos += 1
    if item_start < pos:
        yield item_start, pos


def _prerequisites(
    plain: str, tokens: Sequence[Token], start: int, language: str | None, resume: str
) -> Iterator[str]:
    """The names a cue lists from token `start`. An item that is not a name (a relative clause:
    "the cell membrane, which it surrounds and protects") interrupts the list; only an item that
    repeats the cue's last word resumes it ("the cytoplasm, where …, and on glucose itself")."""
    interrupted = False
    for first, end in _list_spans(plain, tokens, start):
        resumes = tokens[first].norm == resume
        if interrupted and not resumes:
            continue
        phrase = noun_phrase(
            plain, tokens, first + resumes, end, max_words=MAX_NAME_WORDS, language=language
        )
        if phrase is None or any(is_content(t.norm) for t in tokens[phrase[1] : end]):
            interrupted = True
            continue
        interrupted = False
        yield span_text(plain, tokens, *phrase)


def _assumed_name(item: str) -> str | None:
    """The name of a prerequisite the file names but does not define, if `item` is one."""
    tokens = tokenize(item)
    phrase = noun_phrase(item, tokens, 0, len(tokens), max_words=MAX_NAME_WORDS)
    if phrase is None or any(is_content(t.norm) for t in tokens[phrase[1] :]):
        return None
    name = span_text(item, tokens, *phrase)
    return _display(name) if _valid_name(name, marked=False) else None


class _Edges:
    """builds_on lists under construction, kept acyclic among the file's own concepts."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.out: dict[str, list[str]] = {key: [] for key in names}
        self._graph: dict[str, set[str]] = {key: set() for key in names}

    def _reaches(self, start: str, goal: str) -> bool:
        seen, todo = {start}, [start]
        while todo:
            for nxt in self._graph[todo.pop()]:
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    def add(self, source: str, target_name: str) -> None:
        target = canonical_key(target_name)
        if target == source:
            return
        if target in self.names:
            if target in self._graph[source]:
                return
            if self._reaches(target, source):
                return  # it would close a cycle: the earlier, stronger edge stands
            self._graph[source].add(target)
            target_name = self.names[target]
        if target_name not in self.out[source]:
            self.out[source].append(target_name)


class OfflineExtractor:
    """The built-in extractor (see the module docstring): patterns and word lists, no model."""

    name = "builtin"

    def extract(
        self, document: Document, budget: WorkBudget | None = None
    ) -> list[ExtractedConcept]:
        """The file's concepts; `budget` is checked at every page."""
        budget = budget or unlimited()
        reader = _Reader()
        markdown = document.kind == "markdown"
        for page in document.pages:
            budget.check()
            reader.read_page(page.text, page.number, page.headings, markdown=markdown)
        return reader.concepts()
