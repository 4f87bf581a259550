"""The built-in extractor reads files into concepts offline, in any language (SPEC R3.1, R5.1)."""

from __future__ import annotations

from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.extract import (
    MAX_CONCEPTS_PER_FILE,
    Extractor,
    OfflineExtractor,
)
from tutor_memory.domain.conceptmap.headings import MAX_NAME_WORDS, rejection_reason
from tutor_memory.domain.files.document import Document, Page

ENGLISH = Document(
    "markdown",
    (
        Page(
            1,
            """# Chapter 1: Cells

## Introduction
This chapter is about cells and how they work.

## Cell membrane
The **cell membrane** is a thin layer that surrounds the cell and controls what enters it.

## Diffusion
Diffusion is the net movement of particles from high to low concentration.

## Osmosis
Osmosis is the diffusion of water across the cell membrane. Osmosis requires an understanding
of diffusion and concentration gradients.

### Common mistakes
Students often confuse osmosis with diffusion.
""",
        ),
        Page(
            2,
            """## Organelles
Organelles are specialised structures inside the cell.

- **Mitochondria**: organelles that release energy from glucose.
- **Cytoplasm** - the gel-like substance inside the **cell membrane**.

The process by which plants make sugar from light is called photosynthesis.
Chloroplasts (the organelles where photosynthesis happens) contain chlorophyll.

## Exercises
1. What is osmosis?
2. Explain why the **cell membrane** matters.
""",
            ("Cells",),
        ),
    ),
)

ITALIAN = Document(
    "text",
    (
        Page(
            1,
            """La cellula
La cellula è l'unità fondamentale della vita. Il mitocondrio è un organello che produce
energia. La membrana cellulare è una barriera che separa la cellula dall'ambiente.
L'osmosi è la diffusione dell'acqua attraverso la membrana cellulare.
Cellule e un tessuto formano un organo.
Esercizi
Spiega l'osmosi con parole tue.
""",
        ),
    ),
)

SPANISH = Document(
    "text",
    (
        Page(
            3,
            """La célula es la unidad básica de la vida.
Las mitocondrias son orgánulos que producen energía para la célula.
La ósmosis es el paso del agua a través de la membrana celular. Este proceso se llama
difusión pasiva, y no requiere energía.
""",
        ),
    ),
)

ARABIC = Document(
    "text",
    (
        Page(
            1,
            """الخلية هي الوحدة الأساسية للحياة.
الميتوكوندريا هي عضيات تنتج الطاقة للخلية.
الانتشار هو حركة الجزيئات من التركيز العالي إلى التركيز المنخفض.
الخاصية الأسموزية هي انتشار الماء عبر غشاء الخلية.
""",
        ),
    ),
)


def _by_name(document: Document) -> dict[str, ExtractedConcept]:
    return {c.name: c for c in OfflineExtractor().extract(document)}


def test_the_offline_extractor_is_the_builtin_extractor() -> None:
    extractor: Extractor = OfflineExtractor()
    assert extractor.name == "builtin"


def test_english_definitions_glossary_naming_and_glosses_become_concepts_in_file_order() -> None:
    concepts = OfflineExtractor().extract(ENGLISH)
    assert [c.name for c in concepts] == [
        "Cell membrane",
        "Diffusion",
        "Osmosis",
        "Organelles",
        "Mitochondria",
        "Cytoplasm",
        "Photosynthesis",
        "Chloroplasts",
    ]


def test_summary_is_the_defining_sentence_and_definition_its_predicate() -> None:
    osmosis = _by_name(ENGLISH)["Osmosis"]
    assert osmosis.summary == "Osmosis is the diffusion of water across the cell membrane."
    assert osmosis.definition == "the diffusion of water across the cell membrane"
    mitochondria = _by_name(ENGLISH)["Mitochondria"]
    assert mitochondria.definition == "organelles that release energy from glucose"
    photosynthesis = _by_name(ENGLISH)["Photosynthesis"]
    assert photosynthesis.definition == "The process by which plants make sugar from light"
    chloroplasts = _by_name(ENGLISH)["Chloroplasts"]
    assert chloroplasts.definition == "the organelles where photosynthesis happens"


def test_furniture_headings_are_never_concepts() -> None:
    names = {c.name.lower() for c in OfflineExtractor().extract(ENGLISH)}
    assert names.isdisjoint({"introduction", "common mistakes", "exercises", "cells"})
    assert not any("chapter" in n for n in names)


def test_builds_on_comes_from_cues_definitions_and_section_headings() -> None:
    concepts = _by_name(ENGLISH)
    # a cue, with a prerequisite the file never defines, then a definition naming concepts
    assert concepts["Osmosis"].builds_on == (
        "Diffusion",
        "Concentration gradients",
        "Cell membrane",
    )
    # a definition naming a concept, and the section heading concept
    assert concepts["Mitochondria"].builds_on == ("Organelles",)
    assert concepts["Cytoplasm"].builds_on == ("Cell membrane", "Organelles")
    assert concepts["Chloroplasts"].builds_on == ("Organelles", "Photosynthesis")
    assert concepts["Diffusion"].builds_on == ()


def test_pages_list_where_the_file_explains_the_concept() -> None:
    concepts = _by_name(ENGLISH)
    assert concepts["Osmosis"].pages == (1,)
    assert concepts["Cell membrane"].pages == (1, 2)  # defined on 1, bold in a gloss on 2
    assert concepts["Mitochondria"].pages == (2,)


