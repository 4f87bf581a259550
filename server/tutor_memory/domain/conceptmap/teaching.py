"""Teaching by telling (SPEC R4): which messages teach the map, what they teach, and questions.

Only an explicit trigger teaches (R4.3): "remember that …", "consider X as …" and their equivalents
in every language file (`teach_triggers`, `consider_triggers` + `consider_links`): "ricorda che",
"recuerda que", "souviens-toi que", "denk daran, dass", "merk dir", "lembre-se de que", "تذكر أن".
A trigger counts only at the start of a clause, after optional lead-ins ("ok so", "allora",
"by the way"): "I don't remember that" does not teach. "Note that" is deliberately not a trigger:
tutors and course files use it for ordinary exposition, and every pasted paragraph would teach; it
teaches only as a cue about the student's own setting (below).

A message also teaches when it says, in so many words, that what it tells is for later (issue 13:
"Just so you know for next time: in our class we call it the powerhouse"). Five shapes, each an
explicit request to keep something, so R4.3 still holds (a statement of fact without one teaches
nothing):
- an announcing cue at the start of a clause (`keep_cues`: "just so you know", "for next time",
  "from now on", "per la prossima volta", "للعلم"); cues chain ("just so you know, for next time:");
  a cue may also come a word or two into its clause when a colon or comma closes it ("quick thing
  for next time: …", `CUE_OPENING_WORDS`);
- a bare memory imperative (`keep_verbs`: "remember", "ricordati", "denk dran") followed by
  punctuation or by a word that is neither a question word nor an errand's infinitive marker:
  "remember we say 'times tables'" teaches, "remember what that means" and "remember to bring the
  book" do not;
- a cue of exposition that teaches only about the student's own setting (`own_cues`: "note
  that", "note que"; `own_words`: "I", "my", "our", "je", "notre"): "note that in our textbook the
  anode is on the left" teaches, "note that the anode is negative", as a textbook says it, does not;
- a label followed by a colon, comma or dash (`keep_labels`: "heads up:", "nota bene:", "achtung:"),
  or by a cue ("kleiner Hinweis für die Zukunft: …"); a hyphen inside a word is no dash
  (Portuguese "lembra-me", remind me, asks for something);
- a tail after clause punctuation (`keep_tails`: "…, keep that in mind", "…, use that", "tienilo
  presente", "merk dir das"), which words may follow ("…, keep that in mind whenever we do maths"):
  the note is what comes before it; a sentence that is only the tail keeps the sentence before it.

A standing request teaches too: how the student wants to be taught from now on is the first thing
a tutor must keep. Two shapes, each a request to the tutor, not a fact about the world:
- a clause with a word that makes it hold from now on and one that makes it a request, in either
  order (`standing_words` and `request_words`: "pls always use British spelling with me", "quiero
  que me corrijas las faltas siempre"), unless the clause opens with the student as its subject
  ("I always mix them up, pls help" keeps nothing);
- a statement, opening its clause, of how the student learns best (`preference_cues`: "I
  understand better when you give examples first", "capisco meglio quando").
Its topic is not read from its words, whose first content word is mostly a verb ("use", "give"):
every standing request is a note on one concept, the language file's `standing_topic` ("how I
learn best"), where the block finds them together.

Questions never teach, whatever they contain (R4.3): a sentence with a question mark ("?", "¿",
"؟") or that opens with a question word or an inverted verb (`question_openers`: "do you remember
that …", "¿recuerdas que …?", "هل تذكر أن") is a question. The rule is applied per sentence: in
"Remember that osmosis is passive. Got it?" the first sentence teaches.

`detect_teaching` returns the note (the rest of the trigger's sentence, as written) and a short
topic (at most `MAX_TOPIC_WORDS` words, never empty) for when the note names no existing concept
(R4.2): the subject of the note once framing is removed ("in our class", `teach_framings`; "we
call", "we say that", `naming_verbs`): "in our class we call the mitochondria the powerhouse of the
cell" -> "mitochondria"; when the subject is a pronoun, the first name after it ("it is the
mitochondria that…" -> "mitochondria"). It is never the whole sentence, but with no parser it can
run on into a verb that is not a stop word ("il ciclo di Krebs avviene…" -> "ciclo di Krebs
avviene"). A note with no content word to name ("remember that it is so") teaches nothing: None.
Routing the note to an existing concept is the caller's job (`NameMatcher` on the note, exact
names only).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence
from dataclasses import dataclass

from tutor_memory.domain import lang
from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.conceptmap.language import guess_language
from tutor_memory.domain.conceptmap.nounphrase import noun_phrase
from tutor_memory.domain.text.phrases import Match, PhraseIndex
from tutor_memory.domain.text.sentences import (
    QUESTION_MARKS,
    TERMINAL_PUNCTUATION,
    sentence_spans,
)
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

# A taught concept's name is short: longer, it is a description (R4.2).
MAX_TOPIC_WORDS = 4

# What may follow a label ("heads up:") or a bare memory verb ("remember, …") to announce a note.
_ANNOUNCING_MARKS = frozenset(":,-\u2013\u2014\u060c")

_NOTE_EDGES = TERMINAL_PUNCTUATION + " \t\"'\u201c\u201d\u00ab\u00bb-\u2013\u2014"


@dataclass(frozen=True, slots=True)
class Teaching:
    """What an explicit teaching sentence teaches: the note as written, and a short topic name
    (never empty)."""

    note: str
    topic: str


@functools.cache
def _index(field_name: str) -> PhraseIndex[Phrase]:
    return build_index(field_name, glued_conjunctions=True)


def _all_of(reading: _Sentence, field_name: str) -> list[Match[Phrase]]:
    """Every phrase of `field_name` starting at a token of the sentence, the longest at each, in
    order; a set look-up of each token first, since most tokens start none."""
    index = _index(field_name)
    return [
        found
        for i, token in enumerate(reading.tokens)
        if index.may_start(token.norm) and (found := longest_at(index, reading.tokens, i))
    ]


class _Sentence:
    """A sentence read for teaching, with what its clauses ask of the whole sentence (its language,
    where the links of "consider X as Y" are, where each run of lead-ins ends) worked out once:
    asked again from each clause, a sentence of many clauses would cost the square of its length.
    """

    def __init__(self, text: str, tokens: Sequence[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self._lead_in_ends: dict[int, int] = {}
        # How far a walk over keep cues and lead-ins has read: a clause starting before it was
        # read by that walk already (walking it again would make "ok, ok, ok, …" quadratic).
        self.keep_walked = 0

    @functools.cached_property
    def language(self) -> str | None:
        return guess_language(self.tokens)

    @functools.cached_property
    def _link_starts(self) -> list[int]:
        index = _index("consider_links")
        return [i for i in range(len(self.tokens)) if longest_at(index, self.tokens, i)]

    @functools.cached_property
    def _own_words(self) -> list[Match[Phrase]]:
        """The student's own words (`own_words`) in the sentence, in order."""
        return _all_of(self, "own_words")

    @functools.cached_property
    def _own_word_starts(self) -> list[int]:
        return [found.start for found in self._own_words]

    @functools.cached_property
    def lasting_words(self) -> list[Match[Phrase]]:
        """The lasting words of a standing request (`standing_words`) in the sentence, in order,
        but those right after one of the student's own words ("I always", "io sempre"), which
        are about the student. Found once: most sentences hold none, and then no clause looks
        for a request."""
        found = _all_of(self, "standing_words")
        if not found:
            return found
        after_own = {own.end for own in self._own_words}
        return [w for w in found if w.start not in after_own]

    def first_lasting_word(self, start: int, end: int) -> Match[Phrase] | None:
        """The first of `lasting_words` starting in tokens[start:end], by bisection: a sentence
        of many clauses and lasting words ("always, always, …") would otherwise cost the product
        of the two."""
        words = self.lasting_words
        first = bisect.bisect_left(words, start, key=lambda w: w.start)
        return words[first] if first < len(words) and words[first].start < end else None

    def speaks_of_own_from(self, pos: int) -> bool:
        """Whether a word of the student's own setting (`own_words`) starts at or after `pos`."""
        return bisect.bisect_left(self._own_word_starts, pos) < len(self._own_word_starts)

    def first_link_from(self, pos: int) -> int | None:
        """The first token at or after `pos` where a link of "consider X as Y" starts."""
        found = bisect.bisect_left(self._link_starts, pos)
        return self._link_starts[found] if found < len(self._link_starts) else None

    def skip_lead_ins(self, pos: int) -> int:
        """Where the words after the lead-ins starting at `pos` begin; remembered for every
        position passed, so that a run of lead-ins ("ok, ok, ok, …") is read once."""
        passed: list[int] = []
        while pos not in self._lead_in_ends and (
            lead := longest_at(_index("lead_ins"), self.tokens, pos)
        ):
            passed.append(pos)
            pos = lead.end
        end = self._lead_in_ends.get(pos, pos)
        for position in passed:
            self._lead_in_ends[position] = end
        return end


