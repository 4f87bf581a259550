"""Pure-Python twin of :mod:`tutor_memory._core`: the parity oracle.

Every function here must return exactly what its Rust counterpart returns and raise the same
exception type for the same bad input; ``tests/parity`` checks that on random inputs. The
Rust build is the one the server uses, this module exists so the encoding can be read,
reviewed and checked without a compiler.

Validation runs in the same order as the extension so that an input with several problems
fails the same way on both sides: first every argument's type, in parameter order (pyo3
extracts all arguments before the function body runs), then every value range, in parameter
order.
"""

from __future__ import annotations

import hashlib
import operator
import struct
from collections.abc import Sequence
from typing import Final, SupportsFloat, SupportsIndex

__all__ = ["EPISODE_DOMAIN_TAG", "HASH_LEN", "episode_hash"]

EPISODE_DOMAIN_TAG: Final = "tutor-memory/episode/v1"
HASH_LEN: Final = 32

_U32_MAX: Final = (1 << 32) - 1
_U64_MAX: Final = (1 << 64) - 1
_I64_MIN: Final = -(1 << 63)
_I64_MAX: Final = (1 << 63) - 1
_I128_MIN: Final = -(1 << 127)
_I128_MAX: Final = (1 << 127) - 1

_EvidenceItem = tuple[str, int, str]


def _type_name(value: object) -> str:
    return type(value).__name__


def _utf8(value: object) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"expected str, got {_type_name(value)}")
    # Strict encoding: a lone surrogate raises UnicodeEncodeError, as pyo3's String extraction does.
    return value.encode("utf-8")


def _index(value: SupportsIndex) -> int:
    # operator.index is what pyo3's integer extraction calls (PyNumber_Index): it accepts bool
    # and numpy integers, and refuses float and str with TypeError.
    return operator.index(value)


def _float(value: SupportsFloat | SupportsIndex) -> float:
    # float() would parse str/bytes; PyFloat_AsDouble (pyo3's extraction) refuses them.
    if isinstance(value, str | bytes | bytearray):
        raise TypeError(f"must be real number, not {_type_name(value)}")
    return float(value)


def _str_sequence(value: object) -> list[bytes]:
    # pyo3 refuses to turn a str into a Vec even though a str is a sequence.
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"expected a sequence of str, got {_type_name(value)}")
    return [_utf8(item) for item in value]


def _evidence_items(value: object) -> list[tuple[bytes, int, bytes]]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"expected a sequence of tuples, got {_type_name(value)}")
    items: list[tuple[bytes, int, bytes]] = []
    for item in value:
        if not isinstance(item, tuple):
            raise TypeError(f"expected tuple, got {_type_name(item)}")
        if len(item) != 3:
            # Same type and wording as pyo3's tuple extraction.
            raise ValueError(f"expected tuple of length 3, but got tuple of length {len(item)}")
        file_id, page, fingerprint = item
        items.append((_utf8(file_id), _index(page), _utf8(fingerprint)))
    return items


def _in_range(field: str, value: int, lo: int, hi: int) -> int:
    if lo <= value <= hi:
        return value
    # The extension cannot see the value of an int wider than 128 bits, so neither message
    # prints one.
    got = str(value) if _I128_MIN <= value <= _I128_MAX else "an integer wider than 128 bits"
    raise ValueError(f"{field} must be in {lo}..={hi}, got {got}")


def _length_prefixed(data: bytes) -> bytes:
    if len(data) > _U32_MAX:
        raise ValueError(f"value of {len(data)} bytes is too long to length-prefix")
    return struct.pack(">I", len(data)) + data


def _count(n: int) -> bytes:
    if n > _U32_MAX:
        raise ValueError(f"{n} items are too many to count in a u32")
    return struct.pack(">I", n)


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
    evidence: Sequence[_EvidenceItem],
    check_outcome: str,
    check_topic: str,
    predicted_mastery: float | None,
    quiz_correct: int,
    quiz_total: int,
    client_key: str,
) -> bytes:
    """Return the 32-byte SHA-256 chaining one ledger episode to ``prev_hash``.

    See ``tutor_memory/_core.pyi`` for the canonical encoding this hashes.
    """
    # Phase 1: types, in parameter order.
    if not isinstance(prev_hash, bytes):
        raise TypeError(f"expected bytes, got {_type_name(prev_hash)}")
    tenant_b = _utf8(tenant)
    student_b = _utf8(student)
    subject_b = _utf8(subject)
    seq_i = _index(seq)
    kind_b = _utf8(kind)
    summary_b = _utf8(summary)
    text_b = _utf8(text)
    concepts_b = _str_sequence(concepts)
    salience_f = _float(salience)
    occurred_i = _index(occurred_at_us)
    recorded_i = _index(recorded_at_us)
    evidence_b = _evidence_items(evidence)
    check_outcome_b = _utf8(check_outcome)
    check_topic_b = _utf8(check_topic)
    mastery_f = None if predicted_mastery is None else _float(predicted_mastery)
    quiz_correct_i = _index(quiz_correct)
    quiz_total_i = _index(quiz_total)
    client_key_b = _utf8(client_key)

    # Phase 2: values, in parameter order.
    if len(prev_hash) != HASH_LEN:
        raise ValueError(f"prev_hash must be {HASH_LEN} bytes, got {len(prev_hash)}")
    seq_i = _in_range("seq", seq_i, 0, _U64_MAX)
    occurred_i = _in_range("occurred_at_us", occurred_i, _I64_MIN, _I64_MAX)
    recorded_i = _in_range("recorded_at_us", recorded_i, _I64_MIN, _I64_MAX)
    pages = [_in_range("evidence page", page, 0, _U32_MAX) for _, page, _ in evidence_b]
    quiz_correct_i = _in_range("quiz_correct", quiz_correct_i, 0, _U32_MAX)
    quiz_total_i = _in_range("quiz_total", quiz_total_i, 0, _U32_MAX)

    # Phase 3: the canonical encoding. Every variable-length field carries its length so that
    # no two different episodes can produce the same byte string.
    parts: list[bytes] = [
        _length_prefixed(EPISODE_DOMAIN_TAG.encode("utf-8")),
        _length_prefixed(prev_hash),
        _length_prefixed(tenant_b),
        _length_prefixed(student_b),
        _length_prefixed(subject_b),
        struct.pack(">Q", seq_i),
        _length_prefixed(kind_b),
        _length_prefixed(summary_b),
        _length_prefixed(text_b),
        _count(len(concepts_b)),
        *(_length_prefixed(c) for c in concepts_b),
        struct.pack(">d", salience_f),
        struct.pack(">q", occurred_i),
        struct.pack(">q", recorded_i),
        _count(len(evidence_b)),
    ]
    for (file_id, _, fingerprint), page in zip(evidence_b, pages, strict=True):
        parts += [_length_prefixed(file_id), struct.pack(">I", page), _length_prefixed(fingerprint)]
    parts += [
        _length_prefixed(check_outcome_b),
        _length_prefixed(check_topic_b),
        b"\x00" if mastery_f is None else b"\x01" + struct.pack(">d", mastery_f),
        struct.pack(">I", quiz_correct_i),
        struct.pack(">I", quiz_total_i),
        _length_prefixed(client_key_b),
    ]
    return hashlib.sha256(b"".join(parts)).digest()
