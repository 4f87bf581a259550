"""Only explicit triggers teach, questions never do, and a taught topic is short (SPEC R4)."""

from __future__ import annotations

import pytest

from tutor_memory.domain.conceptmap.teaching import (
    MAX_TOPIC_WORDS,
    Teaching,
    detect_teaching,
    is_question,
)

TEACHING = [
    (
        "Remember that in our class we call the mitochondria the powerhouse of the cell.",
        "in our class we call the mitochondria the powerhouse of the cell",
        "mitochondria",
    ),
    (
        "Ok so remember that the cell membrane is selectively permeable",
        "the cell membrane is selectively permeable",
        "cell membrane",
    ),
    ("Consider enzymes as catalysts.", "enzymes as catalysts", "enzymes"),
    (
        "Remember that in class we say that osmosis is passive.",
        "in class we say that osmosis is passive",
        "osmosis",
    ),
    (
        "Ricorda che nella nostra classe chiamiamo i mitocondri la centrale energetica della "
        "cellula.",
        "nella nostra classe chiamiamo i mitocondri la centrale energetica della cellula",
        "mitocondri",
    ),
    (
        "Allora, ricordati che la membrana cellulare è selettiva.",
        "la membrana cellulare è selettiva",
        "membrana cellulare",
    ),
    ("Considera gli enzimi come catalizzatori", "gli enzimi come catalizzatori", "enzimi"),
    (
        "Recuerda que en nuestra clase llamamos a las mitocondrias la central energética de la "
        "célula.",
        "en nuestra clase llamamos a las mitocondrias la central energética de la célula",
        "mitocondrias",
    ),
    ("Bueno, recuerda que la ósmosis es pasiva.", "la ósmosis es pasiva", "ósmosis"),
    ("Considera las enzimas como catalizadores.", "las enzimas como catalizadores", "enzimas"),
    (
        "تذكر أن في صفنا نسمي الميتوكوندريا محطة الطاقة في الخلية",
        "في صفنا نسمي الميتوكوندريا محطة الطاقة في الخلية",
        "الميتوكوندريا",
    ),
    ("تذكّر أن الخلية هي وحدة الحياة.", "الخلية هي وحدة الحياة", "الخلية"),
    ("وتذكر أن الانتشار لا يحتاج طاقة", "الانتشار لا يحتاج طاقة", "الانتشار"),
    ("اعتبر الإنزيمات على أنها محفزات", "الإنزيمات على أنها محفزات", "الإنزيمات"),
    (
        "Souviens-toi que dans notre classe on appelle les mitochondries la centrale de la "
        "cellule.",
        "dans notre classe on appelle les mitochondries la centrale de la cellule",
        "mitochondries",
    ),
    ("Rappelle-toi que l'osmose est passive.", "l'osmose est passive", "osmose"),
    (
        "Denk daran, dass wir in unserer Klasse die Mitochondrien das Kraftwerk der Zelle nennen.",
        "wir in unserer Klasse die Mitochondrien das Kraftwerk der Zelle nennen",
        "Mitochondrien",
    ),
    ("Merk dir: Enzyme sind Katalysatoren.", "Enzyme sind Katalysatoren", "Enzyme"),
    (
        "Lembre-se de que na nossa turma chamamos as mitocôndrias de usina da célula.",
        "na nossa turma chamamos as mitocôndrias de usina da célula",
        "mitocôndrias",
    ),
    ("Lembre que a osmose é passiva.", "a osmose é passiva", "osmose"),
]


@pytest.mark.parametrize(("text", "note", "topic"), TEACHING)
def test_an_explicit_trigger_teaches_its_note_under_a_short_topic(
    text: str, note: str, topic: str
) -> None:
    assert detect_teaching(text) == Teaching(note=note, topic=topic)