# Phrases that announce a note: a question opener they begin with opens none ("para qué", what
# for, begins Spanish "para que lo sepas", so that you know; "qué" begins "que conste que").
_NOTE_OPENERS = ("teach_triggers", "keep_cues", "keep_verbs", "keep_labels", "own_cues")


def _opens_question(tokens: Sequence[Token]) -> bool:
    pos = 0
    while pos < len(tokens):
        opener = longest_at(_index("question_openers"), tokens, pos)
        if opener is not None:
            # The longest phrase at a position is the one read: accents are not compared here
            # (students leave them out), so a question word and a note's opening words collide.
            return not any(
                (note := longest_at(_index(field), tokens, pos)) is not None
                and note.end > opener.end
                for field in _NOTE_OPENERS
            )
        lead = longest_at(_index("lead_ins"), tokens, pos)
        if lead is None:
            return False
        pos = lead.end
    return False


def _sentence_is_question(sentence: str, tokens: Sequence[Token]) -> bool:
    return any(c in QUESTION_MARKS for c in sentence) or _opens_question(tokens)


def is_question(text: str, budget: WorkBudget | None = None) -> bool:
    """Whether `text` asks something: a question mark of any script, or a sentence that opens
    with a question word or an inverted verb of any language file (after optional lead-ins).
    `budget` is checked at each sentence."""
    if any(c in QUESTION_MARKS for c in text):
        return True
    spans = (budget or unlimited()).each(sentence_spans(text))
    return any(_opens_question(tokenize(text[a:b])) for a, b in spans)


