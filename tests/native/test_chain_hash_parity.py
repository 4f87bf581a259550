"""Parity of the ledger hash: the Rust extension and the pure-Python reference must agree.

The episode hash is the ledger's tamper evidence, so besides agreement on random input this
pins the encoding three ways: a hand-built byte layout, a fixed test vector shared with the
Rust unit tests in ``rust_core/src/chain.rs``, and "every field matters" checks.
"""

from __future__ import annotations

import hashlib
import inspect
import struct
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.native import _core, _reference

Episode = dict[str, object]
HashFn = Callable[..., bytes]

# Typed loosely on purpose: the tests feed deliberately ill-typed arguments.
RUST: HashFn = _core.episode_hash
REFERENCE: HashFn = _reference.episode_hash
IMPLS: tuple[tuple[str, HashFn], ...] = (("rust", RUST), ("python", REFERENCE))
IMPL_IDS = [name for name, _ in IMPLS]
IMPL_FNS = [fn for _, fn in IMPLS]

FIELDS = (
    "prev_hash",
    "tenant",
    "student",
    "subject",
    "seq",
    "kind",
    "summary",
    "text",
    "concepts",
    "salience",
    "occurred_at_us",
    "recorded_at_us",
    "evidence",
    "check_outcome",
    "check_topic",
    "predicted_mastery",
    "quiz_correct",
    "quiz_total",
    "client_key",
)

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1

# The same digest is asserted by `fixed_test_vector` in rust_core/src/chain.rs. If it ever
# changes, the encoding changed and every hash already stored in a ledger is invalid.
FIXED_EPISODE: Episode = {
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
    "check_outcome": "passed",
    "check_topic": "fractions",
    "predicted_mastery": 0.625,
    "quiz_correct": 4,
    "quiz_total": 5,
    "client_key": "req-0001",
}
FIXED_VECTOR_HEX = "599826d912f0c74b4674bbd301ee6ec4f9487b0a13d188d42cafa3ef98be8f54"

EMPTY_EPISODE: Episode = {
    "prev_hash": bytes(32),
    "tenant": "",
    "student": "",
    "subject": "",
    "seq": 0,
    "kind": "",
    "summary": "",
    "text": "",
    "concepts": [],
    "salience": 0.0,
    "occurred_at_us": 0,
    "recorded_at_us": 0,
    "evidence": [],
    "check_outcome": "",
    "check_topic": "",
    "predicted_mastery": None,
    "quiz_correct": 0,
    "quiz_total": 0,
    "client_key": "",
}
EMPTY_VECTOR_HEX = "eb10d19ad3e4c0f9c0d53ebaf98f46f4fadde3bd18399d49417f7b4714628cea"

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
finite_or_inf = st.floats(allow_nan=False)


FIELD_STRATEGIES: dict[str, st.SearchStrategy[object]] = {
    "prev_hash": st.binary(min_size=32, max_size=32),
    "tenant": texts,
    "student": texts,
    "subject": texts,
    "seq": st.integers(0, U64_MAX),
    "kind": texts,
    "summary": texts,
    "text": st.one_of(texts, st.text(max_size=2000)),
    "concepts": st.lists(texts, max_size=10),
    "salience": finite_or_inf,
    "occurred_at_us": st.integers(I64_MIN, I64_MAX),
    "recorded_at_us": st.integers(I64_MIN, I64_MAX),
    "evidence": st.lists(st.tuples(texts, st.integers(0, U32_MAX), texts), max_size=40),
    "check_outcome": texts,
    "check_topic": texts,
    "predicted_mastery": st.none() | finite_or_inf,
    "quiz_correct": st.integers(0, U32_MAX),
    "quiz_total": st.integers(0, U32_MAX),
    "client_key": texts,
}
assert tuple(FIELD_STRATEGIES) == FIELDS


def episodes() -> st.SearchStrategy[Episode]:
    return st.fixed_dictionaries(FIELD_STRATEGIES)


def _both(episode: Episode) -> tuple[bytes, bytes]:
    return RUST(**episode), REFERENCE(**episode)


def _outcome(fn: HashFn, episode: Episode) -> tuple[type[BaseException], str]:
    try:
        fn(**episode)
    except Exception as exc:
        return type(exc), str(exc)
    pytest.fail(f"{fn.__module__}.episode_hash accepted bad input")


