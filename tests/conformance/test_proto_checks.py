"""The proto lint and breaking-change check (scripts/check_proto.sh) on copies of proto/."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conformance.toolchains import ROOT

BUF = ROOT / ".tools" / "bin" / "buf"
PROTO = Path("proto/tutor_memory/v1/memory.proto")
# Seconds buf may take on the proto.
BUF_TIMEOUT = 120.0


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """buf.yaml and proto/ as they are now, in a folder of their own."""
    if not BUF.exists():
        pytest.fail(f"{BUF} is missing: run 'make client-tools'")
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    shutil.copytree(ROOT / "proto", tmp_path / "proto")
    return tmp_path


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "check_proto.sh")],
        env={**os.environ, "PROTO_ROOT": str(root)},
        capture_output=True,
        text=True,
        timeout=BUF_TIMEOUT,
        check=False,
    )


def release(root: Path) -> None:
    subprocess.run(
        [str(BUF), "build", "--exclude-source-info", "-o", "buf.released.json"],
        cwd=root,
        check=True,
        timeout=BUF_TIMEOUT,
    )


def edit(root: Path, old: str, new: str) -> None:
    path = root / PROTO
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_before_any_release_the_proto_is_linted_and_the_breaking_check_says_it_is_skipped(
    copy: Path,
) -> None:
    done = check(copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "breaking-change check skipped" in done.stdout


def test_an_unchanged_proto_passes_against_its_release(copy: Path) -> None:
    release(copy)
    done = check(copy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no breaking change" in done.stdout


def test_a_deleted_field_fails_against_the_release(copy: Path) -> None:
    release(copy)
    edit(copy, "  string summary = 4;\n", "  reserved 4;\n")
    done = check(copy)
    assert done.returncode != 0
    assert 'name "summary"' in done.stdout + done.stderr


def test_an_added_rpc_is_not_breaking(copy: Path) -> None:
    release(copy)
    edit(
        copy,
        "service Memory {\n",
        "service Memory {\n  rpc Ping(PingRequest) returns (PingReply);\n",
    )
    with (copy / PROTO).open("a", encoding="utf-8") as proto:
        proto.write("\nmessage PingRequest {}\n\nmessage PingReply {}\n")
    done = check(copy)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_lint_violation_fails(copy: Path) -> None:
    edit(copy, "  CHECK_OUTCOME_UNSPECIFIED = 0;", "  CHECK_OUTCOME_NONE = 0;")
    done = check(copy)
    assert done.returncode != 0
    assert "CHECK_OUTCOME_NONE" in done.stdout + done.stderr
