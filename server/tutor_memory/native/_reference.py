"""Pure-Python twin of :mod:`tutor_memory.native._core`: the parity oracle.

Every function here must return exactly what its Rust counterpart returns and raise the same
exception class, with the same message up to the reason of a type error, for the same bad input;
``tests/parity`` checks that on random inputs. The Rust build is the one the server uses; this
module exists so the encoding, the chain walk and the ranking can be read, reviewed and checked
without a compiler. The exception classes are the extension's own, imported from it.

Each call runs in the extension's three phases, so that an input with several problems fails the
same way on both sides: read every argument and check its type (the extension's pyo3 extraction),
then check every value in attribute order, then compute. How pyo3's ``#[derive(FromPyObject)]``
reports a field it could not read is mirrored by :func:`_field` and :func:`_extraction_error`.

numpy is used only to accept and return arrays; the logic is plain Python.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
import operator
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, SupportsFloat, SupportsIndex, TypeVar

import numpy as np
import numpy.typing as npt

from tutor_memory.native._core import NativeInputError, NativeTypeError

if TYPE_CHECKING:
    from tutor_memory.native._core import _Episode, _RankRequest, _StoredEpisode

__all__ = [
    "EPISODE_DOMAIN_TAG",
    "GENESIS_HASH",
    "HASH_LEN",
    "CandidateTrace",
    "ChainWalk",
    "LinkBreak",
    "NativeInputError",
    "NativeTypeError",
    "RankArgs",
    "episode_hash",
    "rank_and_pack",
    "rank_and_trace",
    "read_rank_request",
    "verify_chain",
]

EPISODE_DOMAIN_TAG: Final = "tutor-memory/episode/v1"
HASH_LEN: Final = 32
GENESIS_HASH: Final = bytes(HASH_LEN)

_U32_MAX: Final = (1 << 32) - 1
_U64_MAX: Final = (1 << 64) - 1
_I64_MIN: Final = -(1 << 63)
_I64_MAX: Final = (1 << 63) - 1
_I128_MIN: Final = -(1 << 127)
_I128_MAX: Final = (1 << 127) - 1

_T = TypeVar("_T")


# --- reading arguments, as pyo3 does -----------------------------------------------------------


class _FieldFailed(Exception):
    """pyo3's derive wraps the error of a field it could not read; this is that wrapper."""

    def __init__(self, field: str, cause: Exception) -> None:
        super().__init__(field)
        self.field = field
        self.cause = cause


def _field(obj: object, name: str, read: Callable[[Any], _T]) -> _T:
    # A missing attribute is not wrapped (pyo3 reads the attribute before extracting it); an
    # attribute that cannot be read as its type is.
    value = getattr(obj, name)
    try:
        return read(value)
    except Exception as exc:
        raise _FieldFailed(name, exc) from exc


def _extraction_error(arg: str, exc: Exception) -> Exception:
    """The extension's ``extraction_error``: the field path, then what was wrong."""
    path: list[str] = []
    while isinstance(exc, _FieldFailed):
        path.append(exc.field)
        exc = exc.cause
    message = f"{'.'.join(path) or arg}: {exc}"
    native: Exception
    if isinstance(exc, TypeError | AttributeError):
        native = NativeTypeError(message)
    elif isinstance(exc, OverflowError):
        native = NativeInputError(message)
    else:
        return exc
    native.__cause__ = exc
    return native


def _argument(arg: str, read: Callable[[], _T]) -> _T:
    try:
        return read()
    except Exception as exc:
        error = _extraction_error(arg, exc)
        raise error from error.__cause__


def _in_item(prefix: str, exc: NativeInputError | NativeTypeError) -> Exception:
    return type(exc)(f"{prefix}: {exc}")


def _type_name(value: object) -> str:
    return type(value).__name__


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"'{_type_name(value)}' object is not an instance of 'str'")
    return value


def _bytes(value: object) -> bytes:
    # Exactly bytes: a bytearray or memoryview is refused, as the extension's PyBytes cast does.
    if not isinstance(value, bytes):
        raise TypeError(f"'{_type_name(value)}' object is not an instance of 'bytes'")
    return value


