"""R6.3 record mode: questions about the student's own record, in all seven languages."""

from __future__ import annotations

import pytest

from tutor_memory.domain.recall.record_mode import is_record_question

RECORD_QUESTIONS = {
    "en": [
        "What did I get wrong so far?",
        "what have we studied",
        "What did we cover in July?",
        "What did we do last week?",
        "Can you list my mistakes?",
        "What have I learned this month?",
        "Which questions did I get wrong on osmosis?",
        "WHAT HAVE WE ALREADY COVERED",
    ],
    "it": [
        "Cosa ho sbagliato?",
        "Che cosa ho sbagliato finora?",
        "Cosa abbiamo studiato a luglio?",
        "cosa abbiamo gia fatto",
        "Quali sono i miei errori?",
        "Dove ho sbagliato?",
    ],
    "es": [
        "¿Qué he estudiado?",
        "¿En qué me equivoqué?",
        "en que me equivoque",
        "¿Qué hemos visto hasta ahora?",
        "¿Qué estudiamos la semana pasada?",
        "Muéstrame mis errores",
    ],
    "fr": [
        "Qu'est-ce que j'ai raté ?",
        "Qu\u2019avons-nous étudié ?",
        "Qu'est-ce qu'on a vu en mars ?",
        "Où me suis-je trompé ?",
        "Montre-moi mes erreurs",
        "De quoi avons-nous parlé hier ?",
    ],
    "de": [
        "Was habe ich falsch gemacht?",
        "Was haben wir gelernt?",
        "Was haben wir in der letzten Woche gemacht?",
        "Was haben wir im Juli behandelt?",
        "Zeig mir meine Fehler",
        "Welche Fehler habe ich gemacht?",
    ],
    "pt": [
        "O que eu errei?",
        "O que estudamos?",
        "O que nós já estudamos?",
        "Onde eu errei?",
        "Quais foram os meus erros?",
        "O que vimos em julho?",
    ],
    "ar": [
        "ماذا أخطأت؟",
        "ماذا اخطات",
        "ماذا درسنا؟",
        "وماذا درسنا الأسبوع الماضي؟",
        "بماذا أخطأت؟",
        "ما هي أخطائي؟",
        "ماذا تعلمنا في يوليو؟",
    ],
}

SUBJECT_QUESTIONS = {
    "en": [
        "What is osmosis?",
        "Explain the French Revolution",
        "Why did the Romans win?",
        "What mistakes do students usually make with fractions?",
        "What did Newton discover?",
    ],
    "it": ["Che cos'è l'osmosi?", "Spiegami la rivoluzione francese", "Perché i Romani vinsero?"],
    "es": [
        "¿Qué es la fotosíntesis?",
        "¿Por qué estudiamos la historia?",
        "¿Para qué hicimos esto?",
    ],
    "fr": [
        "Qu'est-ce que la mitose ?",
        "Explique la Révolution française",
        "Pourquoi Rome a gagné ?",
    ],
    "de": ["Was ist Osmose?", "Warum haben die Römer gewonnen?", "Erkläre die Zellatmung"],
    "pt": ["O que é osmose?", "Por que estudamos história?", "Explique a fotossíntese"],
    "ar": ["ما هو التمثيل الضوئي؟", "اشرح الثورة الفرنسية", "لماذا انتصر الرومان؟"],
}


def _cases(table: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(code, text) for code, texts in table.items() for text in texts]


@pytest.mark.parametrize(("code", "query"), _cases(RECORD_QUESTIONS))
def test_questions_about_the_students_own_record_trigger_record_mode(code: str, query: str) -> None:
    assert is_record_question(query), (code, query)


@pytest.mark.parametrize(("code", "query"), _cases(SUBJECT_QUESTIONS))
def test_ordinary_subject_questions_do_not_trigger_record_mode(code: str, query: str) -> None:
    assert not is_record_question(query), (code, query)


def test_case_accents_punctuation_and_arabic_variants_do_not_matter() -> None:
    for variants in (
        ["¿En qué me equivoqué?", "EN QUE ME EQUIVOQUE", "en   que... me equivoque"],
        ["Qu\u2019avons-nous étudié ?", "qu'avons nous etudie"],
        ["ماذا أخطأتُ؟", "ماذا اخطات", "ماذا إخطأت"],
    ):
        assert all(is_record_question(v) for v in variants), variants


