"""The language files load, are complete and consistent, and normalisation folds what it should."""

from __future__ import annotations

import json
from collections import defaultdict
from importlib import resources

import pytest

from tutor_memory.domain import lang
from tutor_memory.domain.lang import LANGUAGES, LanguageData
from tutor_memory.domain.recall.calendar_names import NAMED
from tutor_memory.domain.recall.timewords import SCHOOL_TERM, SCHOOL_YEAR, WEEKDAYS
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.phrases import compile_phrase
from tutor_memory.domain.text.words import stop_words, words

MIN_STOP_WORDS, MAX_STOP_WORDS = 100, 250


def _key(text: str) -> str:
    return " ".join(words(text))


# Phrase fields added for the concept map, teaching and check topics (SPEC R3, R4, R5.5).
CONCEPT_PHRASE_FIELDS = (
    "section_headings",
    "section_heading_openers",
    "definition_links",
    "naming_links",
    "prerequisite_cues",
    "list_conjunctions",
    "question_openers",
    "lead_ins",
    "teach_triggers",
    "consider_triggers",
    "consider_links",
    "teach_framings",
    "naming_verbs",
    "standing_words",
    "request_words",
    "preference_cues",
    "own_cues",
    "own_words",
    "question_words",
    "asking_verbs",
    "pronouns",
    "fillers",
)

# Fields every language must fill (articles, connectors, plural data may rightly be empty).
REQUIRED_CONCEPT_FIELDS = (*CONCEPT_PHRASE_FIELDS, "section_labels", "number_words")

# Fields whose entries are single words.
SINGLE_WORD_FIELDS = (
    "articles",
    "article_prefixes",
    "section_labels",
    "number_words",
    "name_connectors",
    "plural_exceptions",
)

SPOKEN_FIELDS = ("question_words", "asking_verbs", "pronouns", "fillers")


def _phrase_fields(data: LanguageData) -> dict[str, tuple[str, ...]]:
    fields = {
        "month_prepositions": data.month_prepositions,
        "year_links": data.year_links,
        "range_links": data.range_links,
        "before_words": data.before_words,
        "after_words": data.after_words,
        "until_words": data.until_words,
        "record_triggers": data.record_triggers,
        "record_questions": data.record_questions,
        "narration_markers": data.narration_markers,
        "time_false_friends": data.time_false_friends,
    }
    fields.update({f: getattr(data, f) for f in CONCEPT_PHRASE_FIELDS})
    fields["time_glosses"] = tuple(data.time_glosses)
    fields.update({f"month {i + 1}": names for i, names in enumerate(data.months)})
    return fields


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_language_file_loads_with_twelve_named_months(code: str) -> None:
    data = lang.load(code)
    assert data.code == code
    assert len(data.months) == 12
    assert all(names for names in data.months)
    assert data.time_glosses
    assert data.record_triggers
    assert data.narration_markers
    assert data.month_prepositions


def test_load_is_cached_and_all_languages_keeps_the_declared_order() -> None:
    assert lang.load("it") is lang.load("it")
    assert tuple(d.code for d in lang.all_languages()) == LANGUAGES


def test_unknown_language_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'xx'"):
        lang.load("xx")


def test_malformed_language_data_is_refused_with_the_file_and_field() -> None:
    with pytest.raises(ValueError, match=r"en\.json: 'months'"):
        lang._parse("en", {"code": "en", "name": "English", "months": [["january"]]})


@pytest.mark.parametrize("code", LANGUAGES)
def test_no_month_name_is_listed_twice_or_under_two_months(code: str) -> None:
    seen: dict[str, int] = {}
    for number, names in enumerate(lang.load(code).months, start=1):
        for name in names:
            key = _key(name)
            assert key not in seen, f"{code}: {name!r} also listed under month {seen[key]}"
            seen[key] = number


def test_a_month_name_means_the_same_month_in_every_language() -> None:
    meaning: dict[str, set[int]] = defaultdict(set)
    for data in lang.all_languages():
        for number, names in enumerate(data.months, start=1):
            for name in names:
                meaning[_key(name)].add(number)
    assert {name: months for name, months in meaning.items() if len(months) > 1} == {}


@pytest.mark.parametrize("code", LANGUAGES)
def test_ambiguous_months_are_month_names_of_the_same_language(code: str) -> None:
    data = lang.load(code)
    names = {_key(n) for ns in data.months for n in ns}
    assert {_key(a) for a in data.ambiguous_months} <= names


