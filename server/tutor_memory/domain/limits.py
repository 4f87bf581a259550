"""Every limit a request field has, and the checks that enforce them: one place, so that the
proto comments and the README can list them and every RPC checks them before any other work.

A caller over a limit gets INVALID_ARGUMENT naming the field. Each check costs time linear in
the field's length and never more than the limit allows (lengths are checked first), so a hostile
value is refused before it costs anything.
"""

from __future__ import annotations

import calendar
import unicodedata
from datetime import datetime

from tutor_memory.domain.errors import InvalidArgument

# -- identities ------------------------------------------------------------------------------------

# student_id, subject_id, tenant: 1 to this many characters, printable, no edge spaces.
MAX_ID_CHARS = 128
# A file's id within its chain.
MAX_FILE_ID_CHARS = 256
# An episode's idempotency key.
MAX_CLIENT_KEY_CHARS = 200

# -- text --------------------------------------------------------------------------------------

# An episode's one-line summary.
MAX_SUMMARY_CHARS = 500
# An episode's full text, a teaching sentence, a check's evaluation and answer together.
MAX_TEXT_BYTES = 64 * 1024
# A concept's name, a check's topic.
MAX_CONCEPT_CHARS = 200
MAX_TOPIC_CHARS = 200
# A query (BuildBlock, SearchPassages): longer than any message a student types.
MAX_QUERY_CHARS = 8_000
# BuildBlock: the largest token budget.
MAX_BUDGET_TOKENS = 100_000
# An IANA time zone name ("America/Argentina/ComodRivadavia" is 32).
MAX_TIME_ZONE_CHARS = 64
# A file's name and media type as the caller gives them.
MAX_FILENAME_CHARS = 256
MAX_MEDIA_TYPE_CHARS = 128

# -- course files (IngestFile.content) -----------------------------------------------------------

# Largest file accepted, in bytes (25 MiB): a long textbook PDF fits; anything bigger is more likely
# a scanned book or a video sent by mistake, and would hold a worker for seconds.
MAX_FILE_BYTES = 25 * 1024 * 1024
# Most pages a file may have, after splitting (so it bounds Markdown and text too). A thousand-page
# reference manual is not a course file, and every page is later cut into passages and embedded.
MAX_PAGES = 2_000
# Most characters of text a file may hold once read (about 1,700 printed pages): every character
# is cut into passages and embedded, so this bounds the work and the memory of one file.
MAX_FILE_TEXT_CHARS = 5_000_000
# Longest line of a Markdown or plain-text file, in characters: a paragraph on one line fits many
# times over; a megabyte line is generated data, not course text.
MAX_LINE_CHARS = 100_000
# Deepest nesting of block quotes and list items on one Markdown line.
MAX_MARKDOWN_NESTING = 16
# A PDF's page tree may be this many levels deep (a real one has 2 or 3).
MAX_PDF_PAGE_TREE_DEPTH = 32
# Most bytes one PDF stream may inflate to: a dense page's content is a few hundred kilobytes.
MAX_PDF_STREAM_BYTES = 16 * 1024 * 1024
# The content the pages of a PDF draw, in bytes, counted once per page that draws it: at most
# this many times the file's size, and never more than the cap below (though at least the floor).
# A course PDF's pages draw each their own content, a few times its compressed size; a file whose
# pages repeat one stream, or whose streams inflate a thousandfold, is refused before any text is
# read from it.
PDF_CONTENT_RATIO = 10
MIN_PDF_CONTENT_BYTES = 4 * 1024 * 1024
MAX_PDF_CONTENT_BYTES = 64 * 1024 * 1024
# Items of one PDF array (a page tree's kids, a font's widths): a flat tree of the most pages fits
# many times over, and a tree listing one page a hundred thousand times is refused while read.
MAX_PDF_ARRAY_ITEMS = 50_000
# Form XObjects one PDF page may invoke while its text is read.
MAX_PDF_FORMS_PER_PAGE = 1_000

# -- work per request ------------------------------------------------------------------------------

# The most a request's text work may take (detectors, grounding), and one file's reading,
# extraction and embedding; past it the work stops with RESOURCE_EXHAUSTED. A caller's own
# shorter deadline stops it sooner, with DEADLINE_EXCEEDED.
TEXT_WORK_SECONDS = 10
FILE_WORK_SECONDS = 120

# -- opaque tokens -------------------------------------------------------------------------------

# ListEpisodes.page_token as the server issues it (about 60 characters).
MAX_PAGE_TOKEN_CHARS = 256
# AnnotateAnswer.block_id as BuildBlock issues it (at most ~700 characters for 40 memories).
MAX_BLOCK_ID_CHARS = 1_024
# VerifyChain's checkpoint: the signed payload (compact JSON of a few ids and numbers), and the
# sizes of its binary fields.
MAX_CHECKPOINT_PAYLOAD_BYTES = 2_048
HASH_BYTES = 32
SIGNATURE_BYTES = 64
PUBLIC_KEY_BYTES = 32