@pytest.mark.parametrize(
    "text",
    [
        "Do you remember that osmosis is passive?",
        "Remember that osmosis is passive?",
        "do you remember that the mitochondria make energy",
        "Can you remember that for me",
        "¿Recuerdas que las mitocondrias producen energía?",
        "¿Recuerda que la ósmosis es pasiva?",
        "Ti ricordi che la mitosi ha quattro fasi?",
        "Ricorda che la mitosi ha quattro fasi?",
        "هل تذكر أن الخلية هي وحدة الحياة",
        "تذكر أن الخلية هي وحدة الحياة؟",
        "Tu te souviens que l'osmose est passive ?",
    ],
)
def test_questions_never_teach_even_with_a_trigger_inside(text: str) -> None:
    assert is_question(text)
    assert detect_teaching(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "I don't remember that.",
        "Note that osmosis is passive.",
        "Remember to bring the book.",
        "Explain osmosis to me.",
        "Non ricordo che cosa sia la mitosi.",
        "Nota che la mitosi ha quattro fasi.",
        "No recuerdo que es la ósmosis.",
        "أنا لا أتذكر الدرس",
        "Consider the following example.",
        "",
    ],
)
def test_statements_without_an_explicit_trigger_at_a_clause_start_do_not_teach(text: str) -> None:
    assert detect_teaching(text) is None


def test_a_question_after_a_teaching_sentence_leaves_the_teaching_alone() -> None:
    text = "Remember that osmosis is passive. Got it?"
    assert is_question(text)
    assert detect_teaching(text) == Teaching(note="osmosis is passive", topic="osmosis")


def test_a_trigger_may_start_a_later_clause_after_a_lead_in() -> None:
    taught = detect_teaching("I know it's hard, but remember that diffusion is passive.")
    assert taught == Teaching(note="diffusion is passive", topic="diffusion")


def test_the_topic_is_at_most_a_few_words_never_the_sentence() -> None:
    for text, _, _ in TEACHING:
        taught = detect_teaching(text)
        assert taught is not None
        assert len(taught.topic.split()) <= MAX_TOPIC_WORDS
        assert taught.topic != taught.note
    long_subject = detect_teaching(
        "Remember that the Krebs cycle of the mitochondrial matrix of liver cells is aerobic."
    )
    assert long_subject is not None
    assert long_subject.topic == "Krebs cycle"


def test_with_no_name_in_the_subject_the_topic_is_the_first_name_after_it() -> None:
    assert detect_teaching("Remember that it is the mitochondria that make ATP.") == Teaching(
        note="it is the mitochondria that make ATP", topic="mitochondria"
    )
    assert detect_teaching("Ricorda che è la membrana a decidere.") == Teaching(
        note="è la membrana a decidere", topic="membrana"
    )


def test_a_note_with_nothing_to_name_does_not_teach() -> None:
    assert detect_teaching("Remember that it is so.") is None
    assert detect_teaching("Remember that.") is None


