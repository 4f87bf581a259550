"""Native core of tutor-memory, built from ``rust_core`` by maturin.

Every function here has a pure-Python twin in :mod:`tutor_memory._reference` that returns the
same value and raises the same exception type; ``tests/parity`` holds them to that.
"""

from collections.abc import Sequence

__all__ = ["episode_hash"]

def episode_hash(
    prev_hash: bytes,
    tenant: str,
    student: str,
    subject: str,
    seq: int,
    kind: str,
    summary: str,
    text: str,
    concepts: Sequence[str],
    salience: float,
    occurred_at_us: int,
    recorded_at_us: int,
    evidence: Sequence[tuple[str, int, str]],
    check_outcome: str,
    check_topic: str,
    predicted_mastery: float | None,
    quiz_correct: int,
    quiz_total: int,
    client_key: str,
) -> bytes:
    """Return the 32-byte SHA-256 that chains one ledger episode to ``prev_hash``.

    This is the ledger's tamper evidence: the digest covers every field below, and the
    encoding is fixed by the domain tag ``"tutor-memory/episode/v1"``. Changing the encoding
    changes every stored hash, so it needs a new tag, never an edit of this one.

    The digest is SHA-256 of these fields concatenated in this order, where *str* means a
    ``u32`` big-endian byte length followed by the UTF-8 bytes, and all integers are
    big-endian:

     1. the domain tag ``"tutor-memory/episode/v1"``, as a str
     2. ``prev_hash``, length-prefixed like a str (always 32 bytes)
     3. ``tenant``, 4. ``student``, 5. ``subject``, each a str
     6. ``seq`` as ``u64``
     7. ``kind``, 8. ``summary``, 9. ``text``, each a str
    10. ``concepts``: ``u32`` count, then each concept as a str (order matters)
    11. ``salience`` as the IEEE-754 bits of an ``f64``
    12. ``occurred_at_us``, 13. ``recorded_at_us``, each ``i64`` (microseconds since the epoch)
    14. ``evidence``: ``u32`` count, then per ``(file_id, page, fingerprint)`` item the
        ``file_id`` as a str, ``page`` as ``u32`` and ``fingerprint`` as a str
    15. ``check_outcome``, 16. ``check_topic``, each a str
    17. ``predicted_mastery``: byte ``0x00`` if ``None``, else ``0x01`` and its ``f64`` bits
    18. ``quiz_correct``, 19. ``quiz_total``, each ``u32``
    20. ``client_key``, a str

    Length prefixes make the encoding injective: moving text from ``summary`` to ``text``,
    or splitting one concept in two, changes the digest. Floats are hashed by their bits, so
    ``0.0`` and ``-0.0`` hash differently; callers should not pass NaN.

    The encoding and hashing run with the GIL released.

    Raises:
        TypeError: an argument has the wrong type (for example ``prev_hash`` not ``bytes``,
            ``concepts`` a bare ``str``, a float where an int is expected, or an ``evidence``
            item that is not a tuple).
        ValueError: ``prev_hash`` is not 32 bytes; ``seq`` is outside ``0..=2**64-1``;
            a timestamp is outside the ``i64`` range; ``page``, ``quiz_correct`` or
            ``quiz_total`` is outside ``0..=2**32-1``; an ``evidence`` tuple does not have
            3 items; or a str contains a lone surrogate (``UnicodeEncodeError``).
    """
