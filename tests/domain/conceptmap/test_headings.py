"""The validator rejects a file's furniture as concept names and keeps concepts (SPEC R3.2)."""

from __future__ import annotations

import pytest

from tutor_memory.domain import lang
from tutor_memory.domain.conceptmap.headings import (
    EMPTY,
    MAX_NAME_WORDS,
    NO_LETTERS,
    QUESTION,
    SECTION_HEADING,
    SECTION_NUMBER,
    TOO_LONG,
    clean_name,
    rejection_reason,
)

FURNITURE = [
    # English
    "Introduction",
    "Summary",
    "Common mistakes",
    "Exercises",
    "Conclusion",
    "Overview",
    "Glossary",
    "References",
    "Appendix",
    "Key terms",
    "The Summary",
    "EXERCISE",
    "1. Introduction",
    "## Learning objectives",
    "**Review questions:**",
    "Introduction to cells",
    # Italian
    "Esercizi",
    "Introduzione",
    "Riassunto",
    "Errori comuni",
    "Esercizi sulla cellula",
    # Spanish
    "Introducción",
    "Resumen",
    "Ejercicios",
    "Errores comunes",
    "Introducción a la célula",
    # French, German, Portuguese
    "Exercices",
    "Résumé",
    "Einleitung",
    "Zusammenfassung",
    "Übungen",
    "Introdução",
    "Exercícios",
    # Arabic, with and without the article
    "مقدمة",
    "المقدمة",
    "ملخص",
    "تمارين",
    "الأخطاء الشائعة",
    "ملخص الدرس",
]

SECTION_NUMBERS = [
    "Chapter 3",
    "Section 2.1",
    "Unit 4",
    "Lesson 2",
    "Part II",
    "Appendix A",
    "Chapter One",
    "Unit 4: Cells",
    "Exercises 3.2",
    "Capitolo 2",
    "Lezione 5: la mitosi",
    "Capítulo 3",
    "Tema 1",
    "Kapitel 4",
    "الفصل 3",
    "الفصل الثالث",
    "الدرس ٢",
    "3.1",
    "IV.",
]

CONCEPTS = [
    "Osmosis",
    "Cell membrane",
    "Mitochondria",
    "Vitamin A",
    "Index of refraction",
    "Test statistic",
    "Unit",  # a label alone is a concept in some subjects (units of measure, modules)
    "Module",
    "C",
    "La mitosi",
    "Ciclo di Krebs",
    "Membrana cellulare",
    "Ciclo de Krebs",
    "Las mitocondrias",
    "الخلية",
    "غشاء الخلية",
    "الميتوكوندريا",
]


@pytest.mark.parametrize("name", FURNITURE)
def test_section_headings_are_rejected_in_every_language(name: str) -> None:
    assert rejection_reason(name) == SECTION_HEADING


@pytest.mark.parametrize("name", SECTION_NUMBERS)
def test_chapter_and_section_numbers_are_rejected(name: str) -> None:
    assert rejection_reason(name) == SECTION_NUMBER


@pytest.mark.parametrize("name", CONCEPTS)
def test_concept_names_pass(name: str) -> None:
    assert rejection_reason(name) is None


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", EMPTY),
        ("   ", EMPTY),
        ("---", NO_LETTERS),
        ("!!!", NO_LETTERS),
        ("What is osmosis?", QUESTION),
        ("¿Qué es la ósmosis?", QUESTION),
        ("ما هي الخلية؟", QUESTION),
        ("The cell membrane lets water in but keeps most solutes out", TOO_LONG),
    ],
)
def test_the_reason_says_what_is_wrong(name: str, reason: str) -> None:
    assert rejection_reason(name) == reason


def test_the_too_long_reason_names_the_limit() -> None:
    assert str(MAX_NAME_WORDS) in TOO_LONG
    assert rejection_reason(" ".join(["osmosis"] * MAX_NAME_WORDS)) is None
    assert rejection_reason(" ".join(["osmosis"] * (MAX_NAME_WORDS + 1))) == TOO_LONG


@pytest.mark.parametrize("code", lang.LANGUAGES)
def test_every_listed_heading_of_every_language_is_rejected(code: str) -> None:
    data = lang.load(code)
    assert [h for h in data.section_headings if rejection_reason(h) is None] == []
    assert [
        o for o in data.section_heading_openers if rejection_reason(f"{o} osmosis") is None
    ] == []


@pytest.mark.parametrize(
    ("heading", "name"),
    [
        ("2.1 Osmosis", "Osmosis"),
        ("## 3. Cell membrane", "Cell membrane"),
        ("Unit 4: Cells", "Cells"),
        ("Chapter 3 - Photosynthesis", "Photosynthesis"),
        ("Capitolo 2. La cellula", "La cellula"),
        ("**Osmosis:**", "Osmosis"),
        ("- Diffusion", "Diffusion"),
        ("الفصل الثالث: الخلية", "الخلية"),
        ("5 kingdoms", "5 kingdoms"),
        ("Chapter 3", ""),
    ],
)
def test_clean_name_keeps_the_name_a_heading_carries(heading: str, name: str) -> None:
    assert clean_name(heading) == name
