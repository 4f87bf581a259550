"""`tutor-memory backup` and `restore`: a data directory as one file, taken while the server
serves, and brought back only once every chain in it verifies.

A backup is an uncompressed tar file holding:
- `tutor_memory.sqlite3`: the database as of one moment (SQLite's online backup API,
  `store.sqlite.snapshot`), self-contained (no WAL);
- `server_ed25519.pem`: the server's signing key, without which earlier checkpoints cannot be
  checked against this server and block ids change (so the file is written with mode 0600:
  keep it like the key itself);
- `MANIFEST.json`: the format, when and from where it was taken, each file's SHA-256 and size,
  and every chain's length and head hash as of the copy.

Nothing else in the data directory is server state (`-wal` and `-shm` are SQLite's own working
files, folded into the copy); other files found there are named in the backup's report and left
out. The tokens file and the model live outside the data directory and are not part of it.

A backup is written to `OUT.partial` and renamed when complete; the partial file is opened
first, so an unwritable destination fails before anything is copied. A restore extracts into a
fresh folder beside the target, checks every file's hash, verifies every chain and compares it
with the manifest, and only then renames the folder into place; it never writes into a
non-empty directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from tutor_memory.app.config import DATABASE_FILE_NAME
from tutor_memory.domain.chain import verify_chain
from tutor_memory.store.keyfile import KEY_FILE_NAME
from tutor_memory.store.sqlite.snapshot import ChainHead, chain_heads, copy_database
from tutor_memory.store.sqlite.store import SqliteStore

BACKUP_FORMAT = "tutor-memory-backup"
BACKUP_VERSION = 1
MANIFEST_NAME = "MANIFEST.json"
# SQLite's own working files beside the database: folded into the copy, never copied as such.
SQLITE_WORKING_SUFFIXES = ("-wal", "-shm", "-journal")
# Bytes read at a time when hashing and extracting.
CHUNK = 1 << 20


class BackupError(RuntimeError):
    """The backup or restore did not happen; the message says why and what was left."""


@dataclass(frozen=True, slots=True)
class BackupReport:
    path: Path
    chains: int
    episodes: int
    bytes: int
    # Files in the data directory that are not server state, left out.
    skipped: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RestoreReport:
    data_dir: Path
    chains: int
    episodes: int


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _open_partial(out: Path) -> tuple[Path, IO[bytes]]:
    """Opens OUT.partial for writing, before anything is copied: a destination that cannot be
    written fails here."""
    if out.exists():
        raise BackupError(f"{out} exists; a backup never overwrites a file")
    partial = out.with_name(out.name + ".partial")
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise BackupError(f"cannot write the backup to {out}: {exc}; nothing was copied") from exc
    return partial, os.fdopen(fd, "wb")


def backup(data_dir: Path, out: Path) -> BackupReport:
    database, key = data_dir / DATABASE_FILE_NAME, data_dir / KEY_FILE_NAME
    if not database.is_file():
        raise BackupError(f"no database at {database}; nothing to back up")
    if not key.is_file():
        raise BackupError(
            f"no server key at {key}: a data directory a server has opened holds both; "
            "without the key, restored checkpoints cannot be verified"
        )
    partial, sink = _open_partial(out)
    done = False
    try:
        with sink, tempfile.TemporaryDirectory(prefix=".tutor-memory-backup-", dir=out.parent) as t:
            copy = Path(t) / DATABASE_FILE_NAME
            copy_database(database, copy)
            heads = chain_heads(copy)
            manifest = _manifest(data_dir, copy, key, heads)
            with tarfile.open(fileobj=sink, mode="w", format=tarfile.PAX_FORMAT) as tar:
                _add_bytes(tar, MANIFEST_NAME, json.dumps(manifest, indent=2).encode(), 0o600)
                tar.add(copy, DATABASE_FILE_NAME, filter=_private)
                tar.add(key, KEY_FILE_NAME, filter=_private)
            sink.flush()
            os.fsync(sink.fileno())
        partial.rename(out)
        _fsync_dir(out.parent)
        done = True
    finally:
        if not done:
            partial.unlink(missing_ok=True)
    return BackupReport(
        out,
        len(heads),
        sum(h.length for h in heads),
        out.stat().st_size,
        _left_out(data_dir),
    )


def _manifest(data_dir: Path, copy: Path, key: Path, heads: list[ChainHead]) -> dict[str, Any]:
    return {
        "format": BACKUP_FORMAT,
        "version": BACKUP_VERSION,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": str(data_dir.resolve()),
        "files": {
            DATABASE_FILE_NAME: {"sha256": _sha256(copy), "bytes": copy.stat().st_size},
            KEY_FILE_NAME: {"sha256": _sha256(key), "bytes": key.stat().st_size},
        },
        "chains": [
            {
                "tenant": h.tenant,
                "student": h.student,
                "subject": h.subject,
                "length": h.length,
                "head": h.head_hash,
            }
            for h in heads
        ],
    }


def _private(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mode, info.uid, info.gid, info.uname, info.gname = 0o600, 0, 0, "", ""
    return info


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    info.mtime = int(datetime.now(UTC).timestamp())
    tar.addfile(info, io.BytesIO(data))


def _left_out(data_dir: Path) -> tuple[str, ...]:
    state = {DATABASE_FILE_NAME, KEY_FILE_NAME}
    state |= {DATABASE_FILE_NAME + suffix for suffix in SQLITE_WORKING_SUFFIXES}
    return tuple(sorted(p.name for p in data_dir.iterdir() if p.name not in state))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- restore -------------------------------------------------------------------------------------


def restore(archive: Path, data_dir: Path) -> RestoreReport:
    if data_dir.exists() and (not data_dir.is_dir() or any(data_dir.iterdir())):
        raise BackupError(f"{data_dir} is not an empty directory; a restore never overwrites data")
    if not archive.is_file():
        raise BackupError(f"no backup file at {archive}")
    parent = data_dir.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{data_dir.name}.restoring-", dir=parent))
    try:
        staging.chmod(0o700)
        manifest = _extract(archive, staging)
        report = _verify(staging, manifest, data_dir)
        if data_dir.exists():
            data_dir.rmdir()
        staging.rename(data_dir)
        _fsync_dir(parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return report


def _extract(archive: Path, into: Path) -> dict[str, Any]:
    """Reads the manifest, then each file it lists (and nothing else), checking its hash as it is
    written: member names never become paths."""
    with contextlib.ExitStack() as stack:
        try:
            tar = stack.enter_context(tarfile.open(archive, mode="r:"))
        except (tarfile.TarError, OSError) as exc:
            raise BackupError(f"{archive} is not a tutor-memory backup: {exc}") from exc
        manifest = _read_manifest(tar, archive)
        files: dict[str, dict[str, Any]] = manifest["files"]
        for name, expected in files.items():
            with _member(tar, name, archive) as source:
                digest = hashlib.sha256()
                target = into / name
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as sink:
                    while chunk := source.read(CHUNK):
                        digest.update(chunk)
                        sink.write(chunk)
                    sink.flush()
                    os.fsync(sink.fileno())
            if digest.hexdigest() != expected.get("sha256"):
                raise BackupError(f"{archive}: {name} does not match its SHA-256 in the manifest")
    return manifest


def _read_manifest(tar: tarfile.TarFile, archive: Path) -> dict[str, Any]:
    with _member(tar, MANIFEST_NAME, archive) as f:
        try:
            manifest = json.loads(f.read())
        except ValueError as exc:
            raise BackupError(f"{archive}: the manifest is not JSON: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != BACKUP_FORMAT:
        raise BackupError(f"{archive} is not a tutor-memory backup (no {BACKUP_FORMAT} manifest)")
    if manifest.get("version") != BACKUP_VERSION:
        raise BackupError(
            f"{archive} is backup format {manifest.get('version')}; this server reads "
            f"{BACKUP_VERSION}"
        )
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != {DATABASE_FILE_NAME, KEY_FILE_NAME}:
        raise BackupError(f"{archive}: the manifest must list {DATABASE_FILE_NAME} and the key")
    return manifest


@contextlib.contextmanager
def _member(tar: tarfile.TarFile, name: str, archive: Path) -> Iterator[IO[bytes]]:
    try:
        info = tar.getmember(name)
    except KeyError:
        raise BackupError(f"{archive} has no {name}") from None
    f = tar.extractfile(info) if info.isfile() else None
    if f is None:
        raise BackupError(f"{archive}: {name} is not a regular file")
    with f:
        yield f


def _verify(staging: Path, manifest: dict[str, Any], data_dir: Path) -> RestoreReport:
    """Every chain of the restored database verifies and matches the manifest."""
    expected = {
        (c["tenant"], c["student"], c["subject"]): (int(c["length"]), str(c["head"]))
        for c in manifest.get("chains", [])
    }
    store = SqliteStore(staging / DATABASE_FILE_NAME)
    episodes = 0
    try:
        chains = store.chains()
        for chain in chains:
            result = verify_chain(store.iter_chain(chain))
            name = f"{chain.tenant}/{chain.student}/{chain.subject}"
            if result.first_break is not None:
                b = result.first_break
                raise BackupError(f"restored chain {name} breaks at seq {b.seq}: {b.reason}")
            want = expected.pop((chain.tenant, chain.student, chain.subject), None)
            if want != (result.length, result.head_hash.hex()):
                raise BackupError(
                    f"restored chain {name} ({result.length} episodes) differs from the "
                    f"manifest ({want})"
                )
            episodes += result.length
    finally:
        store.close()
    if expected:
        raise BackupError(f"the manifest lists chains the database lacks: {sorted(expected)[:3]}")
    return RestoreReport(data_dir, len(chains), episodes)
