"""IngestFile cost per page and per concept (issue 4), through the real gRPC API.

Starts `tutor-memory serve` as a child process on a fresh data directory and sends, with the
built-in offline extractor: the three-chapter biology course of tests/fixtures/biology (Markdown,
plain text, PDF) into one chain, each file timed from request to reply (read, extract, validate,
embed every passage and concept name, commit, rebuild the map); then a long PDF made of the third
chapter's pages repeated to LONG_PDF_PAGES pages, into its own chain. Reports milliseconds per
page and per accepted concept, and the GetMap latency on the course chain.

Run from the repository root: `.venv/bin/python -m bench.bench_file_ingest` (or `make bench`).
Prints a table and writes bench/results/file_ingest.json.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from tests.fixtures.biology.make_pdf import FIXTURE_DIR, build_pdf, transport_chapter

from bench._meta import print_table, run_metadata, write_results
from bench._server import fresh_server
from tutor_memory_client._proto import memory_pb2 as pb

LONG_PDF_PAGES = 200
GET_MAP_CALLS = 50


def main() -> None:
    title, pages = transport_chapter()
    course = [
        ("cells.md", "text/markdown", (FIXTURE_DIR / "cells.md").read_bytes()),
        ("organelles.txt", "text/plain", (FIXTURE_DIR / "organelles.txt").read_bytes()),
        ("transport.pdf", "application/pdf", build_pdf(pages, title)),
    ]
    long_pdf = build_pdf([pages[i % len(pages)] for i in range(LONG_PDF_PAGES)], "Long reader")
    rows: list[dict[str, Any]] = []
    with fresh_server() as stub:
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

    result = {
        "benchmark": "file_ingest",
        **run_metadata(),
        "extractor": "builtin",
        "files": rows,
        "get_map_ms_median": round(statistics.median(latencies), 2),
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
    )


if __name__ == "__main__":
    main()
