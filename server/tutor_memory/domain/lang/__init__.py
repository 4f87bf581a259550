"""Word lists of the languages students write in (SPEC R2.5, R3, R4, R5.5, R6.3): one file each.

Code never holds a word of any language; it reads these files. Each `<code>.json` holds one object:

- `code`, `name`: the ISO 639-1 code (equal to the file name) and the English name of the language.
- `months`: 12 lists, January first; each lists the month's names: the full name first (the English
  file's full names also label time windows), then unambiguous abbreviations and spelling variants.
  Arabic lists both the Levantine/Iraqi names (كانون الثاني … كانون الأول) and the Egyptian/Gulf
  ones (يناير … ديسمبر), plus Maghrebi forms. Variants that differ only in what normalisation folds
  (accents, hamza on alef, teh marbuta) are listed once.
- `ambiguous_months`: names from `months` that are also ordinary words ("may" the verb, "march",
  French "mars" the planet, Spanish "julio" the first name). They count as a month only right after
  a month preposition of the same language or right before a year, and never with a glued clitic.
  (Recall also treats as ambiguous any month name that is a stop word of *any* language: French and
  German "mai" is Italian "never".)
- `month_prepositions`: phrases that introduce a month ("in", "during", "month of"; "a", "di",
  "nel mese di"; "في", "في شهر").
- `year_links`: phrases allowed between a month and its year ("July *of* 2025", "julio *de* 2025").
- `range_links`: phrases between the two ends of a range of dates ("3 *to* 10 May", "March *until*
  May", "dal 3 *al* 10 maggio", "von März *bis* Mai"). Between a month name or a day number and
  another, one is read as "to", and an ambiguous month beside it counts as a month ("between
  March *and May*").
- `before_words`, `after_words`: phrases that place a period before or after a date ("the week
  *before* 3 May", "*prima del* 3 maggio", "zwei Wochen *nach* dem 3. Mai", "*après* le 3 mai"),
  counted from that date rather than from now. Read so only when a date follows them (an article
  may come between): "vor drei Tagen" stays three days ago.
- `until_words`: phrases that close the record at a date, that date included ("*until* March",
  "*fino al* 3 maggio", "*bis zum* 3. Mai"), read so only when a date follows them and they do not
  join the two ends of a range ("from March *until* May" is a `range_links` range).
- `year_suffixes`: letters glued after a year's digits (Arabic "2025م").
- `attached_prepositions`, `attached_conjunctions`: clitics glued to the next word (Arabic ب "in",
  و "and"). A month with an attached preposition counts as introduced by one; a conjunction doesn't.
- `time_glosses`: an object mapping a word or phrase to English words, for the time words the
  date library (dateparser) leaves untranslated: "since", "between", "last" after its noun
  ("settimana scorsa", "الأسبوع الماضي"), numerals it lacks ("tre", "dos"), "the week before last"
  ("vorletzte": "ago last"), "weekend", the words for a school term or year ("quadrimestre":
  "schoolterm", "anno scolastico": "schoolyear"), and the names of seasons and feasts as students
  name their holidays ("vacanze di Natale": "calendarchristmas", "Osterferien": "calendareaster",
  "l'estate scorsa": "last calendarsummer", "رمضان": "calendarramadan"; the reading words are
  `tutor_memory.domain.recall.calendar_names.NAMED`). A name that is also an ordinary word is
  glossed only in the phrases where it is the season (French "l'été", "cet été", never "été",
  which is also a participle; English "last spring", "spring break", never "spring"). The
  English words are those of `tutor_memory.domain.recall.timewindow`'s grammar (see
  `tutor_memory.domain.recall.timewords`).
- `ago_prepositions`: words that, right before a number of days, weeks, months or years, count
  them back from now, as "ago" does after them (spoken Arabic من: "من يومين", two days ago; "من
  تلات أيام", three days ago; spoken French "ya deux semaines"; Portuguese "faz duas semanas",
  "tem três dias"). Single words, read so only in a text that speaks of the past ("ya deux
  semaines de vacances" is two weeks of holiday).
- `ago_postpositions`: words that, right after a number of days, weeks, months or years, count
  them back from now as "ago" does ("two weeks *back*"); after a unit without a number they are
  something else ("the first day back at school"). Single words.
- `plural_spans`: two-word phrases, a word for "last" and a plural unit, that name the last few
  days, weeks or months without a count ("the past weeks", "in den letzten Wochen"): read as the
  last three, as "the last few weeks" is. Only where the date library's translation loses the
  plural of the unit (English and German nouns); where "last" itself is plural ("le ultime
  settimane", "ces derniers jours") `time_glosses` read it.
- `record_triggers`: phrases by which a student asks about their own record ("what did I get
  wrong").
- `record_questions`: phrases that ask about the record only in a clause that asks (a question
  mark, a question word, an inverted verb; or followed by a tag question, "…, vero?"): "abbiamo *
  fatto", "a gente * estudou", "haben wir ** gemacht", "خلصت". "le frazioni le abbiamo fatte?"
  asks about the sessions; "abbiamo fatto le frazioni, ma cos'è un denominatore?" tells what was
  done and asks something else. Matched as `record_triggers` are, with the same
  `trigger_vetoes`. English asks by inverting its auxiliary ("have we done", "did I finish"),
  which makes a question wherever it stands: those are `record_triggers`.
- `topic_prepositions`: words that introduce what a record question is about ("what did I get wrong
  *about* fractions", "cosa abbiamo fatto *sulla* fotosintesi", "ماذا درسنا *عن* البراكين").
- `scope_words`: words and phrases that qualify a record question's extent, frequency or tone and
  are never its topic ("so far", "overall", "last time", "since we started", "usually",
  "together", "lol"; "finora", "in generale", "bisher", "لحد الآن"), the school calendar's
  units among them ("since the start of term", "da inizio quadrimestre").
- `record_words`: words of the record itself, never a record question's topic: its events and
  marks ("session", "quiz", "mark", "exercises", "verifica", "Note"), what a student does in it
  ("revise", "practise", "ripassare") and how it goes for them ("struggling", "improved",
  "fatica"). "which questions did I get wrong in the quizzes" asks about the whole record,
  "what was my mark on the fractions quiz" about fractions.
- `trigger_vetoes`: single words that, right before a trigger, make it a different question
  (Spanish "por" in "¿por qué estudiamos…?", "why do we study…").
- `narration_markers`: first-person-plural recap verbs a tutor uses to narrate past sessions
  ("we covered", "abbiamo visto", "درسنا").
- `marker_vetoes`: single words that, right before a marker, make it something else (Arabic في in
  "في درسنا", "in our lesson").
- `session_persons`: words that put the student (addressed by the tutor) or the class in a
  sentence: second person and first person plural, pronouns, possessives and pro-drop verbs that
  carry the person ("you", "we", "us", "together"; French "on", "ton", "notre"; Italian "abbiamo",
  "hai"). With a past form and a period, a sentence narrates ("Last Tuesday you practised…", "La
  semana pasada hemos visto…"); the first person singular alone does not ("Yesterday I went to
  a concert" is the speaker's own life, not the sessions).
- `past_forms`: whole words that are a past tense or a past auxiliary ("did", "were", "hai",
  "avons", "warst", "fizemos", "كنا"), written with their accents: they must agree ("a" but not
  "à").
- `past_person_forms`: whole words that are a past with the student or the tutor as their person
  ("hiciste", "fizemos", "راجعت", "أنهينا"): a past and a person at once.
- `past_endings`: endings of regular past forms that stand alone ("ed", "ava", "ó", "ou"), read
  only on a sentence of their language, on words of at least `MIN_PAST_STEM` more letters.
- `past_person_endings`: endings that mark both a past and the student or the tutor ("-aste",
  "-amos", "-asti"), same conditions.
- `past_ending_exceptions`: word endings that are never a past, though they end in one of the
  endings above: French "-tions", "-sions", "-xions" are nouns ("fractions", "révisions",
  "réflexions") far more often than the imperfect "-ions" ("nous faisions").
- `perfect_auxiliaries`: the `past_forms` that are present tenses of "have" and "be" ("have",
  "ho", "ai", "haben", "sind"): they make a perfect with a participle after them ("have we
  covered", "ho sbagliato") and are a present alone ("I have a test on Monday", "lunedì ho la
  verifica"). Where the tense decides a reading (`tutor_memory.domain.recall.tense.speaks_of_past`),
  they count only with a participle after them.
- `past_ending_vetoes`: words right after which a word that ends like a past is an adjective or a
  present passive, not a past: English copulas and intensifiers ("I'm *worried*", "so
  *stressed*", "what is *covered*", "it's *based* on").
- `past_connectives`: phrases built on a past form that are no pasts: connectives ("visto che",
  "vu que", "visto que": given that) and presents of the same spelling (French "il fait froid",
  "on fait"); the past forms inside them are none.
- `possession_forms`: past forms that, right after a perfect auxiliary and before a noun phrase
  (an article, a number, a person's word), are a present of having: English "got" ("I've got a
  test on Friday", against "what have I got wrong?").
- `participle_shapes`: participles, written `prefix…suffix` (French "…é": "raté"; Italian "…ato",
  Spanish and Portuguese "…ado"; a leading `…` lets other letters come before the prefix, German
  "…ge…en": "gesprochen", "abgeschlossen"), that count only after a perfect auxiliary, within a
  few words of it and before any article, or anywhere after it for a shape with a prefix (German
  puts it at the end of the clause): alone, the shape is too common a word's ("université",
  "Übungen", "compiti", "significato", "resultado").
- `about_prepositions`: phrases that make what follows the subject of the message ("about",
  "sulla", "sur le", "zum Thema", "عن"): a season or a feast named right after one (an article may
  come between) is a topic, not a period ("what did we say about the Christmas truce?", "sur le
  Printemps arabe", "عن الربيع العربي"). Not German "über", which is as often "over" a period
  ("über die Pfingstferien").
- `time_false_friends`: phrases in which a time word means something else ("hoy en día",
  "nowadays"; "Julio César"; Arabic "في اليوم", "per day"); a time expression overlapping one is
  ignored.
- `ordinal_weekdays`: weekday names that are also ordinal adjectives (Portuguese "segunda",
  "terça", "quarta", "quinta", "sexta"): right after an article of any language and not before
  one of `weekday_suffixes`, they are the ordinal ("a segunda lei de Newton", "la segunda ley"),
  not the day.
- `weekday_suffixes`: what may follow such a name when it is the day ("feira").
- `name_capitals`: what a capital letter inside a sentence tells of a month or weekday name beside
  it, as the language is written: `"neighbours"`, a capitalised word right before or after it
  makes it part of a name ("the October Revolution", "Black Friday"); `"neighbours_and_dates"`
  (languages that write months in lower case), that, and a month capitalised itself ("la
  Revolución de Octubre", "la Rivoluzione d'Ottobre"); `"none"` (German, which capitalises every
  noun; Arabic, which has no capitals). Portuguese is `"neighbours"`: Portugal wrote months
  capitalised until the 1990 spelling agreement, and many still do. A name is no period unless a
  month preposition, a day number or a year dates it.
- `stop_words`: 100-250 of the language's most common function words, question words and modal
  verbs, with the chat spellings of function words ("nn" for "non", "vc", "jai"), already
  normalised (as `tutor_memory.domain.text.normalise` leaves them).

Concept names (SPEC R3.2, R3.3; `tutor_memory.domain.conceptmap.canonical`, `.headings`):

- `articles`: standalone articles ("the", "il", "l'", "los", "des", "die", "os"). One at the start
  of a concept name is dropped from its canonical key. Single words.
- `article_prefixes`: articles glued to the next word (Arabic ال, and the clitic + article forms
  وال, بال, كال, فال, لل). Stripped from every word of a canonical key while at least
  `MIN_LETTERS_AFTER_ARTICLE_PREFIX` letters remain (see `conceptmap.canonical`).
- `possessive_suffixes`: possessive endings glued with an apostrophe ("'s": "Newton's law" keys as
  "newton law").
- `plural_rules`: endings that plural words of the language take, each an object
  `{"ending", "replacement", "min_stem", "unless"}`: a word ending in `ending`, with at least
  `min_stem` letters before it and not ending in any of `unless`, folds to stem + `replacement`.
  Rules apply to every Latin-script word whatever its language (a name's language is not known), so
  a rule belongs here only if it never makes two different words of *any* language equal; see
  `tutor_memory.domain.conceptmap.canonical` for the exact list and what is deliberately not folded.
- `plural_exceptions`: words no rule may fold, because the folded form is a different word
  ("species" would meet "specie", "odds" would meet "odd").
- `plural_irregulars`: an object mapping irregular plurals to their singular ("children": "child").

Section headings (SPEC R3.2; `tutor_memory.domain.conceptmap.headings`):

- `section_headings`: a file's furniture ("Introduction", "Common mistakes", "Esercizi"). A concept
  name equal to one (compared by canonical key, numbering ignored) is rejected.
- `section_heading_openers`: how furniture headings that name their topic begin ("introduction to",
  "esercizi sulla"); a name that starts with one and goes on is rejected too.
- `section_labels`: words that, followed by a number, refer to a part of a file ("chapter",
  "Kapitel", "الفصل"): "Chapter 3", "Section 2.1". Single words.
- `number_words`: numbers written as words after a label ("Part Two", "الفصل الثالث"). Single words.

The offline extractor (SPEC R3.1, R5.1; `tutor_memory.domain.conceptmap.extract`):

- `definition_links`: what joins a term to its definition, term first ("is a", "è un", "es una",
  "هو"). When the last word is an article, the definition starts with it. A link word written with
  an accent matches only with that accent (Italian "è" 'is' against "e" 'and', Portuguese "é").
- `naming_links`: what introduces a term after its description ("is called", "si chiama", "يسمى").
- `prerequisite_cues`: what introduces the prerequisites of a concept ("requires", "presuppone");
  longer forms ("requires an understanding of") take precedence, so the prerequisite named after
  them is the concept itself.
- `name_connectors`: function words allowed inside a name ("of", "di", "de", "von": "ciclo di
  Krebs"). An article is allowed inside a name only right after one ("theory of the firm").
- `list_conjunctions`: words that separate the items of a list ("and", "e", "y", "und").

Teaching and questions (SPEC R4; `tutor_memory.domain.conceptmap.teaching`):

- `question_openers`: words that open a question at the start of a sentence: question words that
  cannot start a statement, and the verb-first forms of an inverted question ("is", "can you",
  "est-ce que", "hat", "هل"). Question words that also start statements ("when", Spanish "como",
  Italian "quando") appear only in unambiguous combinations, or not at all.
- `lead_ins`: discourse words allowed before a teaching trigger or a question opener ("ok", "so",
  "allora", "bueno", "by the way").
- `teach_triggers`: phrases that start an explicit teaching sentence ("remember that", "ricorda
  che", "souviens-toi que", "تذكر أن"); the note is what follows. Without wildcards: a gap would let
  "remember what that means" teach.
- `keep_cues`: phrases that announce, at the start of a clause, that what follows is for the
  tutor to keep ("just so you know", "for next time", "from now on", "per la prossima volta",
  "ab jetzt", "للعلم"); the note is what follows. They teach on their own, like `teach_triggers`.
- `keep_verbs`: bare imperatives of remembering ("remember", "ricordati", "denk dran", "تذكر"):
  they teach when punctuation follows them ("remember: …") or a word that is not a question word
  ("remember we say …", but not "remember what that means"), nor one of `keep_verb_vetoes`.
- `keep_verb_vetoes`: single words that, right after a bare memory verb, make it an errand rather
  than a note to keep ("remember *to* bring the book", "ricordati *di* portare il libro").
- `keep_labels`: words that label a message as a note ("heads up", "nota bene", "achtung",
  "ملاحظة"): they teach only followed by a colon, a comma or a dash ("achtung: …"), since bare
  they are ordinary words ("important dates").
- `keep_tails`: phrases that, after clause punctuation, ask the tutor to keep what came before
  them ("…, keep that in mind", "…, use that", "tienilo presente", "merk dir das", "خذ هذا بعين
  الاعتبار"), whatever follows them ("…, keep that in mind whenever we do maths"); alone in their
  sentence, they ask to keep the sentence before.
- `standing_words`, `request_words`: a standing request, both in one clause of a statement: a word
  that makes it hold from now on ("always", "every time", "sempre", "siempre", "immer", "دايما")
  and a word that makes it a request to the tutor ("please", "I want you to", "per favore",
  "quiero que", "bitte", "من فضلك"): "pls always use British spelling with me". Either alone is
  too common ("I always mix them up"; "please explain osmosis").
- `preference_cues`: phrases that open a statement of how the student learns best ("I understand
  better when", "capisco meglio quando", "ich lerne besser, wenn", "بفهم احسن لما"): a standing
  request in the form of a fact about the student.
- `standing_topic`: the concept a standing request is a note on, in the language's words ("how I
  learn best", "come imparo meglio"): one node gathers how the student wants to be taught, where
  the request's own first words would name a node after a verb ("use", "give").
- `own_cues`: phrases that announce a note at the start of a clause only when the note speaks of
  the student's own setting ("note that", "note que", "nota che", "beachte, dass", "لاحظ أن"):
  textbooks and pasted exercises use them for ordinary exposition ("note that the anode is
  negative"), a student for a fact about their class ("note that in our textbook the anode is on
  the left", "note que je passe le bac"). They teach when one of `own_words` follows in the
  sentence.
- `own_words`: words by which a note speaks of the student's own setting: the first person
  singular ("I", "my", "je", "mi", "ich"; verb forms that carry it, "sono", "estoy") and the
  possessives of the first person plural ("our", "notre", "nostro", "unser", "nossa"). Not the
  bare "we", which textbooks use for their readers ("note that we can factor…").
- `consider_triggers`, `consider_links`: "consider X as Y" in pieces: the verb and the word that
  follows X ("consider" … "as", "considera" … "come"). Any trigger pairs with any link of its file.
- `teach_framings`: framing at the start of a note that is not its subject ("in our class", "qui",
  "في صفنا").
- `school_words`: words that place a statement in the student's school rather than in the
  sessions with the tutor ("in class", "teacher", "a scuola", "en cours", "im Unterricht", "في
  المدرسة"): "last week in class we started Faust, what is it about?" names the school's week,
  and the question is not about the record of that week (`tutor_memory.domain.recall.asked_period`).
- `naming_verbs`: how a teacher introduces the class's own term ("we call", "chiamiamo", "نسمي");
  what follows is the subject.

Spoken expression (SPEC R5.5; `tutor_memory.domain.beliefs.spoken`): a check topic containing one
of these is the student's own words, not a subject term.

- `question_words`: question words anywhere in the topic ("what", "perché", "ماذا").
- `final_question_words`: question words that ask from the end of a message, where spoken
  questions leave them ("mardi on a revu *quoi*", "a gente falou do *quê*", "عملنا *ايه*", "you
  did *what*"): a message ending in one asks (`tutor_memory.domain.recall.asking`). Not those that
  also end statements ("que", "was" as "something", "ما").
- `asking_verbs`: asking and explaining verbs, imperative as students type them ("explain",
  "spiegami", "explícame", "اشرح").
- `pronouns`: first- and second-person pronouns; phrases where the bare word is also an article or a
  preposition elsewhere (English "I" is Italian "i": "i am", "i don't"). A single word that is a
  stop word of another language counts as a person only in a sentence of its own language (French
  "on", we, against English "on": `tutor_memory.domain.recall.record_mode`).
- `fillers`: discourse fillers and politeness ("ok", "bueno", "allora", "يعني").
  None of these four may list a word that is an article of any language (a test checks it).

Sentences and grounding (SPEC R7.2, R7.3; `tutor_memory.domain.text.sentences`,
`tutor_memory.domain.honesty.grounding`):

- `abbreviations`: abbreviations after whose full stop a tutor's sentence goes on ("e.g", "Dr",
  "p", "z.B"), written without their final dot (inner dots kept), compared normalised.
- `discourse_words`: conversational words of an answer that claim nothing about the subject
  ("sure", "great question", "certo", "claro"); with the stop words, they never count as a term
  of a sentence.
- `glued_prefixes`: every prefix that may be glued to a word (Arabic conjunctions, prepositions and
  the article, alone and combined: و, ب, ال, وال, بال), so that grounding compares والماء with
  الماء and ماء. Longest first is not required: the reader sorts them.

- `texting_spellings`: an object mapping the short spellings students type for a word to the word
  as the phrase lists write it ("q": "que", "xke": "perché", "vc": "você", "tmrw": "tomorrow").
  Every phrase of every list also matches with a word written in one of its spellings
  (`tutor_memory.domain.text.phrases`), so "pa q lo sepas" is "para que lo sepas" without a list
  holding both. A spelling belongs here only if it is no word of any language a phrase could meet
  on its own (no "y", Spanish "and", for "why"; no "x" for "por", which is an unknown in algebra).

Phrases are written in the syntax documented in `tutor_memory.domain.text.phrases` (words, with `*`
/ `**` wildcards for the words a recap or question may put in between); `month_prepositions`,
`year_links`, `range_links`, `before_words`, `after_words`, `until_words` and month names are plain
words, without wildcards. Lists may be empty where a language has no such words (Arabic has no
standalone articles; Italian plural folding is not safe).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

LANGUAGES = ("en", "it", "es", "fr", "de", "pt", "ar")

MONTHS_PER_YEAR = 12

_STRING_LIST_FIELDS = (
    "ambiguous_months",
    "month_prepositions",
    "year_links",
    "range_links",
    "before_words",
    "after_words",
    "until_words",
    "year_suffixes",
    "attached_prepositions",
    "attached_conjunctions",
    "ago_prepositions",
    "ago_postpositions",
    "plural_spans",
    "record_triggers",
    "record_questions",
    "topic_prepositions",
    "scope_words",
    "record_words",
    "trigger_vetoes",
    "narration_markers",
    "marker_vetoes",
    "session_persons",
    "school_words",
    "past_forms",
    "past_person_forms",
    "past_endings",
    "past_person_endings",
    "past_ending_exceptions",
    "perfect_auxiliaries",
    "past_ending_vetoes",
    "past_connectives",
    "possession_forms",
    "participle_shapes",
    "about_prepositions",
    "time_false_friends",
    "ordinal_weekdays",
    "weekday_suffixes",
    "stop_words",
    "articles",
    "article_prefixes",
    "possessive_suffixes",
    "plural_exceptions",
    "section_headings",
    "section_heading_openers",
    "section_labels",
    "number_words",
    "definition_links",
    "naming_links",
    "prerequisite_cues",
    "name_connectors",
    "list_conjunctions",
    "question_openers",
    "lead_ins",
    "teach_triggers",
    "keep_cues",
    "keep_verbs",
    "keep_verb_vetoes",
    "keep_labels",
    "keep_tails",
    "standing_words",
    "request_words",
    "preference_cues",
    "own_cues",
    "own_words",
    "consider_triggers",
    "consider_links",
    "teach_framings",
    "naming_verbs",
    "question_words",
    "final_question_words",
    "asking_verbs",
    "pronouns",
    "fillers",
    "abbreviations",
    "discourse_words",
    "glued_prefixes",
)

_PLURAL_RULE_KEYS = frozenset({"ending", "replacement", "min_stem", "unless"})
# The values of `name_capitals` (see the module docstring).
NAME_CAPITALS = ("none", "neighbours", "neighbours_and_dates")


@dataclass(frozen=True, slots=True)
class PluralRule:
    """One entry of `plural_rules` (see the module docstring)."""

    ending: str
    replacement: str
    min_stem: int
    unless: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LanguageData:
    """One language file, as written (see the module docstring for what each field means)."""

    code: str
    name: str
    months: tuple[tuple[str, ...], ...]
    ambiguous_months: tuple[str, ...]
    month_prepositions: tuple[str, ...]
    year_links: tuple[str, ...]
    range_links: tuple[str, ...]
    before_words: tuple[str, ...]
    after_words: tuple[str, ...]
    until_words: tuple[str, ...]
    year_suffixes: tuple[str, ...]
    attached_prepositions: tuple[str, ...]
    attached_conjunctions: tuple[str, ...]
    time_glosses: Mapping[str, str]
    ago_prepositions: tuple[str, ...]
    ago_postpositions: tuple[str, ...]
    plural_spans: tuple[str, ...]
    record_triggers: tuple[str, ...]
    record_questions: tuple[str, ...]
    topic_prepositions: tuple[str, ...]
    scope_words: tuple[str, ...]
    record_words: tuple[str, ...]
    trigger_vetoes: tuple[str, ...]
    narration_markers: tuple[str, ...]
    marker_vetoes: tuple[str, ...]
    session_persons: tuple[str, ...]
    school_words: tuple[str, ...]
    past_forms: tuple[str, ...]
    past_person_forms: tuple[str, ...]
    past_endings: tuple[str, ...]
    past_person_endings: tuple[str, ...]
    past_ending_exceptions: tuple[str, ...]
    perfect_auxiliaries: tuple[str, ...]
    past_ending_vetoes: tuple[str, ...]
    past_connectives: tuple[str, ...]
    possession_forms: tuple[str, ...]
    participle_shapes: tuple[str, ...]
    about_prepositions: tuple[str, ...]
    time_false_friends: tuple[str, ...]
    ordinal_weekdays: tuple[str, ...]
    weekday_suffixes: tuple[str, ...]
    name_capitals: str
    standing_topic: str
    stop_words: tuple[str, ...]
    articles: tuple[str, ...]
    article_prefixes: tuple[str, ...]
    possessive_suffixes: tuple[str, ...]
    plural_rules: tuple[PluralRule, ...]
    plural_exceptions: tuple[str, ...]
    plural_irregulars: Mapping[str, str]
    texting_spellings: Mapping[str, str]
    section_headings: tuple[str, ...]
    section_heading_openers: tuple[str, ...]
    section_labels: tuple[str, ...]
    number_words: tuple[str, ...]
    definition_links: tuple[str, ...]
    naming_links: tuple[str, ...]
    prerequisite_cues: tuple[str, ...]
    name_connectors: tuple[str, ...]
    list_conjunctions: tuple[str, ...]
    question_openers: tuple[str, ...]
    lead_ins: tuple[str, ...]
    teach_triggers: tuple[str, ...]
    keep_cues: tuple[str, ...]
    keep_verbs: tuple[str, ...]
    keep_verb_vetoes: tuple[str, ...]
    keep_labels: tuple[str, ...]
    keep_tails: tuple[str, ...]
    standing_words: tuple[str, ...]
    request_words: tuple[str, ...]
    preference_cues: tuple[str, ...]
    own_cues: tuple[str, ...]
    own_words: tuple[str, ...]
    consider_triggers: tuple[str, ...]
    consider_links: tuple[str, ...]
    teach_framings: tuple[str, ...]
    naming_verbs: tuple[str, ...]
    question_words: tuple[str, ...]
    final_question_words: tuple[str, ...]
    asking_verbs: tuple[str, ...]
    pronouns: tuple[str, ...]
    fillers: tuple[str, ...]
    abbreviations: tuple[str, ...]
    discourse_words: tuple[str, ...]
    glued_prefixes: tuple[str, ...]


def _strings(where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where} must be a list of non-empty strings")
    return tuple(value)


def _plural_rule(where: str, value: Any) -> PluralRule:
    if not isinstance(value, dict) or set(value) != _PLURAL_RULE_KEYS:
        raise ValueError(f"{where} must be an object with the keys {sorted(_PLURAL_RULE_KEYS)}")
    ending, replacement, min_stem = value["ending"], value["replacement"], value["min_stem"]
    if not isinstance(ending, str) or not ending.strip() or not isinstance(replacement, str):
        raise ValueError(f"{where}: 'ending' must be a non-empty string, 'replacement' a string")
    if not isinstance(min_stem, int) or isinstance(min_stem, bool) or min_stem < 1:
        raise ValueError(f"{where}: 'min_stem' must be a positive integer")
    return PluralRule(
        ending, replacement, min_stem, _strings(f"{where}: 'unless'", value["unless"])
    )


def _irregulars(where: str, value: Any) -> Mapping[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip()
        for k, v in value.items()
    ):
        raise ValueError(f"{where} must map non-empty strings to non-empty strings")
    return MappingProxyType(dict(value))


def _parse(code: str, raw: Any) -> LanguageData:
    where = f"language file {code}.json"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must hold a JSON object")
    if raw.get("code") != code or not isinstance(raw.get("name"), str):
        raise ValueError(f"{where}: 'code' must be {code!r} and 'name' a string")
    months = raw.get("months")
    if not isinstance(months, list) or len(months) != MONTHS_PER_YEAR:
        raise ValueError(f"{where}: 'months' must list {MONTHS_PER_YEAR} months")
    lists = {f: _strings(f"{where}: '{f}'", raw.get(f)) for f in _STRING_LIST_FIELDS}
    name_capitals = raw.get("name_capitals")
    if name_capitals not in NAME_CAPITALS:
        raise ValueError(f"{where}: 'name_capitals' must be one of {', '.join(NAME_CAPITALS)}")
    standing_topic = raw.get("standing_topic")
    if not isinstance(standing_topic, str) or not standing_topic.strip():
        raise ValueError(f"{where}: 'standing_topic' must be a non-empty string")
    rules = raw.get("plural_rules")
    if not isinstance(rules, list):
        raise ValueError(f"{where}: 'plural_rules' must be a list")
    return LanguageData(
        code=code,
        name=raw["name"],
        months=tuple(_strings(f"{where}: month {i + 1}", m) for i, m in enumerate(months)),
        time_glosses=_irregulars(f"{where}: 'time_glosses'", raw.get("time_glosses")),
        name_capitals=name_capitals,
        standing_topic=standing_topic,
        plural_rules=tuple(
            _plural_rule(f"{where}: plural rule {i + 1}", r) for i, r in enumerate(rules)
        ),
        plural_irregulars=_irregulars(
            f"{where}: 'plural_irregulars'", raw.get("plural_irregulars")
        ),
        texting_spellings=_irregulars(
            f"{where}: 'texting_spellings'", raw.get("texting_spellings")
        ),
        **lists,
    )


@functools.cache
def load(code: str) -> LanguageData:
    """The data of one language (`code` from `LANGUAGES`); read once, then cached."""
    if code not in LANGUAGES:
        raise ValueError(f"unknown language {code!r}; known: {', '.join(LANGUAGES)}")
    text = resources.files(__name__).joinpath(f"{code}.json").read_text(encoding="utf-8")
    return _parse(code, json.loads(text))


def all_languages() -> tuple[LanguageData, ...]:
    """Every supported language, in `LANGUAGES` order."""
    return tuple(load(code) for code in LANGUAGES)
