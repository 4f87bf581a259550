"""IngestFile cost per page and per concept (issue 4), through the real gRPC API.

Starts `tutor-memory serve` as a child process on a fresh data directory and sends, with the
built-in offline extractor: the three-chapter biology course of tests/fixtures/biology (Markdown,
plain text, PDF) into one chain, each file timed from request to reply (read, extract, validate,
embed every passage and concept name, commit, rebuild the map); then a long PDF made of the third
chapter's pages repeated to LONG_PDF_PAGES pages, into its own chain. Reports milliseconds per
page and per accepted concept, and the GetMap latency on the course chain.

Then what a large file costs everyone else. A course of BESIDE_PDF_PAGES pages is legitimate (the
limit is 2,000), and reading it is seconds of Python. BuildBlock on the course chain is called one
call after another, first with nothing else running (BLOCK_CALLS calls), then while such a file is
ingested into another chain, until its reply (BESIDE_ROUNDS rounds, each file new bytes). A health
prober in its own process (bench/_health_probe.py) checks every PROBE_INTERVAL_S throughout. Per
phase: BuildBlock's p50 / p95 / p99 / max and the worst health check.

Run from the repository root: `.venv/bin/python -m bench.bench_file_ingest` (or `make bench`).
Prints a table and writes bench/results/file_ingest.json.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tests.fixtures.biology.make_pdf import FIXTURE_DIR, build_pdf, transport_chapter

from bench._health_probe import HealthProber
from bench._meta import print_table, run_metadata, write_results
from bench._server import fresh_server_process
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

LONG_PDF_PAGES = 200
GET_MAP_CALLS = 50
# The large course file read beside the blocks, and how many times (new bytes each round).
BESIDE_PDF_PAGES = 1_500
BESIDE_ROUNDS = 3
# BuildBlock calls with nothing beside them.
BLOCK_CALLS = 300
# The health prober's interval and its checks' own deadline.
PROBE_INTERVAL_S = 0.05
PROBE_TIMEOUT_S = 10.0


def main() -> None:
    title, pages = transport_chapter()
    course = [
        ("cells.md", "text/markdown", (FIXTURE_DIR / "cells.md").read_bytes()),
        ("organelles.txt", "text/plain", (FIXTURE_DIR / "organelles.txt").read_bytes()),
        ("transport.pdf", "application/pdf", build_pdf(pages, title)),
    ]
    long_pdf = build_pdf([pages[i % len(pages)] for i in range(LONG_PDF_PAGES)], "Long reader")
    rows: list[dict[str, Any]] = []
    with fresh_server_process() as (server, channel):
        stub = pb_grpc.MemoryStub(channel)
        for student, (name, media, content) in [("s1", f) for f in course] + [
            ("s2", ("reader.pdf", "application/pdf", long_pdf))
        ]:
            started = time.perf_counter()
            reply = stub.IngestFile(
                pb.IngestFileRequest(
                    student_id=student,
                    subject_id="biology",
                    file_id=name,
                    filename=name,
                    media_type=media,
                    content=content,
                ),
                timeout=600,
            )
            ms = (time.perf_counter() - started) * 1000
            rows.append(
                {
                    "file": name,
                    "bytes": len(content),
                    "pages": reply.pages,
                    "passages": reply.passages,
                    "concepts": len(reply.concepts),
                    "rejected": len(reply.rejected),
                    "ms": round(ms, 1),
                    "ms_per_page": round(ms / max(reply.pages, 1), 2),
                    "ms_per_concept": round(ms / len(reply.concepts), 2)
                    if reply.concepts
                    else None,
                    "map_concepts": reply.map_concepts,
                }
            )
        latencies = []
        for _ in range(GET_MAP_CALLS):
            started = time.perf_counter()
            stub.GetMap(pb.GetMapRequest(student_id="s1", subject_id="biology"))
            latencies.append((time.perf_counter() - started) * 1000)
        beside = _blocks_beside_a_large_file(server.target, stub, pages)

    result = {
        "benchmark": "file_ingest",
        **run_metadata(),
        "extractor": "builtin",
        "files": rows,
        "get_map_ms_median": round(statistics.median(latencies), 2),
        "beside": beside,
    }
    write_results("file_ingest", result)
    print_table(
        [
            (
                r["file"],
                f"{r['pages']} pages, {r['concepts']} concepts ({r['rejected']} rejected): "
                f"{r['ms']:.0f} ms, {r['ms_per_page']} ms/page, {r['ms_per_concept']} ms/concept",
            )
            for r in rows
        ]
        + [("GetMap (course chain), median", f"{result['get_map_ms_median']} ms")]
        + [
            (
                f"BuildBlock {phase}",
                f"p50 {b['p50']} / p95 {b['p95']} / p99 {b['p99']} / max {b['max']} ms "
                f"({b['calls']} calls); worst health check {b['health_worst_ms']} ms"
                + (f"; file {b['file_s']} s" if "file_s" in b else ""),
            )
            for phase, b in beside.items()
        ]
    )


def _block_request() -> pb.BuildBlockRequest:
    return pb.BuildBlockRequest(
        student_id="s1",
        subject_id="biology",
        query="How does the cell membrane control what enters the cell?",
        budget_tokens=1_500,
        mode=pb.BLOCK_MODE_FULL,
    )


def _timed_blocks(stub: pb_grpc.MemoryStub, until: threading.Event, calls: int) -> list[float]:
    """BuildBlock one call after another: `calls` of them, or until `until` is set."""
    request = _block_request()
    latencies: list[float] = []
    while (len(latencies) < calls) if calls else not until.is_set():
        started = time.perf_counter()
        stub.BuildBlock(request, timeout=60)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def _summary(latencies: list[float], health: list[float]) -> dict[str, Any]:
    ordered = sorted(latencies)

    def pct(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {
        "calls": len(ordered),
        "p50": pct(0.50),
        "p95": pct(0.95),
        "p99": pct(0.99),
        "max": round(ordered[-1], 2),
        "health_worst_ms": round(max(health, default=0.0) * 1000, 1),
    }


def _blocks_beside_a_large_file(
    target: str, stub: pb_grpc.MemoryStub, pages: list[str]
) -> dict[str, dict[str, Any]]:
    """BuildBlock's latency and the worst health check alone and while a large file is read."""
    with tempfile.TemporaryDirectory() as tmp:
        prober = HealthProber(
            target,
            Path(tmp) / "health",
            interval_s=PROBE_INTERVAL_S,
            timeout_s=PROBE_TIMEOUT_S,
            drain_s=PROBE_TIMEOUT_S,
        )
        try:
            prober.wait_first_answer()
            _timed_blocks(stub, threading.Event(), 30)  # warm: the chain's caches loaded
            windows: list[tuple[str, float, float]] = []
            started = time.monotonic()
            alone = _timed_blocks(stub, threading.Event(), BLOCK_CALLS)
            windows.append(("alone", started, time.monotonic()))
            beside: list[float] = []
            file_seconds = []
            for round_ in range(BESIDE_ROUNDS):
                # New bytes each round, so that no round is the no-op of the same bytes again.
                content = build_pdf(
                    [
                        f"{pages[i % len(pages)]}\n\nRound {round_}, page {i}."
                        for i in range(BESIDE_PDF_PAGES)
                    ],
                    "Large reader",
                )
                done = threading.Event()
                failed: list[BaseException] = []

                def ingest(
                    content: bytes = content,
                    done: threading.Event = done,
                    failed: list[BaseException] = failed,
                ) -> None:
                    try:
                        stub.IngestFile(
                            pb.IngestFileRequest(
                                student_id="s3",
                                subject_id="biology",
                                file_id="large.pdf",
                                filename="large.pdf",
                                media_type="application/pdf",
                                content=content,
                            ),
                            timeout=600,
                        )
                    except BaseException as exc:
                        failed.append(exc)
                    finally:
                        done.set()

                thread = threading.Thread(target=ingest)
                started = time.monotonic()
                thread.start()
                beside += _timed_blocks(stub, done, 0)
                thread.join()
                if failed:
                    raise RuntimeError("the large file's IngestFile failed") from failed[0]
                file_seconds.append(time.monotonic() - started)
                windows.append(("beside a large file", started, time.monotonic()))
        finally:
            probes = prober.stop()
    health: dict[str, list[float]] = {"alone": [], "beside a large file": []}
    for phase, start, end in windows:
        health[phase] += [p.seconds for p in probes if start <= p.sent <= end]
    result = {
        "alone": _summary(alone, health["alone"]),
        "beside a large file": _summary(beside, health["beside a large file"]),
    }
    result["beside a large file"]["file_s"] = round(statistics.median(file_seconds), 2)
    result["beside a large file"]["pages"] = BESIDE_PDF_PAGES
    return result


if __name__ == "__main__":
    main()