def _index(value: SupportsIndex) -> int:
    # operator.index is what pyo3's integer extraction calls (PyNumber_Index): it accepts bool
    # and numpy integers, and refuses float and str with TypeError.
    return operator.index(value)


def _float(value: SupportsFloat | SupportsIndex) -> float:
    # float() would parse str/bytes; PyFloat_AsDouble (pyo3's extraction) refuses them. An int
    # too large for a float raises OverflowError in both.
    if isinstance(value, str | bytes | bytearray):
        raise TypeError(f"must be real number, not {_type_name(value)}")
    return float(value)


def _optional(read: Callable[[Any], _T]) -> Callable[[Any], _T | None]:
    return lambda value: None if value is None else read(value)


def _list(read: Callable[[Any], _T]) -> Callable[[Any], list[_T]]:
    def read_list(value: object) -> list[_T]:
        # pyo3 refuses to turn a str into a Vec even though a str is a sequence.
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise TypeError(f"'{_type_name(value)}' object cannot be read as a sequence")
        return [read(item) for item in value]

    return read_list


def _bool(value: object) -> bool:
    # pyo3's bool extraction: Python bool or numpy.bool_, nothing truthy.
    if isinstance(value, bool | np.bool_):
        return bool(value)
    raise TypeError(f"expected bool, got {_type_name(value)}")


def _in_range(field: str, value: int, lo: int, hi: int) -> int:
    if lo <= value <= hi:
        return value
    # The extension cannot see the value of an int wider than 128 bits, so neither message
    # prints one.
    got = str(value) if _I128_MIN <= value <= _I128_MAX else "an integer wider than 128 bits"
    raise NativeInputError(f"{field} must be in {lo}..={hi}, got {got}")


