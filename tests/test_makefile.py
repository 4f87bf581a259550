"""The front door: `make serve` needs Python and Rust only; the Go and Node tooling belongs to the
clients (`make clients`) and to `make test`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# What only the clients' and the load benchmark's set-up runs: the script that installs Go and
# Node tooling, the folder it installs into, and the toolchains themselves.
CLIENT_TOOLING = ("install_client_tools.sh", ".tools/", "npm ", "go install", "ghz")


def _dry_run(target: str) -> str:
    """Every command `make` would run for the target from scratch (-B: as if nothing was built;
    -n: print, run nothing)."""
    make = shutil.which("make")
    if make is None:
        pytest.fail("make is missing")
    done = subprocess.run(
        [make, "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.mark.parametrize("target", ["serve", "test-server"])
def test_serving_and_the_server_tests_never_touch_go_or_node(target: str) -> None:
    commands = _dry_run(target)
    assert "tutor-memory" in commands or "pytest" in commands
    touched = [tool for tool in CLIENT_TOOLING if tool in commands]
    assert touched == [], f"`make {target}` would run client tooling: {touched}\n{commands}"


@pytest.mark.parametrize("target", ["clients", "test"])
def test_clients_and_the_full_test_install_the_client_tooling(target: str) -> None:
    commands = _dry_run(target)
    assert "install_client_tools.sh go" in commands
    assert "install_client_tools.sh node" in commands
    assert "tests/conformance" in commands or target == "test"
