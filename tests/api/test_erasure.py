"""ForgetStudent end to end on a real server (issue 16): nothing of the student's words can be read
or recalled afterwards, not through the API and not in the database's bytes; every other chain is
untouched; the erased chains still verify and say so; the erasure is recorded; an unknown student
is NOT_FOUND and a second erasure changes nothing; it all holds across a restart. On both stores;
the check of the database's bytes is SQLite's (secure_delete), PostgreSQL's is of every live row."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from tests.helpers.harness import (
    A,
    B,
    Harness,
    question,
    start_harness,
    stop_harness,
)
from tests.helpers.stores import raw_database
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client._proto import memory_pb2 as pb

# Words that occur only in what s1 of tenant A wrote, so their absence can be checked byte by byte.
SECRET = "Quetzalcoatlus"
OTHER = "Pterodactylus"
STEM = SECRET.lower()


def database_bytes(config: ServerConfig) -> bytes:
    """SQLite: the database file and its WAL. PostgreSQL: every live row of every table, as text
    (its deleted rows stay in dead tuples until VACUUM: DESIGN.md says what that means)."""
    if config.store is None:
        path = config.database_path
        wal = path.with_name(path.name + "-wal")
        return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    with raw_database(config) as db:
        tables = db.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
        )
        rows = [db.execute(f"SELECT t::text FROM {name} t") for (name,) in tables]
    return "\n".join(str(row) for table in rows for row in table).encode()


async def forget(h: Harness, student: str, md: object = A, **kw: bool) -> pb.ForgetStudentReply:
    reply: pb.ForgetStudentReply = await h.stub.ForgetStudent(
        pb.ForgetStudentRequest(student_id=student, **kw), metadata=md
    )
    return reply


async def verify(h: Harness, student: str, subject: str, md: object = A) -> pb.VerifyChainReply:
    reply: pb.VerifyChainReply = await h.stub.VerifyChain(
        pb.VerifyChainRequest(student_id=student, subject_id=subject), metadata=md
    )
    return reply


async def block(h: Harness, student: str, subject: str, query: str, md: object = A) -> str:
    reply: pb.BuildBlockReply = await h.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=student, subject_id=subject, query=query, budget_tokens=800
        ),
        metadata=md,
    )
    lines = [m.line for m in reply.memories]
    return reply.text + "\n" + "\n".join(lines)


async def seed(h: Harness) -> None:
    """s1 of tenant A in two subjects, with a check (a belief), a file and an answer traced to
    it; s2 of tenant A; and a student also called s1 in tenant B."""
    for i in range(3):
        await h.append(question(f"{SECRET} question {i} about wings", seconds=1_700_000_000 + i))
    await h.append(question(f"{SECRET} in maths", subject="math"))
    await h.stub.RecordCheck(
        pb.RecordCheckRequest(
            student_id="s1",
            subject_id="biology",
            topic=f"{SECRET} flight",
            outcome=pb.CHECK_OUTCOME_WRONG,
        ),
        metadata=A,
    )
    await h.stub.IngestFile(
        pb.IngestFileRequest(
            student_id="s1",
            subject_id="biology",
            file_id="essay",
            filename="essay.md",
            content=f"# {SECRET} essay\n\n{SECRET} had the largest wings of any flyer.\n".encode(),
        ),
        metadata=A,
    )
    await h.append(question(f"{OTHER} question from s2", student="s2"))
    await h.append(question(f"{OTHER} tenant b's s1"), md=B)


@pytest.fixture
async def seeded(harness: Harness) -> Harness:
    await seed(harness)
    return harness


async def test_forget_leaves_nothing_readable_or_recallable(seeded: Harness) -> None:
    h = seeded
    assert SECRET in await block(h, "s1", "biology", f"{SECRET} wings")
    before = {
        (student, subject, md): await verify(h, student, subject, md)
        for student, subject, md in (("s2", "biology", A), ("s1", "biology", B))
    }

    reply = await forget(h, "s1")

    assert not reply.already_erased
    assert reply.erasure.chains == 2
    assert reply.erasure.episodes >= 6
    assert reply.erasure.plaintext_episodes == 0
    assert not reply.erasure.plaintext_history_kept
    assert reply.erasure.erased_by
    assert reply.erasure.erased_at.seconds > 0
    # Not readable through the API.
    for subject in ("biology", "math"):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.list_all("s1", subject)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert "erased" in (err.value.details() or "")
        shown = await block(h, "s1", subject, f"{SECRET} wings")
        assert SECRET not in shown
        assert STEM not in shown.lower()
    recalled = await h.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id="s1", subject_id="biology", query=f"{SECRET} wings", budget_tokens=800
        ),
        metadata=A,
    )
    assert not recalled.memories
    passages = await h.stub.SearchPassages(
        pb.SearchPassagesRequest(student_id="s1", subject_id="biology", query=SECRET, limit=5),
        metadata=A,
    )
    assert not passages.passages
    history = await h.stub.GetBeliefHistory(
        pb.GetBeliefHistoryRequest(student_id="s1", subject_id="biology"), metadata=A
    )
    assert SECRET not in str(history)
    concept_map = await h.stub.GetMap(
        pb.GetMapRequest(student_id="s1", subject_id="biology"), metadata=A
    )
    assert SECRET not in str(concept_map)
    # Not readable in the database's bytes either (secure_delete, WAL truncated).
    on_disk = database_bytes(h.config)
    assert SECRET.encode() not in on_disk
    assert STEM.encode() not in on_disk
    assert OTHER.encode() in on_disk or OTHER.lower().encode() in on_disk
    # The chains still verify, and say they are erased.
    for subject in ("biology", "math"):
        verified = await verify(h, "s1", subject)
        assert verified.ok
        assert verified.length > 0
        assert verified.erased
        assert verified.erasure.erased_at == reply.erasure.erased_at
    # Every other chain is untouched.
    for (student, subject, md), earlier in before.items():
        now = await verify(h, student, subject, md)
        assert now.ok
        assert not now.erased
        assert (now.length, now.head_hash) == (earlier.length, earlier.head_hash)
    assert OTHER in (await h.list_all("s2"))[0].summary
    assert OTHER in (await h.list_all("s1", md=B))[0].summary
    assert OTHER in await block(h, "s2", "biology", OTHER)
    assert OTHER in await block(h, "s1", "biology", OTHER, md=B)


async def test_the_erasure_is_recorded_without_the_students_words(seeded: Harness) -> None:
    reply = await forget(seeded, "s1")
    with raw_database(seeded.config) as db:
        rows = db.execute(
            "SELECT tenant, student, erased_at, erased_by, chains, episodes, plaintext_episodes "
            "FROM erasures"
        )
        keys = [tuple(r) for r in db.execute("SELECT tenant, student FROM student_keys")]
        derived = {
            table: db.execute(
                f"SELECT count(*) FROM {table} WHERE chain_id IN (SELECT chain_id FROM chains "
                "WHERE tenant = 'tenant-a' AND student = 's1')"
            )[0][0]
            for table in (
                "recall_facts",
                "episode_vectors",
                "passages",
                "file_versions",
                "beliefs",
                "self_models",
            )
        }
    assert len(rows) == 1
    tenant, student, erased_at, erased_by, chains, episodes, plaintext = rows[0]
    assert (tenant, student, chains, plaintext) == ("tenant-a", "s1", 2, 0)
    assert episodes == reply.erasure.episodes
    assert erased_at // 1_000_000 == reply.erasure.erased_at.seconds
    assert erased_by == reply.erasure.erased_by
    assert SECRET not in repr(rows)
    assert ("tenant-a", "s1") not in keys
    assert ("tenant-a", "s2") in keys
    assert derived == dict.fromkeys(derived, 0)


async def test_unknown_is_not_found_and_a_second_forget_changes_nothing(seeded: Harness) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await forget(seeded, "nobody")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await forget(seeded, "")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    first = await forget(seeded, "s1")
    snapshot = database_bytes(seeded.config)
    second = await forget(seeded, "s1")
    assert second.already_erased
    assert second.erasure == first.erasure
    with raw_database(seeded.config) as db:
        assert db.execute("SELECT count(*) FROM erasures")[0][0] == 1
    assert len(database_bytes(seeded.config)) <= len(snapshot) + 4096
    # Tenant B's s1 is another student: erasing tenant A's did not reach it.
    assert not (await forget(seeded, "s1", md=B)).already_erased


async def test_nothing_more_is_stored_for_an_erased_student(seeded: Harness) -> None:
    await forget(seeded, "s1")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await seeded.append(question("back again"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "erased" in (err.value.details() or "")
    with raw_database(seeded.config) as db:
        assert not db.execute(
            "SELECT 1 FROM student_keys WHERE student = 's1' AND tenant = 'tenant-a'"
        )


async def test_the_nightly_cycle_passes_an_erased_student_by(seeded: Harness) -> None:
    length = (await verify(seeded, "s1", "biology")).length
    await seeded.append(question(f"{OTHER} in 2023", student="s2", seconds=1_700_000_000))
    await forget(seeded, "s1")
    reply = await seeded.stub.Consolidate(pb.ConsolidateRequest(), metadata=A)
    # s2's ended day is digested; s1's chains (days ended too) take nothing more.
    assert reply.consolidation_episodes >= 1
    after = await verify(seeded, "s1", "biology")
    assert after.ok
    assert after.erased
    assert after.length == length


async def test_an_erasure_holds_across_a_restart(
    tmp_path: Path, server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    h = await start_harness(server_config, embedder)
    try:
        await seed(h)
        erased = await forget(h, "s1")
    finally:
        await stop_harness(h)
    h = await start_harness(server_config, embedder)
    try:
        verified = await verify(h, "s1", "biology")
        assert verified.ok
        assert verified.erased
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.list_all("s1")
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert SECRET not in await block(h, "s1", "biology", f"{SECRET} wings")
        assert (await forget(h, "s1")).erasure == erased.erasure
        assert OTHER in await block(h, "s2", "biology", OTHER)
    finally:
        await stop_harness(h)