# Hypothesis' example database would write .hypothesis/ into the work tree.
parity_settings = settings(max_examples=300, deadline=None, database=None)


@parity_settings
@given(episodes())
def test_rust_matches_reference(episode: Episode) -> None:
    rust, python = _both(episode)
    assert rust == python
    assert isinstance(rust, bytes)
    assert len(rust) == 32


@parity_settings
@given(episodes())
def test_positional_and_keyword_calls_agree(episode: Episode) -> None:
    args = [episode[name] for name in FIELDS]
    expected = REFERENCE(**episode)
    for fn in IMPL_FNS:
        assert fn(*args) == expected


@parity_settings
@given(episodes(), st.sampled_from(FIELDS), st.data())
def test_changing_any_single_field_changes_the_hash(
    episode: Episode, field: str, data: st.DataObject
) -> None:
    other = data.draw(FIELD_STRATEGIES[field].filter(lambda v: not _same(v, episode[field])))
    changed = {**episode, field: other}
    for fn in IMPL_FNS:
        assert fn(**changed) != fn(**episode)


def _same(a: object, b: object) -> bool:
    # Floats are hashed by their bits: 0.0 and -0.0 differ even though they compare equal.
    if isinstance(a, float) and isinstance(b, float):
        return struct.pack(">d", a) == struct.pack(">d", b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_fixed_test_vector(fn: HashFn) -> None:
    assert fn(**FIXED_EPISODE).hex() == FIXED_VECTOR_HEX
    assert fn(**EMPTY_EPISODE).hex() == EMPTY_VECTOR_HEX


def _s(value: str) -> bytes:
    data = value.encode("utf-8")
    return struct.pack(">I", len(data)) + data


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_byte_layout_matches_the_specification(fn: HashFn) -> None:
    """Built from the documented layout, independently of ``_reference``'s code."""
    prev = bytes(range(100, 132))
    episode: Episode = {
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
        "check_outcome": "o",
        "check_topic": "",
        "predicted_mastery": 0.25,
        "quiz_correct": 1,
        "quiz_total": 2,
        "client_key": "ck",
    }
    encoding = b"".join(
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
            _s("o"),
            _s(""),
            b"\x01" + struct.pack(">d", 0.25),
            struct.pack(">II", 1, 2),
            _s("ck"),
        ]
    )
    assert fn(**episode) == hashlib.sha256(encoding).digest()
    without_mastery = encoding.replace(b"\x01" + struct.pack(">d", 0.25), b"\x00")
    assert fn(**{**episode, "predicted_mastery": None}) == hashlib.sha256(without_mastery).digest()


