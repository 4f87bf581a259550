"""A record question's topic, and record questions that name a period (issue 13). The sentences
here are not those of bench/phrasing, which measures these rules and must not be their copy."""

from __future__ import annotations

import pytest

from tutor_memory.domain.recall.record_mode import is_record_question, record_topic


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("what did I get wrong about photosynthesis?", "photosynthesis"),
        ("What did we revise about the French Revolution?", "french revolution"),
        ("cosa abbiamo studiato sulla cellula vegetale?", "cellula vegetale"),
        ("¿qué hemos visto sobre los volcanes?", "volcanes"),
        ("qu'avons-nous étudié sur les équations ?", "equations"),
        ("was haben wir über die Zellatmung gelernt?", "zellatmung"),
        ("o que estudamos sobre ecologia?", "ecologia"),
        ("ماذا درسنا عن البراكين؟", "البراكين"),
    ],
)
def test_a_record_question_that_names_a_topic_gives_it(query: str, topic: str) -> None:
    assert is_record_question(query)
    assert record_topic(query) == topic


@pytest.mark.parametrize(
    "query",
    [
        "what did we do last week?",
        "cosa abbiamo fatto ieri?",
        "¿qué estudiamos el mes pasado?",
        "was haben wir vor drei Tagen gemacht?",
        "What did I get wrong?",
    ],
)
def test_a_period_or_plain_record_question_names_no_topic(query: str) -> None:
    assert is_record_question(query)
    assert record_topic(query) is None


@pytest.mark.parametrize(
    "query",
    [
        "vendredi dernier, de quoi on a parlé ?",
        "tell me what happened in our session two days ago",
        "und vorgestern, was hast du mir erklärt?",
        "semana passada, o que você me explicou?",
    ],
)
def test_a_question_about_a_period_of_the_calendar_is_a_record_question(query: str) -> None:
    assert is_record_question(query)


@pytest.mark.parametrize(
    "query",
    [
        "What happened in July 1789?",
        "Last week my cat was ill.",
        "Explain mitosis",
        "why do leaves fall in autumn?",
    ],
)
def test_subject_questions_and_statements_are_not_record_questions(query: str) -> None:
    assert not is_record_question(query)


@pytest.mark.parametrize(
    "query",
    [
        "¿qué estudiamos el lunes? ni idea la verdad",
        "what did I get wrong in today's lesson?",
        "cosa ho sbagliato nelle verifiche?",
        "was habe ich in den Quizzen falsch gemacht?",
        "quelles erreurs ai-je faites dans les contrôles ?",
    ],
)
def test_words_of_another_clause_or_of_the_record_itself_are_no_topic(query: str) -> None:
    assert is_record_question(query)
    assert record_topic(query) is None


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        # The record's own words ("verifica", "prova", "Klausur") leave the topic they frame.
        ("cosa ho sbagliato nella verifica di chimica?", "chimica"),
        ("o que eu errei na prova de geometria?", "geometria"),
        ("ماذا أخطأت في اختبار الكسور؟", "الكسور"),
        # A topic preposition that ends its clause introduces the next one.
        ("what did I get wrong re: long division", "long division"),
        # The participle that closes a German perfect is its verb, not its topic.
        ("was hast du mir letzte Woche über Brüche beigebracht?", "bruche"),
        ("was haben wir im Unterricht über Optik besprochen?", "optik"),
        # Words that only end like a participle stay: the past's participle came before them,
        # or a topic preposition stands between.
        ("cosa ho sbagliato sul mercato?", "mercato"),
        ("what did we do about the United Nations?", "united nations"),
    ],
)
def test_the_topic_leaves_out_the_records_words_and_the_pasts_participle(
    query: str, topic: str
) -> None:
    assert is_record_question(query)
    assert record_topic(query) == topic


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("what did we study abt fractions", "fractions"),
        ("o que eu errei msm?", None),
        ("cosa ho sbagliato cmq?", None),
        ("cosa abbiamo fatto nn lo so", None),
    ],
)
def test_chat_spellings_of_function_words_are_no_topic(query: str, topic: str | None) -> None:
    assert is_record_question(query)
    assert record_topic(query) == topic


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("what did we study about C++ pointers?", "pointers"),
        ("what did I get wrong re: Na+ ions", "ions"),
        ("RE:A#", None),
    ],
)
def test_a_sign_glued_to_a_word_is_read_as_the_words_of_the_message_read_it(
    query: str, topic: str | None
) -> None:
    # Spans keep "+" and "#" on a word ("C#"); the phrase lists and the topic use the words as
    # `words` reads them, so a topic is always made of the message's own words.
    assert record_topic(query) == topic


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("o que a gente já aprendeu sobre equações?", "equacoes"),
        ("mês passado, o que a gente fez?", None),
        ("do que a gente falou ontem?", None),
    ],
)
def test_brazilian_a_gente_is_the_student_and_the_tutor(query: str, topic: str | None) -> None:
    assert is_record_question(query)
    assert record_topic(query) == topic


@pytest.mark.parametrize(
    "query", ["você pode me ajudar com frações hoje?", "a gente pode ver frações hoje?"]
)
def test_a_portuguese_request_for_today_is_no_record_question(query: str) -> None:
    assert not is_record_question(query)
