"""The canonical key of a concept name: equal keys mean "the same concept" (SPEC R3.3).

A key is a name's words, each folded, joined by single spaces:

1. `tutor_memory.recall.text.normalise`: Unicode NFKC, case folding, Latin accents stripped,
   Arabic tashkeel and tatweel removed, alef variants, teh marbuta and alef maqsura folded.
2. Words are runs of letters and digits; punctuation, hyphens and spacing only separate them
   ("cell-membrane" = "Cell  membrane"). Trailing `+` / `#` stay on their word ("Na+", "C++").
3. An English possessive goes ("Newton's laws" = "Newtons laws" = "Newton laws").
4. One leading article goes ("the", "la", "l'", "los", "die", "os" … `articles` of every language
   file), unless it is the whole name.
5. Arabic: the article ال and its clitic forms (وال, بال, كال, فال, لل: `article_prefixes`) come off
   every word while at least `MIN_LETTERS_AFTER_ARTICLE_PREFIX` letters remain. Stripping is
   repeated, so that a word whose own first two letters spell the article (آلة, ألوان once hamza
   is folded) meets its definite form whatever the spelling; such a word loses them in every
   spelling alike, which keeps keys consistent (the price: a possible collision with an unrelated
   shorter word).
6. Plurals, where safe (`plural_irregulars`, `plural_exceptions`, `plural_rules` of every file). The
   rules apply to every Latin-script word whatever its language, since a name's language is not
   known, so each is chosen to never make two different words equal. Exactly what folds:
   - irregular plurals listed in the data: children -> child, viruses -> virus, leaves -> leaf;
   - -ies and -ie both -> -y (stem of 3+ letters): bodies = body, calories = calorie,
     especies = especie, Energie = energy;
   - -sses -> -ss, -shes -> -sh, -xes -> -x: processes = process, boxes = box;
   - a final -s after a stem of 3+ letters, unless the word ends in -ss, -us, -is or -ics:
     cells = cell, membranes = membrane, células = célula, mitocondrias = mitocondria,
     cellules = cellule; but osmosis, virus, class, genetics stay;
   - French -eaux -> -eau and -aux -> -al (réseaux = réseau, animaux = animal);
   - Portuguese -ções -> -ção, -sões -> -são, -ais -> -al (reações = reação, canais = canal).
   Not folded, on purpose: Italian plurals (mitocondrio/mitocondri, cellula/cellule: vowel
   alternation that would merge different words across genders); Spanish and Portuguese plurals in
   consonant + -es (canal/canales, reacción/reacciones: English -es singulars forbid the rule);
   English -ches (branch/branches vs niche/niches); German plurals (-e, -en, -er, umlaut); Latin
   and Greek plurals (mitochondrion/mitochondria, nucleus/nuclei, osmosis/osmoses); Arabic broken
   and sound plurals (خلية/خلايا). Those pairs are left to the embedding-similarity merge.

Decisions the tests pin: "osmoses" is not "osmosis" (Greek -is/-es is not folded) but is "osmose";
"species" stays "species" (else it would meet "specie", coin money).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tutor_memory.domain import lang
from tutor_memory.domain.lang import PluralRule
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.spans import Token, tokenize

# An Arabic article prefix comes off only if this many letters remain: the shortest Arabic nouns
# with the article have two (الدم, "the blood").
MIN_LETTERS_AFTER_ARTICLE_PREFIX = 2


@dataclass(frozen=True, slots=True)
class _Rules:
    articles: frozenset[str]
    article_prefixes: tuple[str, ...]
    possessives: frozenset[str]
    irregulars: Mapping[str, str]
    exceptions: frozenset[str]
    plural_rules: tuple[PluralRule, ...]


def _norm_word(word: str) -> str:
    found = tokenize(word)
    if len(found) != 1:
        raise ValueError(f"language data: {word!r} must be a single word")
    return found[0].norm


def _merge_plural_rules(rules: Sequence[PluralRule]) -> tuple[PluralRule, ...]:
    """One rule per ending over every file (`unless` lists unite), longest ending first."""
    by_ending: dict[str, PluralRule] = {}
    for rule in rules:
        ending = _norm_word(rule.ending)
        replacement = _norm_word(rule.replacement) if rule.replacement else ""
        unless = tuple(_norm_word(u) for u in rule.unless)
        known = by_ending.get(ending)
        if known is None:
            by_ending[ending] = PluralRule(ending, replacement, rule.min_stem, unless)
        elif (known.replacement, known.min_stem) != (replacement, rule.min_stem):
            raise ValueError(f"language data: two plural rules for the ending {ending!r} disagree")
        else:
            merged = known.unless + tuple(u for u in unless if u not in known.unless)
            by_ending[ending] = PluralRule(ending, replacement, rule.min_stem, merged)
    return tuple(sorted(by_ending.values(), key=lambda r: -len(r.ending)))


@functools.cache
def _rules() -> _Rules:
    languages = lang.all_languages()
    irregulars: dict[str, str] = {}
    for data in languages:
        for plural, singular in data.plural_irregulars.items():
            irregulars[_norm_word(plural)] = _norm_word(singular)
    return _Rules(
        articles=frozenset(_norm_word(a) for d in languages for a in d.articles),
        article_prefixes=tuple(
            sorted({_norm_word(p) for d in languages for p in d.article_prefixes}, key=len)[::-1]
        ),
        possessives=frozenset(_norm_word(p) for d in languages for p in d.possessive_suffixes),
        irregulars=irregulars,
        exceptions=frozenset(_norm_word(w) for d in languages for w in d.plural_exceptions),
        plural_rules=_merge_plural_rules([r for d in languages for r in d.plural_rules]),
    )


def strip_article_prefix(word: str) -> str:
    """`word` (normalised) without its glued articles (Arabic ال and clitic forms), if any."""
    prefixes = _rules().article_prefixes
    stripped = True
    while stripped:
        stripped = False
        for prefix in prefixes:
            if word.startswith(prefix) and len(word) - len(prefix) >= (
                MIN_LETTERS_AFTER_ARTICLE_PREFIX
            ):
                word = word[len(prefix) :]
                stripped = True
                break
    return word


def has_article_prefix(word: str) -> bool:
    """Whether `word` (normalised) carries a glued article (Arabic الخلية, not خلية)."""
    return strip_article_prefix(word) != word


def _fold_plural(word: str) -> str:
    rules = _rules()
    word = rules.irregulars.get(word, word)
    if word in rules.exceptions or not (word.isascii() and word.isalpha()):
        return word
    for rule in rules.plural_rules:
        stem_length = len(word) - len(rule.ending)
        if word.endswith(rule.ending) and stem_length >= rule.min_stem:
            if any(word.endswith(u) for u in rule.unless):
                return word
            return word[:stem_length] + rule.replacement
    return word


@functools.lru_cache(maxsize=65536)
def fold_word(word: str) -> str:
    """The canonical form of one normalised word: articles glued to it and plurals folded."""
    return _fold_plural(strip_article_prefix(word))


def _drop_possessives(text: str, tokens: list[Token]) -> list[Token]:
    """`tokens` without the possessive endings split off their word ("Newton" "'" "s")."""
    possessives = _rules().possessives
    if not possessives:
        return tokens
    kept: list[Token] = []
    for token in tokens:
        glued = bool(kept) and normalise(text[kept[-1].end : token.start]) == "'"
        if glued and token.norm in possessives:
            continue
        kept.append(token)
    return kept


def key_tokens(text: str) -> list[Token]:
    """The tokens of `text` that a canonical key is made of, possessive endings removed."""
    return _drop_possessives(text, tokenize(text))


def canonical_words(text: str) -> list[str]:
    """Every word of `text`, folded as in a key (articles standing alone are kept)."""
    return [fold_word(t.norm) for t in key_tokens(text)]


def name_words(name: str) -> tuple[str, ...]:
    """The words of a concept name's canonical key (one leading article dropped)."""
    tokens = key_tokens(name)
    if len(tokens) > 1 and tokens[0].norm in _rules().articles:
        tokens = tokens[1:]
    return tuple(fold_word(t.norm) for t in tokens)


def canonical_key(name: str) -> str:
    """The script-aware canonical key of a concept name (see the module docstring)."""
    return " ".join(name_words(name))