def test_time_glosses_are_english_words_of_the_period_grammar() -> None:
    grammar = {"since", "between", "last", "this", "ago", "weekend", "fortnight", "start"}
    grammar |= {"day", "week", "month", "year"} | set(WEEKDAYS)
    # The school term and year; English "term" only in "start term" (see timewords.SCHOOL_TERM).
    grammar |= {SCHOOL_TERM, SCHOOL_YEAR, "term"}
    # Seasons and feasts (calendar_names).
    grammar |= NAMED
    for data in lang.all_languages():
        for source, english in data.time_glosses.items():
            for word in english.split():
                assert word in grammar or word.isdigit(), f"{data.code}: {source!r} -> {word!r}"


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_phrase_compiles_and_none_repeats_within_its_field(code: str) -> None:
    for field, phrases in _phrase_fields(lang.load(code)).items():
        compiled = [compile_phrase(p).items for p in phrases]
        assert len(set(compiled)) == len(compiled), f"{code}: a phrase repeats in {field}"


@pytest.mark.parametrize("code", LANGUAGES)
def test_month_names_prepositions_and_year_and_range_links_are_plain_words(code: str) -> None:
    data = lang.load(code)
    plain = data.month_prepositions + data.year_links + data.range_links
    plain += data.before_words + data.after_words + data.until_words
    plain += tuple(n for ns in data.months for n in ns)
    assert [p for p in plain if not all(isinstance(i, str) for i in compile_phrase(p).items)] == []


@pytest.mark.parametrize("code", LANGUAGES)
def test_month_names_are_not_also_month_prepositions(code: str) -> None:
    data = lang.load(code)
    names = {_key(n) for ns in data.months for n in ns}
    assert names.isdisjoint(_key(p) for p in data.month_prepositions)


@pytest.mark.parametrize("code", LANGUAGES)
def test_vetoes_and_clitics_are_single_words(code: str) -> None:
    data = lang.load(code)
    for word in (
        data.trigger_vetoes
        + data.marker_vetoes
        + data.attached_conjunctions
        + data.attached_prepositions
        + data.year_suffixes
    ):
        assert len(words(word)) == 1, f"{code}: {word!r}"


@pytest.mark.parametrize("code", LANGUAGES)
def test_stop_words_are_normalised_single_words_without_duplicates(code: str) -> None:
    stops = lang.load(code).stop_words
    assert MIN_STOP_WORDS <= len(stops) <= MAX_STOP_WORDS
    assert len(set(stops)) == len(stops)
    assert [w for w in stops if words(w) != [w] or normalise(w) != w] == []


def test_stop_words_are_the_union_of_every_language() -> None:
    union = stop_words()
    assert {"the", "mai", "que", "nicht", "في", "الي"} <= union
    assert union == {w for d in lang.all_languages() for w in d.stop_words}


def test_arabic_lists_levantine_and_egyptian_gulf_month_names() -> None:
    months = lang.load("ar").months
    assert {"كانون الثاني", "يناير"} <= set(months[0])
    assert {"كانون الأول", "ديسمبر"} <= set(months[11])
    assert {"تموز", "يوليو"} <= set(months[6])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  Perché   ÈCOSÌ\n", "perche ecosi"),
        ("Straße", "strasse"),
        ("cœur", "coeur"),
        ("março", "marco"),
        ("qu\u2019est-ce l\u02bcacqua", "qu'est-ce l'acqua"),  # typographic apostrophes
        ("أَخْطَأْتُ", "اخطات"),
        ("إلى", "الي"),
        ("آذار", "اذار"),
        ("مدرســـة", "مدرسه"),
        ("٢٠٢٥", "2025"),
        ("ﻷ", "لا"),
    ],
)
def test_normalise_folds_case_accents_arabic_variants_and_spacing(text: str, expected: str) -> None:
    assert normalise(text) == expected


def test_words_split_elisions_and_drop_punctuation() -> None:
    assert words("L'acqua, dell'atomo? Qu\u2019avons-nous vu?") == [
        "l",
        "acqua",
        "dell",
        "atomo",
        "qu",
        "avons",
        "nous",
        "vu",
    ]
    assert words("¿En qué me equivoqué?") == ["en", "que", "me", "equivoque"]
    assert words("ماذا أخطأتُ؟") == ["ماذا", "اخطات"]


@pytest.mark.parametrize("code", LANGUAGES)
def test_normalise_is_idempotent_on_the_language_data(code: str) -> None:
    for phrases in _phrase_fields(lang.load(code)).values():
        for phrase in phrases:
            once = normalise(phrase)
            assert normalise(once) == once


