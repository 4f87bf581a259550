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


def _load(path: Path) -> ServerKey:
    loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(loaded, Ed25519PrivateKey):
        raise RuntimeError(f"{path} does not hold an Ed25519 private key")
    return ServerKey(loaded)


def load_or_create_server_key(data_dir: Path) -> ServerKey:
    path = data_dir / KEY_FILE_NAME
    if path.exists():
        return _load(path)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    data_dir.mkdir(parents=True, exist_ok=True)
    # Written whole under a name of its own, then linked into place: several servers started at
    # once on one directory (nodes sharing it) never see a half-written key, and only the first
    # link wins; the others load the key that won.
    draft = data_dir / f".{KEY_FILE_NAME}.{os.getpid()}"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:
            return _load(path)
    finally:
        draft.unlink(missing_ok=True)
    return ServerKey(key)
