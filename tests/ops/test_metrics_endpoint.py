"""`--metrics-listen`: a live server's Prometheus endpoint, scraped over HTTP, moves with the
calls it serves."""

from __future__ import annotations

import contextlib
import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
from bench._proc import tree_pids
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers.course import COURSE, STUDENT, SUBJECT
from tests.helpers.harness import A, question, write_tokens_file
from tests.helpers.server_process import ServerProcess
from tutor_memory.app.shown_rows import SHOWN_ROWS_KEPT
from tutor_memory.domain.recall.block_text import DATES_KEPT
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _scrape(port: int) -> Samples:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _metrics_port(server: ServerProcess) -> int:
    for line in server.lines:
        entry = json.loads(line)
        if entry.get("msg") == "serving":
            return int(entry["metrics_port"])
    raise AssertionError("no serving line")


def _calls(stub: pb_grpc.MemoryStub, n: int) -> None:
    batch = [question(f"osmosis {n} {i}", key=f"{n}-{i}") for i in range(20)]
    batch.append(question("bad", key=""))  # no client key: rejected
    stub.IngestEpisodes(ingest_messages(batch), metadata=A)
    for _ in range(n):
        stub.BuildBlock(
            pb.BuildBlockRequest(
                student_id="s1", subject_id="biology", query="osmosis", budget_tokens=500
            ),
            metadata=A,
        )
    with contextlib.suppress(grpc.RpcError):
        stub.ListEpisodes(pb.ListEpisodesRequest(student_id="", subject_id="x"), metadata=A)
    stub.Consolidate(pb.ConsolidateRequest(), metadata=A)


def _search_a_course(stub: pb_grpc.MemoryStub) -> None:
    """A course file and a search of it: its passages (texts and embeddings) are then held."""
    upload = pb.IngestFileRequest(
        student_id=STUDENT,
        subject_id=SUBJECT,
        file_id="cells.md",
        filename="cells.md",
        content=COURSE,
    )
    stub.IngestFile(upload, metadata=A)
    search = pb.SearchPassagesRequest(student_id=STUDENT, subject_id=SUBJECT, query="water")
    stub.SearchPassages(search, metadata=A)


def test_a_scrape_of_a_live_server_shows_the_counters_move(tmp_path: Path) -> None:
    tokens = write_tokens_file(tmp_path / "tokens.toml")
    server = ServerProcess(tmp_path / "data", tokens, "--metrics-listen", "127.0.0.1:0")
    server.wait_ready()
    try:
        port = _metrics_port(server)
        before = _scrape(port)
        assert before[("tutor_memory_ready", ())] == 1
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            _calls(stub, 3)
            first = _scrape(port)
            _calls(stub, 2)
            _search_a_course(stub)
            # Embeddings follow the acknowledgement (app/embedding_queue.py): scraped once the
            # backlog is empty.
            deadline = time.monotonic() + 60
            while (second := _scrape(port))[("tutor_memory_embedding_backlog", ())] > 0:
                assert time.monotonic() < deadline, "the embedding backlog never emptied"
                time.sleep(0.1)
    finally:
        server.terminate()

    def rpc(samples: Samples, name: str, code: str, metric: str) -> float:
        return samples.get((metric, (("code", code), ("rpc", name))), 0.0)

    total = "tutor_memory_rpc_requests_total"
    assert rpc(first, "BuildBlock", "OK", total) == 3
    assert rpc(second, "BuildBlock", "OK", total) == 5
    assert rpc(second, "ListEpisodes", "INVALID_ARGUMENT", total) == 2
    count = "tutor_memory_rpc_duration_seconds_count"
    assert rpc(second, "IngestEpisodes", "OK", count) == 2
    assert rpc(second, "BuildBlock", "OK", "tutor_memory_rpc_duration_seconds_sum") > 0

    items = "tutor_memory_ingest_items_total"
    assert first[(items, (("status", "inserted"),))] == 20
    assert second[(items, (("status", "inserted"),))] == 40
    assert second[(items, (("status", "rejected"),))] == 2

    stages = {
        dict(labels)["stage"]
        for (name, labels) in second
        if name == "tutor_memory_block_stage_duration_seconds_count"
    }
    assert {"parse", "rank", "fetch", "compose"} <= stages
    assert second[("tutor_memory_blocks_dropped_total", ())] == 0

    assert second[("tutor_memory_nightly_runs_total", (("outcome", "ok"),))] == 2
    last = second[("tutor_memory_nightly_last_run_timestamp_seconds", ())]
    assert last > first[("tutor_memory_nightly_last_run_timestamp_seconds", ())] > 0

    assert second[("tutor_memory_cache_chains", (("cache", "vectors"),))] == 1
    held = second[("tutor_memory_cache_bytes", (("cache", "vectors"),))]
    assert held == 41 * 512 * 4  # 40 questions and the file's episode: vectors of 512 float32
    assert second[("tutor_memory_cache_bytes", (("cache", "recall_tables"),))] > 0
    assert ("tutor_memory_cache_evictions_total", (("cache", "maps"),)) in second
    # The course's passages: at least their 512-float embeddings and texts.
    assert second[("tutor_memory_cache_chains", (("cache", "passages"),))] == 1
    assert second[("tutor_memory_cache_bytes", (("cache", "passages"),))] > 512 * 4 + len(COURSE)
    # The course's map: at least its concepts' 512-float name embeddings; and the beliefs.
    assert second[("tutor_memory_cache_chains", (("cache", "maps"),))] == 1
    assert second[("tutor_memory_cache_bytes", (("cache", "maps"),))] > 512 * 4
    assert ("tutor_memory_cache_bytes", (("cache", "beliefs"),)) in second
    assert ("tutor_memory_cache_bytes", (("cache", "check_groups"),)) in second
    # The rows the blocks showed, and their dates, kept across chains up to a fixed number.
    for cache, limit in (("shown_rows", SHOWN_ROWS_KEPT), ("dates", DATES_KEPT)):
        entries = ("tutor_memory_cache_entries", (("cache", cache),))
        assert 0 < first[entries] <= second[entries]
        assert second[("tutor_memory_cache_entries_limit", (("cache", cache),))] == limit
    assert second[("tutor_memory_tenant_episodes", (("tenant", "tenant-a"),))] >= 40
    # Imports of 20 items never start the import process (app/import_facts.py).
    assert second[("tutor_memory_import_processes", ())] == 0


