"""Passages: page text stripped of markup, flattened, and cut to a searchable size."""

from __future__ import annotations

from tutor_memory.domain.files.document import Document, Page
from tutor_memory.domain.files.passages import MAX_PASSAGE_CHARS, PassageText, passages


def _markdown(*texts: str) -> Document:
    return Document(
        kind="markdown", pages=tuple(Page(number=i, text=t) for i, t in enumerate(texts, 1))
    )


def test_markdown_markup_is_stripped_and_words_kept() -> None:
    page = (
        "## Osmosis ##\n\n"
        "**Osmosis** is the *diffusion* of __water__ across a [membrane](http://x.test/m).\n\n"
        "- first point\n"
        "* second point\n"
        "1. third point\n\n"
        "> quoted line\n\n"
        "Use `water_potential` here. ![a cell](cell.png)\n\n"
        "---\n\n"
        "```python\nprint(1)\n```"
    )
    (passage,) = passages(_markdown(page))
    assert passage.text == (
        "Osmosis Osmosis is the diffusion of water across a membrane. first point second point "
        "third point quoted line Use water_potential here. a cell print(1)"
    )


def test_snake_case_words_keep_their_underscores() -> None:
    (passage,) = passages(_markdown("The variable solute_concentration_gradient matters."))
    assert passage.text == "The variable solute_concentration_gradient matters."


def test_whitespace_is_collapsed() -> None:
    (passage,) = passages(_markdown("Water\n\n\tmoves   by\nosmosis."))
    assert passage.text == "Water moves by osmosis."


def test_markup_is_kept_in_files_that_are_not_markdown() -> None:
    document = Document(kind="text", pages=(Page(number=1, text="Compute 2 * 3 * 4\n# of cells"),))
    assert passages(document) == [PassageText(page=1, text="Compute 2 * 3 * 4 # of cells")]


def test_long_page_becomes_several_passages_of_the_same_page_cut_at_sentences() -> None:
    sentences = [f"Sentence {i} explains how water crosses the membrane." for i in range(60)]
    document = Document(kind="pdf", pages=(Page(number=7, text=" ".join(sentences)),))
    result = passages(document)
    assert len(result) > 1
    assert {p.page for p in result} == {7}
    assert all(len(p.text) <= MAX_PASSAGE_CHARS for p in result)
    assert all(p.text.endswith("membrane.") for p in result)
    assert " ".join(p.text for p in result) == " ".join(sentences)


def test_sentence_longer_than_a_passage_is_cut_between_words() -> None:
    words = ["osmosis"] * 400
    document = Document(kind="text", pages=(Page(number=1, text=" ".join(words)),))
    result = passages(document)
    assert all(len(p.text) <= MAX_PASSAGE_CHARS for p in result)
    assert sum(len(p.text.split()) for p in result) == len(words)


def test_empty_pages_give_no_passages_and_numbers_are_kept() -> None:
    document = Document(
        kind="pdf",
        pages=(Page(number=1, text=""), Page(number=2, text="  \n "), Page(number=3, text="Hi.")),
    )
    assert passages(document) == [PassageText(page=3, text="Hi.")]


def test_page_of_markup_only_gives_no_passage() -> None:
    assert passages(_markdown("---\n\n```\n```")) == []