@pytest.mark.parametrize(
    "text",
    [
        "What is osmosis",
        "why do cells divide",
        "Is osmosis passive",
        "So how does diffusion work",
        "Cosa sono i mitocondri",
        "Perché la cellula si divide",
        "Qué es la ósmosis",
        "Por qué las células se dividen",
        "ما هي الخلية",
        "هل الانتشار يحتاج طاقة",
        "Qu'est-ce que l'osmose",
        "Was ist Osmose",
        "O que é a osmose",
        "Is it true?",
    ],
)
def test_a_question_word_or_inverted_verb_makes_a_question(text: str) -> None:
    assert is_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "Osmosis is passive.",
        "Explain osmosis to me.",
        "Remember that osmosis is passive.",
        "When the cell divides, the nucleus splits.",
        "La mitosi ha quattro fasi.",
        "Como dijimos, la célula se divide.",
        "الخلية هي وحدة الحياة",
    ],
)
def test_statements_are_not_questions(text: str) -> None:
    assert not is_question(text)


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Just so you know for next time: in our class we call it the powerhouse", "powerhouse"),
        ("fyi our exam board marks every graph without a title down", "exam board"),
        ("heads up: we call the cathode the negative side", "cathode"),
        ("going forward, use centimetres in the answers", "centimetres"),
        (
            "remember, our teacher writes the quadratic formula with a fraction bar",
            "quadratic formula",
        ),
        ("per la prossima volta: la nostra prof chiama il vacuolo il magazzino", "vacuolo"),
        ("ab sofort rechnen wir mit g = 10", "rechnen"),
        ("a partir de ahora, usa la coma decimal conmigo", "usa"),
        ("à l'avenir, écris les vecteurs avec une flèche", "écris"),
        ("daqui pra frente, o meu professor quer as contas armadas", "professor"),
        ("للعلم، معلمتنا تكتب الكسور بخط مائل", "معلمتنا"),
    ],
)
def test_a_cue_that_keeps_what_follows_teaches_it(text: str, topic: str) -> None:
    taught = detect_teaching(text)
    assert taught is not None
    assert topic in taught.topic


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("we write the charge of an ion after its symbol, keep that in mind", "charge of an ion"),
        ("noi diciamo 'prestito' nella sottrazione, tienilo presente", "prestito"),
        ("Bei uns heißt das Dreieck Triangel. Merk dir das.", "Dreieck"),
    ],
)
def test_a_tail_that_asks_to_keep_keeps_what_came_before(text: str, note: str) -> None:
    taught = detect_teaching(text)
    assert taught is not None
    assert note in taught.note


def test_a_tail_ends_a_sentence_of_many_clauses_and_keeps_what_came_before() -> None:
    # The tail is looked for only where it could end the sentence, however long the sentence.
    clauses = ", ".join(f"step {i} comes next" for i in range(2_000))
    taught = detect_teaching(
        f"{clauses}, and we write the charge of an ion after its symbol, keep that in mind"
    )
    assert taught is not None
    assert "charge of an ion" in taught.note
    followed = detect_teaching(f"{clauses}, and ions carry charge, keep that in mind for the test")
    assert followed is not None
    assert "ions carry charge" in followed.note


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("our school follows the AQA spec, keep that in mind when you set questions", "AQA spec"),
        ("in class we say 'gradient' and never 'slope', use that from now on", "gradient"),
        ("la nostra prof dice 'ipotenusa' e non 'lato lungo', usa quello per favore", "ipotenusa"),
        ("mi profe dice 'razón' y no 'cociente', usa eso siempre", "razón"),
        ("chez nous on dit 'gramme' jamais 'g', fais pareil dans tes réponses", "gramme"),
        ("unser Lehrer sagt 'Kraftpfeil', nimm das bitte auch", "Kraftpfeil"),
        ("o meu stor diz 'vetor' e não 'seta', usa isso nas explicações", "vetor"),
        ("أنا في الصف التاني، خلي بالك من ده وانت بتشرح", "الصف التاني"),
    ],
)
def test_a_tail_inside_a_sentence_keeps_what_came_before_whatever_follows(
    text: str, note: str
) -> None:
    taught = detect_teaching(text)
    assert taught is not None
    assert note in taught.note


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("one thing for next time: my exams are oral", "my exams are oral"),
        ("also, per le prossime volte: faccio il classico", "faccio il classico"),
        ("Wichtig für die Zukunft: ich habe Legasthenie", "ich habe Legasthenie"),
        ("pras próximas vezes: eu estudo pelo celular", "eu estudo pelo celular"),
    ],
)
def test_a_cue_a_word_or_two_into_its_clause_and_closed_by_a_colon_teaches(
    text: str, note: str
) -> None:
    taught = detect_teaching(text)
    assert taught is not None
    assert taught.note == note


def test_a_cue_deeper_in_its_clause_teaches_nothing() -> None:
    assert detect_teaching("my big brother said for next time: bring a calculator") is None