def _utf8(field: str, value: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        error = NativeInputError(f"{field} contains a lone surrogate, which UTF-8 cannot encode")
        raise error from exc


def _canonical_float(field: str, value: float) -> float:
    """The one value a float is hashed as: ``-0.0`` is ``0.0``, NaN is refused."""
    if math.isnan(value):
        raise NativeInputError(f"{field} must not be NaN")
    return 0.0 if value == 0.0 else value


# --- episode_hash ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _EvidenceAttrs:
    file_id: str
    page: int
    file_fingerprint: str


@dataclass(frozen=True, slots=True)
class _CheckAttrs:
    outcome: str
    topic: str
    predicted_mastery: float | None


@dataclass(frozen=True, slots=True)
class _EpisodeAttrs:
    tenant: str
    student: str
    subject: str
    seq: int
    kind: str
    summary: str
    text: str
    concepts: list[str]
    salience: float
    occurred_at_us: int
    recorded_at_us: int
    evidence: list[_EvidenceAttrs]
    check: _CheckAttrs | None
    quiz: tuple[int, int] | None
    client_key: str


def _read_chain_key(value: object) -> tuple[str, str, str]:
    return (
        _field(value, "tenant", _str),
        _field(value, "student", _str),
        _field(value, "subject", _str),
    )


def _read_evidence(value: object) -> _EvidenceAttrs:
    return _EvidenceAttrs(
        _field(value, "file_id", _str),
        _field(value, "page", _index),
        _field(value, "file_fingerprint", _str),
    )


def _read_check(value: object) -> _CheckAttrs:
    return _CheckAttrs(
        _field(value, "outcome", _str),
        _field(value, "topic", _str),
        _field(value, "predicted_mastery", _optional(_float)),
    )


def _read_quiz(value: object) -> tuple[int, int]:
    return _field(value, "correct", _index), _field(value, "total", _index)


def _read_episode(ep: object) -> _EpisodeAttrs:
    """Every attribute the hash covers, in the extension's order, types only."""
    tenant, student, subject = _field(ep, "chain", _read_chain_key)
    return _EpisodeAttrs(
        tenant,
        student,
        subject,
        _field(ep, "seq", _index),
        _field(ep, "kind", _str),
        _field(ep, "summary", _str),
        _field(ep, "text", _str),
        _field(ep, "concepts", _list(_str)),
        _field(ep, "salience", _float),
        _field(ep, "occurred_at_us", _index),
        _field(ep, "recorded_at_us", _index),
        _field(ep, "evidence", _list(_read_evidence)),
        _field(ep, "check", _optional(_read_check)),
        _field(ep, "quiz", _optional(_read_quiz)),
        _field(ep, "client_key", _str),
    )


def _length_prefixed(field: str, data: bytes) -> bytes:
    if len(data) > _U32_MAX:
        raise NativeInputError(f"{field} of {len(data)} bytes is too long to length-prefix")
    return struct.pack(">I", len(data)) + data


def _count(field: str, n: int) -> bytes:
    if n > _U32_MAX:
        raise NativeInputError(f"{field} has {n} items, too many to count in a u32")
    return struct.pack(">I", n)


def _content(a: _EpisodeAttrs) -> list[bytes]:
    """Checks every value in attribute order and returns the encoding after ``prev_hash``.

    Every variable-length field carries its length so that no two different episodes can produce
    the same byte string.
    """
    tenant = _utf8("chain.tenant", a.tenant)
    student = _utf8("chain.student", a.student)
    subject = _utf8("chain.subject", a.subject)
    seq = _in_range("seq", a.seq, 0, _U64_MAX)
    kind = _utf8("kind", a.kind)
    summary = _utf8("summary", a.summary)
    text = _utf8("text", a.text)
    concepts = [_utf8(f"concepts[{i}]", c) for i, c in enumerate(a.concepts)]
    salience = _canonical_float("salience", a.salience)
    occurred = _in_range("occurred_at_us", a.occurred_at_us, _I64_MIN, _I64_MAX)
    recorded = _in_range("recorded_at_us", a.recorded_at_us, _I64_MIN, _I64_MAX)
    evidence = [
        (
            _utf8(f"evidence[{i}].file_id", e.file_id),
            _in_range(f"evidence[{i}].page", e.page, 0, _U32_MAX),
            _utf8(f"evidence[{i}].file_fingerprint", e.file_fingerprint),
        )
        for i, e in enumerate(a.evidence)
    ]
    # A missing check is hashed as empty strings and no mastery, a missing quiz as 0 of 0.
    outcome, topic, mastery = b"", b"", None
    if a.check is not None:
        outcome = _utf8("check.outcome", a.check.outcome)
        topic = _utf8("check.topic", a.check.topic)
        if a.check.predicted_mastery is not None:
            mastery = _canonical_float("check.predicted_mastery", a.check.predicted_mastery)
    correct, total = 0, 0
    if a.quiz is not None:
        correct = _in_range("quiz.correct", a.quiz[0], 0, _U32_MAX)
        total = _in_range("quiz.total", a.quiz[1], 0, _U32_MAX)
    client_key = _utf8("client_key", a.client_key)

    parts = [
        _length_prefixed("chain.tenant", tenant),
        _length_prefixed("chain.student", student),
        _length_prefixed("chain.subject", subject),
        struct.pack(">Q", seq),
        _length_prefixed("kind", kind),
        _length_prefixed("summary", summary),
        _length_prefixed("text", text),
        _count("concepts", len(concepts)),
        *(_length_prefixed("concepts", c) for c in concepts),
        struct.pack(">d", salience),
        struct.pack(">q", occurred),
        struct.pack(">q", recorded),
        _count("evidence", len(evidence)),
    ]
    for file_id, page, fingerprint in evidence:
        parts += [
            _length_prefixed("evidence.file_id", file_id),
            struct.pack(">I", page),
            _length_prefixed("evidence.file_fingerprint", fingerprint),
        ]
    parts += [
        _length_prefixed("check.outcome", outcome),
        _length_prefixed("check.topic", topic),
        b"\x00" if mastery is None else b"\x01" + struct.pack(">d", mastery),
        struct.pack(">I", correct),
        struct.pack(">I", total),
        _length_prefixed("client_key", client_key),
    ]
    return parts


def _digest(prev_hash: bytes, content: list[bytes]) -> bytes:
    head = [
        _length_prefixed("domain tag", EPISODE_DOMAIN_TAG.encode("utf-8")),
        _length_prefixed("prev_hash", prev_hash),
    ]
    return hashlib.sha256(b"".join(head + content)).digest()


def episode_hash(prev_hash: bytes, episode: _Episode) -> bytes:
    """Return the 32-byte SHA-256 chaining ``episode`` to ``prev_hash``.

    See ``tutor_memory/native/_core.pyi`` for the canonical encoding this hashes.
    """
    prev = _argument("prev_hash", lambda: _bytes(prev_hash))
    attrs = _argument("episode", lambda: _read_episode(episode))
    if len(prev) != HASH_LEN:
        raise NativeInputError(f"prev_hash must be {HASH_LEN} bytes, got {len(prev)}")
    return _digest(prev, _content(attrs))


# --- verify_chain ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LinkBreak:
    kind: Literal["seq", "prev_hash", "content"]
    position: int
    seq: int
    episode_id: int


@dataclass(frozen=True, slots=True, init=False)
class ChainWalk:
    """Twin of ``_core.ChainWalk``: see ``_core.pyi``."""

    stop_at: int | None
    length: int
    head_hash: bytes
    last_stored_hash: bytes
    first_break: LinkBreak | None
    hash_at_stop: bytes | None

    def __init__(self, *, stop_at: int | None = None) -> None:
        stop = None
        if stop_at is not None:
            stop = _in_range("stop_at", _argument("stop_at", lambda: _index(stop_at)), 0, _U64_MAX)
        at_stop = GENESIS_HASH if stop == 0 else None
        _set(self, stop, 0, GENESIS_HASH, GENESIS_HASH, None, at_stop)


def _set(
    walk: ChainWalk,
    stop_at: int | None,
    length: int,
    head_hash: bytes,
    last_stored_hash: bytes,
    first_break: LinkBreak | None,
    hash_at_stop: bytes | None,
) -> None:
    # The only writer of a ChainWalk's fields; frozen to everyone else.
    for name, value in (
        ("stop_at", stop_at),
        ("length", length),
        ("head_hash", head_hash),
        ("last_stored_hash", last_stored_hash),
        ("first_break", first_break),
        ("hash_at_stop", hash_at_stop),
    ):
        object.__setattr__(walk, name, value)


@dataclass(frozen=True, slots=True)
class _Stored:
    episode_id: int
    seq: int
    content: list[bytes]
    prev_hash: bytes
    hash: bytes


def _read_stored(item: object) -> _Stored:
    # Types of the content, then of the link fields; then values in the same order.
    attrs = _argument("episode", lambda: _read_episode(item))
    episode_id, prev_hash, stored_hash = _argument(
        "episode",
        lambda: (
            _field(item, "episode_id", _index),
            _field(item, "prev_hash", _bytes),
            _field(item, "hash", _bytes),
        ),
    )
    content = _content(attrs)
    episode_id = _in_range("episode_id", episode_id, _I64_MIN, _I64_MAX)
    return _Stored(episode_id, attrs.seq, content, prev_hash, stored_hash)


def verify_chain(episodes: Iterable[_StoredEpisode], walk: ChainWalk) -> ChainWalk:
    """Walk ``walk`` over the next ``episodes`` of its chain; see ``_core.pyi``."""
    if not isinstance(walk, ChainWalk):
        raise NativeTypeError(f"walk: '{_type_name(walk)}' object is not a ChainWalk")
    items = _argument("episodes", lambda: iter(episodes))
    stored: list[_Stored] = []
    for i, item in enumerate(items):
        try:
            stored.append(_read_stored(item))
        except (NativeInputError, NativeTypeError) as exc:
            raise _in_item(f"episodes[{i}]", exc) from exc.__cause__

    length, head, last_stored = walk.length, walk.head_hash, walk.last_stored_hash
    first_break, at_stop = walk.first_break, walk.hash_at_stop
    for ep in stored:
        length += 1
        found: Literal["seq", "prev_hash", "content"] | None = None
        if first_break is None:
            if ep.seq != length:
                found = "seq"
            elif ep.prev_hash != last_stored:
                found = "prev_hash"
        # Recomputed from the content and the recomputed hash before it, never a stored one.
        head = _digest(head, ep.content)
        if first_break is None and found is None and ep.hash != head:
            found = "content"
        if found is not None:
            first_break = LinkBreak(found, length, ep.seq, ep.episode_id)
        if walk.stop_at == length:
            at_stop = head
        last_stored = ep.hash
    after = copy.copy(walk)
    _set(after, walk.stop_at, length, head, last_stored, first_break, at_stop)
    return after


# --- rank_and_pack -----------------------------------------------------------------------------

_US_PER_DAY: Final = 86_400_000_000


def _array(dtype: type[np.generic]) -> Callable[[object], npt.NDArray[Any]]:
    # The extension borrows exactly these arrays and converts nothing: a list, a 2-d array or
    # another dtype (bool for uint8, int32 for int64, big-endian int64) is a type error.
    expected = np.dtype(dtype)

    def read(value: object) -> npt.NDArray[Any]:
        if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype == expected:
            return value
        got = (
            f"{value.ndim}-d {value.dtype}" if isinstance(value, np.ndarray) else _type_name(value)
        )
        raise TypeError(f"expected a 1-d numpy array of {expected}, got {got}")

    return read


@dataclass(frozen=True, slots=True)
class RankArgs:
    """A ranking request read and range-checked: what :func:`read_rank_request` returns."""

    chain_ids: npt.NDArray[np.int64]
    occurred_at_us: npt.NDArray[np.int64]
    salience: npt.NDArray[np.float32]
    dup_key: npt.NDArray[np.uint64]
    tokens: npt.NDArray[np.uint32]
    flagged: npt.NDArray[np.uint8]
    cand_ids: npt.NDArray[np.int64]
    cand_relevance: npt.NDArray[np.float32]
    cand_matched: npt.NDArray[np.uint8]
    now_us: int
    has_query: bool
    window_start_us: int | None
    window_end_us: int | None
    exclude_flagged: bool
    budget_tokens: int
    max_items: int
    # relevance, salience, recency, recency_half_life_days
    weights: tuple[float, float, float, float]


def _read_weights(value: object) -> tuple[float, float, float, float]:
    return (
        _field(value, "relevance", _float),
        _field(value, "salience", _float),
        _field(value, "recency", _float),
        _field(value, "recency_half_life_days", _float),
    )


def _read_request(r: object) -> RankArgs:
    return RankArgs(
        _field(r, "chain_ids", _array(np.int64)),
        _field(r, "occurred_at_us", _array(np.int64)),
        _field(r, "salience", _array(np.float32)),
        _field(r, "dup_key", _array(np.uint64)),
        _field(r, "tokens", _array(np.uint32)),
        _field(r, "flagged", _array(np.uint8)),
        _field(r, "cand_ids", _array(np.int64)),
        _field(r, "cand_relevance", _array(np.float32)),
        _field(r, "cand_matched", _array(np.uint8)),
        _field(r, "now_us", _index),
        _field(r, "has_query", _bool),
        _field(r, "window_start_us", _optional(_index)),
        _field(r, "window_end_us", _optional(_index)),
        _field(r, "exclude_flagged", _bool),
        _field(r, "budget_tokens", _index),
        _field(r, "max_items", _index),
        _field(r, "weights", _read_weights),
    )


def read_rank_request(request: _RankRequest) -> RankArgs:
    """The first two phases of ``rank_and_pack``: every attribute's type, then the integer ranges,
    each in attribute order. Shared with ``bench/rank_numpy.py``, whose arrays' contents it then
    checks itself, vectorised."""
    r = _argument("request", lambda: _read_request(request))
    now = _in_range("now_us", r.now_us, _I64_MIN, _I64_MAX)
    start, end = r.window_start_us, r.window_end_us
    if start is not None:
        start = _in_range("window_start_us", start, _I64_MIN, _I64_MAX)
    if end is not None:
        end = _in_range("window_end_us", end, _I64_MIN, _I64_MAX)
    budget = _in_range("budget_tokens", r.budget_tokens, 0, _U64_MAX)
    limit = _in_range("max_items", r.max_items, 0, _U64_MAX)
    return dataclasses.replace(
        r,
        now_us=now,
        window_start_us=start,
        window_end_us=end,
        budget_tokens=budget,
        max_items=limit,
    )


def _check_lengths(lengths: Sequence[tuple[str, int, str, int]]) -> None:
    for name, length, like, expected in lengths:
        if length != expected:
            raise NativeInputError(
                f"{name} has {length} items, expected {expected} (one per item of {like})"
            )


def _check_unit_range(name: str, values: Sequence[float]) -> None:
    for i, v in enumerate(values):
        if not 0.0 <= v <= 1.0:  # NaN fails too
            raise NativeInputError(f"{name} must be in [0, 1], but {name}[{i}] is not")


@dataclass(slots=True)
class CandidateTrace:
    """What ranking did with one candidate (a chain position), for ``rank_and_trace``.

    ``dropped`` names the step that left it out, or is empty when it was packed: "window"
    (outside the period), "narration" (a flagged narration left out), "filter" (matched nothing
    while something matched), "collapse" (a copy of the better-ranked ``collapsed_into``),
    "limit" (past ``max_items``), "budget" (did not fit the tokens left).
    """

    relevance: float
    matched: bool
    recency: float = 0.0
    score: float = 0.0
    rank: int = 0  # 1-based place in the score order; 0 when never scored
    dropped: str = ""
    collapsed_into: int = -1  # chain position


def rank_and_pack(
    request: _RankRequest,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], int]:
    """Rank one turn's candidates and pack the best into the token budget.

    See ``tutor_memory/native/_core.pyi`` for the semantics. Checks run in this order, each in
    attribute order: types; integer ranges; array lengths; ``chain_ids`` strictly ascending;
    ``salience`` then ``cand_relevance`` in ``[0, 1]``; weights finite; the half-life.
    """
    return _rank(request, None)


