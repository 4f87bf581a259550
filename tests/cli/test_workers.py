"""`tutor-memory serve --workers N` (cli/workers.py): N processes share one port and behave as one
server (read-your-writes across workers, one chain however the appends interleave), stop together,
and refuse configurations they cannot share."""

from __future__ import annotations

import json
import os
import signal
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest

from tests.helpers.harness import question
from tests.helpers.postgres import free_port, free_ports
from tests.helpers.server_process import ServerProcess
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

WORKERS = 2
# Connections opened to the shared port: the kernel hashes each to a worker, and with this many
# the chance that one worker gets none is 2 ** -15.
CONNECTIONS = 16
STUDENT, SUBJECT = "ada", "biology"


def _start(data: Path, port: int, *extra: str) -> ServerProcess:
    server = ServerProcess(
        data, None, "--listen", f"127.0.0.1:{port}", "--workers", str(WORKERS), *extra
    )
    server.wait_workers(WORKERS)
    return server


def _calls_counted(metrics_port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("tutor_memory_rpc_requests_total{")
    )


def _append(stub: pb_grpc.MemoryStub, text: str, key: str) -> pb.AppendEpisodeReply:
    episode = question(text, student=STUDENT, subject=SUBJECT, key=key)
    reply: pb.AppendEpisodeReply = stub.AppendEpisode(
        pb.AppendEpisodeRequest(episode=episode), timeout=30
    )
    return reply


def test_workers_share_the_port_and_read_each_others_writes(tmp_path: Path) -> None:
    port, metrics = free_port(), free_ports(WORKERS)
    server = _start(tmp_path / "data", port, "--metrics-listen", f"127.0.0.1:{metrics}")
    channels = [
        grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(CONNECTIONS)
    ]
    try:
        stubs = [pb_grpc.MemoryStub(c) for c in channels]
        # Appends through every connection at once: one chain, never forked.
        with ThreadPoolExecutor(CONNECTIONS) as pool:
            replies = list(
                pool.map(
                    lambda i: _append(stubs[i], f"What is organelle number {i} called?", f"k{i}"),
                    range(CONNECTIONS),
                )
            )
        assert sorted(r.episode.seq for r in replies) == list(range(1, CONNECTIONS + 1))
        # What one connection wrote is in the next block built through any other.
        for i in range(CONNECTIONS):
            written = _append(stubs[i], f"Tell me about the zebra{i} enzyme", f"z{i}")
            other = stubs[(i + 1) % CONNECTIONS]
            block = other.BuildBlock(
                pb.BuildBlockRequest(
                    student_id=STUDENT,
                    subject_id=SUBJECT,
                    query=f"zebra{i} enzyme",
                    budget_tokens=1500,
                ),
                timeout=30,
            )
            assert written.episode.episode_id in {m.episode_id for m in block.memories}, i
        verified = stubs[0].VerifyChain(
            pb.VerifyChainRequest(student_id=STUDENT, subject_id=SUBJECT), timeout=30
        )
        assert verified.ok
        assert verified.length == 2 * CONNECTIONS
        # Both workers took calls, each counted on its own metrics port.
        assert _calls_counted(metrics) > 0
        assert _calls_counted(metrics + 1) > 0
    finally:
        for channel in channels:
            channel.close()
        code = server.terminate()
    assert code == 0
    assert server.proc.poll() == 0
    assert any('"workers stopped"' in line for line in server.lines)


def test_a_worker_that_dies_stops_the_others_and_the_supervisor_fails(tmp_path: Path) -> None:
    server = _start(tmp_path / "data", free_port())
    pids = json.loads(next(line for line in server.lines if '"workers started"' in line))["pids"]
    os.kill(pids[1], signal.SIGKILL)
    code = server.wait_exit(timeout=60)
    assert code == 1
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (("--listen", "127.0.0.1:0"), "--workers needs a fixed port"),
        (("--no-sync",), "--workers needs --sync"),
    ],
)
def test_workers_refuse_a_configuration_they_cannot_share(
    tmp_path: Path, extra: tuple[str, ...], problem: str
) -> None:
    server = ServerProcess(
        tmp_path / "data",
        None,
        "--listen",
        f"127.0.0.1:{free_port()}",
        "--workers",
        str(WORKERS),
        *extra,
    )
    assert server.wait_exit() == 2
    assert problem in "".join(server.lines)


def test_a_second_lone_server_on_the_port_of_another_fails_to_start(tmp_path: Path) -> None:
    port = free_port()
    first = ServerProcess(tmp_path / "a", None, "--listen", f"127.0.0.1:{port}")
    try:
        first.wait_ready()
        second = ServerProcess(tmp_path / "b", None, "--listen", f"127.0.0.1:{port}")
        assert second.wait_exit() == 2
        assert "cannot listen" in "".join(second.lines)
    finally:
        first.terminate()
