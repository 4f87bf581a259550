"""`tutor-memory backup` and `restore`: an online copy taken in the middle of a batch ingest
restores into a directory whose every chain verifies and, once the batch is sent to it again,
serves the original's blocks; a copy of a live server serves the same blocks (and honours its
checkpoints); a destination that cannot be written fails before anything is copied."""

from __future__ import annotations

import io
import tarfile
import threading
import time
from pathlib import Path

import grpc
import pytest

from tests.helpers.harness import A, question, write_tokens_file
from tests.helpers.server_process import ServerProcess
from tutor_memory.app import backup as backup_module
from tutor_memory.app.backup import BackupError, backup, restore
from tutor_memory.cli.main import main
from tutor_memory.store.masterkey import MASTER_KEY_FILE_NAME, read_master_key_file
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

STUDENTS = ("s0", "s1", "s2")
BATCH = 6_000
# Stored episodes to wait for before the backup is taken: the batch is then well under way.
STARTED = 300
QUERIES = ("osmosis", "what did we do in March?", "what did I get wrong?", "")
NOW = 1_790_000_000  # a fixed 'now' (2026-09), so both servers answer for the same moment


def _batch() -> list[pb.NewEpisode]:
    return [
        question(
            f"note {i} about {('osmosis', 'diffusion', 'cells')[i % 3]}",
            student=STUDENTS[i % 3],
            key=f"k{i}",
            seconds=NOW - 86_400 * 200 + i * 600,
        )
        for i in range(BATCH)
    ]


def _stored(stub: pb_grpc.MemoryStub) -> int:
    return sum(
        stub.VerifyChain(
            pb.VerifyChainRequest(student_id=s, subject_id="biology"), metadata=A
        ).length
        for s in STUDENTS
    )


def _chain(stub: pb_grpc.MemoryStub, student: str) -> list[tuple[int, bytes]]:
    out: list[tuple[int, bytes]] = []
    request = pb.ListEpisodesRequest(student_id=student, subject_id="biology", page_size=1000)
    while True:
        reply = stub.ListEpisodes(request, metadata=A)
        out.extend((e.episode_id, e.hash) for e in reply.episodes)
        if not reply.next_page_token:
            return sorted(out)
        request.page_token = reply.next_page_token


def _ids(chain: list[tuple[int, bytes]]) -> list[int]:
    return [episode_id for episode_id, _ in chain]


def _blocks(stub: pb_grpc.MemoryStub) -> list[tuple[str, list[int], str]]:
    out = []
    for student in STUDENTS:
        for query in QUERIES:
            request = pb.BuildBlockRequest(
                student_id=student, subject_id="biology", query=query, budget_tokens=600
            )
            request.now.seconds = NOW
            reply = stub.BuildBlock(request, metadata=A, timeout=10)
            assert not reply.dropped
            out.append((reply.text, [m.episode_id for m in reply.memories], reply.block_id))
    return out


def _vectors_settled(stub: pb_grpc.MemoryStub, timeout: float = 120.0) -> None:
    """Until no student's block reports episodes waiting for their embedding (an import is
    acknowledged before its vectors are computed: app/embedding_queue.py)."""
    deadline = time.monotonic() + timeout
    for student in STUDENTS:
        request = pb.BuildBlockRequest(
            student_id=student, subject_id="biology", query=QUERIES[0], budget_tokens=100
        )
        while stub.BuildBlock(request, metadata=A, timeout=10).vectors_pending:
            assert time.monotonic() < deadline, "the embeddings never caught up"
            time.sleep(0.2)


def _serve(data: Path, tokens: Path, *extra: str) -> ServerProcess:
    server = ServerProcess(data, tokens, *extra)
    server.wait_ready()
    return server


