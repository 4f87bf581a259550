"""Where the master key comes from (it wraps every student's data key: `domain.sealing`).

In order: the file `--master-key-file` names, the file `$TUTOR_MEMORY_MASTER_KEY_FILE` names, the
key itself in `$TUTOR_MEMORY_MASTER_KEY`, else `master.key` in the data directory, created on
first start. A key file holds the 32 bytes in base64 on one line, and is written with mode 0600.

The default keeps the key beside the data it protects, which is enough for development and for
erasure (erasing destroys a data key, whatever wraps it) but protects nothing if the directory
is copied whole. In production keep it elsewhere (a secrets manager, a mounted secret) and give
the server its path: then a copy of the data directory or a backup (which never holds the master
key) is useless without it. Rotation re-wraps the data keys (`tutor-memory rotate-master-key`);
it never re-encrypts an episode.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from tutor_memory.domain.sealing import KEY_BYTES, MasterKey

log = logging.getLogger(__name__)

MASTER_KEY_FILE_NAME = "master.key"
MASTER_KEY_FILE_ENV = "TUTOR_MEMORY_MASTER_KEY_FILE"
MASTER_KEY_ENV = "TUTOR_MEMORY_MASTER_KEY"


class MasterKeyError(RuntimeError):
    """The master key cannot be read; the message names where it looked and why."""


def parse_master_key(text: str, where: str) -> MasterKey:
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise MasterKeyError(f"{where}: not base64 ({exc})") from exc
    if len(raw) != KEY_BYTES:
        raise MasterKeyError(f"{where}: a master key is {KEY_BYTES} bytes, got {len(raw)}")
    return MasterKey(raw)


def new_master_key_text() -> str:
    """A fresh random master key as a key file holds it."""
    return base64.b64encode(os.urandom(KEY_BYTES)).decode() + "\n"


def write_master_key_file(path: Path, text: str | None = None) -> None:
    """Writes a key file (mode 0600); never overwrites one (FileExistsError). The key is written
    whole under a name of its own and linked into place, so a process that finds the file never
    reads it half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text or new_master_key_text())
            f.flush()
            os.fsync(f.fileno())
        os.link(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def read_master_key_file(path: Path) -> MasterKey:
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise MasterKeyError(f"cannot read the master key file {path}: {exc}") from exc
    return parse_master_key(text, str(path))


def load_master_key(
    data_dir: Path, key_file: Path | None = None, env: Mapping[str, str] | None = None
) -> MasterKey:
    """The master key a server on `data_dir` uses (see the module's order)."""
    env = os.environ if env is None else env
    if key_file is not None:
        return read_master_key_file(key_file)
    if env.get(MASTER_KEY_FILE_ENV):
        return read_master_key_file(Path(env[MASTER_KEY_FILE_ENV]))
    if env.get(MASTER_KEY_ENV):
        return parse_master_key(env[MASTER_KEY_ENV], f"${MASTER_KEY_ENV}")
    default = data_dir / MASTER_KEY_FILE_NAME
    if not default.exists():
        log.warning(
            "no master key given: created %s beside the data it protects; in production keep "
            "the master key elsewhere and pass --master-key-file (README: Operating)",
            default,
        )
        # Another server started on the same directory at the same moment may write it first.
        with contextlib.suppress(FileExistsError):
            write_master_key_file(default)
    return read_master_key_file(default)
