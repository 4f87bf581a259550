"""The server's Ed25519 key and signed checkpoints of chain heads (SPEC R1.4).

A checkpoint is the server's signed statement "at this time, this chain had this many episodes,
they verified, and the last one hashed to this". An operator keeps checkpoints outside the
database; VerifyChain with one later shows whether history up to it was rewritten, even by someone
who re-hashed every row. The key itself is kept in the data directory (`store.keyfile`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from tutor_memory.domain.episodes import ChainKey

# Names the payload format; a verifier refuses payloads of a format it does not know.
CHECKPOINT_FORMAT = "tutor-memory/checkpoint/v1"


@dataclass(frozen=True, slots=True)
class SignedCheckpoint:
    chain: ChainKey
    length: int
    head_hash: bytes
    created_at_us: int
    payload: bytes
    signature: bytes
    public_key: bytes


def checkpoint_payload(chain: ChainKey, length: int, head_hash: bytes, created_at_us: int) -> bytes:
    """The exact bytes that are signed: compact JSON with sorted keys, UTF-8."""
    body = {
        "format": CHECKPOINT_FORMAT,
        "tenant": chain.tenant,
        "student": chain.student,
        "subject": chain.subject,
        "length": length,
        "head_hash": head_hash.hex(),
        "created_at_us": created_at_us,
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class ServerKey:
    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._private = private_key
        self.public_key: Ed25519PublicKey = private_key.public_key()
        self.public_bytes = self.public_key.public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    def secret_for(self, purpose: str) -> bytes:
        """A 32-byte secret for one purpose (block ids), derived from the private key, so that
        every server holding the key derives the same one."""
        raw = self._private.private_bytes(
            serialization.Encoding.Raw,
            serialization.PrivateFormat.Raw,
            serialization.NoEncryption(),
        )
        return hashlib.sha256(f"tutor-memory/{purpose}/v1".encode() + raw).digest()

    def sign(
        self, chain: ChainKey, length: int, head_hash: bytes, created_at_us: int
    ) -> SignedCheckpoint:
        payload = checkpoint_payload(chain, length, head_hash, created_at_us)
        return SignedCheckpoint(
            chain=chain,
            length=length,
            head_hash=head_hash,
            created_at_us=created_at_us,
            payload=payload,
            signature=self._private.sign(payload),
            public_key=self.public_bytes,
        )

    def is_authentic(self, checkpoint: SignedCheckpoint, chain: ChainKey) -> bool:
        """Signed by this key, and its signed payload says what its fields say, for `chain`."""
        try:
            self.public_key.verify(checkpoint.signature, checkpoint.payload)
        except InvalidSignature:
            return False
        expected = checkpoint_payload(
            chain, checkpoint.length, checkpoint.head_hash, checkpoint.created_at_us
        )
        return checkpoint.payload == expected
