"""Finding and building the Go and TypeScript clients for the conformance tests.

A missing toolchain or an uninstalled client is a failure that says how to fix it, never a skip:
the polyglot clients are part of what `make test` proves.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GO_CLIENT = ROOT / "clients" / "go"
TS_CLIENT = ROOT / "clients" / "typescript"
# Where Go is installed when it is not on PATH (the official tarball's place).
GO_FALLBACK = Path("/usr/local/go/bin/go")
# Seconds a build may take: a cold Go build of grpc takes about a minute on two cores.
BUILD_TIMEOUT = 600.0
# Every module must already be downloaded (make client-tools): tests never reach the network.
GO_ENV = {"GOFLAGS": "-mod=readonly -buildvcs=false", "GOPROXY": "off"}


def run_tool(args: list[str], cwd: Path, *, timeout: float = BUILD_TIMEOUT) -> str:
    """Runs a build or test command; fails the test with its output when it fails."""
    env = {**os.environ, **GO_ENV}
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def go_binary() -> str:
    found = shutil.which("go") or (str(GO_FALLBACK) if GO_FALLBACK.exists() else None)
    if found is None:
        pytest.fail(
            "Go is missing: install Go 1.26 or newer, put 'go' on PATH, run 'make client-tools'"
        )
    return found


def node_binary() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail(
            "Node.js is missing: install Node 20 or newer with npm, run 'make client-tools'"
        )
    if not (TS_CLIENT / "node_modules" / ".bin" / "tsc").exists():
        pytest.fail("clients/typescript/node_modules is missing: run 'make client-tools'")
    return found


def build_go(out_dir: Path) -> dict[str, Path]:
    """Builds the Go conformance runner and example into out_dir."""
    go = go_binary()
    binaries = {"conformance": "./conformance", "chatturn": "./examples/chatturn"}
    built = {}
    for name, package in binaries.items():
        run_tool([go, "build", "-o", str(out_dir / name), package], GO_CLIENT)
        built[name] = out_dir / name
    return built


def build_typescript() -> Path:
    """Compiles the TypeScript client, runner, example and tests into clients/typescript/dist."""
    node = node_binary()
    run_tool(
        [node, str(TS_CLIENT / "node_modules" / "typescript" / "bin" / "tsc"), "-p", "."], TS_CLIENT
    )
    return TS_CLIENT / "dist"
