"""Canonical keys merge spellings of one concept across files, and only those (SPEC R3.3)."""

from __future__ import annotations

import pytest

from tutor_memory.domain.conceptmap.canonical import canonical_key, canonical_words, name_words

SAME_CONCEPT = [
    # English: case, article, plural
    ("Cell Membrane", "cell membranes"),
    ("Cell Membrane", "the cell membrane"),
    ("Cell", "Cells"),
    ("Enzyme", "an enzyme"),
    ("Body", "bodies"),
    ("Process", "processes"),
    ("Calorie", "calories"),
    ("Virus", "viruses"),
    ("Child", "children"),
    ("Newton's laws", "Newton laws"),
    ("cell-membrane", "Cell  membrane"),
    # Italian: articles, elision, accents
    ("Mitocondri", "i mitocondri"),
    ("L'acqua", "acqua"),
    ("La mitosi", "mitosi"),
    ("Perché", "perche"),
    # Spanish: accents, articles, -s plurals
    ("Célula", "las células"),
    ("Mitocondria", "las mitocondrias"),
    ("Ósmosis", "la osmosis"),
    # French, German, Portuguese
    ("Les cellules", "cellule"),
    ("Réseaux", "réseau"),
    ("Animaux", "animal"),
    ("Die Zelle", "Zelle"),
    ("As reações", "reação"),
    ("Canais", "canal"),
    # Arabic: article on each word, teh marbuta, tashkeel, tatweel, hamza on alef
    ("الخلية", "خلية"),
    ("الخلية", "الخليه"),
    ("الخلية", "الخَلِيَّة"),
    ("الخلية", "الخلــية"),
    ("غشاء الخلية", "غشاء خلية"),
    ("الأحماض", "الاحماض"),
    ("الألوان", "ألوان"),
]

DIFFERENT_CONCEPTS = [
    ("Osmosis", "osmoses"),  # Greek -is/-es plurals are not folded
    ("species", "specie"),  # "specie" is coin money
    ("odds", "odd"),
    ("goods", "good"),
    ("Na+", "Na"),  # an ion, not the atom
    ("C++", "C"),
    ("Mitochondrion", "Mitochondria"),  # Latin plurals are not folded
    ("Mitocondrio", "mitocondri"),  # Italian plurals are not folded
    ("Cellula", "cellule"),
    ("Canal", "canales"),  # Spanish consonant + -es is not folded
    ("Cell membrane", "Cell"),
    ("Genetics", "genetic"),
]


@pytest.mark.parametrize(("a", "b"), SAME_CONCEPT)
def test_spellings_of_one_concept_share_a_key(a: str, b: str) -> None:
    assert canonical_key(a) == canonical_key(b)


@pytest.mark.parametrize(("a", "b"), DIFFERENT_CONCEPTS)
def test_different_concepts_keep_different_keys(a: str, b: str) -> None:
    assert canonical_key(a) != canonical_key(b)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Cell Membrane", "cell membrane"),
        ("mitochondria", "mitochondria"),
        ("osmosis", "osmosis"),
        ("species", "species"),
        ("osmoses", "osmose"),
        ("Chapter 3", "chapter 3"),
        ("الخلية", "خليه"),
        ("للخلية", "خليه"),
        ("Célula", "celula"),
    ],
)
def test_keys_are_the_folded_words_joined_by_single_spaces(name: str, key: str) -> None:
    assert canonical_key(name) == key


def test_osmoses_is_the_french_osmose_not_osmosis() -> None:
    assert canonical_key("osmoses") == canonical_key("osmose") != canonical_key("osmosis")


@pytest.mark.parametrize("name", ["The", "La", "Die", "A"])
def test_an_article_that_is_the_whole_name_is_kept(name: str) -> None:
    assert canonical_key(name) == name.lower()


def test_only_one_leading_article_is_dropped_and_only_in_front() -> None:
    assert canonical_key("The theory of the firm") == "theory of the firm"
    assert canonical_key("ciclo de la urea") == "ciclo de la urea"


def test_arabic_article_stays_when_too_few_letters_would_remain() -> None:
    assert canonical_key("الدم") == canonical_key("دم") == "دم"
    assert canonical_key("الم") == "الم"  # ألم, "pain": ال are its own letters


def test_keys_are_idempotent() -> None:
    for a, b in SAME_CONCEPT + DIFFERENT_CONCEPTS:
        for name in (a, b):
            key = canonical_key(name)
            assert canonical_key(key) == key, name


def test_empty_and_punctuation_only_names_have_an_empty_key() -> None:
    assert canonical_key("") == ""
    assert canonical_key(" -- ") == ""


def test_canonical_words_keep_articles_and_name_words_drop_the_leading_one() -> None:
    assert canonical_words("the cell membranes") == ["the", "cell", "membrane"]
    assert name_words("the cell membranes") == ("cell", "membrane")
    assert canonical_words("وفي الخلايا") == ["وفي", "خلايا"]