def _clause_starts(sentence: str, tokens: Sequence[Token]) -> list[int]:
    return [i for i in range(len(tokens)) if i == 0 or clause_break_before(sentence, tokens, i)]


def _topic(reading: _Sentence, start: int, limit: int) -> str:
    """The subject of the note in tokens[start:limit], framing removed; "" if it has none.

    After a naming verb the subject is one run of content words, whatever function words come
    first: Spanish "llamamos *a las* mitocondrias la central…", Portuguese "chamamos as
    mitocôndrias *de* usina…" (where "de" introduces the new name, not part of the old one).
    """
    sentence, tokens = reading.text, reading.tokens
    pos, named = start, False
    while pos < limit:
        framing = longest_at(_index("teach_framings"), tokens, pos)
        verb = longest_at(_index("naming_verbs"), tokens, pos)
        if framing is None and verb is None:
            break
        if verb is not None and (framing is None or verb.end >= framing.end):
            pos, named = verb.end, True
        elif framing is not None:
            pos = framing.end
    language = reading.language
    phrase = noun_phrase(
        sentence,
        tokens,
        pos,
        limit,
        max_words=MAX_TOPIC_WORDS,
        language=language,
        skip_leading_stop_words=named,
        allow_connectors=not named,
    )
    if phrase is None:
        # No name where the subject goes ("it is the mitochondria that…"): the first one after it.
        phrase = noun_phrase(
            sentence,
            tokens,
            pos,
            limit,
            max_words=MAX_TOPIC_WORDS,
            language=language,
            skip_leading_stop_words=True,
        )
    return span_text(sentence, tokens, *phrase) if phrase else ""


def _announced(sentence: str, tokens: Sequence[Token], end: int) -> bool:
    """Whether punctuation that announces a note follows token `end - 1`."""
    if end >= len(tokens):
        return False
    gap = between(sentence, tokens, end)
    # A hyphen between two words joins them (Portuguese "lembra-me", remind me): no dash.
    return gap != "-" and any(c in _ANNOUNCING_MARKS for c in gap)


def _after_keep_cues(reading: _Sentence, pos: int) -> int | None:
    """Where the note starts after the keep cues, verbs and labels that open the clause at `pos`
    (among lead-ins, possibly several: "ok just so you know, for next time: …"); None when none
    opens it."""
    tokens, sentence = reading.tokens, reading.text
    found = None
    while pos < len(tokens):
        cue = longest_at(_index("keep_cues"), tokens, pos)
        own = longest_at(_index("own_cues"), tokens, pos)
        if (
            own is not None
            and (cue is None or own.end > cue.end)
            and reading.speaks_of_own_from(own.end)
        ):
            cue = own
        verb = longest_at(_index("keep_verbs"), tokens, pos)
        label = longest_at(_index("keep_labels"), tokens, pos)
        if cue is not None and (verb is None or cue.end >= verb.end):
            end = cue.end
        elif verb is not None and (
            _announced(sentence, tokens, verb.end)
            or (
                verb.end < len(tokens)
                and longest_at(_index("question_words"), tokens, verb.end) is None
                and longest_at(_index("keep_verb_vetoes"), tokens, verb.end) is None
            )
        ):
            end = verb.end
        elif label is not None and _announced(sentence, tokens, label.end):
            end = label.end
        elif label is not None and longest_at(_index("keep_cues"), tokens, label.end):
            # A label that a cue follows ("kleiner Hinweis für die Zukunft: …"): the cue decides.
            pos = label.end
            continue
        elif lead := longest_at(_index("lead_ins"), tokens, pos):
            # Lead-ins may hide a cue's first word ("just so you know": "just" and "so" lead in).
            pos = lead.end
            continue
        else:
            break
        found = pos = end
    reading.keep_walked = max(reading.keep_walked, pos + 1)
    return None if found is None else reading.skip_lead_ins(found)


