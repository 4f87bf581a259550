"""Is the student asking about their own record, and about which topic? (SPEC R6.3, R6.4)

"What did I get wrong so far?", "cosa abbiamo studiato", "ماذا أخطأت": for such questions the block
puts beliefs and earlier work (the whole conversation, not only checks) first and says so. Three
rules decide it:

- a record phrase of the language files (`record_triggers`), matched on normalised words, so that
  case, accents, punctuation and Arabic letter variants don't matter; a trigger preceded by one of
  its language's `trigger_vetoes` is a different question ("¿por qué estudiamos…?" asks why)
  (`tutor_memory.domain.recall.asking`);
- a phrase that asks about the record only in a clause that asks (`record_questions`: "le frazioni
  le abbiamo fatte?", "…, vero?"), not in a statement beside another question ("abbiamo fatto le
  frazioni, ma cos'è un denominatore?");
- a question or request, with the student or the tutor in it (`pronouns`: "I", "we", "my",
  "you"; one that is another language's function word only in a sentence of its own language,
  French "on"), that asks about a period of the student's calendar ("what did you show me last
  Friday", "vor einem Monat, woran haben wir gearbeitet"): asking what happened in the student's
  own last week is asking about the record, whatever verb carries it. The period comes from
  `tutor_memory.domain.recall.asked_period.asked_window`, which only reads periods of the record
  (dated subject matter such as "in July 1789" names none) and only those the question is about
  ("I was off sick last week, what is a prime number?" names one and asks about another thing).

`record_topic` says what a record question is about: the content words left once the record
phrase, the time words, stop words, fillers, discourse words, past forms, numbers and scope phrases
("so far", "overall", "last time": `scope_words`) are taken out ("what did I get
wrong about fractions?" -> "fractions"; "what did we do last week?" -> None). So are the record's
own words (`record_words`: "which questions did I get wrong in the *quizzes*" names no topic, "on
the *fractions* quiz" names fractions) and the participle that completes a past ("hayamos
*repasado*", "über Brüche *beigebracht*": `tense.participles_of_perfects`). The topic is read in
the clause of the record phrase or the topic preposition (`asked_period.clause_starts`): "cosa
abbiamo fatto ieri? boh, nn lo so" names none. When nothing follows the phrase in its clause, it
is read inside a verb-final phrase, in a question the phrase governs after a comma, or before the
phrase as a noun phrase an article opens ("*le disequazioni* le abbiamo mai fatte?"). A record
question with a topic is recall *within* the record about that topic; without one, it is about
the whole record (or the whole period).
Each reading is linear in the message (tests/domain/recall/test_linear_time.py).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable

from tutor_memory.domain import lang
from tutor_memory.domain.conceptmap.canonical import has_article_prefix
from tutor_memory.domain.conceptmap.nounphrase import articles
from tutor_memory.domain.recall.asked_period import asked_window, clause_starts, clause_texts
from tutor_memory.domain.recall.asking import (
    RecordPhrase,
    asks,
    asks_words,
    one_word_question_words,
    question_matches,
    request_matches,
    trigger_matches,
)
from tutor_memory.domain.recall.tense import participles_of_perfects, sentence_languages
from tutor_memory.domain.recall.timewords import has_time_words
from tutor_memory.domain.text.phrases import Match, PhraseIndex, compile_phrase
from tutor_memory.domain.text.sentences import QUESTION_MARKS, SENTENCE_END_MARKS
from tutor_memory.domain.text.spans import CLAUSE_MARKS, GLUED_SIGNS, Token, tokenize
from tutor_memory.domain.text.words import clitics, stop_words, words

# Any instant will do for "does it name a period at all": the rule asks whether a period is named,
# not which one, and the record horizon is wide. Taken as a fixed day so the answer is stable.
_REFERENCE_US = 1_773_835_200_000_000  # 2026-03-18T12:00Z
# A clause of at most this many words that asks, right after a statement, makes it a question:
# a tag ("…, right?", "…, ¿no?", "…, oder?", "…, ولا لأ؟").
TAG_QUESTION_WORDS = 3
# A topic longer than this is a sentence, not a topic: its first words are kept.
MAX_TOPIC_WORDS = 5
# A worked exercise in the message: an equals sign, or an operator between two numbers ("3/4 +
# 1/2", "2x + 3"). A question that carries its exercise asks about it ("where did I go wrong here?
# 3/4 + 1/2 = 4/6"), not about the record, whatever its words.
# A name: a capitalised word of two letters or more, in any script with case (English "I" is
# none); and what ends a sentence before it.
_NAME = re.compile(r"[^\W\d_]{2,}")
_SENTENCE_ENDS = frozenset(".!?¿¡؟:;\"'«“")
_EXERCISE = re.compile(r"=|\d\s*[-+*/\u00d7\u00f7^]\s*\(?\d")


@functools.cache
def _not_topic() -> frozenset[str]:
    """Words that are never a record question's topic."""
    out = set(stop_words())
    for data in lang.all_languages():
        for field in (
            data.fillers,
            data.discourse_words,
            data.pronouns,
            data.question_words,
            data.number_words,
            # A past form is the question's verb ("what have we *done* together"), never its
            # topic.
            data.past_forms,
            data.past_person_forms,
            data.record_words,
        ):
            out |= {w for p in field for w in words(p)}
        for phrase in data.record_triggers + data.record_questions + data.asking_verbs:
            out |= {w for w in words(phrase) if w not in ("*", "**")}
    return frozenset(out)