COLLISION_PAIRS: list[tuple[str, Episode, Episode]] = [
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
    ("mastery None vs 0.0", {"predicted_mastery": None}, {"predicted_mastery": 0.0}),
    ("salience 0.0 vs -0.0", {"salience": 0.0}, {"salience": -0.0}),
    (
        "quiz counts swapped",
        {"quiz_correct": 1, "quiz_total": 2},
        {"quiz_correct": 2, "quiz_total": 1},
    ),
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
def test_near_identical_episodes_do_not_collide(
    fn: HashFn, first: Episode, second: Episode
) -> None:
    assert fn(**{**FIXED_EPISODE, **first}) != fn(**{**FIXED_EPISODE, **second})


BAD_VALUES: list[tuple[str, Episode]] = [
    ("prev_hash 31 bytes", {"prev_hash": bytes(31)}),
    ("prev_hash 33 bytes", {"prev_hash": bytes(33)}),
    ("prev_hash empty", {"prev_hash": b""}),
    ("seq negative", {"seq": -1}),
    ("seq above u64", {"seq": U64_MAX + 1}),
    ("seq wider than 128 bits", {"seq": 2**200}),
    ("seq hugely negative", {"seq": -(2**200)}),
    ("occurred_at_us above i64", {"occurred_at_us": I64_MAX + 1}),
    ("recorded_at_us below i64", {"recorded_at_us": I64_MIN - 1}),
    ("evidence page negative", {"evidence": [("f", -1, "fp")]}),
    ("evidence page above u32", {"evidence": [("f", 0, "fp"), ("f", U32_MAX + 1, "fp")]}),
    ("evidence tuple too short", {"evidence": [("f", 1)]}),
    ("quiz_correct negative", {"quiz_correct": -1}),
    ("quiz_total above u32", {"quiz_total": U32_MAX + 1}),
    # With several bad values, both report the first in parameter order.
    ("several bad values", {"prev_hash": bytes(5), "seq": -1, "quiz_total": -1}),
    ("two bad ints", {"recorded_at_us": 2**64, "quiz_correct": -1}),
    ("lone surrogate", {"summary": "ok \ud800"}),
]

BAD_TYPES: list[tuple[str, Episode]] = [
    ("prev_hash bytearray", {"prev_hash": bytearray(32)}),
    ("prev_hash str", {"prev_hash": "0" * 32}),
    ("tenant None", {"tenant": None}),
    ("seq float", {"seq": 1.0}),
    ("seq str", {"seq": "1"}),
    ("concepts bare str", {"concepts": "abc"}),
    ("concept not str", {"concepts": ["a", 1]}),
    ("salience str", {"salience": "0.5"}),
    ("evidence item list", {"evidence": [["f", 1, "fp"]]}),
    ("evidence page float", {"evidence": [("f", 1.0, "fp")]}),
    ("predicted_mastery str", {"predicted_mastery": "0.5"}),
    ("quiz_total None", {"quiz_total": None}),
]


@pytest.mark.parametrize(
    "override", [o for _, o in BAD_VALUES], ids=[name for name, _ in BAD_VALUES]
)
def test_bad_values_raise_the_same_value_error(override: Episode) -> None:
    episode = {**FIXED_EPISODE, **override}
    rust_type, rust_msg = _outcome(RUST, episode)
    py_type, py_msg = _outcome(REFERENCE, episode)
    assert issubclass(rust_type, ValueError)
    assert (rust_type, rust_msg) == (py_type, py_msg)


@pytest.mark.parametrize("override", [o for _, o in BAD_TYPES], ids=[name for name, _ in BAD_TYPES])
def test_bad_types_raise_type_error_in_both(override: Episode) -> None:
    episode = {**FIXED_EPISODE, **override}
    rust_type, _ = _outcome(RUST, episode)
    py_type, _ = _outcome(REFERENCE, episode)
    assert rust_type is TypeError
    assert py_type is TypeError


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_prev_hash_of_31_bytes_is_rejected(fn: HashFn) -> None:
    with pytest.raises(ValueError, match=r"^prev_hash must be 32 bytes, got 31$"):
        fn(**{**FIXED_EPISODE, "prev_hash": bytes(31)})


@pytest.mark.parametrize("fn", IMPL_FNS, ids=IMPL_IDS)
def test_range_boundaries_are_accepted(fn: HashFn) -> None:
    edges: Episode = {
        "seq": U64_MAX,
        "occurred_at_us": I64_MIN,
        "recorded_at_us": I64_MAX,
        "evidence": [("f", 0, "a"), ("g", U32_MAX, "b")],
        "quiz_correct": U32_MAX,
        "quiz_total": 0,
        "salience": float("inf"),
        "predicted_mastery": float("-inf"),
    }
    assert fn(**{**FIXED_EPISODE, **edges}) == REFERENCE(**{**FIXED_EPISODE, **edges})


def test_bool_and_tuple_inputs_agree() -> None:
    # Python accepts bool as int and any sequence for the lists; the extension must too.
    episode = {
        **FIXED_EPISODE,
        "seq": True,
        "concepts": ("x", "y"),
        "evidence": (("f", False, "fp"),),
        "salience": 1,
    }
    rust, python = _both(episode)
    assert rust == python


def test_concurrent_calls_agree() -> None:
    # The extension releases the GIL while hashing; results must not depend on interleaving.
    variants = [{**FIXED_EPISODE, "seq": i, "text": "x" * (i * 1000)} for i in range(64)]
    expected = [REFERENCE(**v) for v in variants]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda v: RUST(**v), variants))
    assert got == expected


def test_signatures_match() -> None:
    assert tuple(inspect.signature(_reference.episode_hash).parameters) == FIELDS
    assert RUST.__text_signature__ == f"({', '.join(FIELDS)})"  # type: ignore[attr-defined]