def test_a_hyphen_inside_a_word_announces_no_note() -> None:
    # Portuguese "lembra-me" is "remind me": a request, not "remember".
    assert detect_teaching("lembra-me o que fizemos na aula de química") is None
    taught = detect_teaching("lembra-te: o meu teste de química é oral")
    assert taught is not None


def test_a_cue_written_as_students_text_it_still_teaches() -> None:
    # "pa q" for "para que": the language files' spellings (texting_spellings).
    taught = detect_teaching("pa q lo sepas, en mi cole no dejan usar calculadora")
    assert taught is not None
    assert "calculadora" in taught.note


@pytest.mark.parametrize(
    "text",
    [
        "remember what that means",
        "so you know what I mean?",
        "important dates of the revolution are in the book",
        "heads up the list",
        "from now on?",
        "ricordati di portare il libro",
        "keep that in mind",
        "Je ne me souviens pas de la leçon, garde ça en tête ?",
    ],
)
def test_keep_cues_without_a_note_or_in_a_question_do_not_teach(text: str) -> None:
    assert detect_teaching(text) is None


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("para que lo sepas, escribimos la multiplicación con un punto", "multiplicación"),
        ("que conste que en clase usamos la coma decimal", "coma decimal"),
        ("pa que sepas: el profe llama a la mitocondria la central", "mitocondria"),
    ],
)
def test_a_cue_that_opens_with_a_question_word_still_teaches(text: str, topic: str) -> None:
    # Accents are not compared at a clause's start: "para que" is also "para qué" (what for),
    # "que" also "qué"; the longer phrase, the cue, is what the words say.
    taught = detect_teaching(text)
    assert taught is not None
    assert taught.topic == topic


@pytest.mark.parametrize(
    "text", ["para qué sirve la mitocondria", "que es la fotosintesis", "qué significa pH"]
)
def test_the_question_words_those_cues_begin_with_still_ask(text: str) -> None:
    assert is_question(text)
    assert detect_teaching(text) is None


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("note that in our textbook the anode is drawn on the left", "anode"),
        ("note that I'm doing the higher tier paper", "higher tier paper"),
        ("note que notre manuel c'est le Hatier", "manuel"),
        ("nota che nel nostro libro la cella è disegnata a destra", "libro"),
        ("beachte, dass unser Lehrer Vektoren mit Pfeil schreibt", "lehrer"),
    ],
)
def test_a_cue_of_exposition_teaches_a_note_about_the_students_own_setting(
    text: str, topic: str
) -> None:
    taught = detect_teaching(text)
    assert taught is not None
    assert topic in taught.topic.casefold()


@pytest.mark.parametrize(
    "text",
    [
        "note that the anode is negative in a galvanic cell",
        "Note that we can factor the numerator first.",
        "note que la dérivée de x² est 2x",
        "beachte, dass die Ableitung von x² gleich 2x ist",
        "Beachte die Vorzeichen in meiner Rechnung",
        "You need to know that enzymes are proteins.",
        "Memorise that the angles of a triangle add up to 180 degrees.",
        "Devi ricordare che il triangolo ha tre lati.",
    ],
)
def test_a_cue_of_exposition_about_the_subject_alone_teaches_nothing(text: str) -> None:
    # As a textbook or a pasted exercise says it: nothing of the student's own setting.
    assert detect_teaching(text) is None


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("just so you know, our teacher calls the mitochondria the powerhouse", "mitochondria"),
        ("je te préviens, notre prof appelle le noyau le cerveau de la cellule", "noyau"),
        ("não esquece que o professor chama o núcleo de 'cérebro da célula'", "núcleo"),
        ("للعلم، المعلم يسمي الميتوكوندريا محطة الطاقة", "الميتوكوندريا"),
    ],
)
def test_what_the_teacher_calls_something_is_named_by_the_thing_not_the_teacher(
    text: str, topic: str
) -> None:
    taught = detect_teaching(text)
    assert taught is not None
    assert taught.topic == topic


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("I forgot to mention that my exam board is AQA", "exam board"),
        ("oh i forgot to mention, in our class we call the cathode the minus side", "cathode"),
        ("for context: I'm in year 9 doing the foundation paper", "year 9"),
        ("j'ai oublié de te dire que notre prof appelle le noyau le cerveau", "noyau"),
    ],
)
def test_a_forgotten_mention_or_a_context_label_teaches_what_follows(text: str, topic: str) -> None:
    taught = detect_teaching(text)
    assert taught is not None
    assert topic in taught.topic