def carries_exercise(query: str) -> bool:
    """Whether the message carries a worked exercise (see `_EXERCISE`)."""
    return _EXERCISE.search(query) is not None


@functools.cache
def _persons() -> PhraseIndex[None]:
    """First- and second-person words ("I", "we", "my", "you"): the student and the tutor."""
    entries = []
    for data in lang.all_languages():
        glued = clitics(data, prepositions=True)
        entries += [(compile_phrase(p), None, glued) for p in data.pronouns]
    return PhraseIndex(entries)


@functools.cache
def _shared_persons() -> dict[str, frozenset[str]]:
    """Persons that are another language's function word (French "on" 'we', English "on"), with
    the languages whose person they are."""
    person_of: dict[str, set[str]] = {}
    for data in lang.all_languages():
        for p in data.pronouns:
            if len(said := words(p)) == 1:
                person_of.setdefault(said[0], set()).add(data.code)
    shared: dict[str, frozenset[str]] = {}
    for data in lang.all_languages():
        for word in (w for s in data.stop_words for w in words(s)):
            if word in person_of and data.code not in person_of[word]:
                shared[word] = frozenset(person_of[word])
    return shared


def _between_us(query: str, tokens: list[str]) -> bool:
    """Whether the student or the tutor is in `query` (whose normalised words are `tokens`): a
    person of the language files, one that is another language's function word only in a
    sentence of its own language ("on a fait quoi", not "on Monday")."""
    shared = _shared_persons()
    ambiguous: set[str] = set()
    for m in _persons().find_all(tokens):
        said = tokens[m.start : m.end]
        if len(said) != 1 or said[0] not in shared:
            return True
        ambiguous.add(said[0])
    if not ambiguous:
        return False
    languages = sentence_languages(tokenize(query))
    return not languages or any(shared[w].intersection(languages) for w in ambiguous)


def about_someone_else(query: str) -> bool:
    """Whether `query` names someone (a capitalised word past the first of its sentence:
    "What exercises has John done?") while neither the student nor the tutor is in it: a
    question about that person's past, not the student's record."""
    named = any(
        m.group()[0].isupper()
        for m in _NAME.finditer(query)
        if not _sentence_start(query, m.start())
    )
    return named and not _between_us(query, words(query))


def _sentence_start(query: str, at: int) -> bool:
    before = query[:at].rstrip()
    return not before or before[-1] in _SENTENCE_ENDS