@pytest.mark.slow
def test_a_backup_taken_during_a_batch_ingest_restores_verified_and_serves_the_same(
    tmp_path: Path,
) -> None:
    tokens = write_tokens_file(tmp_path / "tokens.toml")
    data = tmp_path / "data"
    original = _serve(data, tokens)
    try:
        with grpc.insecure_channel(original.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            replies: list[pb.IngestEpisodesReply] = []
            sending = threading.Thread(
                target=lambda: replies.append(
                    stub.IngestEpisodes(ingest_messages(_batch(), 100), metadata=A, timeout=300)
                )
            )
            sending.start()
            while _stored(stub) < STARTED:
                time.sleep(0.02)
            assert main(["backup", "--data", str(data), "--out", str(tmp_path / "mid.tar")]) == 0
            at_backup = _stored(stub)
            sending.join()
            assert replies[0].inserted == BATCH
            assert at_backup < BATCH, "the batch ended before the backup: nothing was tested"
            # Blocks search by meaning: compare them once every acknowledged episode's vector is in.
            _vectors_settled(stub)
            # A copy of the quiet, still running server, with a checkpoint taken before it.
            checkpoint = stub.Checkpoint(
                pb.CheckpointRequest(student_id="s1", subject_id="biology"), metadata=A
            ).checkpoint
            assert main(["backup", "--data", str(data), "--out", str(tmp_path / "end.tar")]) == 0
            chains = {s: _chain(stub, s) for s in STUDENTS}
            blocks = _blocks(stub)
    finally:
        original.terminate()

    # The master key is never in a backup: the operator keeps it apart (here, the original's
    # default key file) and gives it to the restore, which checks it opens every data key, and
    # to the restored server.
    master = tmp_path / "kept-master.key"
    master.write_bytes((data / MASTER_KEY_FILE_NAME).read_bytes())
    with_key = ("--master-key-file", str(master))

    # The copy from the middle of the batch: every chain verifies, and each is a prefix of the
    # original chain (the copy is one moment of it, not a mix of moments). The client that sent
    # the batch sends it again to the restored copy: only what the copy lacks is inserted, and the
    # copy then holds the original's chains and serves its blocks.
    mid = tmp_path / "restored-mid"
    restore_mid = ["restore", "--from", str(tmp_path / "mid.tar"), "--data", str(mid), *with_key]
    assert main(restore_mid) == 0
    assert not (mid / MASTER_KEY_FILE_NAME).exists()
    assert main(["verify", "--data", str(mid)]) == 0
    server = _serve(mid, tokens, *with_key)
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            copied = 0
            for s in STUDENTS:
                chain = _chain(stub, s)
                assert chain == chains[s][: len(chain)]
                copied += len(chain)
            assert STARTED <= copied < BATCH
            again = stub.IngestEpisodes(ingest_messages(_batch(), 100), metadata=A, timeout=300)
            assert (again.inserted, again.duplicate) == (BATCH - copied, copied)
            # The same episodes under the same ids; what was inserted again was recorded now, and
            # the recording time is hashed, so those hashes and the block ids differ.
            assert {s: _ids(_chain(stub, s)) for s in STUDENTS} == {
                s: _ids(chains[s]) for s in STUDENTS
            }
            _vectors_settled(stub)
            assert [b[:2] for b in _blocks(stub)] == [b[:2] for b in blocks]
    finally:
        server.terminate()
    assert main(["verify", "--data", str(mid)]) == 0

    # The copy of the whole: the same chains and the same blocks, ids included, and the
    # checkpoint signed by the original's key holds.
    end = tmp_path / "restored-end"
    restore_end = ["restore", "--from", str(tmp_path / "end.tar"), "--data", str(end), *with_key]
    assert main(restore_end) == 0
    server = _serve(end, tokens, *with_key)
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            assert {s: _chain(stub, s) for s in STUDENTS} == chains
            _vectors_settled(stub)
            assert _blocks(stub) == blocks
            verified = stub.VerifyChain(
                pb.VerifyChainRequest(student_id="s1", subject_id="biology", checkpoint=checkpoint),
                metadata=A,
            )
            assert verified.checkpoint_status == pb.CHECKPOINT_STATUS_HOLDS
    finally:
        server.terminate()


def _small_data_dir(tmp_path: Path) -> Path:
    """A data directory with one chain, written by a real server."""
    data = tmp_path / "data"
    server = _serve(data, write_tokens_file(tmp_path / "tokens.toml"))
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            stub.AppendEpisode(pb.AppendEpisodeRequest(episode=question("kept")), metadata=A)
    finally:
        server.terminate()
    return data


@pytest.fixture(scope="module")
def small_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _small_data_dir(tmp_path_factory.mktemp("small"))


@pytest.mark.parametrize("where", ["missing-folder/backup.tar", "a-file/backup.tar"])
def test_a_backup_to_an_unwritable_place_fails_before_copying_anything(
    small_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    (tmp_path / "a-file").write_text("not a folder")

    def copy_nothing(*_: object) -> None:
        raise AssertionError("the database was copied before the destination was checked")

    monkeypatch.setattr(backup_module, "copy_database", copy_nothing)
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(BackupError, match="nothing was copied"):
        backup(small_data, tmp_path / where)
    assert sorted(tmp_path.rglob("*")) == before


def test_the_cli_reports_an_unwritable_destination(
    small_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "missing" / "b.tar"
    assert main(["backup", "--data", str(small_data), "--out", str(out)]) == 2
    assert "nothing was copied" in capsys.readouterr().err


def test_a_backup_never_overwrites_and_a_restore_never_writes_into_data(
    small_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "b.tar"
    report = backup(small_data, out)
    assert (report.chains, report.episodes) == (1, 1)
    assert out.stat().st_mode & 0o777 == 0o600
    with pytest.raises(BackupError, match="never overwrites"):
        backup(small_data, out)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "something").write_text("x")
    with pytest.raises(BackupError, match="not an empty directory"):
        restore(out, occupied)
    assert sorted(p.name for p in occupied.iterdir()) == ["something"]
    restored = restore(out, tmp_path / "fresh")
    assert (restored.chains, restored.episodes) == (1, 1)


def test_a_damaged_backup_restores_nothing(small_data: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.tar"
    backup(small_data, good)
    damaged = tmp_path / "damaged.tar"
    with tarfile.open(good) as src, tarfile.open(damaged, "w") as dst:
        for member in src.getmembers():
            f = src.extractfile(member)
            assert f is not None
            body = f.read()
            if member.name == "server_ed25519.pem":
                body = body.replace(b"A", b"B", 1)
            member.size = len(body)
            dst.addfile(member, io.BytesIO(body))
    with pytest.raises(BackupError, match="does not match its SHA-256"):
        restore(damaged, tmp_path / "target")
    assert not (tmp_path / "target").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_master_key_stays_out_of_a_backup_and_a_restore_checks_it(
    small_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b.tar"
    assert main(["backup", "--data", str(small_data), "--out", str(out)]) == 0
    assert "never put in a backup" in capsys.readouterr().err
    key_text = (small_data / MASTER_KEY_FILE_NAME).read_bytes()
    with tarfile.open(out) as tar:
        assert MASTER_KEY_FILE_NAME not in tar.getnames()
        for member in tar.getmembers():
            f = tar.extractfile(member)
            assert f is not None
            assert key_text.strip() not in f.read()
    right = read_master_key_file(small_data / MASTER_KEY_FILE_NAME)
    report = restore(out, tmp_path / "with-key", right)
    assert report.data_keys_checked == 1
    wrong_file = tmp_path / "wrong.key"
    assert main(["master-key", "new", "--out", str(wrong_file)]) == 0
    with pytest.raises(BackupError, match="does not open the backup"):
        restore(out, tmp_path / "wrong-key", read_master_key_file(wrong_file))
    assert not (tmp_path / "wrong-key").exists()
    args = ["restore", "--from", str(out), "--data", str(tmp_path / "cli")]
    assert main([*args, "--master-key-file", str(wrong_file)]) == 2
    assert "does not open" in capsys.readouterr().err
    assert main(args) == 0
    assert "data keys were not checked" in capsys.readouterr().out