# The most words a clause may open with before a keep cue that a colon or comma closes ("quick
# thing for next time: …", "one more thing, for future reference, …").
CUE_OPENING_WORDS = 2


def _after_an_opened_cue(reading: _Sentence, clause: int) -> int | None:
    """Where the note starts after a keep cue that opens the clause's `CUE_OPENING_WORDS` words
    late and is closed by announcing punctuation; None when there is none."""
    tokens, sentence = reading.tokens, reading.text
    for pos in range(clause + 1, min(clause + CUE_OPENING_WORDS, len(tokens) - 1) + 1):
        if clause_break_before(sentence, tokens, pos):
            return None
        cue = longest_at(_index("keep_cues"), tokens, pos)
        if cue is not None and _announced(sentence, tokens, cue.end):
            return reading.skip_lead_ins(cue.end)
    return None


def _tail_start(reading: _Sentence, clauses: Sequence[int]) -> int | None:
    """Where a keep tail starts ("…, keep that in mind"), or None, given where the sentence's
    clauses start (`_clause_starts`). Inside a sentence it must start a clause, and words may
    follow it ("…, keep that in mind whenever we do maths", "…, use that pls"); alone at the
    start of a sentence it must be the whole sentence (it then keeps the sentence before)."""
    tokens = reading.tokens
    tails = _index("keep_tails")
    for start in clauses:
        tail = longest_at(tails, tokens, start)
        if tail is not None and (start > 0 or tail.end == len(tokens)):
            return start
    return None


def _kept_before(reading: _Sentence, limit: int) -> Teaching | None:
    """The teaching of tokens[:limit] when a tail at `limit` asks to keep them."""
    start = reading.skip_lead_ins(0)
    if start >= limit:
        return None
    topic = _topic(reading, start, limit)
    note = reading.text[reading.tokens[start].start : reading.tokens[limit - 1].end]
    note = note.strip(_NOTE_EDGES)
    return Teaching(note, topic) if note and topic else None


@functools.cache
def _languages_of_phrase(field_name: str) -> dict[str, tuple[str, ...]]:
    """The language files each phrase of `field_name` comes from, in `lang.LANGUAGES` order."""
    found: dict[str, list[str]] = {}
    for data in lang.all_languages():
        for source in getattr(data, field_name):
            found.setdefault(source, []).append(data.code)
    return {source: tuple(codes) for source, codes in found.items()}


def _only_a_request(reading: _Sentence, clause: int, end: int) -> Match[Phrase] | None:
    """The request of tokens[clause:end] when it holds nothing but lead-ins and requests
    ("please,", "s'il te plaît,"): the request is then the next clause's."""
    tokens, found, pos = reading.tokens, None, clause
    while pos < end:
        request = longest_at(_index("request_words"), tokens, pos)
        step = request or longest_at(_index("lead_ins"), tokens, pos)
        if step is None:
            return None
        found, pos = request or found, step.end
    return found


def _at(reading: _Sentence, field_name: str, pos: int) -> Match[Phrase] | None:
    """`longest_at` for a phrase of `field_name` at token `pos`, after a set look-up of the
    token: most clauses start with no such phrase, and a clause of every message is asked."""
    index = _index(field_name)
    if pos >= len(reading.tokens) or not index.may_start(reading.tokens[pos].norm):
        return None
    return longest_at(index, reading.tokens, pos)


def _lasting_request(
    reading: _Sentence, clause: int, end: int, asked: Match[Phrase] | None
) -> tuple[Match[Phrase], Match[Phrase]] | None:
    """The request and the lasting word of tokens[clause:end] when it holds both (see the module
    docstring), `asked` the request of a clause before it that held nothing else."""
    lasting = reading.first_lasting_word(clause, end)
    if lasting is None:
        return None
    requests = _index("request_words")
    for pos in range(clause, end):
        if asked is not None:
            break
        asked = longest_at(requests, reading.tokens, pos)
    return (asked, lasting) if asked is not None else None