def test_an_empty_query_is_not_a_record_question() -> None:
    assert not is_record_question("")
    assert not is_record_question("?!")


@pytest.mark.parametrize(
    "query",
    [
        "what did u tell me about osmosis last time",
        "remind me what we said about the causes of ww1",
        "did I ever get the periodic table questions right?",
        "cosa mi avevi detto sulla mitosi?",
        "¿qué me dijiste de la mitosis?",
        "tu m'avais dit quoi sur la mitose ?",
        "on a déjà parlé du cycle de l'eau ?",
        "hast du mir schon mal was über Osmose gesagt?",
        "o que vc me disse sobre mitose?",
        "هل درسنا البناء الضوئي من قبل؟",
    ],
)
def test_what_the_tutor_said_and_what_was_ever_talked_about_are_record_questions(
    query: str,
) -> None:
    assert is_record_question(query)


@pytest.mark.parametrize(
    "query",
    [
        "what did the author say about the war?",
        "on a parlé du cycle de l'eau en classe, c'est quoi l'évaporation ?",
        "درسنا الكسور أمس، ما هو المقام؟",
    ],
)
def test_what_someone_else_said_or_a_statement_of_what_was_done_is_no_record_question(
    query: str,
) -> None:
    assert not is_record_question(query)


@pytest.mark.parametrize(
    "query",
    [
        "how many times have I asked you about long division lol",
        "ok where did we leave off last time?",
        "do I still mix up affect and effect?",
        "quante volte ti ho già chiesto dei logaritmi?",
        "¿dónde nos quedamos con las derivadas?",
        "résume-moi ce qu'on a fait sur la Révolution",
        "les vecteurs, on les a déjà vus ?",
        "Quels exercices on a déjà faits ?",
        "fass mal zusammen, was wir zur Optik gemacht haben",
        "onde a gente parou em genética?",
        "todavía confundo ser y estar?",
        "a gennaio cosa avevamo ripassato sui Romani?",
    ],
)
def test_counts_progress_persistent_mistakes_and_summaries_of_the_sessions_are_record_questions(
    query: str,
) -> None:
    assert is_record_question(query)


@pytest.mark.parametrize(
    "query",
    [
        "how many times does 7 go into 56?",
        "je fais encore un exercice ?",
        "mache ich noch eine Aufgabe?",
        "summarise the causes of the First World War",
        "todavía no entiendo qué es una derivada, me lo explicas con un ejemplo sencillo?",
    ],
)
def test_counting_summarising_or_still_not_understanding_the_subject_is_no_record_question(
    query: str,
) -> None:
    assert not is_record_question(query)


@pytest.mark.parametrize(
    "query",
    [
        "la semaine dernière on a révisé quoi",
        "a semana passada a gente estudou o quê",
        "الأسبوع اللي فات عملنا ايه",
    ],
)
def test_a_question_word_left_at_the_end_asks_about_the_period(query: str) -> None:
    # Spoken questions leave the question word where the answer goes, without a question mark.
    assert is_record_question(query)


def test_a_statement_about_a_period_without_a_question_word_asks_nothing() -> None:
    assert not is_record_question("la semaine dernière on a révisé les fractions")


@pytest.mark.parametrize(
    "query",
    [
        "am I improving at long division or not",
        "sto migliorando con i logaritmi?",
        "estoy mejorando en química o sigo igual",
        "je progresse en anglais ou pas ?",
        "werde ich besser in Mathe?",
        "tou a evoluir em física?",
        "انا ماشي كويس في الفيزيا؟",
    ],
)
def test_whether_the_student_is_improving_at_a_subject_is_a_record_question(query: str) -> None:
    assert is_record_question(query)


def test_a_one_word_record_phrase_of_another_language_asks_nothing() -> None:
    # French "terminé" (finished) folds to Italian "termine" (term): a grammar question.
    assert not is_record_question("cos'è un complemento di termine")
    assert not is_record_question("che cos'è il termine noto di un'equazione?")
    # In its own language, with or without the accent, it still asks about the sessions.
    assert is_record_question("qu'est-ce qu'on a terminé la semaine dernière ?")
    assert is_record_question("on a termine quoi hier?")
