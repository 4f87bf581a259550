"""Parity of chain verification: the Rust walk, its pure-Python twin, and the per-episode algorithm
``domain.chain.verify_chain`` had before it crossed into Rust once per chunk.

``verify_chain`` must keep its meaning exactly: the same length, head, first break (seq, episode
id and reason, word for word) and hash at ``stop_at``, on untouched chains and on chains tampered
with in every way a row can be (edited, removed, swapped, renumbered, relinked, re-hashed), however
the chain is cut into chunks.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain import chain as chain_module
from tutor_memory.domain.chain import (
    GENESIS_HASH,
    VERIFY_CHUNK,
    ChainBreak,
    Verification,
    verify_chain,
)
from tutor_memory.domain.episodes import ChainKey, Check, Kind, Outcome, StoredEpisode
from tutor_memory.native import _core, _reference
from tutor_memory.native._core import NativeInputError, NativeTypeError

Episode = StoredEpisode
replace = dataclasses.replace


def new_episode(seq: int, text: str) -> Episode:
    """An episode as the store reads it back; prev_hash and hash are set by `link`."""
    return StoredEpisode(
        episode_id=1000 + 7 * seq,
        chain=ChainKey("tenant-a", "s1", "biology"),
        seq=seq,
        kind=Kind.CHECK if seq % 4 == 0 else Kind.QUESTION,
        summary=f"question {seq}",
        text=text,
        concepts=("cell",) if seq % 3 == 0 else (),
        salience=0.35,
        occurred_at_us=1_700_000_000_000_000 + seq,
        recorded_at_us=1_700_000_000_000_000 + seq,
        evidence=(),
        # Hashed with -0.0, as a caller may send it.
        check=Check(Outcome.RIGHT, "cell", -0.0) if seq % 4 == 0 else None,
        quiz=None,
        client_key=f"k{seq}",
        prev_hash=b"",
        hash=b"",
    )


def link(episodes: Sequence[Episode], prev: bytes = GENESIS_HASH) -> list[Episode]:
    """The episodes re-linked as the server writes them: each hashed after the one before."""
    linked = []
    for ep in episodes:
        ep = replace(ep, prev_hash=prev, hash=_reference.episode_hash(prev, ep))
        prev = ep.hash
        linked.append(ep)
    return linked


def as_sqlite_reads_it(ep: Episode) -> Episode:
    """SQLite gives a stored -0.0 back as 0.0."""
    if ep.check is None or ep.check.predicted_mastery is None:
        return ep
    return replace(ep, check=replace(ep.check, predicted_mastery=ep.check.predicted_mastery + 0.0))


def old_verify_chain(episodes: Sequence[Episode], stop_at: int | None) -> Verification:
    """The per-episode algorithm verify_chain had before this change: the oracle."""
    expected_prev = GENESIS_HASH
    computed = GENESIS_HASH
    length = 0
    first_break: ChainBreak | None = None
    hash_at_stop = GENESIS_HASH if stop_at == 0 else None
    for ep in episodes:
        length += 1
        if first_break is None:
            if ep.seq != length:
                first_break = ChainBreak(
                    ep.seq,
                    ep.episode_id,
                    f"expected seq {length}, found seq {ep.seq}: episodes were removed or "
                    "renumbered",
                )
            elif ep.prev_hash != expected_prev:
                first_break = ChainBreak(
                    ep.seq,
                    ep.episode_id,
                    f"prev_hash does not match the hash of seq {ep.seq - 1}: the link is broken",
                )
        computed = _reference.episode_hash(computed, ep)
        if first_break is None and computed != ep.hash:
            first_break = ChainBreak(
                ep.seq,
                ep.episode_id,
                "the content does not match its stored hash: the row was edited after it was "
                "written",
            )
        if stop_at is not None and length == stop_at:
            hash_at_stop = computed
        expected_prev = ep.hash
    return Verification(length, computed, first_break, hash_at_stop)


# -- tampering -----------------------------------------------------------------------------------


def _edit(eps: list[Episode], i: int, data: st.DataObject) -> None:
    eps[i] = replace(eps[i], text=eps[i].text + "!")


def _remove(eps: list[Episode], i: int, data: st.DataObject) -> None:
    del eps[i]


def _swap(eps: list[Episode], i: int, data: st.DataObject) -> None:
    j = min(i + 1, len(eps) - 1)
    eps[i], eps[j] = eps[j], eps[i]


def _renumber(eps: list[Episode], i: int, data: st.DataObject) -> None:
    eps[i] = replace(eps[i], seq=data.draw(st.integers(0, 40)))


def _relink(eps: list[Episode], i: int, data: st.DataObject) -> None:
    eps[i] = replace(eps[i], prev_hash=data.draw(st.binary(max_size=40)))


def _rehash(eps: list[Episode], i: int, data: st.DataObject) -> None:
    eps[i] = replace(eps[i], hash=data.draw(st.binary(max_size=40)))


def _rewrite_from(eps: list[Episode], i: int, data: st.DataObject) -> None:
    # A rewrite that re-hashes every later row: internally consistent, another history.
    eps[i] = replace(eps[i], summary="softened")
    start = eps[i - 1].hash if i else GENESIS_HASH
    # After a `_rehash` the row before may hold a hash of any length, which no writer could
    # link from; the rewrite then starts from a well-formed hash of its own.
    eps[i:] = link(eps[i:], start if len(start) == len(GENESIS_HASH) else GENESIS_HASH)


def _read_back(eps: list[Episode], i: int, data: st.DataObject) -> None:
    # Not tampering: what SQLite gives back for a -0.0 that was hashed. It must still verify.
    eps[i] = as_sqlite_reads_it(eps[i])


TAMPERINGS: list[Callable[[list[Episode], int, st.DataObject], None]] = [
    _edit,
    _remove,
    _swap,
    _renumber,
    _relink,
    _rehash,
    _rewrite_from,
    _read_back,
]


@st.composite
def chains(draw: st.DrawFn) -> list[Episode]:
    n = draw(st.integers(0, 14))
    texts = draw(st.lists(st.text(max_size=12), min_size=n, max_size=n))
    eps = link([new_episode(seq, text) for seq, text in enumerate(texts, start=1)])
    data = draw(st.data())
    for _ in range(draw(st.integers(0, 2)) if eps else 0):
        if not eps:
            break
        tamper = draw(st.sampled_from(TAMPERINGS))
        tamper(eps, draw(st.integers(0, len(eps) - 1)), data)
    return eps


def walk_in_pieces(module: Any, eps: list[Episode], cuts: list[int], stop_at: int | None) -> Any:
    """`module.verify_chain` over `eps` cut at `cuts`, from a new walk."""
    walk = module.ChainWalk(stop_at=stop_at)
    bounds = [0, *sorted(c % (len(eps) + 1) for c in cuts), len(eps)]
    for start, end in itertools.pairwise(bounds):
        walk = module.verify_chain(eps[start:end], walk)
    return walk


def walk_state(walk: Any) -> tuple[Any, ...]:
    found = walk.first_break
    return (
        walk.stop_at,
        walk.length,
        walk.head_hash,
        walk.last_stored_hash,
        None if found is None else (found.kind, found.position, found.seq, found.episode_id),
        walk.hash_at_stop,
    )


parity_settings = settings(max_examples=300, deadline=None, database=None)
stop_ats = st.none() | st.integers(0, 16)


@parity_settings
@given(chains(), stop_ats, st.lists(st.integers(0, 20), max_size=4))
def test_verify_chain_means_what_it_meant(
    eps: list[Episode], stop_at: int | None, cuts: list[int]
) -> None:
    assert verify_chain(eps, stop_at=stop_at) == old_verify_chain(eps, stop_at)
    assert verify_chain(iter(eps), stop_at=stop_at) == old_verify_chain(eps, stop_at)


@parity_settings
@given(chains(), stop_ats, st.lists(st.integers(0, 20), max_size=4))
def test_rust_and_reference_walks_agree_however_the_chain_is_cut(
    eps: list[Episode], stop_at: int | None, cuts: list[int]
) -> None:
    rust = walk_state(walk_in_pieces(_core, eps, cuts, stop_at))
    assert rust == walk_state(walk_in_pieces(_reference, eps, cuts, stop_at))
    assert rust == walk_state(walk_in_pieces(_core, eps, [], stop_at))


def test_an_untouched_chain_with_a_negative_zero_verifies() -> None:
    """Issue 12: hashed with -0.0, read back from SQLite as 0.0, still the same link."""
    written = link([new_episode(seq, "x") for seq in range(1, 9)])
    read = [as_sqlite_reads_it(ep) for ep in written]
    signs = [
        (
            math.copysign(1.0, w.check.predicted_mastery),
            math.copysign(1.0, r.check.predicted_mastery),
        )
        for w, r in zip(written, read, strict=True)
        if w.check is not None
        and r.check is not None
        and w.check.predicted_mastery is not None
        and r.check.predicted_mastery is not None
    ]
    assert signs
    assert all(pair == (-1.0, 1.0) for pair in signs)  # the sign did change
    result = verify_chain(read)
    assert result.ok
    assert result.head_hash == written[-1].hash


@pytest.mark.parametrize("kind", ["edited", "removed"])
def test_a_long_chain_is_verified_in_bounded_chunks(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 2 * VERIFY_CHUNK + 100
    eps = link([new_episode(seq, f"text {seq}") for seq in range(1, n + 1)])
    target = VERIFY_CHUNK + 5  # in the second chunk
    if kind == "edited":
        eps[target - 1] = replace(eps[target - 1], text="rewritten history")
    else:
        del eps[target - 1]
    chunks: list[int] = []
    native = _core.verify_chain

    def spy(episodes: Sequence[Any], walk: _core.ChainWalk) -> _core.ChainWalk:
        chunks.append(len(episodes))
        return native(episodes, walk)

    pulled = 0

    def lazily() -> Iterator[Episode]:
        nonlocal pulled
        for ep in eps:
            pulled += 1
            # Never more than one chunk read ahead of what has been verified.
            assert pulled <= sum(chunks) + VERIFY_CHUNK
            yield ep

    monkeypatch.setattr(_core, "verify_chain", spy)
    assert chain_module.verify_chain is verify_chain
    result = verify_chain(lazily(), stop_at=VERIFY_CHUNK)
    assert chunks == [VERIFY_CHUNK, VERIFY_CHUNK, len(eps) - 2 * VERIFY_CHUNK]
    assert result == old_verify_chain(eps, VERIFY_CHUNK)
    assert result.first_break is not None
    assert result.first_break.seq == (target if kind == "edited" else target + 1)
    assert result.hash_at_stop == eps[VERIFY_CHUNK - 1].hash


@pytest.mark.parametrize("module", [_core, _reference], ids=["rust", "python"])
def test_the_walk_passed_in_is_never_changed(module: Any) -> None:
    eps = link([new_episode(seq, "x") for seq in range(1, 6)])
    start = module.ChainWalk(stop_at=2)
    before = walk_state(start)
    after = module.verify_chain(eps, start)
    assert walk_state(start) == before
    assert after.length == 5
    bad = [replace(eps[0], seq=-1)]
    with pytest.raises(NativeInputError):
        module.verify_chain(bad, after)
    assert walk_state(after)[1] == 5


def _outcome(call: Callable[[], object]) -> tuple[type[BaseException], str]:
    try:
        call()
    except Exception as exc:
        return type(exc), str(exc)
    pytest.fail("bad input was accepted")


def _bad(i: int, **changes: Any) -> list[Any]:
    eps: list[Any] = link([new_episode(seq, "x") for seq in range(1, 5)])
    eps[i] = SimpleNamespace(
        **{**{f.name: getattr(eps[i], f.name) for f in dataclasses.fields(eps[i])}, **changes}
    )
    return eps


BAD_VALUES: list[tuple[str, Callable[[Any], object], str]] = [
    (
        "seq negative",
        lambda m: m.verify_chain(_bad(2, seq=-1), m.ChainWalk()),
        "episodes[2]: seq must be in 0..=18446744073709551615, got -1",
    ),
    (
        "NaN salience",
        lambda m: m.verify_chain(_bad(1, salience=float("nan")), m.ChainWalk()),
        "episodes[1]: salience must not be NaN",
    ),
    (
        "episode_id above i64",
        lambda m: m.verify_chain(_bad(3, episode_id=2**63), m.ChainWalk()),
        "episodes[3]: episode_id must be in",
    ),
    (
        "lone surrogate",
        lambda m: m.verify_chain(_bad(0, text="\udc80"), m.ChainWalk()),
        "episodes[0]: text contains a lone surrogate",
    ),
    ("stop_at negative", lambda m: m.ChainWalk(stop_at=-1), "stop_at must be in 0..="),
    ("stop_at above u64", lambda m: m.ChainWalk(stop_at=2**64), "stop_at must be in 0..="),
]

BAD_TYPES: list[tuple[str, Callable[[Any], object], str]] = [
    (
        "hash not bytes",
        lambda m: m.verify_chain(_bad(1, hash="00"), m.ChainWalk()),
        "episodes[1]: hash",
    ),
    (
        "prev_hash None",
        lambda m: m.verify_chain(_bad(2, prev_hash=None), m.ChainWalk()),
        "episodes[2]: prev_hash",
    ),
    (
        "seq float",
        lambda m: m.verify_chain(_bad(0, seq=1.0), m.ChainWalk()),
        "episodes[0]: seq",
    ),
    (
        "an episode that is not one",
        lambda m: m.verify_chain([*_bad(0), None], m.ChainWalk()),
        "episodes[4]: episode",
    ),
    ("episodes not iterable", lambda m: m.verify_chain(5, m.ChainWalk()), "episodes"),
    ("walk not a ChainWalk", lambda m: m.verify_chain([], None), "walk"),
    ("stop_at float", lambda m: m.ChainWalk(stop_at=1.0), "stop_at"),
]


@pytest.mark.parametrize(
    ("call", "message"),
    [(c, m) for _, c, m in BAD_VALUES],
    ids=[name for name, _, _ in BAD_VALUES],
)
def test_bad_values_raise_the_same_native_input_error(
    call: Callable[[Any], object], message: str
) -> None:
    rust = _outcome(lambda: call(_core))
    assert rust[0] is NativeInputError
    assert rust[1].startswith(message)
    assert rust == _outcome(lambda: call(_reference))


@pytest.mark.parametrize(
    ("call", "path"),
    [(c, p) for _, c, p in BAD_TYPES],
    ids=[name for name, _, _ in BAD_TYPES],
)
def test_bad_types_raise_native_type_error_naming_the_item(
    call: Callable[[Any], object], path: str
) -> None:
    for module in (_core, _reference):
        kind, message = _outcome(lambda module=module: call(module))  # type: ignore[misc]
        assert kind is NativeTypeError, (module, message)
        assert message.startswith(f"{path}: "), (module, message)


def test_the_reference_twin_mirrors_the_walks_fields() -> None:
    names = {f.name for f in dataclasses.fields(_reference.ChainWalk)}
    native = {name for name in dir(_core.ChainWalk) if not name.startswith("_")}
    assert names == native