def _standing_request(
    reading: _Sentence, clause: int, end: int, asked: Match[Phrase] | None
) -> Teaching | None:
    """The teaching of tokens[clause:end] (one clause) when it is a standing request (see the
    module docstring), `asked` the request of a clause before it that held nothing else: the
    note from the clause's first word on, on the concept that gathers how the student wants to be
    taught (`standing_topic`, in the sentence's language, else in the request's)."""
    tokens = reading.tokens
    start = reading.skip_lead_ins(clause)
    if start >= end:
        return None
    subject = _at(reading, "own_words", start)
    found = _at(reading, "preference_cues", start)
    if found is None and subject is not None:
        # The subject pronoun that most of the languages may leave out ("(io) capisco meglio").
        found = _at(reading, "preference_cues", subject.end)
    field_name, lasting = "preference_cues", None
    if found is None:
        if not reading.lasting_words:
            return None
        if subject is not None and longest_at(_index("request_words"), tokens, start) is None:
            # The student's own habit ("I always mix them up"), whatever request follows it.
            return None
        both = _lasting_request(reading, clause, end, asked)
        if both is None:
            return None
        (found, lasting), field_name = both, "request_words"
    # The note keeps a lasting word that leads in ("always", "siempre": lead-ins of their files),
    # without which "please always put the units" would keep "put the units".
    leading = reading.first_lasting_word(clause, start)
    note = _note(reading.text, tokens, start if leading is None else leading.start)
    code = reading.language
    if code is None:
        # The first language both phrases are of ("por favor" and "sempre": Portuguese).
        codes = _languages_of_phrase(field_name)[found.payload.source]
        also = _languages_of_phrase("standing_words")[lasting.payload.source] if lasting else ()
        code = next((c for c in codes if c in also), codes[0])
    return Teaching(note, lang.load(code).standing_topic) if note else None


def _note(sentence: str, tokens: Sequence[Token], start: int) -> str:
    if start >= len(tokens):
        return ""
    return sentence[tokens[start].start :].strip(_NOTE_EDGES)


def _consider(reading: _Sentence, pos: int) -> Teaching | None:
    trigger = longest_at(_index("consider_triggers"), reading.tokens, pos)
    if trigger is None:
        return None
    link_pos = reading.first_link_from(trigger.end + 1)
    if link_pos is None:
        return None
    # The topic first: it lies before the link, while the note runs to the end of the sentence.
    topic = _topic(reading, trigger.end, link_pos)
    note = _note(reading.text, reading.tokens, trigger.end) if topic else ""
    return Teaching(note, topic) if note and topic else None


def detect_teaching(text: str, budget: WorkBudget | None = None) -> Teaching | None:
    """The teaching in `text`, if a sentence that is not a question starts a clause with an
    explicit trigger (see the module docstring); None otherwise. `budget` is checked at each
    sentence."""
    previous: _Sentence | None = None
    for start, end in (budget or unlimited()).each(sentence_spans(text)):
        sentence = text[start:end]
        tokens = tokenize(sentence)
        if _sentence_is_question(sentence, tokens):
            previous = None
            continue
        reading = _Sentence(sentence, tokens)
        clauses = _clause_starts(sentence, tokens)
        asked = None
        for number, clause in enumerate(clauses):
            clause_end = clauses[number + 1] if number + 1 < len(clauses) else len(tokens)
            pos = reading.skip_lead_ins(clause)
            trigger = longest_at(_index("teach_triggers"), tokens, pos)
            if trigger is not None:
                topic = _topic(reading, trigger.end, len(tokens))
                note = _note(sentence, tokens, trigger.end) if topic else ""
                if note and topic:
                    return Teaching(note, topic)
                continue
            taught = _consider(reading, pos)
            if taught is not None:
                return taught
            after = _after_keep_cues(reading, clause) if clause >= reading.keep_walked else None
            if after is None:
                after = _after_an_opened_cue(reading, clause)
            if after is not None:
                topic = _topic(reading, after, len(tokens))
                note = _note(sentence, tokens, after) if topic else ""
                if note and topic:
                    return Teaching(note, topic)
                continue
            taught = _standing_request(reading, clause, clause_end, asked)
            if taught is not None:
                return taught
            asked = _only_a_request(reading, clause, clause_end) if reading.lasting_words else None
        tail = _tail_start(reading, clauses)
        if tail is not None:
            taught = _kept_before(reading, tail) if tail else None
            if taught is None and tail == 0 and previous is not None:
                taught = _kept_before(previous, len(previous.tokens))
            if taught is not None:
                return taught
        previous = reading
    return None
