"""The Python client wrapper against a real server: the README's example, paging, retries."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from tests.helpers.harness import TOKEN_A, question, write_tokens_file
from tests.helpers.server_process import ServerProcess
from tutor_memory_client import ITEMS_PER_MESSAGE, MemoryClient, pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("client")
    proc = ServerProcess(tmp / "data", write_tokens_file(tmp / "tokens.toml"))
    proc.wait_ready()
    yield proc
    proc.terminate()


def test_readme_example_round_trip(server: ServerProcess) -> None:
    with MemoryClient(server.target, token=TOKEN_A) as client:
        reply = client.append_episode(
            pb.NewEpisode(
                student_id="ada",
                subject_id="biology",
                kind=pb.EPISODE_KIND_QUESTION,
                summary="What is osmosis?",
                client_key="turn-1",
            )
        )
        assert reply.episode.seq == 1
        batch = [question(f"q{i}", student="ada", key=f"batch-{i}") for i in range(250)]
        first = client.ingest_episodes(batch)
        again = client.ingest_episodes(batch)
        assert (first.inserted, again.duplicate) == (250, 250)
        listed = list(client.list_episodes("ada", "biology", page_size=40))
        assert len(listed) == 251
        assert [e.seq for e in listed] == sorted(e.seq for e in listed)
        checkpoint = client.checkpoint("ada", "biology")
        verified = client.verify_chain("ada", "biology", checkpoint)
        assert verified.ok
        assert verified.checkpoint_status == pb.CHECKPOINT_STATUS_HOLDS


def test_a_block_can_be_explained_through_the_client(server: ServerProcess) -> None:
    with MemoryClient(server.target, token=TOKEN_A) as client:
        client.ingest_episodes(
            [question(f"osmosis question {i}", student="eve", key=f"eve-{i}") for i in range(5)]
        )
        plain = client.build_block("eve", "biology", "osmosis", budget_tokens=300)
        explained = client.build_block("eve", "biology", "osmosis", budget_tokens=300, explain=True)
    assert not plain.candidates
    assert explained.text == plain.text
    shown = [c for c in explained.candidates if c.outcome == pb.CANDIDATE_OUTCOME_SHOWN]
    assert sorted(c.episode_id for c in shown) == sorted(m.episode_id for m in plain.memories)
    assert explained.candidates_considered == 5


def test_wrong_token_is_not_retried(server: ServerProcess) -> None:
    with MemoryClient(server.target, token="wrong") as client, pytest.raises(grpc.RpcError) as err:
        client.append_episode(question("x", key="k"))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_keyed_write_is_retried_until_the_server_is_back(tmp_path: Path) -> None:
    """UNAVAILABLE is retried with backoff: a server that starts late still gets the write."""
    tokens = write_tokens_file(tmp_path / "tokens.toml")
    late: list[ServerProcess] = []
    first = ServerProcess(tmp_path / "probe", tokens)
    port = first.wait_ready()
    first.terminate()  # the port is free again; the client will find nothing there at first

    def start_late() -> None:
        late.append(ServerProcess(tmp_path / "data", tokens, "--listen", f"127.0.0.1:{port}"))

    timer = threading.Timer(0.3, start_late)
    timer.start()
    try:
        with MemoryClient(f"127.0.0.1:{port}", token=TOKEN_A, attempts=8) as client:
            reply = client.append_episode(question("written after a retry", key="late-1"))
        assert reply.episode.summary == "written after a retry"
    finally:
        timer.join()
        for proc in late:
            proc.terminate()


class _BreakingImport(pb_grpc.MemoryServicer):
    """Acknowledges the first message of the first ImportEpisodes stream, then breaks it with
    UNAVAILABLE; later streams are acknowledged whole. Records the keys each stream carried."""

    def __init__(self) -> None:
        self.streams: list[list[str]] = []

    def ImportEpisodes(
        self, request_iterator: Iterator[pb.ImportEpisodesRequest], context: grpc.ServicerContext
    ) -> Iterator[pb.ImportEpisodesReply]:
        first = not self.streams
        keys: list[str] = []
        self.streams.append(keys)
        for message in request_iterator:
            reply = pb.ImportEpisodesReply()
            for episode in message.episodes:
                reply.items.add(
                    index=len(keys),
                    client_key=episode.client_key,
                    status=pb.INGEST_STATUS_INSERTED,
                    episode_id=1000 + len(keys),
                )
                keys.append(episode.client_key)
            yield reply
            if first:
                context.abort(grpc.StatusCode.UNAVAILABLE, "injected: the connection went away")


def test_a_broken_import_resends_only_what_was_not_acknowledged() -> None:
    fake = _BreakingImport()
    server = grpc.server(futures.ThreadPoolExecutor(2))
    pb_grpc.add_MemoryServicer_to_server(fake, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        batch = [question(f"q{i}", key=f"k{i}") for i in range(250)]
        progress: list[pb.ImportEpisodesReply] = []
        with MemoryClient(f"127.0.0.1:{port}", attempts=3) as client:
            result = client.import_episodes(batch, on_progress=progress.append)
    finally:
        server.stop(None)
    assert result.attempts == 2
    assert fake.streams[1] == [f"k{i}" for i in range(ITEMS_PER_MESSAGE, 250)]
    assert [(r.index, r.client_key) for r in result.items] == [(i, f"k{i}") for i in range(250)]
    assert len(progress) >= 2