# -- time ------------------------------------------------------------------------------------------

# Every timestamp a caller sends lies in [1970-01-01, 9999-12-31 23:59:59.999999] UTC: the ledger
# stores microseconds since the Unix epoch, and calendars stop at year 9999.
MIN_TIME_US = 0
MAX_TIME_US = calendar.timegm(datetime(9999, 12, 31, 23, 59, 59).utctimetuple()) * 1_000_000 + (
    999_999
)
# A client clock may run ahead of the server's by this much before a time counts as "in the
# future" and is refused: a replayed history is in the past, a live one is now.
MAX_CLOCK_SKEW_US = 300 * 1_000_000

# Unicode general categories an identifier may not hold: controls, format characters (bidirectional
# overrides, zero-width spaces and joiners), surrogates, private use, unassigned code points, and
# line and paragraph separators. Spaces other than U+0020 are refused too: an id must look like
# what it is.
_NOT_IN_IDS = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Characters that end a line: a one-line field holds none of them (a tab is allowed: pasted text
# often has one). C1 controls such as NEL (U+0085) break lines in some viewers.
_LINE_BREAKS = frozenset("\x0a\x0b\x0c\x0d\x1c\x1d\x1e\x85\u2028\u2029")


def check_identifier(field: str, value: str, limit: int = MAX_ID_CHARS) -> str:
    """An id: non-empty, at most `limit` characters, no control, format (bidirectional, invisible)
    or separator characters, no space other than U+0020, none at the edges."""
    if not value:
        raise InvalidArgument(field, "must not be empty")
    if len(value) > limit:
        raise InvalidArgument(field, f"longer than {limit} characters")
    for ch in value:
        category = unicodedata.category(ch)
        if category in _NOT_IN_IDS:
            raise InvalidArgument(
                field,
                f"must not contain U+{ord(ch):04X} (control, invisible or bidirectional "
                "characters are not allowed in ids)",
            )
        if category == "Zs" and ch != " ":
            raise InvalidArgument(field, f"must not contain the space U+{ord(ch):04X}")
    if value != value.strip():
        raise InvalidArgument(field, "must not start or end with white space")
    return value


def check_line(field: str, value: str, limit: int, *, required: bool) -> str:
    """A one-line text field: at most `limit` characters, no line break or control character
    other than a tab."""
    if len(value) > limit:
        raise InvalidArgument(field, f"longer than {limit} characters ({len(value)})")
    if required and not value.strip():
        raise InvalidArgument(field, "must not be empty")
    for ch in value:
        if ch in _LINE_BREAKS or (ch != "\t" and unicodedata.category(ch) == "Cc"):
            raise InvalidArgument(field, "must be one line without control characters")
    return value


def check_text(field: str, value: str, limit_bytes: int = MAX_TEXT_BYTES) -> str:
    """A free text field: at most `limit_bytes` of UTF-8 and no NUL character."""
    if len(value) > limit_bytes:  # every character is at least one byte
        raise InvalidArgument(field, f"more than the {limit_bytes} bytes allowed")
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > limit_bytes:
        raise InvalidArgument(field, f"{size} bytes, more than the {limit_bytes} allowed")
    if "\x00" in value:
        raise InvalidArgument(field, "must not contain NUL characters")
    return value


def check_time(field: str, us: int) -> int:
    """A time a caller sends: inside the documented range."""
    if us < MIN_TIME_US:
        raise InvalidArgument(field, "before 1970-01-01T00:00:00Z")
    if us > MAX_TIME_US:
        raise InvalidArgument(field, "after 9999-12-31T23:59:59.999999Z")
    return us


def check_not_future(field: str, us: int, now_us: int) -> int:
    """A time by the caller's clock (when something happened, where a window ends): in the
    documented range and not in the future beyond the allowed clock skew."""
    check_time(field, us)
    if us > now_us + MAX_CLOCK_SKEW_US:
        raise InvalidArgument(
            field,
            f"{(us - now_us) // 1_000_000} s after the server's clock: it cannot be in the future",
        )
    return us


def quoted(value: str, limit: int = 64) -> str:
    """A caller's value as an error message quotes it: its repr, at most `limit` characters
    between the quotes, so an error never grows with the input (gRPC trailers are small).

    The repr is what is bounded, not the value: an escaped character takes up to ten ("\\u2028"),
    so a bound on the value alone let 64 invisible characters become 640.
    """
    shown = value[:limit]
    while len(repr(shown)) > limit + 2:  # at most `limit` steps of a short string
        shown = shown[:-1]
    return repr(shown + "…" if len(shown) < len(value) else shown)
