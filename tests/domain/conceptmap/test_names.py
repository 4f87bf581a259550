"""Exact-name routing finds concept names in a text through canonical keys (SPEC R4.1, R5.5)."""

from __future__ import annotations

from tutor_memory.domain.conceptmap.names import NameMatcher

BIOLOGY = ["Cell Membrane", "Osmosis", "Diffusion", "Cell", "Mitochondria", "Active transport"]


def test_a_name_is_found_through_its_canonical_key() -> None:
    matcher = NameMatcher(BIOLOGY)
    assert matcher.find("Water crosses the cell membranes by OSMOSIS.") == [
        "Cell Membrane",
        "Osmosis",
    ]


def test_names_are_found_only_as_whole_words() -> None:
    matcher = NameMatcher(["Cell", "Osmosis"])
    assert matcher.find("Cellular respiration and reverse-osmosisish filters") == []
    assert matcher.find("reverse-osmosis filters") == ["Osmosis"]


def test_the_longest_name_wins_where_names_overlap() -> None:
    matcher = NameMatcher(
        ["Cell", "Cell Membrane", "Membrane potential", "Resting membrane potential"]
    )
    assert matcher.find("the cell membrane is thin") == ["Cell Membrane"]
    assert matcher.find("the cell resting membrane potential") == [
        "Cell",
        "Resting membrane potential",
    ]


def test_names_come_in_text_order_each_once() -> None:
    matcher = NameMatcher(BIOLOGY)
    found = matcher.find("Diffusion drives osmosis; osmosis is diffusion of water into the cell.")
    assert found == ["Diffusion", "Osmosis", "Cell"]


def test_names_are_found_in_italian_spanish_and_arabic_text() -> None:
    matcher = NameMatcher(["Mitocondri", "Membrana cellulare", "Célula", "الخلية", "غشاء الخلية"])
    assert matcher.find("Ricorda che i mitocondri producono energia.") == ["Mitocondri"]
    assert matcher.find("las células tienen núcleo") == ["Célula"]
    assert matcher.find("الماء يعبر غشاء الخلية بسهولة") == ["غشاء الخلية"]
    assert matcher.find("الطاقة للخلية") == ["الخلية"]


def test_a_second_name_with_the_same_key_is_the_same_concept() -> None:
    matcher = NameMatcher(["Cell membrane", "The cell membranes"])
    assert len(matcher) == 1
    assert matcher.find("a cell membrane") == ["Cell membrane"]


def test_a_one_word_name_that_is_a_short_function_word_is_not_matched() -> None:
    matcher = NameMatcher(["IT", "Mean", "Osmosis"])
    assert matcher.find("it is the mean of the osmosis values") == ["Mean", "Osmosis"]


def test_no_names_and_no_text_find_nothing() -> None:
    assert NameMatcher([]).find("osmosis") == []
    assert NameMatcher(BIOLOGY).find("") == []