def test_italian_text_with_accented_copula() -> None:
    concepts = _by_name(ITALIAN)
    assert list(concepts) == ["Cellula", "Mitocondrio", "Membrana cellulare", "Osmosi"]
    assert concepts["Mitocondrio"].definition == "un organello che produce energia"
    assert concepts["Osmosi"].builds_on == ("Membrana cellulare", "Cellula")
    # "e" (and) is not "è" (is): "Cellule e un tessuto…" defines nothing
    assert "Cellule" not in concepts


def test_spanish_text_with_a_naming_sentence_described_by_the_sentence_before() -> None:
    concepts = _by_name(SPANISH)
    assert list(concepts) == ["Célula", "Mitocondrias", "Ósmosis", "Difusión pasiva"]
    assert concepts["Mitocondrias"].builds_on == ("Célula",)
    passive = concepts["Difusión pasiva"]
    assert passive.definition == "La ósmosis es el paso del agua a través de la membrana celular"
    assert passive.builds_on == ("Ósmosis",)
    assert passive.pages == (3,)


def test_arabic_text_with_pronoun_copula_and_article_aware_mentions() -> None:
    concepts = _by_name(ARABIC)
    assert list(concepts) == ["الخلية", "الميتوكوندريا", "الانتشار", "الخاصية الأسموزية"]
    assert concepts["الخلية"].definition == "الوحدة الأساسية للحياة"
    # "للخلية" and "غشاء الخلية" name الخلية through its canonical key
    assert concepts["الميتوكوندريا"].builds_on == ("الخلية",)
    assert concepts["الخاصية الأسموزية"].builds_on == ("الانتشار", "الخلية")


def test_plain_text_glossary_lines_are_entries_and_soft_headings_are_not_concepts() -> None:
    document = Document(
        "pdf",
        (
            Page(
                4,
                """Biology 101 - Unit 2
Transport across membranes
Osmosis: the diffusion of water across a membrane.
Diffusion: the movement of particles down a concentration gradient.
Active transport requires energy from ATP.
""",
            ),
        ),
    )
    concepts = _by_name(document)
    assert list(concepts) == ["Osmosis", "Diffusion"]
    assert concepts["Osmosis"].builds_on == ("Diffusion",)


def test_a_bold_term_without_a_definition_is_a_weak_concept() -> None:
    document = Document("markdown", (Page(1, "Cells store energy as **ATP** for later use."),))
    [atp] = OfflineExtractor().extract(document)
    assert atp.name == "ATP"
    assert atp.summary == "Cells store energy as ATP for later use."


def test_mutual_mentions_do_not_make_a_cycle() -> None:
    document = Document(
        "text",
        (
            Page(
                1,
                "Acids are substances that react with bases to form salts.\n"
                "Bases are substances that react with acids to form salts.\n",
            ),
        ),
    )
    concepts = _by_name(document)
    assert concepts["Acids"].builds_on == ("Bases",)
    assert concepts["Bases"].builds_on == ()


def test_the_number_of_concepts_is_bounded_and_the_strongest_are_kept() -> None:
    defined = "\n".join(f"Term{n} is a definition of the thing number {n}." for n in range(50))
    bold = " ".join(f"**Bold{n}**" for n in range(10))
    document = Document("markdown", (Page(1, f"{bold} are mentioned.\n\n{defined}"),))
    concepts = OfflineExtractor().extract(document)
    assert len(concepts) == MAX_CONCEPTS_PER_FILE
    assert all(c.name.startswith("Term") for c in concepts)
    assert [c.name for c in concepts] == [f"Term{n}" for n in range(MAX_CONCEPTS_PER_FILE)]


def test_every_name_is_short_and_passes_the_validator() -> None:
    for document in (ENGLISH, ITALIAN, SPANISH, ARABIC):
        for concept in OfflineExtractor().extract(document):
            assert rejection_reason(concept.name) is None
            assert len(concept.name.split()) <= MAX_NAME_WORDS


def test_extraction_is_deterministic_and_reads_an_empty_file_as_nothing() -> None:
    assert OfflineExtractor().extract(ENGLISH) == OfflineExtractor().extract(ENGLISH)
    assert OfflineExtractor().extract(Document("text", ())) == []
    assert OfflineExtractor().extract(Document("text", (Page(1, "   \n"),))) == []


def test_furniture_sections_contribute_only_their_glossary_entries() -> None:
    document = Document(
        "markdown",
        (
            Page(
                1,
                """## Summary
Cells are bounded by a membrane and filled with cytoplasm.

## Common mistakes
Osmosis is the movement of salt, students often write.

## Glossary
Nucleus: the part of the cell that holds its DNA.
""",
            ),
        ),
    )
    assert list(_by_name(document)) == ["Nucleus"]


def test_a_cue_list_stops_at_a_colon_and_a_relative_clause_unless_the_cue_resumes() -> None:
    document = Document(
        "text",
        (
            Page(
                1,
                "Diffusion builds on the concentration gradient: the steeper it is, the faster.\n"
                "The cell wall builds on the cell membrane, which it surrounds and protects.\n"
                "Mitochondria build on the cytoplasm, where glucose is broken down, and on "
                "glucose itself, which comes from the blood.\n"
                "Diffusion is the spreading of particles down a gradient.\n"
                "The cell wall is a rigid layer of cellulose around a plant cell.\n"
                "Mitochondria are the organelles that release energy from glucose.\n",
            ),
        ),
    )
    concepts = _by_name(document)
    assert concepts["Diffusion"].builds_on == ("Concentration gradient",)
    assert concepts["Cell wall"].builds_on == ("Cell membrane",)
    assert concepts["Mitochondria"].builds_on == ("Cytoplasm", "Glucose")
