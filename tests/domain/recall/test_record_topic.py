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


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("did you already explain the nitrogen cycle to me?", "nitrogen cycle"),
        ("you showed me how to balance equations, right?", "balance equations"),
        ("mi avevi già spiegato i logaritmi?", "logaritmi"),
        ("¿ya me enseñaste los vectores?", "vectores"),
        ("tu m'as déjà montré les dérivées ?", "derivees"),
        ("hast du mir die Zellatmung schon erklärt?", "zellatmung"),
        ("hast du mir schon erklärt, wie Impfungen wirken?", "impfungen wirken"),
        ("você já me explicou os logaritmos?", "logaritmos"),
        ("انت شرحتلي البراكين قبل كده؟", "البراكين"),
    ],
)
def test_what_the_tutor_explained_before_is_asked_of_the_record(query: str, topic: str) -> None:
    # A German verb-final phrase holds its topic inside its long gap, or in the question it
    # governs after a comma.
    assert is_record_question(query)
    assert record_topic(query) == topic


@pytest.mark.parametrize(
    "query",
    [
        "can you explain the nitrogen cycle to me?",
        "puoi spiegarmi i logaritmi?",
        "¿me enseñas los vectores?",
        "tu peux me montrer les dérivées ?",
        "kannst du mir die Zellatmung erklären?",
        "você pode me explicar os logaritmos?",
        "اشرحلي البراكين",
    ],
)
def test_asking_for_an_explanation_now_is_no_record_question(query: str) -> None:
    assert not is_record_question(query)


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("have we done logarithms yet?", "logarithms"),
        ("abbiamo già visto le equazioni di secondo grado?", "equazioni"),
        ("i logaritmi li abbiamo già fatti, vero?", "logaritmi"),
        ("los vectores ya los vimos?", "vectores"),
        ("les dérivées, on les a déjà vues ?", "derivees"),
        ("la mitose on l'a déjà faite ?", "mitose"),
        ("die Zellatmung haben wir schon gemacht?", "zellatmung"),
        ("a gente já viu logaritmos?", "logaritmos"),
        ("خلصت واجب الكيمياء ولا لسه؟", "الكيمياء"),
    ],
)
def test_a_have_we_done_question_asks_the_record_about_its_topic(query: str, topic: str) -> None:
    # A topic said before the phrase, as a noun phrase its article opens, is read there, in its
    # clause or as the clause before it ("les dérivées, on les a déjà vues ?").
    assert is_record_question(query)
    assert record_topic(query) == topic


@pytest.mark.parametrize(
    "query",
    [
        "abbiamo fatto le frazioni in classe, ma cos'è un denominatore?",
        "on a vu les fractions en cours, mais c'est quoi un dénominateur ?",
        "terminei o livro de física. o que eu leio agora?",
        "hemos visto las células en clase y tengo una duda: ¿qué es un ribosoma?",
    ],
)
def test_a_have_we_done_phrase_in_a_statement_is_no_record_question(query: str) -> None:
    # It tells what was done; the clause that asks asks something else.
    assert not is_record_question(query)


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("mardi dernier on était sur quel chapitre ?", None),
        ("on a travaillé sur quoi jeudi ?", None),
        ("la semaine dernière on a fait quoi en chimie ?", "chimie"),
        ("امبارح ذاكرنا ايه؟", None),
        ("يوم الاتنين اتعلمنا ايه؟", None),
    ],
)
def test_french_on_and_questions_that_ask_after_their_verb_ask_the_record(
    query: str, topic: str | None
) -> None:
    # French "on" (we) is a person in a French sentence; its question word may follow the verb,
    # as the Arabic spoken at home puts it too ("ذاكرنا ايه", what did we study).
    assert is_record_question(query)
    assert record_topic(query) == topic


@pytest.mark.parametrize(
    "query",
    [
        "which exams are on Monday, the math one?",
        "what is on the test next week?",
        "what happened on the day the Berlin wall fell?",
    ],
)
def test_english_on_is_no_person(query: str) -> None:
    assert not is_record_question(query)


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("honestly what did i get wrong", None),
        ("the other day what did we do?", None),
        ("the test went badly, what did i get wrong?", None),
        ("what did i get wrong, which is weird", None),
        ("fammi un elenco dei miei errori", None),
        ("give me a quick summary of my progress", None),
        ("hazme un resumen de lo que hemos visto", None),
    ],
)
def test_a_lead_in_a_time_or_the_form_of_the_answer_is_no_topic(
    query: str, topic: str | None
) -> None:
    assert is_record_question(query)
    assert record_topic(query) == topic


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("am I improving at long division or not", "long division"),
        ("sto migliorando con i logaritmi?", "logaritmi"),
        ("je progresse en anglais ou pas ?", "anglais"),
    ],
)
def test_the_topic_of_a_question_about_progress_is_the_subject(query: str, topic: str) -> None:
    assert record_topic(query) == topic


def test_or_nah_is_no_topic() -> None:
    assert record_topic("am I improving or nah") is None


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("en plan, ¿las derivadas ya las vimos?", "derivadas"),
        ("en plan, ¿qué errores tuve con los logaritmos?", "logaritmos"),
    ],
)
def test_spanish_spoken_fillers_are_no_topic(query: str, topic: str) -> None:
    assert record_topic(query) == topic
