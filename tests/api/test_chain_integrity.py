"""VerifyChain and Checkpoint: tampering done directly in the database (SQLite or PostgreSQL) shows
up as a break."""

from __future__ import annotations

import grpc
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from tests.helpers.harness import A, Harness, question
from tests.helpers.stores import raw_database
from tutor_memory_client._proto import memory_pb2 as pb


def tamper(harness: Harness, sql: str, *args: object) -> None:
    """What an operator with the database could do: switch the guard triggers off and edit."""
    with raw_database(harness.config) as db:
        db.without_guards()
        db.execute(sql, *args)


async def verify(
    harness: Harness, checkpoint: pb.SignedCheckpoint | None = None
) -> pb.VerifyChainReply:
    reply: pb.VerifyChainReply = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s1", subject_id="biology", checkpoint=checkpoint),
        metadata=A,
    )
    return reply


async def checkpoint(harness: Harness) -> pb.SignedCheckpoint:
    reply = await harness.stub.Checkpoint(
        pb.CheckpointRequest(student_id="s1", subject_id="biology"), metadata=A
    )
    cp: pb.SignedCheckpoint = reply.checkpoint
    return cp


async def fill(harness: Harness, n: int = 10) -> list[pb.IngestItemResult]:
    reply = await harness.ingest([question(f"question {i}", key=f"k{i}") for i in range(n)])
    return list(reply.items)


async def test_untouched_chain_verifies(harness: Harness) -> None:
    items = await fill(harness)
    reply = await verify(harness)
    assert reply.ok
    assert reply.length == len(items)
    last = (await harness.list_all())[-1]
    assert reply.head_hash == last.hash


async def test_empty_chain_verifies_with_length_zero(harness: Harness) -> None:
    reply = await verify(harness)
    assert reply.ok
    assert reply.length == 0


async def test_row_edited_in_sqlite_is_named_as_the_first_break(harness: Harness) -> None:
    items = await fill(harness)
    target = items[6].episode_id
    tamper(harness, "UPDATE episodes SET text = 'rewritten history' WHERE episode_id = ?", target)
    reply = await verify(harness)
    assert not reply.ok
    assert reply.first_break.seq == 7
    assert reply.first_break.episode_id == target
    assert "edited" in reply.first_break.reason


async def test_row_removed_in_sqlite_breaks_the_chain(harness: Harness) -> None:
    items = await fill(harness)
    tamper(harness, "DELETE FROM episodes WHERE episode_id = ?", items[3].episode_id)
    reply = await verify(harness)
    assert not reply.ok
    assert reply.first_break.seq == 5
    assert "removed" in reply.first_break.reason


async def test_code_paths_cannot_update_or_delete_episodes(harness: Harness) -> None:
    await fill(harness, 2)
    with raw_database(harness.config) as db:
        for sql in ("UPDATE episodes SET text = 'x'", "DELETE FROM episodes"):
            with pytest.raises(db.append_only_error, match="append-only"):
                db.execute(sql)
    assert (await verify(harness)).ok


async def test_checkpoint_is_signed_by_the_server_key(harness: Harness) -> None:
    await fill(harness, 4)
    cp = await checkpoint(harness)
    assert cp.length == 4
    assert cp.tenant == "tenant-a"
    # Anyone holding the public key can check it, without the server.
    Ed25519PublicKey.from_public_bytes(cp.public_key).verify(cp.signature, cp.signed_payload)
    assert cp.head_hash.hex().encode() in cp.signed_payload
    assert (await verify(harness, cp)).checkpoint_status == pb.CHECKPOINT_STATUS_HOLDS


async def test_checkpoint_still_holds_after_more_appends(harness: Harness) -> None:
    await fill(harness, 4)
    cp = await checkpoint(harness)
    await harness.append(question("a later question"))
    reply = await verify(harness, cp)
    assert reply.ok
    assert reply.length == 5
    assert reply.checkpoint_status == pb.CHECKPOINT_STATUS_HOLDS


async def test_rewrite_that_rehashes_every_row_is_caught_by_a_checkpoint(harness: Harness) -> None:
    """A 'well-meant migration' that rewrites an old row and re-links the chain so it verifies
    internally still contradicts a checkpoint taken before it."""
    from tutor_memory.domain.chain import recompute

    await fill(harness, 6)
    cp = await checkpoint(harness)
    tamper(harness, "UPDATE episodes SET summary = 'softened' WHERE seq = 2")
    # Re-link every row from seq 2 on with the server's own hash function.
    store = harness.app.services.store
    chain = next(iter(store.chains()))
    prev = None
    with raw_database(harness.config) as db:
        db.without_guards()
        for ep in store.iter_chain(chain):
            if ep.seq >= 2:
                assert prev is not None
                new_hash = recompute(ep, prev)
                db.execute(
                    "UPDATE episodes SET prev_hash = ?, hash = ? WHERE episode_id = ?",
                    prev,
                    new_hash,
                    ep.episode_id,
                )
                prev = new_hash
            else:
                prev = ep.hash
    reply = await verify(harness, cp)
    assert reply.ok  # internally consistent again...
    assert reply.checkpoint_status == pb.CHECKPOINT_STATUS_REWRITTEN  # ...but not the same history


async def test_truncated_chain_contradicts_its_checkpoint(harness: Harness) -> None:
    await fill(harness, 5)
    cp = await checkpoint(harness)
    tamper(harness, "DELETE FROM episodes WHERE seq = 5")
    reply = await verify(harness, cp)
    assert reply.ok  # removing the tail leaves a valid, shorter chain...
    assert reply.checkpoint_status == pb.CHECKPOINT_STATUS_TRUNCATED  # ...the checkpoint knows


async def test_forged_checkpoint_is_reported(harness: Harness) -> None:
    await fill(harness, 3)
    cp = await checkpoint(harness)
    cp.length = 2
    assert (await verify(harness, cp)).checkpoint_status == pb.CHECKPOINT_STATUS_BAD_SIGNATURE


async def test_checkpoint_of_another_tenant_does_not_verify_here(harness: Harness) -> None:
    await fill(harness, 3)
    await harness.append(question("b's own"), md=(("authorization", "Bearer token-for-tenant-b"),))
    cp = await checkpoint(harness)
    reply = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s1", subject_id="biology", checkpoint=cp),
        metadata=(("authorization", "Bearer token-for-tenant-b"),),
    )
    assert reply.checkpoint_status == pb.CHECKPOINT_STATUS_BAD_SIGNATURE


async def test_broken_chain_is_never_signed(harness: Harness) -> None:
    items = await fill(harness, 3)
    tamper(harness, "UPDATE episodes SET text = 'x' WHERE episode_id = ?", items[0].episode_id)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await checkpoint(harness)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "seq 1" in (err.value.details() or "")
