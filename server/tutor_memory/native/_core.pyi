"""Native core of tutor-memory, built from ``rust_core`` by maturin.

Every function here has a pure-Python twin in :mod:`tutor_memory.native._reference` that returns the
same value and raises the same exception for the same input; ``tests/parity`` holds them to that.

Structured arguments (an episode, a ranking request) are read by attribute name, so any object with
the attributes below will do; the server passes its own frozen dataclasses
(``tutor_memory.domain.episodes.StoredEpisode`` and
``tutor_memory.domain.recall.ranking.RankRequest``). Each call runs in three phases: every argument
is read and type-checked (``NativeTypeError``), every value is checked in the order its attributes
are listed here (``NativeInputError``), then the work runs with the GIL released.

Errors. Both exceptions subclass the built-in one Python code raises for the same mistake, and every
message starts with the path of the attribute it is about (``check.predicted_mastery``,
``evidence[1].page``, ``weights.relevance``), followed by ``: `` and the reason for a type error. An
error about one item of a sequence starts with the item (``episodes[3]: seq must be in ...``).
"""

from collections.abc import Sequence
from typing import Literal, Protocol, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "ChainWalk",
    "LinkBreak",
    "NativeInputError",
    "NativeTypeError",
    "episode_hash",
    "rank_and_pack",
    "verify_chain",
]

class NativeInputError(ValueError):
    """A value the native core cannot take: out of its field's range, NaN, of the wrong length.

    Also raised for a str holding a lone surrogate (UTF-8 cannot encode it) and for an int too
    large for a float. The message names the field.
    """

class NativeTypeError(TypeError):
    """An argument, or an attribute of one, of the wrong type, or missing.

    The message is ``"{path}: {reason}"``; the error that pyo3 or Python raised is its
    ``__cause__``.
    """

# -- the ledger's hash -------------------------------------------------------------------------

# The attributes read from an episode. Read-only properties, so that a frozen dataclass, whose
# fields are narrower (``kind: Kind``, a ``StrEnum``), satisfies them.

class _ChainKey(Protocol):
    @property
    def tenant(self) -> str: ...
    @property
    def student(self) -> str: ...
    @property
    def subject(self) -> str: ...

class _Evidence(Protocol):
    @property
    def file_id(self) -> str: ...
    @property
    def page(self) -> int: ...
    @property
    def file_fingerprint(self) -> str: ...

class _Check(Protocol):
    @property
    def outcome(self) -> str: ...
    @property
    def topic(self) -> str: ...
    @property
    def predicted_mastery(self) -> float | None: ...

class _Quiz(Protocol):
    @property
    def correct(self) -> int: ...
    @property
    def total(self) -> int: ...