def is_record_question(query: str) -> bool:
    """True if `query` asks about the student's own record: mistakes, what was studied, progress,
    what happened in a period of their calendar. A message that carries a worked exercise asks
    about that exercise."""
    if carries_exercise(query):
        return False
    tokens = words(query)
    if trigger_matches(tokens):
        return True
    if question_matches(tokens):
        spans = tokenize(query)
        said = _words_of(spans)
        if _asked_record_phrases(query, spans, said, clause_starts(query, spans)):
            return True
    # A period alone is not enough: "when did Melanie go camping in June?" asks about someone
    # else's June. The student or the tutor must be in the question ("what did *we* do", "hai
    # *mi* spiegato", "what did *you* explain").
    return (
        has_time_words(query)
        and asks_words(query, tokens)
        and _between_us(query, tokens)
        and asked_window(query, _REFERENCE_US, "UTC") is not None
    )


def _words_of(spans: list[Token]) -> list[str]:
    """The words of `spans` as `words` reads them: the spans keep a sign glued to a word ("C#"),
    the phrase lists and the topic do not."""
    return [t.norm.rstrip(GLUED_SIGNS) for t in spans]


def _asked_record_phrases(
    query: str, spans: list[Token], tokens: list[str], starts: list[int]
) -> list[Match[RecordPhrase]]:
    """The phrases of `record_questions` ("abbiamo * fatto", "haben wir ** gemacht") in a
    clause that asks, or that a tag question follows ("…, vero?", "…, oder?", "…, ¿no?"):
    `tokens` are the words of `spans` (`tokenize(query)`), `starts` their `clause_starts`."""
    found = _of_the_sentences_languages(question_matches(tokens), spans)
    if not found:
        return []
    texts = clause_texts(query, spans, starts)
    asked: dict[int, bool] = {}

    def asking(k: int) -> bool:
        if k not in asked:
            asked[k] = asks(texts[k])
        return asked[k]

    def tagged(k: int) -> bool:
        # A tag confirms what came before ("vero?", "ولا لأ؟"); a short question of its own
        # opens with a question word ("درسنا الكسور أمس، ما هو المقام؟", what is a denominator?).
        return (
            k + 1 < len(texts)
            and _clause_words(starts, k + 1, len(tokens)) <= TAG_QUESTION_WORDS
            and tokens[starts[k + 1]] not in one_word_question_words()
            and asking(k + 1)
        )

    out = []
    for m in found:
        k = bisect.bisect_right(starts, m.start) - 1
        if asking(k) or tagged(k):
            out.append(m)
    return out


def _of_the_sentences_languages(
    found: list[Match[RecordPhrase]], spans: list[Token]
) -> list[Match[RecordPhrase]]:
    """`found` without the one-word phrases of a language the message is not in: accents
    folded, one language's word is another's (French "terminé", finished, is Italian "termine",
    term: "cos'è un complemento di termine" asks a grammar question). A longer phrase is its own
    language's, and a message with no stop word keeps them all."""
    if all(m.end - m.start > 1 for m in found):
        return found
    languages = sentence_languages(spans)
    return [
        m for m in found if m.end - m.start > 1 or not languages or m.payload.language in languages
    ]


def _clause_words(starts: list[int], k: int, total: int) -> int:
    return (starts[k + 1] if k + 1 < len(starts) else total) - starts[k]


@functools.cache
def _scope() -> PhraseIndex[None]:
    entries = []
    for data in lang.all_languages():
        entries += [(compile_phrase(p), None, ()) for p in data.scope_words]
    return PhraseIndex(entries)


@functools.cache
def _topic_prepositions() -> PhraseIndex[str]:
    """The topic prepositions of every language, each with its language's code."""
    entries = []
    for data in lang.all_languages():
        glued = clitics(data, prepositions=False)
        entries += [(compile_phrase(p), data.code, glued) for p in data.topic_prepositions]
    return PhraseIndex(entries)