def rank_and_trace(
    request: _RankRequest,
) -> tuple[
    tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], int],
    dict[int, CandidateTrace],
]:
    """``rank_and_pack``, and what each candidate (by chain position) went through: the same
    steps, recorded. Used to explain a block (BuildBlock's ``explain``)."""
    traces: dict[int, CandidateTrace] = {}
    return _rank(request, traces), traces


def _rank(
    request: _RankRequest, traces: dict[int, CandidateTrace] | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], int]:
    # Phases 1 and 2: types, then integer ranges.
    r = read_rank_request(request)
    now, start, end = r.now_us, r.window_start_us, r.window_end_us
    budget, limit = r.budget_tokens, r.max_items

    # Phase 3: everything else.
    ids: list[int] = r.chain_ids.tolist()
    at: list[int] = r.occurred_at_us.tolist()
    sal: list[float] = r.salience.tolist()
    dup: list[int] = r.dup_key.tolist()
    tok: list[int] = r.tokens.tolist()
    flag: list[int] = r.flagged.tolist()
    c_ids: list[int] = r.cand_ids.tolist()
    c_rel: list[float] = r.cand_relevance.tolist()
    c_matched: list[int] = r.cand_matched.tolist()
    n, m = len(ids), len(c_ids)
    _check_lengths(
        [
            ("occurred_at_us", len(at), "chain_ids", n),
            ("salience", len(sal), "chain_ids", n),
            ("dup_key", len(dup), "chain_ids", n),
            ("tokens", len(tok), "chain_ids", n),
            ("flagged", len(flag), "chain_ids", n),
            ("cand_relevance", len(c_rel), "cand_ids", m),
            ("cand_matched", len(c_matched), "cand_ids", m),
        ]
    )
    for i in range(1, n):
        if ids[i - 1] >= ids[i]:
            raise NativeInputError(
                "chain_ids must be strictly ascending, "
                f"but chain_ids[{i}] = {ids[i]} follows {ids[i - 1]}"
            )
    _check_unit_range("salience", sal)
    _check_unit_range("cand_relevance", c_rel)
    w_rel, w_sal, w_rec, half_life_days = r.weights
    for name, w in (
        ("weights.relevance", w_rel),
        ("weights.salience", w_sal),
        ("weights.recency", w_rec),
    ):
        if not math.isfinite(w):
            raise NativeInputError(f"{name} must be finite")
    if not (math.isfinite(half_life_days) and half_life_days > 0.0):
        raise NativeInputError("weights.recency_half_life_days must be finite and > 0")

    # 1. Union (R2.1): one entry per chain position, in order of first occurrence.
    position_of = {episode_id: pos for pos, episode_id in enumerate(ids)}
    relevance: dict[int, float] = {}
    matched: dict[int, bool] = {}
    for cand_id, rel, is_match in zip(c_ids, c_rel, c_matched, strict=True):
        pos = position_of.get(cand_id)
        if pos is None:
            continue
        relevance[pos] = max(relevance[pos], rel) if pos in relevance else rel
        matched[pos] = matched.get(pos, False) or is_match != 0
    pool = list(relevance)
    half_life_us = half_life_days * _US_PER_DAY

    def score_of(pos: int) -> tuple[float, float]:
        # 0.5 ** (age / half_life), written as exp2 because the extension calls libm's exp2.
        recency = math.exp2(-(max(0, now - at[pos]) / half_life_us))
        return w_rel * relevance[pos] + w_sal * sal[pos] + w_rec * recency, recency

    if traces is not None:
        for pos in pool:
            score, recency = score_of(pos)
            traces[pos] = CandidateTrace(relevance[pos], matched[pos], recency, score)

    def keep(pool: list[int], test: Callable[[int], bool], step: str) -> list[int]:
        if traces is not None:
            for pos in pool:
                if not test(pos):
                    traces[pos].dropped = step
        return [pos for pos in pool if test(pos)]

    # 2. Scope (R2.5, R2.6): time is a filter; the tutor's own narrations can be left out.
    if start is not None:
        lower: int = start
        pool = keep(pool, lambda pos: at[pos] >= lower, "window")
    if end is not None:
        upper: int = end
        pool = keep(pool, lambda pos: at[pos] < upper, "window")
    if r.exclude_flagged:
        pool = keep(pool, lambda pos: flag[pos] == 0, "narration")

    # 3. Relevance filter (R2.2): with a query and a match, non-matches are discarded.
    if r.has_query and any(matched[pos] for pos in pool):
        pool = keep(pool, lambda pos: matched[pos], "filter")

    # 4. Score (R2.3) and rank: score, then occurred_at, then id, all descending.
    scored = [(score_of(pos)[0], at[pos], pos) for pos in pool]
    # Positions follow the ascending ids, so "id descending" is "position descending".
    scored.sort(key=lambda s: (-s[0], -s[1], -s[2]))
    if traces is not None:
        for place, (_, _, pos) in enumerate(scored, start=1):
            traces[pos].rank = place

    # 5. Collapse (R2.4): the best-ranked of each dup_key stands for its whole group.
    group_of: dict[int, int] = {}
    survivors: list[tuple[float, int]] = []
    counts: list[int] = []
    for score, _, pos in scored:
        key = dup[pos]
        if key in group_of:
            counts[group_of[key]] += 1
            if traces is not None:
                traces[pos].dropped = "collapse"
                traces[pos].collapsed_into = survivors[group_of[key]][1]
        else:
            group_of[key] = len(survivors)
            survivors.append((score, pos))
            counts.append(1)

    # 6. Pack (R6.2): in rank order, skip what does not fit, never exceed the budget.
    out_positions: list[int] = []
    out_counts: list[int] = []
    out_scores: list[float] = []
    tokens_used = 0
    for (score, pos), count in zip(survivors, counts, strict=True):
        if len(out_positions) >= limit:
            if traces is None:
                break
            traces[pos].dropped = "limit"
        elif tokens_used + tok[pos] <= budget:
            tokens_used += tok[pos]
            out_positions.append(pos)
            out_counts.append(count)
            out_scores.append(score)
        elif traces is not None:
            traces[pos].dropped = "budget"

    return (
        np.array(out_positions, dtype=np.int64),
        np.array(out_counts, dtype=np.uint32),
        np.array(out_scores, dtype=np.float32),
        tokens_used,
    )
