"""Folding text so that two spellings of the same word compare equal: case, accents, apostrophe
look-alikes, ligatures, Arabic letter variants and marks, invisible format characters, spacing.

Every step is a table lookup or a single pass over the text, so the cost is linear in its length.
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

# Apostrophe look-alikes that keyboards and word processors produce; mapped to ASCII before NFKC,
# because NFKC turns the acute accent (U+00B4) into a space plus a combining mark.
_APOSTROPHES = str.maketrans(dict.fromkeys("\u2019\u2018\u02bc\u02bb\u0060\u00b4\u2032\uff07", "'"))

# Latin ligatures that NFKC leaves alone but that users type either way (French "cœur"/"coeur").
_LIGATURES = str.maketrans({"œ": "oe", "æ": "ae"})

# Arabic letter variants that spell the same word: hamza-carrying alefs and alef wasla are written
# as bare alef, alef maqsura as yeh, teh marbuta as heh (the usual search normalisation), plus the
# Persian yeh/kaf that Persian keyboards produce. Eastern Arabic digits become ASCII digits so that
# years compare equal whatever the keyboard.
_ARABIC = str.maketrans(
    {
        "\u0623": "\u0627",  # alef with hamza above -> alef
        "\u0625": "\u0627",  # alef with hamza below -> alef
        "\u0622": "\u0627",  # alef with madda -> alef
        "\u0671": "\u0627",  # alef wasla -> alef
        "\u0649": "\u064a",  # alef maqsura -> yeh
        "\u0629": "\u0647",  # teh marbuta -> heh
        "\u06cc": "\u064a",  # Farsi yeh -> yeh
        "\u06a9": "\u0643",  # keheh (Persian kaf) -> kaf
        **{chr(0x0660 + d): str(d) for d in range(10)},  # Arabic-Indic digits
        **{chr(0x06F0 + d): str(d) for d in range(10)},  # Extended Arabic-Indic digits
    }
)

# Arabic tashkeel (harakat, tanween, shadda, sukun, superscript alef, Quranic marks) and tatweel:
# optional in ordinary writing, so they must not make two spellings differ.
_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")

# Combining diacritics of Latin script (after NFD): accents, cedilla, umlaut, tilde.
_LATIN_MARKS = re.compile("[\u0300-\u036f]")


@functools.cache
def _format_characters() -> dict[int, None]:
    """Every Unicode format character (category Cf), as a deletion table for str.translate."""
    return {cp: None for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"}


def normalise(text: str) -> str:
    """Fold `text` so that case, accents, Arabic letter variants and spacing don't matter."""
    if text.isascii():
        # Of all the steps below only the apostrophes, case and spacing can change ASCII text;
        # most stored text is ASCII, and this runs several times for every episode written.
        return " ".join(text.translate(_APOSTROPHES).lower().split())
    text = text.translate(_APOSTROPHES)
    text = unicodedata.normalize("NFKC", text).casefold()
    # Format characters (zero-width joiners, bidi marks, soft hyphens) are invisible; they would
    # otherwise split words.
    text = text.translate(_format_characters())
    text = text.translate(_LIGATURES).translate(_ARABIC)
    text = _ARABIC_MARKS.sub("", text)
    text = unicodedata.normalize("NFC", _LATIN_MARKS.sub("", unicodedata.normalize("NFD", text)))
    return " ".join(text.split())
