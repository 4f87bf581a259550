"""The server's Ed25519 signing key on disk (SPEC R1.4): created on first start inside the data
directory with mode 0600. Whoever can read it can forge checkpoints, so back it up like any
secret."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tutor_memory.domain.signing import ServerKey

KEY_FILE_NAME = "server_ed25519.pem"


def load_or_create_server_key(data_dir: Path) -> ServerKey:
    path = data_dir / KEY_FILE_NAME
    if path.exists():
        loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(loaded, Ed25519PrivateKey):
            raise RuntimeError(f"{path} does not hold an Ed25519 private key")
        return ServerKey(loaded)
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
    return ServerKey(key)