@pytest.mark.parametrize(
    "text",
    [
        "I forgot to mention the formula in my answer",
        "Background: the French Revolution began in 1789.",
        "Context: the Treaty of Versailles ended the war.",
    ],
)
def test_a_forgotten_mention_in_ones_work_or_a_pasted_brief_teaches_nothing(text: str) -> None:
    assert detect_teaching(text) is None


@pytest.mark.parametrize(
    ("text", "note", "topic"),
    [
        (
            "please always write the units next to every number",
            "always write the units next to every number",
            "how I learn best",
        ),
        (
            "never show me the full solution first pls",
            "never show me the full solution first pls",
            "how I learn best",
        ),
        (
            "per favore ogni volta scrivi i passaggi uno per uno",
            "ogni volta scrivi i passaggi uno per uno",
            "come imparo meglio",
        ),
        (
            "necesito que uses siempre ejemplos de fútbol",
            "necesito que uses siempre ejemplos de fútbol",
            "cómo aprendo mejor",
        ),
        (
            "s'il te plaît, mets toujours les formules en gras",
            "mets toujours les formules en gras",
            "comment j'apprends le mieux",
        ),
        (
            "schreib bitte jedes Mal die Einheit dazu",
            "schreib bitte jedes Mal die Einheit dazu",
            "wie ich am besten lerne",
        ),
        (
            "por favor, usa sempre frases curtas comigo",
            "usa sempre frases curtas comigo",
            "como aprendo melhor",
        ),
        ("من فضلك اكتب الخطوات كل مرة", "اكتب الخطوات كل مرة", "كيف أتعلم بشكل أفضل"),
    ],
)
def test_a_standing_request_teaches_how_the_student_wants_to_be_taught(
    text: str, note: str, topic: str
) -> None:
    assert detect_teaching(text) == Teaching(note, topic)


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("I learn best when you draw a diagram first", "how I learn best"),
        ("i get it so much better when you draw it", "how I learn best"),
        ("io capisco meglio quando mi fai un esempio pratico", "come imparo meglio"),
        ("entiendo mejor si me lo explicas con dibujos", "cómo aprendo mejor"),
        ("ça m'aide quand tu résumes à la fin", "comment j'apprends le mieux"),
        ("ich verstehe es besser, wenn du langsam erklärst", "wie ich am besten lerne"),
        ("eu entendo melhor quando você usa exemplos do dia a dia", "como aprendo melhor"),
    ],
)
def test_how_the_student_learns_best_teaches_as_a_standing_request(text: str, topic: str) -> None:
    taught = detect_teaching(text)
    assert taught == Teaching(text, topic)


@pytest.mark.parametrize(
    "text",
    [
        # The student's own habit, with a request for help beside it.
        "I always forget the quadratic formula please help",
        "I never get these right, please explain again",
        "io sbaglio sempre i segni, per favore aiutami",
        "the one thing i always forget is the minus sign please help",
        # A standing word without a request, or a request without a standing word.
        "the teacher always gives us too much homework",
        "water always boils at the same temperature at sea level",
        "please explain how photosynthesis works",
        "per favore spiegami le frazioni",
        # Questions never teach (R4.3).
        "can you please always use metric units?",
        "¿puedes explicarme siempre con ejemplos, por favor?",
        # The two words in different clauses.
        "please help, the exercises are always too long",
    ],
)
def test_a_standing_word_or_a_request_alone_or_the_students_own_habit_teaches_nothing(
    text: str,
) -> None:
    assert detect_teaching(text) is None
