"""Adversarial text shapes for the linear-time tests, as hypothesis strategies.

A shape is a named function from a size to a text of about that many characters. The families
follow the hostile-input issue: runs of one character (every punctuation and white-space kind the
splitters look at, then a letter: "30,000 dots then a letter"), alternations (". . . ", ".a.a.a",
"#a#a" and units hypothesis draws), long lines (a heading line with blanks inside, a line of
"a. "), and deep nesting (brackets, quotes, Markdown fences, list and quote markers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st

# Every punctuation and white-space character a splitter, detector or Markdown reader of the
# domain treats specially, plus a few it does not.
RUN_CHARACTERS = (
    ".!?\u2026\u061f\u06d4\u3002\uff01\uff1f;\u061b,:\u060c"  # sentence and clause marks
    "\"')]\u00bb\u201d\u2019([{\u00ab\u201c\u2018"  # closing and opening quotes and brackets
    "-\u2013\u2014*_#`~<>|/\\+=&@"  # Markdown and glossary marks
    " \t\n\r\f\v\u00a0\u2028\u2029\u3000\u200b\u0085"  # white space and invisible characters
)

# Units whose repetition has made a pattern backtrack somewhere: sentence marks with and without
# blanks, abbreviations, Markdown marks left open, headings, hyphenated lines, and words the
# detectors look for ("consider … as", lead-ins, a false friend of a time word, a month and year,
# record phrases, topic prepositions and pasts with a participle).
ALTERNATION_UNITS = (
    ". . . ",
    ".a.a.a",
    "#a#a",
    "a. ",
    "A. ",
    "e.g. ",
    "p. ",
    "3.5 ",
    '."  ',
    "?! ",
    "__a ",
    "**a ",
    "*a ",
    "_a ",
    "~~a ",
    "[a](",
    "![a](",
    "<a",
    "`a",
    "``a ",
    "# a #",
    "# a\n",
    "a-\nb",
    "a:\n",
    "a, ",
    "(a b c) ",
    "consider the as x, ",
    "ok, ",
    "remember that the, ",
    "hoy en d\u00eda ",
    "in July 1789 ",
    "we covered July ",
    "what did I get wrong ",
    "what did I get wrong about the, ",
    "did we do about ",
    "I have a test on Monday, ",
    "haben wir gemacht ",
    "\u0648\u0641\u064a ",
    "before christmas we, ",
    "in den Osterferien ",
)


@dataclass(frozen=True, slots=True)
class Shape:
    """A family of texts: `make(n)` is a text of about n characters."""

    name: str
    make: Callable[[int], str]

    def __repr__(self) -> str:  # hypothesis prints the shape of a failing example by this
        return f"Shape({self.name!r})"


def run_then_letter(char: str) -> Shape:
    return Shape(f"{char!r} * n + 'a'", lambda n: char * n + "a")


def repeated(unit: str) -> Shape:
    return Shape(f"{unit!r} repeated", lambda n: (unit * (n // len(unit) + 1))[:n])


def _nested(opening: str, middle: str, closing: str) -> Callable[[int], str]:
    def make(n: int) -> str:
        depth = max(1, n // (len(opening) + len(closing)))
        return opening * depth + middle + closing * depth

    return make


LONG_LINES = (
    Shape("heading line with blanks inside", lambda n: "# a" + " " * n + "b"),
    Shape("heading line closed by hashes", lambda n: "# a" + " " * (n // 2) + "#" * (n // 2)),
    Shape("line of 'a. '", lambda n: "a. " * (n // 3)),
    Shape("line of words", lambda n: "osmosis moves water " * (n // 20)),
    Shape("blank run inside a sentence", lambda n: "Osmosis" + " " * n + "moves."),
)

NESTING = (
    Shape("nested brackets", _nested("(", "a", ")")),
    Shape("nested square brackets", _nested("[", "a", "]")),
    Shape("nested quotes", _nested('"', "a", '"')),
    Shape("nested guillemets", _nested("\u00ab", "a", "\u00bb")),
    Shape("nested emphasis", _nested("*", "a", "*")),
    Shape("opened fences", lambda n: "```\n" * (n // 4)),
    Shape("fence around blank lines", lambda n: "```\n" + "\n" * n + "```\n"),
    Shape("nested list markers", lambda n: "- " * (n // 2) + "a"),
    Shape("nested quote markers", lambda n: "> " * (n // 2) + "a"),
    Shape("numbered list markers", lambda n: "1. " * (n // 3) + "a"),
    Shape("list items", lambda n: "- a\n" * (n // 4)),
)

# Runs of the characters the splitters and Markdown readers act on, each then a letter.
RUN_THEN_LETTER = tuple(run_then_letter(char) for char in '.!?\u2026\u061f;\n \t#*_`[(<->:"')

# Every family with fixed members: each linear-time test runs on all of them.
KNOWN_SHAPES = (
    RUN_THEN_LETTER + tuple(repeated(unit) for unit in ALTERNATION_UNITS) + LONG_LINES + NESTING
)

# Shapes hypothesis draws: any run, any known shape, and repetitions of short units made of the
# characters that matter.
SHAPES = st.one_of(
    st.sampled_from(RUN_CHARACTERS).map(run_then_letter),
    st.sampled_from(KNOWN_SHAPES),
    st.text(alphabet=RUN_CHARACTERS + "aA1", min_size=1, max_size=4).map(repeated),
)
# The shapes the hostile-input issue measured, at the sizes it measured them.
ISSUE_SHAPES = {
    "30,000 dots then a letter": "." * 30_000 + "a",
    "64 KiB of dots then a letter": "." * 65_536 + "a",
    "one 800-character Markdown heading": "# a" + " " * 796 + "b",
    "one 64 KiB Markdown heading": "# a" + " " * (65_536 - 4) + "b",
    'a 64 KiB line of "a. "': "a. " * (65_536 // 3),
}
