"""Stems for lexical recall: Snowball per language, the language guessed from stop words, Arabic
clitics folded, a query stemmed in its two best guesses."""

from __future__ import annotations

from tutor_memory.domain.text.stems import (
    document_terms,
    grouped_query_terms,
    guess_languages,
    query_terms,
)


def test_a_text_is_stemmed_in_the_language_its_stop_words_name() -> None:
    assert document_terms("We studied the cells and their membranes")[0] == "en"
    assert document_terms("Abbiamo studiato la cellula e le sue membrane")[0] == "it"
    assert document_terms("Wir haben die Zellen und ihre Membranen gelernt")[0] == "de"
    assert document_terms("والكتاب في المدرسة")[0] == "ar"


def test_inflected_forms_meet_in_their_stem() -> None:
    _, studied = document_terms("we studied cells")
    assert set(query_terms("what do I study about the cell?")) >= set(studied)
    _, italian = document_terms("abbiamo studiato le cellule")
    assert set(italian) <= set(query_terms("cosa ho studiato sulla cellula?")) | {"cellul"}


def test_stop_words_and_single_letters_are_not_terms() -> None:
    language, stems = document_terms("the a of and I x")
    assert language == "en"
    assert stems == {}


def test_arabic_conjunctions_and_the_article_come_off_before_stemming() -> None:
    _, plain = document_terms("كتاب")
    _, glued = document_terms("والكتاب")
    assert set(plain) == set(glued)


def test_a_query_is_stemmed_in_its_two_best_guesses_without_either_ones_stop_words() -> None:
    terms = query_terms("what did we study about photosynthesis?")
    assert "studi" in terms
    assert "photosynthesi" in terms
    assert not {"what", "did", "we", "about"} & set(terms)
    assert guess_languages(["the", "of", "cell"])[0] == "en"
    assert guess_languages(["nothing", "known", "here"])[0] == "en"


def test_query_stems_are_grouped_by_the_word_they_stem_in_each_guessed_language() -> None:
    terms, words = grouped_query_terms("Is osmosis a kind of diffusion? osmosis!")
    assert terms == query_terms("Is osmosis a kind of diffusion? osmosis!")
    assert sorted(stem for word in words for stem in word) == sorted(terms)
    # One group per distinct word, whatever the number of languages that stem it.
    assert len(words) == 3
    assert all(len(set(word)) == len(word) for word in words)
