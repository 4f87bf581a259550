"""Parity of the ledger hash: the Rust extension and the pure-Python reference must agree.

The episode hash is the ledger's tamper evidence, so besides agreement on random input this
pins the encoding: a hand-built byte layout, "every field matters" checks, canonical floats, and
(in ``test_episode_vectors.py``) the test vectors shared with ``cargo test``.

Episodes are passed as ``SimpleNamespace`` objects with a ``StoredEpisode``'s attributes, so that
the tests can also hand over deliberately ill-typed ones.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import struct
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.chain import recompute
from tutor_memory.domain.episodes import (
    ChainKey,
    Check,
    Evidence,
    Kind,
    Outcome,
    Quiz,
    StoredEpisode,
)
from tutor_memory.native import _core, _reference
from tutor_memory.native._core import NativeInputError, NativeTypeError

Fields = dict[str, Any]
HashFn = Callable[..., bytes]

# Typed loosely on purpose: the tests feed deliberately ill-typed arguments.
RUST: HashFn = _core.episode_hash
REFERENCE: HashFn = _reference.episode_hash
IMPLS: tuple[tuple[str, HashFn], ...] = (("rust", RUST), ("python", REFERENCE))
IMPL_IDS = [name for name, _ in IMPLS]
IMPL_FNS = [fn for _, fn in IMPLS]

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


def episode(fields: Fields) -> SimpleNamespace:
    """An object with a StoredEpisode's attributes, built from flat fields.

    ``check`` is ``None`` or ``(outcome, topic, predicted_mastery)``, ``quiz`` ``None`` or
    ``(correct, total)``, each ``evidence`` item ``(file_id, page, file_fingerprint)``; any other
    value is passed through as it is, for the bad-type tests.
    """
    evidence = fields["evidence"]
    if isinstance(evidence, list | tuple):
        evidence = [
            SimpleNamespace(file_id=e[0], page=e[1], file_fingerprint=e[2])
            if isinstance(e, tuple)
            else e
            for e in evidence
        ]
    check = fields["check"]
    if isinstance(check, tuple):
        check = SimpleNamespace(outcome=check[0], topic=check[1], predicted_mastery=check[2])
    quiz = fields["quiz"]
    if isinstance(quiz, tuple):
        quiz = SimpleNamespace(correct=quiz[0], total=quiz[1])
    return SimpleNamespace(
        chain=SimpleNamespace(
            tenant=fields["tenant"], student=fields["student"], subject=fields["subject"]
        ),
        seq=fields["seq"],
        kind=fields["kind"],
        summary=fields["summary"],
        text=fields["text"],
        concepts=fields["concepts"],
        salience=fields["salience"],
        occurred_at_us=fields["occurred_at_us"],
        recorded_at_us=fields["recorded_at_us"],
        evidence=evidence,
        check=check,
        quiz=quiz,
        client_key=fields["client_key"],
    )


def run(fn: HashFn, fields: Fields) -> bytes:
    return fn(fields["prev_hash"], episode(fields))


FIXED: Fields = {
    "prev_hash": bytes(range(32)),
    "tenant": "acme-school",
    "student": "student-42",
    "subject": "math",
    "seq": 7,
    "kind": "lesson",
    "summary": "Fractions: \u00bd + \u00bc = \u00be",
    "text": (
        "\u00c9tudiant a confondu num\u00e9rateur et d\u00e9nominateur \U0001f914 \u2014 "
        "\u0645\u0631\u062d\u0628\u0627"
    ),
    "concepts": ["fractions", "common-denominator"],
    "salience": 0.75,
    "occurred_at_us": 1_700_000_000_000_000,
    "recorded_at_us": 1_700_000_000_123_456,
    "evidence": [("file-1", 3, "sha256:abc"), ("file-2", 0, "")],
    "check": ("passed", "fractions", 0.625),
    "quiz": (4, 5),
    "client_key": "req-0001",
}

# Hypothesis' text() already covers most of Unicode; these make sure the scripts and edge
# cases we care about show up in every run rather than by luck.
SAMPLE_STRINGS = [
    "",
    " ",
    "\x00",
    "caf\u00e9 na\u00efve",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\U0001f469\U0001f3fd\u200d\U0001f3eb\U0001f914",
    "\u4f60\u597d\uff0c\u4e16\u754c",
    "a" * 1000,
]
texts = st.one_of(st.sampled_from(SAMPLE_STRINGS), st.text(max_size=64))
# Zeros of both signs on purpose: they must hash alike.
floats = st.sampled_from([0.0, -0.0, 0.5]) | st.floats(allow_nan=False)

FIELD_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "prev_hash": st.binary(min_size=32, max_size=32),
    "tenant": texts,
    "student": texts,
    "subject": texts,
    "seq": st.integers(0, U64_MAX),
    "kind": texts,
    "summary": texts,
    "text": st.one_of(texts, st.text(max_size=2000)),
    "concepts": st.lists(texts, max_size=10),
    "salience": floats,
    "occurred_at_us": st.integers(I64_MIN, I64_MAX),
    "recorded_at_us": st.integers(I64_MIN, I64_MAX),
    "evidence": st.lists(st.tuples(texts, st.integers(0, U32_MAX), texts), max_size=40),
    "check": st.none() | st.tuples(texts, texts, st.none() | floats),
    "quiz": st.none() | st.tuples(st.integers(0, U32_MAX), st.integers(0, U32_MAX)),
    "client_key": texts,
}
assert tuple(FIELD_STRATEGIES) == tuple(FIXED)


def episodes() -> st.SearchStrategy[Fields]:
    return st.fixed_dictionaries(FIELD_STRATEGIES)


def _outcome(fn: HashFn, fields: Fields) -> tuple[type[BaseException], str]:
    try:
        run(fn, fields)
    except Exception as exc:
        return type(exc), str(exc)
    pytest.fail(f"{fn.__module__}.episode_hash accepted bad input")


# Hypothesis' example database would write .hypothesis/ into the work tree.
parity_settings = settings(max_examples=300, deadline=None, database=None)


@parity_settings
@given(episodes())
def test_rust_matches_reference(fields: Fields) -> None:
    rust, python = run(RUST, fields), run(REFERENCE, fields)
    assert rust == python
    assert isinstance(rust, bytes)
    assert len(rust) == 32


@parity_settings
@given(episodes())
def test_positional_and_keyword_calls_agree(fields: Fields) -> None:
    expected = run(REFERENCE, fields)
    for fn in IMPL_FNS:
        assert fn(prev_hash=fields["prev_hash"], episode=episode(fields)) == expected


def _canonical(value: Any) -> Any:
    """What the encoding sees of a value: floats by their canonical bits (-0.0 is 0.0)."""
    if isinstance(value, float):
        return struct.pack(">d", 0.0 if value == 0.0 else value)
    if isinstance(value, tuple | list):
        return tuple(_canonical(v) for v in value)
    return (type(value), value)


@parity_settings
@given(episodes(), st.sampled_from(tuple(FIXED)), st.data())
def test_changing_any_single_field_changes_the_hash(
    fields: Fields, name: str, data: st.DataObject
) -> None:
    other = data.draw(
        FIELD_STRATEGIES[name].filter(lambda v: _canonical(v) != _canonical(fields[name]))
    )
    # An empty check hashes as no check, and a 0-of-0 quiz as no quiz (both always did).
    empty = {"check": ("", "", None), "quiz": (0, 0)}.get(name)
    if empty is not None and {_canonical(other), _canonical(fields[name])} <= {
        _canonical(empty),
        _canonical(None),
    }:
        return
    changed = {**fields, name: other}
    for fn in IMPL_FNS:
        assert run(fn, changed) != run(fn, fields)


@parity_settings
@given(episodes())
def test_negative_zero_hashes_as_zero(fields: Fields) -> None:
    """Issue 12: SQLite gives -0.0 back as 0.0, so the two must hash alike."""
    negative = {**fields, "salience": -0.0, "check": ("right", "cells", -0.0)}
    positive = {**fields, "salience": 0.0, "check": ("right", "cells", 0.0)}
    for fn in IMPL_FNS:
        assert run(fn, negative) == run(fn, positive)
    assert run(RUST, negative) == run(REFERENCE, negative)


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_only_the_sign_of_zero_is_canonicalised(fn: HashFn) -> None:
    def with_floats(salience: float, mastery: float | None) -> bytes:
        return run(fn, {**FIXED, "salience": salience, "check": ("right", "t", mastery)})

    assert with_floats(-0.5, None) != with_floats(0.5, None)
    assert with_floats(0.5, -0.0) != with_floats(0.5, None)
    assert with_floats(float("-inf"), None) != with_floats(float("inf"), None)
    assert with_floats(5e-324, None) != with_floats(0.0, None)


def _s(value: str) -> bytes:
    data = value.encode("utf-8")
    return struct.pack(">I", len(data)) + data


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_byte_layout_matches_the_specification(fn: HashFn) -> None:
    """Built from the layout documented in ``_core.pyi``, independently of ``_reference``."""
    prev = bytes(range(100, 132))
    fields: Fields = {
        "prev_hash": prev,
        "tenant": "t",
        "student": "s\u00e9",
        "subject": "",
        "seq": 2**64 - 2,
        "kind": "k",
        "summary": "sum",
        "text": "\U0001f914",
        "concepts": ["a", "bc"],
        "salience": -0.5,
        "occurred_at_us": -5,
        "recorded_at_us": 6,
        "evidence": [("f", 9, "fp")],
        "check": ("o", "", 0.25),
        "quiz": (1, 2),
        "client_key": "ck",
    }

    def encoding(check: bytes, quiz: bytes) -> bytes:
        return b"".join(
            [
                _s("tutor-memory/episode/v1"),
                struct.pack(">I", 32) + prev,
                _s("t"),
                _s("s\u00e9"),
                _s(""),
                struct.pack(">Q", 2**64 - 2),
                _s("k"),
                _s("sum"),
                _s("\U0001f914"),
                struct.pack(">I", 2) + _s("a") + _s("bc"),
                struct.pack(">d", -0.5),
                struct.pack(">q", -5),
                struct.pack(">q", 6),
                struct.pack(">I", 1) + _s("f") + struct.pack(">I", 9) + _s("fp"),
                check,
                quiz,
                _s("ck"),
            ]
        )

    def digest(check: bytes, quiz: bytes) -> bytes:
        return hashlib.sha256(encoding(check, quiz)).digest()

    with_mastery = _s("o") + _s("") + b"\x01" + struct.pack(">d", 0.25)
    assert run(fn, fields) == digest(with_mastery, struct.pack(">II", 1, 2))
    no_mastery = {**fields, "check": ("o", "", None)}
    assert run(fn, no_mastery) == digest(_s("o") + _s("") + b"\x00", struct.pack(">II", 1, 2))
    # No check and no quiz: two empty strings and no mastery, then 0 of 0.
    bare = {**fields, "check": None, "quiz": None}
    assert run(fn, bare) == digest(_s("") + _s("") + b"\x00", struct.pack(">II", 0, 0))


COLLISION_PAIRS: list[tuple[str, Fields, Fields]] = [
    (
        "character moved from summary to text",
        {"summary": "abc", "text": "def"},
        {"summary": "abcd", "text": "ef"},
    ),
    (
        "non-ASCII character moved from text to summary",
        {"summary": "\u0645\u0631", "text": "\u062d\U0001f914"},
        {"summary": "\u0645\u0631\u062d", "text": "\U0001f914"},
    ),
    ("concepts swapped", {"concepts": ["a", "b"]}, {"concepts": ["b", "a"]}),
    ("concept split in two", {"concepts": ["ab"]}, {"concepts": ["a", "b"]}),
    ("concept boundary moved", {"concepts": ["ab", "c"]}, {"concepts": ["a", "bc"]}),
    ("empty concept added", {"concepts": ["a"]}, {"concepts": ["a", ""]}),
    ("tenant/student boundary", {"tenant": "ab", "student": "c"}, {"tenant": "a", "student": "bc"}),
    ("prev_hash changed", {"prev_hash": bytes(32)}, {"prev_hash": bytes(31) + b"\x01"}),
    (
        "evidence file_id/fingerprint boundary",
        {"evidence": [("ab", 1, "c")]},
        {"evidence": [("a", 1, "bc")]},
    ),
    (
        "evidence items swapped",
        {"evidence": [("a", 1, "x"), ("b", 2, "y")]},
        {"evidence": [("b", 2, "y"), ("a", 1, "x")]},
    ),
    ("mastery None vs 0.0", {"check": ("o", "t", None)}, {"check": ("o", "t", 0.0)}),
    ("quiz counts swapped", {"quiz": (1, 2)}, {"quiz": (2, 1)}),
    (
        "timestamps swapped",
        {"occurred_at_us": 1, "recorded_at_us": 2},
        {"occurred_at_us": 2, "recorded_at_us": 1},
    ),
    ("client_key changed", {"client_key": "k1"}, {"client_key": "k2"}),
]


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
@pytest.mark.parametrize(
    ("first", "second"),
    [(a, b) for _, a, b in COLLISION_PAIRS],
    ids=[name for name, _, _ in COLLISION_PAIRS],
)
def test_near_identical_episodes_do_not_collide(fn: HashFn, first: Fields, second: Fields) -> None:
    assert run(fn, {**FIXED, **first}) != run(fn, {**FIXED, **second})


BAD_VALUES: list[tuple[str, Fields, str]] = [
    ("prev_hash 31 bytes", {"prev_hash": bytes(31)}, "prev_hash must be 32 bytes, got 31"),
    ("prev_hash 33 bytes", {"prev_hash": bytes(33)}, "prev_hash must be 32 bytes, got 33"),
    ("prev_hash empty", {"prev_hash": b""}, "prev_hash must be 32 bytes, got 0"),
    ("seq negative", {"seq": -1}, "seq must be in 0..=18446744073709551615, got -1"),
    ("seq above u64", {"seq": U64_MAX + 1}, "seq must be in 0..=18446744073709551615, got"),
    ("seq wider than 128 bits", {"seq": 2**200}, "got an integer wider than 128 bits"),
    ("seq hugely negative", {"seq": -(2**200)}, "got an integer wider than 128 bits"),
    ("occurred_at_us above i64", {"occurred_at_us": I64_MAX + 1}, "occurred_at_us must be in"),
    ("recorded_at_us below i64", {"recorded_at_us": I64_MIN - 1}, "recorded_at_us must be in"),
    (
        "evidence page negative",
        {"evidence": [("f", -1, "fp")]},
        "evidence[0].page must be in 0..=4294967295, got -1",
    ),
    (
        "evidence page above u32",
        {"evidence": [("f", 0, "fp"), ("f", U32_MAX + 1, "fp")]},
        "evidence[1].page must be in 0..=4294967295",
    ),
    ("quiz.correct negative", {"quiz": (-1, 0)}, "quiz.correct must be in 0..=4294967295, got -1"),
    ("quiz.total above u32", {"quiz": (0, U32_MAX + 1)}, "quiz.total must be in 0..=4294967295"),
    ("salience NaN", {"salience": math.nan}, "salience must not be NaN"),
    ("salience negative NaN", {"salience": -math.nan}, "salience must not be NaN"),
    (
        "mastery NaN",
        {"check": ("right", "t", math.nan)},
        "check.predicted_mastery must not be NaN",
    ),
    ("salience int too large for a float", {"salience": 10**400}, "salience: int too large"),
    (
        "lone surrogate",
        {"summary": "ok \ud800"},
        "summary contains a lone surrogate, which UTF-8 cannot encode",
    ),
    (
        "lone surrogate in a concept",
        {"concepts": ["a", "b\udfff"]},
        "concepts[1] contains a lone surrogate",
    ),
    (
        "lone surrogate in the chain key",
        {"student": "\ud83d"},
        "chain.student contains a lone surrogate",
    ),
    # With several bad values, both report the first: prev_hash, then attribute order.
    (
        "several bad values",
        {"prev_hash": bytes(5), "seq": -1, "quiz": (0, -1)},
        "prev_hash must be 32 bytes, got 5",
    ),
    ("two bad ints", {"recorded_at_us": 2**64, "quiz": (-1, 0)}, "recorded_at_us must be in"),
    ("NaN before a later bad int", {"salience": math.nan, "quiz": (-1, 0)}, "salience must not"),
    ("bad int before a later NaN", {"seq": -1, "check": ("r", "t", math.nan)}, "seq must be in"),
]

BAD_TYPES: list[tuple[str, Fields, str]] = [
    ("prev_hash bytearray", {"prev_hash": bytearray(32)}, "prev_hash"),
    ("prev_hash str", {"prev_hash": "0" * 32}, "prev_hash"),
    ("tenant None", {"tenant": None}, "chain.tenant"),
    ("seq float", {"seq": 1.0}, "seq"),
    ("seq str", {"seq": "1"}, "seq"),
    ("kind bytes", {"kind": b"question"}, "kind"),
    ("concepts bare str", {"concepts": "abc"}, "concepts"),
    ("concept not str", {"concepts": ["a", 1]}, "concepts"),
    ("salience str", {"salience": "0.5"}, "salience"),
    ("salience None", {"salience": None}, "salience"),
    ("evidence page float", {"evidence": [("f", 1.0, "fp")]}, "evidence.page"),
    ("evidence item without attributes", {"evidence": [("f", 1, "fp"), 3]}, "evidence"),
    ("mastery str", {"check": ("right", "t", "0.5")}, "check.predicted_mastery"),
    ("check outcome None", {"check": (None, "t", 0.5)}, "check.outcome"),
    ("check without attributes", {"check": "right"}, "check"),
    ("quiz total None", {"quiz": (1, None)}, "quiz.total"),
    ("client_key int", {"client_key": 7}, "client_key"),
]


@pytest.mark.parametrize(
    ("override", "message"),
    [(o, m) for _, o, m in BAD_VALUES],
    ids=[name for name, _, _ in BAD_VALUES],
)
def test_bad_values_raise_the_same_native_input_error(override: Fields, message: str) -> None:
    fields = {**FIXED, **override}
    rust = _outcome(RUST, fields)
    python = _outcome(REFERENCE, fields)
    assert rust[0] is NativeInputError
    assert issubclass(rust[0], ValueError)
    assert message in rust[1]
    assert rust == python


@pytest.mark.parametrize(
    ("override", "path"),
    [(o, p) for _, o, p in BAD_TYPES],
    ids=[name for name, _, _ in BAD_TYPES],
)
def test_bad_types_raise_native_type_error_naming_the_attribute(
    override: Fields, path: str
) -> None:
    fields = {**FIXED, **override}
    for fn in IMPL_FNS:
        kind, message = _outcome(fn, fields)
        assert kind is NativeTypeError, (fn, message)
        assert issubclass(kind, TypeError)
        # "{path}: {reason}"; the reason is pyo3's or Python's own wording.
        assert message.split(": ")[0] == path, (fn, message)


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_a_missing_attribute_is_a_type_error(fn: HashFn) -> None:
    ep = episode(FIXED)
    del ep.client_key
    with pytest.raises(NativeTypeError, match=r"^episode: .*client_key") as info:
        fn(FIXED["prev_hash"], ep)
    assert isinstance(info.value.__cause__, AttributeError)
    nested = episode(FIXED)
    del nested.chain.subject
    with pytest.raises(NativeTypeError, match=r"^chain: .*subject"):
        fn(FIXED["prev_hash"], nested)
    with pytest.raises(NativeTypeError, match=r"^episode: "):
        fn(FIXED["prev_hash"], None)


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_the_cause_of_a_type_error_is_kept(fn: HashFn) -> None:
    with pytest.raises(NativeTypeError) as info:
        run(fn, {**FIXED, "seq": 1.5})
    assert isinstance(info.value.__cause__, TypeError)
    assert not isinstance(info.value.__cause__, NativeTypeError)


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_range_boundaries_are_accepted(fn: HashFn) -> None:
    edges: Fields = {
        "seq": U64_MAX,
        "occurred_at_us": I64_MIN,
        "recorded_at_us": I64_MAX,
        "evidence": [("f", 0, "a"), ("g", U32_MAX, "b")],
        "quiz": (U32_MAX, 0),
        "salience": float("inf"),
        "check": ("right", "t", float("-inf")),
    }
    assert run(fn, {**FIXED, **edges}) == run(REFERENCE, {**FIXED, **edges})


def test_bool_numpy_and_tuple_inputs_agree() -> None:
    # Python accepts bool as int and any sequence for the lists; the extension must too.
    fields = {
        **FIXED,
        "seq": True,
        "concepts": ("x", "y"),
        "evidence": (("f", False, "fp"),),
        "salience": 1,
        "quiz": (3, 4),
    }
    assert run(RUST, fields) == run(REFERENCE, fields)


def test_the_servers_own_episodes_hash_alike() -> None:
    """``recompute`` hands a real StoredEpisode (enums, tuples, frozen dataclasses) to the core."""
    stored = StoredEpisode(
        episode_id=12,
        chain=ChainKey("tenant-a", "s1", "biology"),
        seq=3,
        kind=Kind.CHECK,
        summary="A check on cells",
        text="Cells are the unit of life.",
        concepts=("cell",),
        salience=0.7,
        occurred_at_us=1_700_000_000_000_000,
        recorded_at_us=1_700_000_000_000_001,
        evidence=(Evidence("bio-1", 2, "sha256:ab"),),
        check=Check(Outcome.WRONG, "cell", -0.0),
        quiz=Quiz(1, 2),
        client_key="k3",
        prev_hash=bytes(32),
        hash=b"",
    )
    prev = bytes(range(32))
    as_fields = {
        "prev_hash": prev,
        "tenant": "tenant-a",
        "student": "s1",
        "subject": "biology",
        "seq": 3,
        "kind": "check",
        "summary": "A check on cells",
        "text": "Cells are the unit of life.",
        "concepts": ["cell"],
        "salience": 0.7,
        "occurred_at_us": 1_700_000_000_000_000,
        "recorded_at_us": 1_700_000_000_000_001,
        "evidence": [("bio-1", 2, "sha256:ab")],
        "check": ("wrong", "cell", 0.0),
        "quiz": (1, 2),
        "client_key": "k3",
    }
    expected = run(REFERENCE, as_fields)
    assert recompute(stored, prev) == expected
    assert REFERENCE(prev, stored) == expected


def test_concurrent_calls_agree() -> None:
    # The extension releases the GIL while hashing; results must not depend on interleaving.
    variants = [{**FIXED, "seq": i, "text": "x" * (i * 1000)} for i in range(64)]
    expected = [run(REFERENCE, v) for v in variants]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda v: run(RUST, v), variants))
    assert got == expected


def test_signatures_match() -> None:
    assert tuple(inspect.signature(_reference.episode_hash).parameters) == ("prev_hash", "episode")
    assert RUST.__text_signature__ == "(prev_hash, episode)"  # type: ignore[attr-defined]
