"""The server's Ed25519 key and signed checkpoints of chain heads (SPEC R1.4).

A checkpoint is the server's signed statement "at this time, this chain had this many episodes,
they verified, and the last one hashed to this". An operator keeps checkpoints outside the
database; VerifyChain with one later shows whether history up to it was rewritten, even by someone
who re-hashed every row. The key file is created on first start inside the data directory with
mode 0600; whoever can read it can forge checkpoints, so back it up like any secret.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from tutor_memory.domain.episodes import ChainKey

KEY_FILE_NAME = "server_ed25519.pem"
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

    @classmethod
    def load_or_create(cls, data_dir: Path) -> ServerKey:
        path = data_dir / KEY_FILE_NAME
        if path.exists():
            loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
            if not isinstance(loaded, Ed25519PrivateKey):
                raise RuntimeError(f"{path} does not hold an Ed25519 private key")
            return cls(loaded)
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        data_dir.mkdir(parents=True, exist_ok=True)
        # O_EXCL: two servers started at once on one directory must not each write a key.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
        return cls(key)

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