def _import_chunks(stub: pb_grpc.MemoryStub, tag: str, chunks: int) -> int:
    batch = [question(f"osmosis {tag} {i}", key=f"{tag}-{i}") for i in range(chunks * 128)]
    reply: pb.IngestEpisodesReply = stub.IngestEpisodes(ingest_messages(batch), metadata=A)
    return reply.inserted


@contextlib.contextmanager
def _serving(tmp_path: Path, *flags: str) -> Iterator[tuple[ServerProcess, int]]:
    """A live server with its metrics endpoint, and the endpoint's port."""
    tokens = write_tokens_file(tmp_path / "tokens.toml")
    server = ServerProcess(tmp_path / "data", tokens, "--metrics-listen", "127.0.0.1:0", *flags)
    server.wait_ready()
    try:
        yield server, _metrics_port(server)
    finally:
        server.terminate()


def test_an_import_of_whole_chunks_starts_the_import_process(tmp_path: Path) -> None:
    with _serving(tmp_path) as (server, port):
        assert _scrape(port)[("tutor_memory_import_processes", ())] == 0
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            assert _import_chunks(stub, "first", 8) == 1024
            deadline = time.monotonic() + 60
            while _scrape(port)[("tutor_memory_import_processes", ())] != 1:
                assert time.monotonic() < deadline, "the import process never got ready"
                time.sleep(0.1)
            assert _import_chunks(stub, "second", 2) == 256


def test_the_first_large_course_file_starts_the_file_reading_process(tmp_path: Path) -> None:
    with _serving(tmp_path) as (server, port):
        assert _scrape(port)[("tutor_memory_file_processes", ())] == 0
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            for file_id, sections in (("small.md", 2), ("large.md", 300)):
                stub.IngestFile(
                    pb.IngestFileRequest(
                        student_id="s1",
                        subject_id="biology",
                        file_id=file_id,
                        filename=file_id,
                        content=_course_file(sections),
                    ),
                    metadata=A,
                    timeout=60,
                )
                if file_id == "small.md":
                    assert _scrape(port)[("tutor_memory_file_processes", ())] == 0
        assert _scrape(port)[("tutor_memory_file_processes", ())] == 1
        assert len(tree_pids(server.proc.pid)) > 1


def _course_file(sections: int) -> bytes:
    return "".join(
        f"# Topic {i}\n\nOsmosis is the diffusion of water across a membrane, topic {i}.\n\n"
        for i in range(sections)
    ).encode()


def test_with_no_import_processes_imports_run_on_the_ingest_thread(tmp_path: Path) -> None:
    with _serving(tmp_path, "--import-processes", "0") as (server, port):
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            assert _import_chunks(stub, "only", 8) == 1024
        # A process would have been started by the first chunk, before the reply.
        assert tree_pids(server.proc.pid) == [server.proc.pid]
        assert _scrape(port)[("tutor_memory_import_processes", ())] == 0
