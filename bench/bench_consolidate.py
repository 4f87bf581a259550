"""The nightly cycle at scale (issue 5): 1,000 active (student, subject) pairs x 50 episodes.

Starts `tutor-memory serve` as a child process on a fresh data directory. Each pair gets a small
course file (five concepts, sent as caller-supplied concepts, so checks route to a map) 30 days
earlier, then 50 episodes of one day through IngestEpisodes: questions, answers, and ten checks
(half of them with a predicted mastery). Then one Consolidate call digests every ended day for
every pair: the file's day (its FILE episode) and the day of the 50 episodes, two digests per
pair; a second call with the same `now` must write nothing (idempotence) and is timed too. The
server's peak resident memory (VmHWM) is read before and after the cycle: the cycle processes one
chain at a time, so it should not grow with the number of pairs.

Run from the repository root: `.venv/bin/python -m bench.bench_consolidate` (or `make bench`).
Prints a table and writes bench/results/consolidate.json.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from bench._meta import print_table, run_metadata, write_results
from bench._server import fresh_server_process
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

PAIRS = 1_000
EPISODES_PER_PAIR = 50
CHECKS_PER_PAIR = 10
# Each pair's ended days with episodes: the course file's and the conversation's. The nightly
# cycle digests every ended day that has episodes (app/nightly.py), so each gets one digest.
DAYS_PER_PAIR = 2
DAY = datetime(2026, 6, 10, tzinfo=UTC)
CONCEPTS = ("Osmosis", "Diffusion", "Cell Membrane", "Mitochondria", "Cytoplasm")
COURSE = "# Cells\n\n" + "\n\n".join(
    f"## {c}\n\n{c} is a part of the cell story." for c in CONCEPTS
)


def at(when: datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(when)
    return ts


def day_of(pair: int) -> list[pb.NewEpisode]:
    student = f"student-{pair:04d}"
    out = []
    for i in range(EPISODES_PER_PAIR):
        when = DAY + timedelta(minutes=10 * i + pair % 7)
        concept = CONCEPTS[(pair + i) % len(CONCEPTS)]
        ep = pb.NewEpisode(
            student_id=student,
            subject_id="biology",
            client_key=f"{student}/{i}",
            occurred_at=at(when),
        )
        if i % (EPISODES_PER_PAIR // CHECKS_PER_PAIR) == 0:
            ep.kind = pb.EPISODE_KIND_CHECK
            ep.summary = f"Check on {concept}"
            ep.check.topic = concept
            right = (pair + i) % 3 != 0
            ep.check.outcome = pb.CHECK_OUTCOME_RIGHT if right else pb.CHECK_OUTCOME_WRONG
            if i % 2 == 0:
                ep.check.predicted_mastery = 0.5 + ((pair + i) % 5) / 10
        elif i % 2:
            ep.kind = pb.EPISODE_KIND_ANSWER
            ep.summary = f"{concept} explained again with an example about plant cells."
        else:
            ep.kind = pb.EPISODE_KIND_QUESTION
            ep.summary = f"Question {i} of the day: how does {concept.lower()} work?"
        ep.text = ep.summary
        out.append(ep)
    return out


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    with fresh_server_process() as (server, channel):
        stub = pb_grpc.MemoryStub(channel)
        started = time.perf_counter()
        for pair in range(PAIRS):
            stub.IngestFile(
                pb.IngestFileRequest(
                    student_id=f"student-{pair:04d}",
                    subject_id="biology",
                    file_id="cells.md",
                    filename="cells.md",
                    content=COURSE.encode(),
                    occurred_at=at(DAY - timedelta(days=30)),
                    concepts=[
                        pb.ConceptInput(name=c, summary=f"{c} is a part of the cell.", pages=[1])
                        for c in CONCEPTS
                    ],
                )
            )
        files_s = time.perf_counter() - started
        started = time.perf_counter()
        episodes = [ep for pair in range(PAIRS) for ep in day_of(pair)]
        reply = stub.IngestEpisodes(ingest_messages(episodes))
        ingest_s = time.perf_counter() - started
        assert reply.inserted == PAIRS * EPISODES_PER_PAIR, reply.rejected

        rss_before = peak_rss_kib(server.proc.pid)
        now = at(DAY + timedelta(days=1))
        started = time.perf_counter()
        first = stub.Consolidate(pb.ConsolidateRequest(now=now), timeout=3_600)
        first_s = time.perf_counter() - started
        rss_after = peak_rss_kib(server.proc.pid)
        started = time.perf_counter()
        second = stub.Consolidate(pb.ConsolidateRequest(now=now), timeout=3_600)
        second_s = time.perf_counter() - started
    assert first.consolidation_episodes == PAIRS * DAYS_PER_PAIR, first
    assert second.consolidation_episodes == 0, second
    assert second.chains_already_done == PAIRS, second

    result: dict[str, Any] = {
        "benchmark": "consolidate",
        **run_metadata(),
        "pairs": PAIRS,
        "episodes_per_pair": EPISODES_PER_PAIR,
        "checks_per_pair": CHECKS_PER_PAIR,
        "digests_per_pair": DAYS_PER_PAIR,
        "setup_files_s": round(files_s, 2),
        "setup_ingest_s": round(ingest_s, 2),
        "consolidate_s": round(first_s, 2),
        "consolidate_ms_per_pair": round(first_s * 1000 / PAIRS, 2),
        "second_run_s": round(second_s, 3),
        "consolidation_episodes": first.consolidation_episodes,
        "citations_verified": first.citations_verified,
        "server_peak_rss_mib_before": round(rss_before / 1024, 1),
        "server_peak_rss_mib_after": round(rss_after / 1024, 1),
    }
    write_results("consolidate", result)
    print_table(
        [
            ("pairs x episodes", f"{PAIRS} x {EPISODES_PER_PAIR}"),
            (
                "consolidate (first run)",
                f"{first_s:.1f} s ({result['consolidate_ms_per_pair']} ms/pair)",
            ),
            ("second run (idempotent)", f"{second_s:.2f} s, wrote nothing"),
            ("citations verified", str(first.citations_verified)),
            (
                "server peak RSS before/after",
                f"{rss_before / 1024:.0f} / {rss_after / 1024:.0f} MiB",
            ),
        ]
    )


if __name__ == "__main__":
    main()
