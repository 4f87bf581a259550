"""Whether a sentence speaks of the past (domain.recall.tense): the reading that decides whether a
bare weekday is the last one or the next."""

from __future__ import annotations

import pytest

from tutor_memory.domain.recall.tense import past_with_a_person, speaks_of_past


@pytest.mark.parametrize(
    "sentence",
    [
        "what did we do on monday",
        "have we covered cells yet",
        "lunedì cosa ho sbagliato",
        "qué vimos el lunes",
        "lundi j'ai raté quoi",
        "was haben wir am Montag gemacht",
        "am Montag haben wir das Kapitel abgeschlossen",
        "o que a gente estudou na segunda",
    ],
)
def test_a_past_form_or_a_perfect_is_the_past(sentence: str) -> None:
    assert speaks_of_past(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "I have a test on monday",
        "lunedì ho la verifica",
        "lundi j'ai un contrôle",
        "am Montag haben wir Sport",
        "el lunes tengo examen",
    ],
)
def test_a_perfect_auxiliary_without_a_participle_is_a_present(sentence: str) -> None:
    assert not speaks_of_past(sentence)


def test_another_languages_past_form_is_no_past() -> None:
    # French "a" (has) and German "was" (what) are in the files' past forms; not in English.
    assert not speaks_of_past("can you give me a quiz on monday")


def test_a_participle_shape_alone_is_no_past() -> None:
    # "…é" makes a French participle only after an auxiliary: "université" is a noun.
    assert not speaks_of_past("lundi je vais à l'université")


def test_a_past_needs_the_student_or_the_tutor_to_recount_a_session() -> None:
    assert past_with_a_person("Last Tuesday you practised fractions.")
    assert not past_with_a_person("Last Tuesday I went to a concert.")


def test_french_nouns_in_tions_are_no_imperfect() -> None:
    assert not speaks_of_past("On peut revoir les fractions et les équations ?")
    assert speaks_of_past("Nous étions en retard")


@pytest.mark.parametrize(
    "sentence",
    [
        "was wir letzte Woche gelernt haben",  # participle before the auxiliary (subordinate)
        "bin ich besser geworden?",
        "desde janeiro eu fiz três quizzes",
        "el lunes me equivoqué en química",
    ],
)
def test_pasts_of_the_first_person_and_of_subordinate_clauses(sentence: str) -> None:
    assert speaks_of_past(sentence)


def test_another_languages_past_form_makes_no_narration_of_a_plan() -> None:
    # French "a" (has) is a past form of the French file; in English it is the article.
    assert not past_with_a_person("Today you will learn a new topic.")
    assert past_with_a_person("Last week you solved a few equations.")


def test_the_portuguese_present_can_is_no_past() -> None:
    # "pode" (can) and "pôde" (could) differ by their accent alone; the past is the rarer.
    assert not speaks_of_past("você pode me ajudar com frações hoje?")
    assert speaks_of_past("ele não pôde vir à aula")


@pytest.mark.parametrize(
    "sentence",
    [
        "mi aiuti con i compiti di matematica?",  # "compiti" ends like a participle
        "qual è il significato della parola?",  # a participle's shape, but far from "è"
        "lundi j'ai un contrôle sur la société",
        "¿me explicas el resultado del ejercicio?",
        "qual o significado dessa palavra?",
        "estou com dúvida em química",  # "estou" (I am) ends like a preterite
    ],
)
def test_romance_nouns_that_end_like_a_participle_are_no_past(sentence: str) -> None:
    assert not speaks_of_past(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "abbiamo ripassato le frazioni",
        "come sono andate le verifiche?",  # a perfect with "essere"
        "hemos repasado la célula",
        "las clases fueron sobre el aparato digestivo",  # irregular preterites
        "as aulas foram sobre genética",
        "la clase estuvo bien",
    ],
)
def test_a_romance_participle_after_its_auxiliary_and_irregular_preterites_are_the_past(
    sentence: str,
) -> None:
    assert speaks_of_past(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "I'm really nervous and so unprepared for the quiz on Thursday",
        "I feel confused about the exam on Thursday",
        "which chapters are included in Thursday's quiz?",
        "we've got a quiz on Thursday",
        "she has got two exams on Thursday",
    ],
)
def test_english_adjectives_in_ed_and_have_got_are_a_present(sentence: str) -> None:
    assert not speaks_of_past(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "what have I got wrong on Thursday?",
        "we covered the quiz on Thursday",
        "have we finished the chapter?",
    ],
)
def test_english_pasts_beside_those_idioms_stay_pasts(sentence: str) -> None:
    assert speaks_of_past(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "visto che giovedì ho l'interrogazione, cosa ripasso?",
        "vu que j'ai une interro jeudi, je révise quoi ?",
        "visto que tengo control el jueves, ¿qué repaso?",
        "visto que tenho simulado na quinta, o que eu estudo?",
    ],
)
def test_a_connective_made_of_a_past_form_is_no_past(sentence: str) -> None:
    # "visto che", "vu que", "visto que": given that.
    assert not speaks_of_past(sentence)


def test_the_past_form_of_a_connective_is_still_a_past_elsewhere() -> None:
    assert speaks_of_past("cosa abbiamo visto giovedì?")
    assert speaks_of_past("on a vu quoi jeudi ?")


@pytest.mark.parametrize(
    "sentence",
    ["ايه اللي ذاكرناه في رمضان", "شو اللي درسناه الأسبوع الماضي", "هو احنا راجعناها امبارح؟"],
)
def test_an_arabic_past_of_we_with_its_object_glued_is_a_past_with_a_person(sentence: str) -> None:
    assert speaks_of_past(sentence)
    assert past_with_a_person(sentence)


@pytest.mark.parametrize("sentence", ["ايه معناه ده؟", "الكلمة دي معناها ايه؟", "عيناه زرقاوان"])
def test_arabic_nouns_that_end_like_one_are_no_past(sentence: str) -> None:
    assert not speaks_of_past(sentence)


@pytest.mark.parametrize(
    "sentence",
    ["pourquoi il fait plus froid en hiver ?", "qu'est-ce qu'on fait aujourd'hui ?"],
)
def test_french_presents_spelled_as_a_past_participle_are_no_past(sentence: str) -> None:
    assert not speaks_of_past(sentence)


def test_holiday_names_that_end_like_a_past_are_no_past() -> None:
    assert not speaks_of_past("was feiert man an Pfingsten?")
    assert not speaks_of_past("as minhas ferias da pascoa sao em abril")