def _prepositions_of(
    spans: list[Token], tokens: list[str], phrase_words: set[int]
) -> list[Match[str]]:
    """The topic prepositions of the message's languages (every language's when its stop words
    guess none), in order: French "du" (of the) is German "du" (you) in "kannst du mir
    auflisten…". None is a word of the record phrase itself: French "a" (has) is "à" unaccented
    ("on l'*a* déjà vue"), "de" closes "on a parlé de"."""
    found = [m for m in _topic_prepositions().find_all(tokens) if m.start not in phrase_words]
    if not found:
        return found
    languages = sentence_languages(spans)
    return [m for m in found if not languages or m.payload in languages]


def record_topic(query: str) -> str | None:
    """The topic a record question names: the content words after a topic preposition ("about
    fractions", "sulla fotosintesi"), else right after the record phrase ("did we already do
    mitosis"), within that clause ("cosa abbiamo fatto ieri? boh, nn lo so" names none); time
    words, stop words, fillers, the record's own words (`record_words`: "session", "quiz"), the
    participle of a past ("hayamos *repasado*") and the record phrase itself are never part of
    it. None when it names none."""
    spans = tokenize(query)
    tokens = _words_of(spans)
    starts = clause_starts(query, spans)
    triggers = trigger_matches(tokens) + _asked_record_phrases(query, spans, tokens, starts)
    skip = _not_topic()
    time_words = {t for t in tokens if has_time_words(t)}
    # Scope phrases ("so far", "last time", "since we started") are masked as a whole: their words
    # alone may be content words ("far", "time", "started").
    scope = {i for m in _scope().find_all(tokens) for i in range(m.start, m.end)}
    phrase_words = {i for m in triggers for i in m.payload.phrase.word_positions(tokens, m.start)}
    introduced = _prepositions_of(spans, tokens, phrase_words)
    at_preposition = {i for m in introduced for i in range(m.start, m.end)}

    def passable(i: int) -> bool:
        # A past form's participle may follow its function words, never a topic preposition
        # ("what did we do about the *United* Nations" has no participle) nor a word of the record
        # phrase, which is the participle when one is there ("tu m'as déjà *montré*": French
        # "montre", show, is an asking verb's word too).
        t = tokens[i]
        return (
            i not in at_preposition
            and i not in phrase_words
            and (t in skip or t in time_words or i in scope)
        )

    clause_ends = [s - 1 for s in starts[1:]] + [len(tokens) - 1]
    participles = participles_of_perfects(query, spans, passable, clause_ends)

    def clause_end(start: int, *, introduced: bool) -> int:
        # The end of the clause of the word before `start`. After a record phrase, a clause that
        # starts at `start` is another one ("cosa abbiamo fatto? tipo grafici?"); after a topic
        # preposition it is the topic that the preposition introduces ("re: cell division").
        at = (bisect.bisect_right if introduced else bisect.bisect_left)(starts, start)
        return starts[at] if at < len(starts) else len(tokens)

    def content(start: int, end: int) -> list[str]:
        kept: list[str] = []
        for i in range(start, end):
            t = tokens[i]
            if t in time_words or i in scope or any(c.isdigit() for c in t):
                if kept:
                    break
                continue
            if t in skip or i in participles:
                if kept and len(kept) < MAX_TOPIC_WORDS and t not in stop_words():
                    break
                continue
            kept.append(t)
            if len(kept) == MAX_TOPIC_WORDS:
                break
        return kept

    # A topic preposition may sit inside the record phrase's gap ("was haben wir *über die
    # Zellatmung* gelernt"); the phrase's own words are in `skip`.
    # A scan that finds nothing has read to its clause's end: a later preposition inside what it
    # read would find nothing either, and skipping it keeps the reading linear in the message.
    # The words right after the record phrase come first: a preposition further on belongs to
    # the topic they start ("abbiamo visto le equazioni *di* secondo grado").
    if triggers:
        after = max(m.end for m in triggers)
        end = clause_end(after, introduced=False)
        kept = content(after, end)
        if not kept and end < len(tokens) and _governed_question(query, spans, starts, end):
            # Nothing after the phrase in its clause, and a question it governs follows: "hast
            # du mir gezeigt, *wie man Brüche kürzt*?", "did you explain to me, how *vaccines
            # work*?"
            kept = content(end, clause_end(end, introduced=True))
        if kept:
            return " ".join(kept)
    read_up_to = 0
    for m in introduced:
        if m.end < read_up_to:
            continue
        read_up_to = clause_end(m.end, introduced=True)
        kept = content(m.end, read_up_to)
        if kept:
            return " ".join(kept)
    if triggers:
        # Inside a verb-final phrase's long gap ("hast du mir *die Zellteilung* schon erklärt?"),
        # else before the phrase.
        kept = next(
            (
                found
                for m in triggers
                if m.payload.phrase.long_gap and (found := content(m.start, m.end))
            ),
            [],
        ) or _said_before(tokens, triggers, starts, time_words, content)
        if kept:
            return " ".join(kept)
    return None


