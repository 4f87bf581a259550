"""Sealing words (issue 16): a round trip, and every way a sealed blob or a wrapped key must
refuse to open (altered, moved to another row or student, the wrong key)."""

from __future__ import annotations

import pytest

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.sealing import (
    KEY_BYTES,
    NONCE_BYTES,
    DataKey,
    MasterKey,
    SealBroken,
    Words,
    episode_ad,
)

CHAIN = ChainKey("school", "ada", "biology")
WORDS = Words(
    "Osmosis \u2014 l'eau va vers le sel",
    "She said: water moves toward more solute \U0001f914",
    ("osmosis", "membranes"),
    "osmosis",
)


def test_words_round_trip_under_their_episode() -> None:
    key, _ = DataKey.generate()
    ad = episode_ad(CHAIN, 7, "question")
    blob = key.seal(ad, WORDS)
    assert key.open(ad, blob) == WORDS
    # Nothing of the words shows in the blob.
    assert b"Osmosis" not in blob
    assert b"osmosis" not in blob


def test_each_seal_uses_a_fresh_nonce() -> None:
    key, _ = DataKey.generate()
    ad = episode_ad(CHAIN, 1, "question")
    one, two = key.seal(ad, WORDS), key.seal(ad, WORDS)
    assert one != two
    assert one[1 : 1 + NONCE_BYTES] != two[1 : 1 + NONCE_BYTES]


@pytest.mark.parametrize(
    "moved_to",
    [
        episode_ad(CHAIN, 8, "question"),  # another row of the chain
        episode_ad(CHAIN, 7, "answer"),  # another kind
        episode_ad(ChainKey("school", "ada", "math"), 7, "question"),  # another subject
        episode_ad(ChainKey("school", "bob", "biology"), 7, "question"),  # another student
        episode_ad(ChainKey("other", "ada", "biology"), 7, "question"),  # another tenant
    ],
)
def test_a_blob_moved_to_another_row_does_not_open(moved_to: bytes) -> None:
    key, _ = DataKey.generate()
    blob = key.seal(episode_ad(CHAIN, 7, "question"), WORDS)
    with pytest.raises(SealBroken, match="altered or moved"):
        key.open(moved_to, blob)


@pytest.mark.parametrize("index", [0, 1, NONCE_BYTES + 1, -1])
def test_an_altered_byte_does_not_open(index: int) -> None:
    key, _ = DataKey.generate()
    ad = episode_ad(CHAIN, 7, "question")
    blob = bytearray(key.seal(ad, WORDS))
    blob[index] ^= 0x01
    with pytest.raises(SealBroken):
        key.open(ad, bytes(blob))


def test_another_students_key_does_not_open() -> None:
    mine, _ = DataKey.generate()
    theirs, _ = DataKey.generate()
    ad = episode_ad(CHAIN, 7, "question")
    with pytest.raises(SealBroken):
        theirs.open(ad, mine.seal(ad, WORDS))


def test_a_truncated_blob_is_refused() -> None:
    key, _ = DataKey.generate()
    with pytest.raises(SealBroken, match="unknown format"):
        key.open(episode_ad(CHAIN, 1, "question"), b"\x01short")


def test_a_data_key_is_wrapped_for_its_student_only() -> None:
    master = MasterKey(bytes(range(KEY_BYTES)))
    raw = bytes(KEY_BYTES)
    wrapped = master.wrap("school", "ada", raw)
    assert raw not in wrapped
    assert master.unwrap("school", "ada", wrapped) == raw
    with pytest.raises(SealBroken, match="'bob'"):
        master.unwrap("school", "bob", wrapped)
    other = MasterKey(bytes(KEY_BYTES))
    with pytest.raises(SealBroken, match="does not open with this master key"):
        other.unwrap("school", "ada", wrapped)


def test_a_master_key_is_named_without_being_shown() -> None:
    raw = bytes(range(KEY_BYTES))
    master = MasterKey(raw)
    assert master.key_id == MasterKey(raw).key_id
    assert master.key_id != MasterKey(bytes(KEY_BYTES)).key_id
    assert raw.hex()[:16] != master.key_id
    with pytest.raises(ValueError, match="32 bytes"):
        MasterKey(b"short")


def test_an_episodes_associated_data_is_its_length_prefixed_parts() -> None:
    # The layout sealed blobs on disk were made under: a change would make them unreadable.
    parts = [
        b"tutor-memory/sealed-words/v1",
        b"school",
        b"ada",
        b"biology",
        (7).to_bytes(8, "big"),
        b"question",
    ]
    expected = b"".join(len(p).to_bytes(4, "big") + p for p in parts)
    assert episode_ad(CHAIN, 7, "question") == expected
    assert episode_ad(CHAIN, 7, "question") == expected  # and again, from the chain's cache
