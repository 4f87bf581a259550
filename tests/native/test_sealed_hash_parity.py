"""Parity of the sealed episode hash (encoding v2, issue 16): the Rust extension and the Python
reference agree on sealed episodes, a sealed episode never hashes like a plaintext one, and the
chain walk treats a chain that mixes both (a data directory written before sealing, appended to
after) alike in both implementations."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.native.test_chain_hash_parity import IMPL_FNS, IMPLS, REFERENCE, RUST, episode, episodes
from tutor_memory.domain.chain import GENESIS_HASH, verify_chain
from tutor_memory.domain.episodes import ChainKey, Kind, StoredEpisode
from tutor_memory.native import _core, _reference
from tutor_memory.native._core import NativeTypeError

parity_settings = settings(max_examples=200, deadline=None, database=None)
ciphertexts = st.binary(max_size=300)


def sealed(fields: dict[str, Any], blob: bytes | None) -> SimpleNamespace:
    ep = episode(fields)
    ep.sealed = blob
    return ep


@parity_settings
@given(episodes(), ciphertexts)
def test_rust_matches_reference_on_sealed_episodes(fields: dict[str, Any], blob: bytes) -> None:
    ep = sealed(fields, blob)
    assert RUST(fields["prev_hash"], ep) == REFERENCE(fields["prev_hash"], ep)


@parity_settings
@given(episodes(), ciphertexts, ciphertexts)
def test_the_ciphertext_is_hashed(fields: dict[str, Any], one: bytes, two: bytes) -> None:
    for fn in IMPL_FNS:
        a = fn(fields["prev_hash"], sealed(fields, one))
        b = fn(fields["prev_hash"], sealed(fields, two))
        assert (a == b) == (one == two)


@parity_settings
@given(episodes(), ciphertexts)
def test_a_sealed_episode_never_hashes_like_a_plaintext_one(
    fields: dict[str, Any], blob: bytes
) -> None:
    for fn in IMPL_FNS:
        assert fn(fields["prev_hash"], sealed(fields, blob)) != fn(
            fields["prev_hash"], episode(fields)
        )


@pytest.mark.parametrize("fn", IMPL_FNS, ids=[name for name, _ in IMPLS])
def test_sealed_none_or_absent_is_the_plaintext_hash(fn: Any) -> None:
    fields = {
        "prev_hash": bytes(32),
        "tenant": "t",
        "student": "s",
        "subject": "b",
        "seq": 1,
        "kind": "question",
        "summary": "osmosis",
        "text": "",
        "concepts": [],
        "salience": 0.35,
        "occurred_at_us": 1,
        "recorded_at_us": 2,
        "evidence": [],
        "check": None,
        "quiz": None,
        "client_key": "",
    }
    assert fn(bytes(32), sealed(fields, None)) == fn(bytes(32), episode(fields))


@pytest.mark.parametrize("fn", IMPL_FNS, ids=[name for name, _ in IMPLS])
def test_a_sealed_attribute_of_the_wrong_type_is_named(fn: Any) -> None:
    ep = episode(
        {
            "prev_hash": bytes(32),
            "tenant": "t",
            "student": "s",
            "subject": "b",
            "seq": 1,
            "kind": "question",
            "summary": "",
            "text": "",
            "concepts": [],
            "salience": 0.35,
            "occurred_at_us": 1,
            "recorded_at_us": 2,
            "evidence": [],
            "check": None,
            "quiz": None,
            "client_key": "",
        }
    )
    ep.sealed = "not bytes"
    with pytest.raises(NativeTypeError, match=r"^sealed: "):
        fn(bytes(32), ep)


def _mixed_chain(n_plain: int, n_sealed: int) -> list[StoredEpisode]:
    """A chain written in plaintext, then sealed: each row as a store holds it."""
    chain = ChainKey("t", "s", "biology")
    out: list[StoredEpisode] = []
    prev = GENESIS_HASH
    for i in range(n_plain + n_sealed):
        is_sealed = i >= n_plain
        ep = StoredEpisode(
            episode_id=i + 1,
            chain=chain,
            seq=i + 1,
            kind=Kind.QUESTION,
            summary="" if is_sealed else f"question {i}",
            text="",
            concepts=(),
            salience=0.35,
            occurred_at_us=i,
            recorded_at_us=i,
            evidence=(),
            check=None,
            quiz=None,
            client_key="",
            prev_hash=prev,
            hash=b"",
            sealed=bytes([i]) * 29 if is_sealed else None,
        )
        digest = _core.episode_hash(prev, ep)
        out.append(dataclasses.replace(ep, hash=digest))
        prev = digest
    return out


@pytest.mark.parametrize("module", [_core, _reference], ids=["rust", "python"])
def test_a_mixed_chain_verifies_and_an_altered_ciphertext_breaks_it(module: Any) -> None:
    eps = _mixed_chain(3, 4)
    walk = module.verify_chain(eps, module.ChainWalk())
    assert walk.first_break is None
    assert walk.length == 7
    assert verify_chain(eps).ok
    altered = list(eps)
    blob = bytearray(eps[5].sealed or b"")
    blob[-1] ^= 1
    altered[5] = dataclasses.replace(eps[5], sealed=bytes(blob))
    found = module.verify_chain(altered, module.ChainWalk()).first_break
    assert (found.kind, found.seq) == ("content", 6)
    # A word written into a sealed row's empty column is an edit too.
    altered = list(eps)
    altered[4] = dataclasses.replace(eps[4], text="rewritten history")
    found = module.verify_chain(altered, module.ChainWalk()).first_break
    assert (found.kind, found.seq) == ("content", 5)