class _Episode(Protocol):
    @property
    def chain(self) -> _ChainKey: ...
    @property
    def seq(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def concepts(self) -> Sequence[str]: ...
    @property
    def salience(self) -> float: ...
    @property
    def occurred_at_us(self) -> int: ...
    @property
    def recorded_at_us(self) -> int: ...
    @property
    def evidence(self) -> Sequence[_Evidence]: ...
    @property
    def check(self) -> _Check | None: ...
    @property
    def quiz(self) -> _Quiz | None: ...
    @property
    def client_key(self) -> str: ...
    # Optional: an object without it (or with None) is a plaintext episode (encoding v1).
    @property
    def sealed(self) -> bytes | None: ...

class _StoredEpisode(_Episode, Protocol):
    @property
    def episode_id(self) -> int: ...
    @property
    def prev_hash(self) -> bytes: ...
    @property
    def hash(self) -> bytes: ...

def episode_hash(prev_hash: bytes, episode: _Episode) -> bytes:
    """Return the 32-byte SHA-256 that chains ``episode`` to ``prev_hash``.

    This is the ledger's tamper evidence: the digest covers every attribute of ``episode`` listed
    below (not ``episode_id``, ``prev_hash`` or ``hash``), and the encoding is fixed by the domain
    tag ``"tutor-memory/episode/v1"``. Changing the encoding changes every stored hash, so it
    needs a new tag, never an edit of this one. The test vectors of
    ``rust_core/tests/vectors/episode_hash.json`` pin it for Rust and Python alike.

    The digest is SHA-256 of these fields concatenated in this order, where *str* means a ``u32``
    big-endian byte length followed by the UTF-8 bytes, and all integers are big-endian:

     1. the domain tag ``"tutor-memory/episode/v1"``, as a str
     2. ``prev_hash``, length-prefixed like a str (always 32 bytes)
     3. ``chain.tenant``, 4. ``chain.student``, 5. ``chain.subject``, each a str
     6. ``seq`` as ``u64``
     7. ``kind``, 8. ``summary``, 9. ``text``, each a str (an enum member by its value)
    10. ``concepts``: ``u32`` count, then each concept as a str (order matters)
    11. ``salience`` as the IEEE-754 bits of a canonical ``f64`` (see below)
    12. ``occurred_at_us``, 13. ``recorded_at_us``, each ``i64`` (microseconds since the epoch)
    14. ``evidence``: ``u32`` count, then per item its ``file_id`` as a str, ``page`` as ``u32``
        and ``file_fingerprint`` as a str
    15. ``check.outcome``, 16. ``check.topic``, each a str (both empty when ``check`` is ``None``)
    17. ``check.predicted_mastery``: byte ``0x00`` if ``check`` or it is ``None``, else ``0x01``
        and the bits of its canonical ``f64``
    18. ``quiz.correct``, 19. ``quiz.total``, each ``u32`` (both 0 when ``quiz`` is ``None``)
    20. ``client_key``, a str

    A *sealed* episode (``sealed`` is ``bytes``: the ciphertext of the words a person wrote, see
    ``tutor_memory.domain.sealing``) is hashed as the row is stored: the domain tag
    ``"tutor-memory/episode/v2"``, fields 2-20 exactly as above (its word fields as stored, which
    are empty: ``summary``, ``text``, ``concepts``, ``check.topic``), then 21. ``sealed``,
    length-prefixed like a str. The ciphertext authenticates the words it holds, so the hash
    needs nothing else of them, and it still holds once the key that opens them is destroyed
    (erasure). ``sealed`` may be absent from the object: then, or when it is ``None``, the
    episode is plaintext and hashed as v1.

    Length prefixes make the encoding injective: moving text from ``summary`` to ``text``, or
    splitting one concept in two, changes the digest.

    Canonical floats: a float is hashed as the one value a store gives back for it. ``-0.0`` is
    hashed exactly as ``0.0`` (SQLite stores both as ``0.0``; hashing the sign made a check with
    ``predicted_mastery = -0.0`` fail verification once stored). NaN has no canonical form and is
    refused. Infinities are hashed by their bits. Every other float is hashed by its bits, so
    ``0.5`` and ``-0.5`` differ.

    The encoding and hashing run with the GIL released.

    Raises:
        NativeTypeError: ``prev_hash`` is not ``bytes``; an attribute is missing or has the wrong
            type (a str where an int is expected, a float for an int, ``concepts`` a bare
            ``str``, ...).
        NativeInputError: checked in this order, the first problem found: ``prev_hash`` is not
            32 bytes; then, in the order of the attributes above, a str holding a lone surrogate,
            ``seq`` outside ``0..=2**64-1``, a NaN ``salience``, a timestamp outside the ``i64``
            range, an evidence ``page`` outside ``0..=2**32-1``, a NaN
            ``check.predicted_mastery``, ``quiz.correct`` or ``quiz.total`` outside
            ``0..=2**32-1``. An int too large for a float (``salience``) is refused too.
    """

@final
class LinkBreak:
    """The first place where a stored chain disagrees with its recomputation."""

    @property
    def kind(self) -> Literal["seq", "prev_hash", "content"]:
        """``"seq"``: the episode's ``seq`` is not its place in the walk (rows were removed or
        renumbered); ``"prev_hash"``: its stored ``prev_hash`` is not the stored ``hash`` of the
        episode before it; ``"content"``: its content does not hash to its stored ``hash`` (the
        row was edited). Checked in this order; the first that holds is the kind."""

    @property
    def position(self) -> int:
        """The episode's place in the walk, from 1: the ``seq`` it should have."""

    @property
    def seq(self) -> int:
        """The episode's stored ``seq``."""

    @property
    def episode_id(self) -> int: ...

@final
class ChainWalk:
    """Where the verification of one chain stands, after its first ``length`` episodes.

    Immutable: :func:`verify_chain` returns the next one. A new walk stands at the genesis hash
    (32 zero bytes), before the first episode.
    """

    def __new__(cls, *, stop_at: int | None = None) -> ChainWalk:
        """A walk that has not started. ``stop_at``: report the recomputed hash after that many
        episodes (``hash_at_stop``), to compare with a checkpoint of that length.

        Raises:
            NativeTypeError: ``stop_at`` is not an int.
            NativeInputError: ``stop_at`` is outside ``0..=2**64-1``.
        """

    @property
    def stop_at(self) -> int | None: ...
    @property
    def length(self) -> int:
        """Episodes walked so far."""

    @property
    def head_hash(self) -> bytes:
        """The hash recomputed from the content of every episode walked, starting at the genesis
        hash and never reading a stored hash: what a checkpoint is compared with."""

    @property
    def last_stored_hash(self) -> bytes:
        """The stored ``hash`` of the last episode walked (the genesis hash before the first):
        what the next episode's ``prev_hash`` must be."""

    @property
    def first_break(self) -> LinkBreak | None:
        """The first break found so far; ``None`` while the chain holds."""

    @property
    def hash_at_stop(self) -> bytes | None:
        """The recomputed hash after ``stop_at`` episodes, once the walk has passed them (the
        genesis hash for ``stop_at=0``); ``None`` before, or without ``stop_at``."""

def verify_chain(episodes: Sequence[_StoredEpisode], walk: ChainWalk) -> ChainWalk:
    """Walk ``walk`` over the next ``episodes`` of its chain, in ``seq`` order, and return where
    it then stands.

    A chain is verified in as many calls as the caller likes, each taking the walk the previous
    one returned, so a long chain can be read in pieces of bounded size; the result does not
    depend on where it is cut. For each episode, at place ``n`` of the walk (from 1):

    1. unless a break was found before: ``seq != n`` is a ``"seq"`` break, else a ``prev_hash``
       that differs from the stored ``hash`` of the episode before (the genesis hash for the
       first) is a ``"prev_hash"`` break;
    2. its hash is recomputed with :func:`episode_hash` from the content and the *recomputed*
       hash before it; unless a break was found before, a result that differs from its stored
       ``hash`` is a ``"content"`` break;
    3. at ``n == stop_at`` the recomputed hash is kept as ``hash_at_stop``.

    Every episode is hashed, also after the first break, so ``head_hash`` and ``hash_at_stop`` are
    those of the content as stored. Stored ``prev_hash`` and ``hash`` may have any length (a
    tampered row); they simply do not match.

    Every episode is read and checked first, then the hashing runs with the GIL released. Memory
    is what ``episodes`` holds plus a few pointers per episode: the strings are not copied.

    Raises:
        NativeTypeError: ``episodes`` is not iterable, ``walk`` is not a :class:`ChainWalk`, or
            an episode lacks an attribute or has one of the wrong type (as for
            :func:`episode_hash`, and ``episode_id`` an int, ``prev_hash`` and ``hash`` bytes).
        NativeInputError: a value of an episode is out of range, as for :func:`episode_hash`, or
            its ``episode_id`` is outside the ``i64`` range. The message starts with
            ``episodes[i]:``. ``walk`` is never changed; a new one is returned.
    """

# -- recall's ranking --------------------------------------------------------------------------

class _Weights(Protocol):
    @property
    def relevance(self) -> float: ...
    @property
    def salience(self) -> float: ...
    @property
    def recency(self) -> float: ...
    @property
    def recency_half_life_days(self) -> float: ...

class _RankRequest(Protocol):
    @property
    def chain_ids(self) -> npt.NDArray[np.int64]: ...
    @property
    def occurred_at_us(self) -> npt.NDArray[np.int64]: ...
    @property
    def salience(self) -> npt.NDArray[np.float32]: ...
    @property
    def dup_key(self) -> npt.NDArray[np.uint64]: ...
    @property
    def tokens(self) -> npt.NDArray[np.uint32]: ...
    @property
    def flagged(self) -> npt.NDArray[np.uint8]: ...
    @property
    def cand_ids(self) -> npt.NDArray[np.int64]: ...
    @property
    def cand_relevance(self) -> npt.NDArray[np.float32]: ...
    @property
    def cand_matched(self) -> npt.NDArray[np.uint8]: ...
    @property
    def now_us(self) -> int: ...
    @property
    def has_query(self) -> bool: ...
    @property
    def window_start_us(self) -> int | None: ...
    @property
    def window_end_us(self) -> int | None: ...
    @property
    def exclude_flagged(self) -> bool: ...
    @property
    def budget_tokens(self) -> int: ...
    @property
    def max_items(self) -> int: ...
    @property
    def weights(self) -> _Weights: ...

def rank_and_pack(
    request: _RankRequest,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], int]:
    """Rank one turn's recall candidates and pack the best into the token budget.

    Recall's hot path (SPEC R2.1-R2.6, R6.2). Everything per episode and per candidate is an
    array; no Python object is built per candidate. ``request`` is read by attribute, in the order
    above (``tutor_memory.domain.recall.ranking.RankRequest``).

    The chain (one student and subject) is given as parallel arrays with one item per episode:
    ``chain_ids`` (strictly ascending), ``occurred_at_us`` (microseconds since the epoch),
    ``salience`` (in ``[0, 1]``, fixed at write time), ``dup_key`` (equal for episodes that
    are one memory repeated), ``tokens`` (the episode's size in the block) and ``flagged``
    (non-zero for the tutor's own narrations). The candidates are the candidate sets of this
    turn concatenated, one item per occurrence: ``cand_ids`` (may repeat across sets; ids not
    in ``chain_ids`` are ignored), ``cand_relevance`` (in ``[0, 1]``) and ``cand_matched``
    (non-zero: this set says the candidate matches the query).

    Steps, in order:

    1. Union (R2.1): occurrences of one id become one candidate, with the largest relevance of
       its occurrences, matched if any occurrence matched.
    2. Scope (R2.5, R2.6): when ``window_start_us`` / ``window_end_us`` is given, a candidate
       that occurred outside ``[window_start_us, window_end_us)`` is dropped (either bound may
       be ``None``: unbounded). When ``exclude_flagged``, flagged candidates are dropped.
    3. Relevance filter (R2.2): when ``has_query`` and at least one remaining candidate is
       matched, every non-matched candidate is discarded, never ranked. With no query, or no
       match, all remaining candidates are kept.
    4. Score (R2.3), in float64: ``weights.relevance * relevance + weights.salience * salience
       + weights.recency * recency``, where ``recency = 0.5 ** (max(0, now_us - occurred_at_us)
       / (weights.recency_half_life_days * 86_400_000_000))``, evaluated as libm's ``exp2`` of
       the negated exponent. Rank by score descending, then ``occurred_at_us`` descending, then
       id descending (a total, deterministic order).
    5. Collapse (R2.4): candidates with the same ``dup_key`` are one memory; the best-ranked
       survives and its count is the size of its group among the candidates left after step 3.
    6. Pack (R6.2): walk the survivors in rank order and take each one whose tokens still fit
       (``tokens_used + tokens <= budget_tokens``), skipping one that does not and trying the
       next; stop after ``max_items``. ``tokens_used`` never exceeds ``budget_tokens``.

    Returns ``(positions, counts, scores, tokens_used)``: the packed items in rank order as
    positions into the chain's arrays (int64), how many candidates each stands for (uint32, at
    least 1), their scores (float32), and the sum of their tokens.

    The arrays are borrowed, not copied, when contiguous, and the work runs with the GIL
    released. Cost: O(N) over the chain (validation and a merge table), O(M log N) for the M
    candidate occurrences, and a sort of only the candidates that survive steps 1-3.

    Raises:
        NativeTypeError: an attribute is missing, an array is not a 1-d ``numpy.ndarray`` of
            exactly the dtype above (no conversion is made: a list, a bool array for a uint8 one,
            or int32 ids are refused), a flag is not a ``bool``, or a number has the wrong type.
        NativeInputError: checked in this order, the first problem found: ``now_us`` or a window
            bound outside the int64 range; ``budget_tokens`` or ``max_items`` negative or above
            ``2**64 - 1``; an array whose length differs from ``chain_ids`` (chain arrays) or
            ``cand_ids`` (candidate arrays); ``chain_ids`` not strictly ascending; a
            ``salience`` or ``cand_relevance`` value outside ``[0, 1]`` or NaN; a weight that
            is NaN or infinite; ``weights.recency_half_life_days`` not finite or not ``> 0``.
            The message names the attribute.
    """
