"""ghz, the standard gRPC load generator, as the load benchmark drives it.

ghz is a Go tool pinned by scripts/tools/ghz/go.mod and installed into .tools/bin by
`make load-tools`, like the project's other Go tools. Its own proto parser rejects proto3
`optional`, so it reads the service from a protoset (a FileDescriptorSet) that grpc_tools'
protoc compiles from proto/ at run time.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf import json_format
from google.protobuf.message import Message

from bench._meta import REPO_ROOT
from tutor_memory_client._proto import memory_pb2 as pb

GHZ = REPO_ROOT / ".tools" / "bin" / "ghz"
GHZ_PIN = REPO_ROOT / "scripts" / "tools" / "ghz" / "go.mod"
PROTO_ROOT = REPO_ROOT / "proto"
PROTO_FILE = "tutor_memory/v1/memory.proto"
SERVICE = pb.DESCRIPTOR.services_by_name["Memory"]
# ghz's name for a call's status when it succeeded.
OK = "OK"
# How a run ends at its duration: "wait" lets the calls in flight finish and counts them, so
# that neither cancelled calls (ghz's default, "close", reports them as errors) nor uncounted
# work the server did ("ignore") skews the error counts or the CPU per call.
DURATION_STOP = "wait"
# Seconds one ghz run may overrun its duration (start-up, the calls in flight at the end).
OVERRUN_S = 60.0
PERCENTILES = (50, 95, 99)
NS_PER_MS = 1_000_000


def install() -> Path:
    """Installs ghz through the Makefile (a no-op when it is up to date) and returns its path."""
    subprocess.run(["make", "-s", "load-tools"], cwd=REPO_ROOT, check=True)
    return GHZ


def pinned_version() -> str:
    """The ghz version go.mod pins (the binary itself reports "dev" when built by go install)."""
    found = re.search(r"github\.com/bojand/ghz (v\S+)", GHZ_PIN.read_text(encoding="utf-8"))
    return found.group(1) if found else "unknown"


def build_protoset(out: Path) -> Path:
    """Compiles the service and every file it imports into one descriptor set at `out`."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            str(PROTO_ROOT / PROTO_FILE),
        ],
        check=True,
    )
    return out


def write_data(path: Path, requests: list[Message]) -> Path:
    """Writes requests as the JSON array ghz takes with --data-file: for a unary call it sends
    element (call number mod length), so consecutive calls differ."""
    rows = [json_format.MessageToDict(r, preserving_proto_field_name=True) for r in requests]
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return path


@dataclass(frozen=True, slots=True)
class Load:
    """One ghz process: `callers` closed-loop workers calling `method` for `seconds`."""

    method: str
    callers: int
    connections: int
    seconds: float
    data_file: Path
    call_timeout_s: float

    def command(self, protoset: Path, target: str, report: Path) -> list[str]:
        return [
            str(GHZ),
            "--insecure",
            f"--protoset={protoset}",
            f"--call={SERVICE.methods_by_name[self.method].full_name}",
            f"--data-file={self.data_file}",
            f"--concurrency={self.callers}",
            f"--connections={self.connections}",
            f"--duration={self.seconds}s",
            f"--duration-stop={DURATION_STOP}",
            f"--timeout={self.call_timeout_s}s",
            "--format=json",
            f"--output={report}",
            target,
        ]


class Running:
    """A started ghz process; `finish` waits for it and returns its statistics."""

    def __init__(self, load: Load, protoset: Path, target: str, report: Path) -> None:
        self.load = load
        self.report = report
        self.proc = subprocess.Popen(
            load.command(protoset, target, report),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def finish(self) -> dict[str, Any]:
        out, err = self.proc.communicate(timeout=self.load.seconds + OVERRUN_S)
        if self.proc.returncode != 0:
            raise RuntimeError(f"ghz exited {self.proc.returncode}:\n{out}\n{err}")
        return summarise(self.load, json.loads(self.report.read_text(encoding="utf-8")))


def summarise(load: Load, report: dict[str, Any]) -> dict[str, Any]:
    """Calls, rate, latency percentiles of the successful calls and errors by status, from ghz's
    per-call details (ghz's own percentiles leave errors out silently; here they are counted)."""
    details: list[dict[str, Any]] = report.get("details") or []
    statuses = Counter(d["status"] for d in details)
    ok_ms = [d["latency"] / NS_PER_MS for d in details if d["status"] == OK]
    seconds = report["total"] / 1e9
    errors = {s: n for s, n in sorted(statuses.items()) if s != OK}
    first_errors = Counter(d["error"] for d in details if d["status"] != OK).most_common(3)
    row: dict[str, Any] = {
        "rpc": load.method,
        "callers": load.callers,
        "connections": load.connections,
        "seconds": round(seconds, 3),
        "calls": len(details),
        "ok": len(ok_ms),
        "errors_by_status": errors,
        "error_examples": [f"{n}x {e}" for e, n in first_errors],
        "calls_per_s": round(len(details) / seconds, 1) if seconds else 0.0,
        "ok_per_s": round(len(ok_ms) / seconds, 1) if seconds else 0.0,
    }
    for q in PERCENTILES:
        row[f"p{q}_ms"] = round(float(np.percentile(ok_ms, q)), 2) if ok_ms else None
    row["mean_ms"] = round(float(np.mean(ok_ms)), 2) if ok_ms else None
    row["max_ms"] = round(max(ok_ms), 2) if ok_ms else None
    return row
