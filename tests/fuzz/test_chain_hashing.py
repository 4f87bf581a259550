"""Chain and episode hashing, fuzzed (issue 12): the Rust core and its pure-Python twin agree on
the hash of any episode the server can store, and on the walk over any chain built from them,
tampered with or not.

`tests/native` holds the parity tests on the encoding itself (ill-typed input, the byte layout,
the shared test vectors); this drives both implementations with the server's own episodes, whose
text is the hostile text every fuzz test uses.
"""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.fuzz import fuzz_settings, hostile_text
from tutor_memory.domain.episodes import (
    ChainKey,
    Check,
    Evidence,
    Kind,
    Outcome,
    Quiz,
    StoredEpisode,
)
from tutor_memory.domain.limits import MAX_TIME_US, MIN_TIME_US
from tutor_memory.native import _core, _reference

GENESIS = bytes(32)
times = st.integers(MIN_TIME_US, MAX_TIME_US)
masteries = st.none() | st.sampled_from([0.0, -0.0, 1.0]) | st.floats(0.0, 1.0)


@st.composite
def stored_episodes(draw: st.DrawFn) -> StoredEpisode:
    kind = draw(st.sampled_from(list(Kind)))
    check = (
        Check(draw(st.sampled_from(list(Outcome))), draw(hostile_text), draw(masteries))
        if kind is Kind.CHECK
        else None
    )
    quiz = Quiz(draw(st.integers(0, 50)), draw(st.integers(0, 50))) if kind is Kind.QUIZ else None
    return StoredEpisode(
        episode_id=0,
        chain=ChainKey(draw(hostile_text), draw(hostile_text), draw(hostile_text)),
        seq=0,
        kind=kind,
        summary=draw(hostile_text),
        text=draw(hostile_text),
        concepts=tuple(draw(st.lists(hostile_text, max_size=4))),
        salience=draw(st.sampled_from([0.0, -0.0, 0.5, 1.0])),
        occurred_at_us=draw(times),
        recorded_at_us=draw(times),
        evidence=tuple(
            draw(
                st.lists(
                    st.builds(Evidence, hostile_text, st.integers(0, 2**32 - 1), hostile_text),
                    max_size=3,
                )
            )
        ),
        check=check,
        quiz=quiz,
        client_key=draw(hostile_text),
        prev_hash=GENESIS,
        hash=GENESIS,
    )


def linked(episodes: list[StoredEpisode]) -> list[StoredEpisode]:
    """The episodes as a chain: numbered from 1, each hashed after the one before."""
    chain: list[StoredEpisode] = []
    prev = GENESIS
    for seq, ep in enumerate(episodes, start=1):
        ep = dataclasses.replace(ep, episode_id=seq, seq=seq, prev_hash=prev)
        digest = _core.episode_hash(prev, ep)
        chain.append(dataclasses.replace(ep, hash=digest))
        prev = digest
    return chain


@fuzz_settings
@given(stored_episodes(), st.binary(min_size=32, max_size=32))
def test_rust_and_python_hash_any_storable_episode_alike(ep: StoredEpisode, prev: bytes) -> None:
    rust = _core.episode_hash(prev, ep)
    assert rust == _reference.episode_hash(prev, ep)
    assert len(rust) == 32
    assert _core.episode_hash(prev, ep) == rust


@fuzz_settings
@given(
    st.lists(stored_episodes(), min_size=1, max_size=6),
    st.integers(0, 5),
    hostile_text,
    st.integers(0, 6),
)
def test_rust_and_python_walk_any_chain_alike(
    episodes: list[StoredEpisode], victim: int, edit: str, stop_at: int
) -> None:
    chain = linked(episodes)
    index = victim % len(chain)
    tampered = [*chain]
    tampered[index] = dataclasses.replace(chain[index], summary=chain[index].summary + edit)
    for walked in (chain, tampered):
        rust = _core.verify_chain(walked, _core.ChainWalk(stop_at=stop_at))
        python = _reference.verify_chain(walked, _reference.ChainWalk(stop_at=stop_at))
        assert (rust.length, rust.head_hash, rust.hash_at_stop) == (
            python.length,
            python.head_hash,
            python.hash_at_stop,
        )
        rust_break, python_break = rust.first_break, python.first_break
        assert (rust_break is None) == (python_break is None)
        if rust_break is not None and python_break is not None:
            assert (rust_break.kind, rust_break.seq, rust_break.episode_id) == (
                python_break.kind,
                python_break.seq,
                python_break.episode_id,
            )
    assert _core.verify_chain(chain, _core.ChainWalk()).first_break is None
    broken = _core.verify_chain(tampered, _core.ChainWalk()).first_break
    assert (broken is None) == (edit == "")