@pytest.mark.parametrize("bad", ["", "*", "* studied", "we *", "we * ** did"])
def test_malformed_phrases_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="phrase"):
        compile_phrase(bad)


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_language_fills_the_concept_map_teaching_and_topic_lists(code: str) -> None:
    data = lang.load(code)
    assert [f for f in REQUIRED_CONCEPT_FIELDS if not getattr(data, f)] == []


def test_articles_stand_alone_in_latin_script_and_glue_on_in_arabic() -> None:
    assert all(lang.load(c).articles for c in LANGUAGES if c != "ar")
    assert lang.load("ar").articles == ()
    assert {"ال", "وال", "لل"} <= set(lang.load("ar").article_prefixes)
    assert [c for c in LANGUAGES if c != "ar" and lang.load(c).article_prefixes] == []


@pytest.mark.parametrize("code", LANGUAGES)
def test_single_word_fields_hold_single_words(code: str) -> None:
    data = lang.load(code)
    for field in SINGLE_WORD_FIELDS:
        for entry in getattr(data, field):
            assert len(words(entry)) == 1, f"{code}.{field}: {entry!r}"


@pytest.mark.parametrize("code", LANGUAGES)
def test_a_texting_spelling_is_one_word_standing_for_one_other_word(code: str) -> None:
    for short, word in lang.load(code).texting_spellings.items():
        assert len(words(short)) == 1, f"{code}: {short!r}"
        assert len(words(word)) == 1, f"{code}: {word!r}"
        assert words(short) != words(word), f"{code}: {short!r} spells itself"


@pytest.mark.parametrize("code", LANGUAGES)
def test_teach_triggers_have_no_wildcards(code: str) -> None:
    triggers = lang.load(code).teach_triggers
    assert [
        t for t in triggers if not all(isinstance(i, str) for i in compile_phrase(t).items)
    ] == []


def test_spoken_markers_are_never_an_article_or_a_name_connector_of_any_language() -> None:
    function_words = {_key(w) for d in lang.all_languages() for w in d.articles + d.name_connectors}
    clashes = {
        (d.code, field, entry)
        for d in lang.all_languages()
        for field in SPOKEN_FIELDS
        for entry in getattr(d, field)
        if _key(entry) in function_words
    }
    assert clashes == set()


def test_a_plural_ending_folds_the_same_way_in_every_file_that_lists_it() -> None:
    folds: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for data in lang.all_languages():
        for rule in data.plural_rules:
            folds[_key(rule.ending)].add((_key(rule.replacement), rule.min_stem))
    assert {ending: f for ending, f in folds.items() if len(f) > 1} == {}


def test_irregular_plurals_map_to_singulars_that_are_not_listed_plurals() -> None:
    irregular = {
        _key(p): _key(s) for d in lang.all_languages() for p, s in d.plural_irregulars.items()
    }
    assert irregular
    assert set(irregular.values()).isdisjoint(irregular)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"ending": "s", "replacement": ""}, "keys"),
        ({"ending": "", "replacement": "", "min_stem": 3, "unless": []}, "'ending'"),
        ({"ending": "s", "replacement": "", "min_stem": 0, "unless": []}, "'min_stem'"),
    ],
)
def test_malformed_plural_rule_is_refused_with_its_file_and_position(
    rule: dict[str, object], message: str
) -> None:
    raw = json.loads(resources.files(lang).joinpath("en.json").read_text(encoding="utf-8"))
    raw["plural_rules"] = [rule]
    with pytest.raises(ValueError, match=rf"en\.json: plural rule 1.*{message}"):
        lang._parse("en", raw)


def test_a_missing_concept_field_is_refused_by_name() -> None:
    raw = json.loads(resources.files(lang).joinpath("it.json").read_text(encoding="utf-8"))
    del raw["teach_triggers"]
    with pytest.raises(ValueError, match=r"it\.json: 'teach_triggers'"):
        lang._parse("it", raw)


@pytest.mark.parametrize("code", LANGUAGES)
def test_no_phrase_is_both_a_record_trigger_and_a_record_question(code: str) -> None:
    # A record question's phrase counts only in a clause that asks; the same phrase as a trigger
    # would count anywhere and make the condition void.
    data = lang.load(code)
    triggers = {compile_phrase(p).items for p in data.record_triggers}
    assert not [p for p in data.record_questions if compile_phrase(p).items in triggers]


@pytest.mark.parametrize("code", LANGUAGES)
def test_no_cue_of_exposition_is_also_a_cue_that_teaches_on_its_own(code: str) -> None:
    data = lang.load(code)
    unconditional = {_key(p) for p in data.keep_cues + data.teach_triggers}
    assert [p for p in data.own_cues if _key(p) in unconditional] == []
