"""Hostile course files (issue 12): how long the reader takes to refuse each file of the corpus
`tests.helpers.hostile_files` makes, and the most memory Python allocated meanwhile.

Each file is read by `read_document` (what IngestFile runs on the file pool) in a forked child,
timed on the wall clock and on CPU, with tracemalloc's peak; a child still busy after `--cap`
seconds is reported as such. The target is a refusal naming the reason within a second or two.

Run from the repository root: `.venv/bin/python -m bench.bench_hostile_files`. Writes
bench/results/hostile_files.json and bench/results/hostile_files.md.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
import tracemalloc
from multiprocessing.connection import Connection
from typing import Any

from tests.helpers.hostile_files import HostileFile, hostile_corpus

from bench._meta import RESULTS_DIR, print_table, run_metadata, write_results
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.files.read import read_document

NAME = "hostile_files"
# The target of the issue: a hostile file is refused within this many seconds.
TARGET_SECONDS = 2.0


def _read(hostile: HostileFile, content: bytes, traced: bool, out: Connection) -> None:
    if traced:
        tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        document = read_document(content, hostile.filename, hostile.media_type)
        outcome = f"read: {len(document.pages)} pages"
        refused = False
    except FileRejected as exc:
        outcome, refused = exc.reason, True
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] if traced else 0
    out.send({"seconds": wall, "cpu_seconds": cpu, "peak_mib": peak / 2**20,
              "refused": refused, "outcome": outcome})  # fmt: skip


def _in_child(
    hostile: HostileFile, content: bytes, traced: bool, cap: float
) -> dict[str, Any] | None:
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_read, args=(hostile, content, traced, send))
    child.start()
    found: dict[str, Any] | None = receive.recv() if receive.poll(cap) else None
    child.kill()
    child.join()
    return found


def measure(hostile: HostileFile, cap: float) -> dict[str, Any]:
    """Timed in one child; the memory peak in another, since tracemalloc slows Python down."""
    content = hostile.make()
    timed = _in_child(hostile, content, False, cap)
    traced = _in_child(hostile, content, True, cap) if timed is not None else None
    row: dict[str, Any] = {"file": hostile.name, "bytes": len(content)}
    if timed is not None:
        row.update(timed)
        row["peak_mib"] = None if traced is None else traced["peak_mib"]
        row["names_reason"] = row["refused"] and hostile.reason in row["outcome"]
        row["meets_target"] = row["names_reason"] and row["seconds"] <= TARGET_SECONDS
    else:
        row.update(seconds=None, refused=False, outcome=f"still reading after {cap:g} s",
                   names_reason=False, meets_target=False)  # fmt: skip
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=60.0, help="seconds before a read is given up")
    args = parser.parse_args()
    meta = run_metadata()
    rows = [measure(hostile, args.cap) for hostile in hostile_corpus()]
    write_results(NAME, {"meta": meta, "target_seconds": TARGET_SECONDS, "files": rows})
    lines = [
        f"# Hostile course files (issue 12), commit {meta['git_rev'][:12]}, {meta['timestamp']}",
        "",
        f"Machine: {meta['cpu']} ({meta['cpu_count']} cores). Target: refused naming the reason "
        f"within {TARGET_SECONDS:g} s. `.venv/bin/python -m bench.bench_hostile_files`.",
        "",
        "| file | bytes | seconds | CPU s | peak MiB | refusal |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        seconds = "-" if row["seconds"] is None else f"{row['seconds']:.2f}"
        cpu = "-" if row["seconds"] is None else f"{row['cpu_seconds']:.2f}"
        peak = "-" if row.get("peak_mib") is None else f"{row['peak_mib']:.0f}"
        outcome = row["outcome"].replace("|", "\\|")
        lines.append(
            f"| {row['file']} | {row['bytes']:,} | {seconds} | {cpu} | {peak} | {outcome} |"
        )
    (RESULTS_DIR / f"{NAME}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print_table(
        [(row["file"], f"{row['seconds'] or 0:.2f} s  {row['outcome'][:80]}") for row in rows]
    )


if __name__ == "__main__":
    main()
