"""Where a short name starts and ends in a run of words, with no parser, in any supported language.

A name here is: content words (not stop words of any language), joined by connectors ("of", "di",
"de", "von": `name_connectors`), an article allowed only right after a connector ("theory of the
firm", "ciclo de la urea"). It ends before punctuation that closes a clause, before any other stop
word (an article after a content word starts the next phrase: "we call the mitochondria *the*
powerhouse"), and, in a language with glued articles, where a definite word is followed by an
indefinite one (Arabic "نسمي الميتوكوندريا محطة الطاقة": the name is الميتوكوندريا).

When the sentence's language is known (`tutor_memory.domain.conceptmap.language.guess_language`),
only that language's articles and connectors count as such ("das" is an article in German, a
connector in Portuguese); otherwise those of every language do.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from tutor_memory.domain import lang
from tutor_memory.domain.conceptmap.canonical import has_article_prefix
from tutor_memory.domain.text.spans import Token, clause_break_before, tokenize
from tutor_memory.domain.text.words import stop_words


def _words(field: str, code: str | None) -> frozenset[str]:
    languages = lang.all_languages() if code is None else (lang.load(code),)
    return frozenset(
        t.norm for data in languages for w in getattr(data, field) for t in tokenize(w)
    )


@functools.cache
def connectors(code: str | None = None) -> frozenset[str]:
    """The name connectors of language `code`, or of every language."""
    return _words("name_connectors", code)


@functools.cache
def articles(code: str | None = None) -> frozenset[str]:
    """The standalone articles of language `code`, or of every language."""
    return _words("articles", code)


def is_content(word: str) -> bool:
    """Whether a normalised word can carry a name: no article, connector or stop word of any
    language."""
    return word not in stop_words() and word not in articles() and word not in connectors()


def noun_phrase(
    text: str,
    tokens: Sequence[Token],
    start: int,
    limit: int,
    *,
    max_words: int,
    language: str | None = None,
    skip_leading_stop_words: bool = False,
    allow_connectors: bool = True,
) -> tuple[int, int] | None:
    """(first, end) token indices of the name that starts at `start` (after leading articles, or
    any leading stop words with `skip_leading_stop_words`), scanning no further than `limit` and
    keeping at most `max_words` words; None if no content word starts it. `language` is the
    sentence's (see the module docstring); without `allow_connectors` the name is one run of
    content words.
    """
    leading, joining = articles(language), connectors(language) if allow_connectors else frozenset()
    i = start
    while i < limit and not is_content(tokens[i].norm):
        if tokens[i].norm not in leading and not skip_leading_stop_words:
            return None
        i += 1
    if i >= limit:
        return None
    first, end = i, i + 1
    definite = has_article_prefix(tokens[i].norm)
    after_connector = False
    i += 1
    while i < limit and i - first < max_words and not clause_break_before(text, tokens, i):
        word = tokens[i].norm
        if word in joining:
            after_connector = True
        elif word in leading:
            if not after_connector:
                break
        elif not is_content(word):
            break
        else:
            if definite and not has_article_prefix(word):
                break
            definite = has_article_prefix(word)
            after_connector = False
            end = i + 1
        i += 1
    return first, end
