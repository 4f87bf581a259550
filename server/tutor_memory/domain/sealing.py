"""Sealing what a person wrote (issue 16): the words of every episode are encrypted with a key of
their student before they are hashed and stored, so that destroying that one key erases them
while the hash chain over the ciphertext still verifies.

Three kinds of key, each with one job:
- a *data key* per (tenant, student): 32 random bytes that seal and open the words of every
  episode of that student, in every subject (AES-256-GCM);
- the *master key*, given to the server (`store.masterkey`), which wraps every data key before it
  is stored (AES-256-GCM too) and is never stored beside them in the database;
- the server's signing key (`domain.signing`), unrelated to both: it signs checkpoints and derives
  the block-id secret.

What is sealed: `summary`, `text`, `concepts` and the check's `topic`, the fields a student or a
tutor writes in words. Everything else of an episode (its kind, times, salience, evidence
citations, check outcome and mastery, quiz score, client key) is structure the ledger needs in
the clear (the client key to recognise a retry, the evidence to check citations) and stays
plaintext.

A sealed blob is `SEALED_FORMAT` (1 byte), a random 96-bit nonce, then the AES-GCM ciphertext and
its 16-byte tag. The associated data names the chain, the seq and the kind of its episode, so a
blob moved to another row, chain or student fails to open instead of showing the wrong words.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.errors import FailedPrecondition, TutorMemoryError

KEY_BYTES: Final = 32
"""Every key here is AES-256: 32 random bytes."""

NONCE_BYTES: Final = 12
"""AES-GCM's 96-bit nonce, random per seal: a student would need ~2^32 sealed episodes before a
repeat becomes a concern, far above what one chain holds."""

SEALED_FORMAT: Final = 0x01
"""The first byte of every sealed blob: the layout above. A new layout takes a new value."""

WRAPPED_FORMAT: Final = 0x01
"""The first byte of every wrapped data key (same layout: nonce, ciphertext, tag)."""

_EPISODE_AD_TAG: Final = b"tutor-memory/sealed-words/v1"
_DATA_KEY_AD_TAG: Final = b"tutor-memory/data-key/v1"
_MASTER_ID_TAG: Final = b"tutor-memory/master-key-id/v1"


class SealBroken(TutorMemoryError):
    """A sealed blob or wrapped key did not open: it was altered, moved to another row, or the
    key is not the one that sealed it. Nothing is shown in its place."""

    code = "DATA_LOSS"


# Chains whose associated-data prefix is kept encoded (`episode_ad`).
AD_CACHE_CHAINS = 4_096


def _prefixed(parts: Iterable[bytes]) -> bytes:
    """Each part with its u32 big-endian length, so no two different tuples encode alike."""
    return b"".join(struct.pack(">I", len(p)) + p for p in parts)


@dataclass(frozen=True, slots=True)
class Words:
    """What a person wrote in one episode: the fields that are sealed."""

    summary: str
    text: str
    concepts: tuple[str, ...]
    topic: str

    def encode(self) -> bytes:
        """Compact JSON `[summary, text, [concepts...], topic]`, UTF-8."""
        doc = [self.summary, self.text, list(self.concepts), self.topic]
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, data: bytes) -> Words:
        # Decoded first: json.loads would otherwise sniff the bytes' encoding (always UTF-8).
        summary, text, concepts, topic = json.loads(data.decode())
        return cls(str(summary), str(text), tuple(str(c) for c in concepts), str(topic))


# What an erased (or not yet opened) episode shows in place of its words.
NO_WORDS = Words("", "", (), "")


def episode_ad(chain: ChainKey, seq: int, kind: str) -> bytes:
    """The associated data of an episode's sealed words: its chain, seq and kind."""
    # The same bytes as `_prefixed` of the six parts; the chain's part is encoded once per chain
    # (a block opens dozens of one chain's rows).
    return _chain_ad(chain) + _prefixed((struct.pack(">Q", seq), kind.encode()))


@functools.lru_cache(maxsize=AD_CACHE_CHAINS)
def _chain_ad(chain: ChainKey) -> bytes:
    return _prefixed(
        (_EPISODE_AD_TAG, chain.tenant.encode(), chain.student.encode(), chain.subject.encode())
    )


class DataKey:
    """One student's data key, ready to seal and open (the cipher is built once)."""

    __slots__ = ("_aead",)

    def __init__(self, raw: bytes) -> None:
        if len(raw) != KEY_BYTES:
            raise ValueError(f"a data key is {KEY_BYTES} bytes, got {len(raw)}")
        self._aead = AESGCM(raw)

    @classmethod
    def generate(cls) -> tuple[DataKey, bytes]:
        """A new random key, and its raw bytes (to wrap; never stored as they are)."""
        raw = AESGCM.generate_key(bit_length=8 * KEY_BYTES)
        return cls(raw), raw

    def seal(self, ad: bytes, words: Words, *, nonce: bytes | None = None) -> bytes:
        nonce = os.urandom(NONCE_BYTES) if nonce is None else nonce
        return bytes((SEALED_FORMAT,)) + nonce + self._aead.encrypt(nonce, words.encode(), ad)

    def open(self, ad: bytes, sealed: bytes) -> Words:
        """The words sealed under `ad`; SealBroken when the blob was altered or moved."""
        if len(sealed) < 1 + NONCE_BYTES or sealed[0] != SEALED_FORMAT:
            raise SealBroken("a sealed episode has an unknown format")
        nonce, body = sealed[1 : 1 + NONCE_BYTES], sealed[1 + NONCE_BYTES :]
        try:
            return Words.decode(self._aead.decrypt(nonce, body, ad))
        except InvalidTag:
            raise SealBroken(
                "a sealed episode does not open: its ciphertext was altered or moved from "
                "another row"
            ) from None


def _data_key_ad(tenant: str, student: str) -> bytes:
    return _prefixed((_DATA_KEY_AD_TAG, tenant.encode(), student.encode()))


class MasterKey:
    """The key that wraps every data key. `key_id` names it without revealing it (a SHA-256 of
    the key under a fixed tag), so a store can say which master key wrapped a data key."""

    __slots__ = ("_aead", "key_id")

    def __init__(self, raw: bytes) -> None:
        if len(raw) != KEY_BYTES:
            raise ValueError(f"a master key is {KEY_BYTES} bytes, got {len(raw)}")
        self._aead = AESGCM(raw)
        self.key_id = hashlib.sha256(_MASTER_ID_TAG + raw).hexdigest()[:16]

    def wrap(self, tenant: str, student: str, raw: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        ad = _data_key_ad(tenant, student)
        return bytes((WRAPPED_FORMAT,)) + nonce + self._aead.encrypt(nonce, raw, ad)

    def unwrap(self, tenant: str, student: str, wrapped: bytes) -> bytes:
        """The raw data key; SealBroken when this master key did not wrap it for this student."""
        if len(wrapped) < 1 + NONCE_BYTES or wrapped[0] != WRAPPED_FORMAT:
            raise SealBroken(f"the data key of student {student!r} has an unknown format")
        nonce, body = wrapped[1 : 1 + NONCE_BYTES], wrapped[1 + NONCE_BYTES :]
        try:
            return self._aead.decrypt(nonce, body, _data_key_ad(tenant, student))
        except InvalidTag:
            raise SealBroken(
                f"the data key of student {student!r} does not open with this master key"
            ) from None


class NoMasterKey(FailedPrecondition):
    """Sealed words were asked for by a process that was given no master key."""