def _governed_question(query: str, spans: list[Token], starts: list[int], i: int) -> bool:
    """Whether the clause at `spans[i]` is a question that the one before governs: a comma
    between them, a question word opening it, and the message's question mark closing it (its
    last clause). "what did I get wrong, which is weird" goes on with a remark."""
    gap = query[spans[i - 1].end : spans[i].start]
    return (
        starts[-1] == i
        and query.rstrip()[-1:] in QUESTION_MARKS
        and any(c in CLAUSE_MARKS for c in gap)
        and not any(c in SENTENCE_END_MARKS for c in gap)
        and _words_of(spans[i : i + 1])[0] in one_word_question_words()
    )


def _said_before(
    tokens: list[str],
    triggers: list[Match[RecordPhrase]],
    starts: list[int],
    time_words: set[str],
    content: Callable[[int, int], list[str]],
) -> list[str]:
    """The topic said before the record phrase as a noun phrase that an article opens, in its
    clause ("*le disequazioni* le abbiamo mai fatte?", "*a mitose* você já me explicou?",
    "*التمثيل الضوئي* شرحته لي؟") or as the whole clause before it when only function words come
    before the phrase in its own ("*les logarithmes*, tu me les as expliqués ?"): its content
    words. Without an article the words before a record phrase are more often the student's
    lead-in ("wait", "raga", "honestly") than a topic; a part that names a time is the
    period's ("the other day what did we do"), one that makes a request asks for the answer's
    form ("give me a quick summary of my progress"), and a clause with a verb or the record's
    own words is a statement of its own ("the test went badly, what did I get wrong?")."""
    first = min(m.start for m in triggers)
    at = bisect.bisect_right(starts, first) - 1 if starts else 0
    opened = starts[at] if starts else 0
    requests = [m.start for m in request_matches(tokens)]
    if any(opened <= r < first for r in requests):
        return []
    for i in range(opened, first):
        if tokens[i] in articles() or _glued_article(tokens[i]):
            kept = _article_led(tokens, i, first, time_words, content)
            if kept:
                return kept
            break
    if at == 0 or any(tokens[j] not in stop_words() for j in range(opened, first)):
        return []
    before = starts[at - 1]
    if (
        any(before <= r < opened for r in requests)
        or not (tokens[before] in articles() or _glued_article(tokens[before]))
        or any(t in _not_topic() and t not in stop_words() for t in tokens[before:opened])
    ):
        return []
    return _article_led(tokens, before, opened, time_words, content)


def _article_led(
    tokens: list[str],
    article: int,
    end: int,
    time_words: set[str],
    content: Callable[[int, int], list[str]],
) -> list[str]:
    """The content words of the noun phrase its article at `article` opens, up to `end`; none
    when the part names a time."""
    if any(tokens[j] in time_words for j in range(article, end)):
        return []
    return content(article if _glued_article(tokens[article]) else article + 1, end)


def _glued_article(token: str) -> bool:
    """Whether `token` is a word with an article glued to its start (Arabic ال)."""
    return token not in stop_words() and has_article_prefix(token)
