"""The hash chain over episodes (SPEC R1.4): how a link is computed and how a chain is verified.

Each episode stores the hash of the previous episode of its chain and its own hash, SHA-256 over a
canonical, length-prefixed encoding of every stored field (computed by the Rust core; the encoding
is documented in `_core.pyi`). Recomputing the chain from the rows shows any later edit, removal or
reordering as a break. This is tamper *evidence*, not prevention: someone with write access to the
database can rewrite history and re-hash it, and only a checkpoint kept outside the database (see
`signing.py`) proves that happened.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tutor_memory.domain.episodes import StoredEpisode
from tutor_memory.native import _core

# The prev_hash of the first episode of every chain.
GENESIS_HASH = bytes(32)


def recompute(ep: StoredEpisode, prev_hash: bytes) -> bytes:
    """The hash `ep` should have if it follows `prev_hash` (its own stored hash is not read)."""
    check, quiz = ep.check, ep.quiz
    return _core.episode_hash(
        prev_hash,
        ep.chain.tenant,
        ep.chain.student,
        ep.chain.subject,
        ep.seq,
        ep.kind.value,
        ep.summary,
        ep.text,
        list(ep.concepts),
        ep.salience,
        ep.occurred_at_us,
        ep.recorded_at_us,
        [(e.file_id, e.page, e.file_fingerprint) for e in ep.evidence],
        check.outcome.value if check else "",
        check.topic if check else "",
        check.predicted_mastery if check else None,
        quiz.correct if quiz else 0,
        quiz.total if quiz else 0,
        ep.client_key,
    )


@dataclass(frozen=True, slots=True)
class ChainBreak:
    seq: int
    episode_id: int
    reason: str


@dataclass(frozen=True, slots=True)
class Verification:
    length: int
    # The head recomputed from the content, which is what a checkpoint is compared with.
    head_hash: bytes
    first_break: ChainBreak | None
    # Recomputed hash after each of the first `stop_at` episodes (see verify_chain).
    hash_at_stop: bytes | None

    @property
    def ok(self) -> bool:
        return self.first_break is None


def verify_chain(episodes: Iterable[StoredEpisode], *, stop_at: int | None = None) -> Verification:
    """Walks one chain in seq order and names the first break.

    Hashes are recomputed from the content alone, starting at the genesis hash, so a rewrite that
    re-hashed every later row still differs from a checkpoint taken before it. `stop_at` asks for
    the recomputed hash after that many episodes (for checkpoint comparison).
    """
    expected_prev = GENESIS_HASH
    computed = GENESIS_HASH
    length = 0
    first_break: ChainBreak | None = None
    hash_at_stop = GENESIS_HASH if stop_at == 0 else None
    for ep in episodes:
        length += 1
        if first_break is None:
            if ep.seq != length:
                first_break = ChainBreak(
                    ep.seq,
                    ep.episode_id,
                    f"expected seq {length}, found seq {ep.seq}: episodes were removed or "
                    "renumbered",
                )
            elif ep.prev_hash != expected_prev:
                first_break = ChainBreak(
                    ep.seq,
                    ep.episode_id,
                    f"prev_hash does not match the hash of seq {ep.seq - 1}: the link is broken",
                )
        computed = recompute(ep, computed)
        if first_break is None and computed != ep.hash:
            first_break = ChainBreak(
                ep.seq,
                ep.episode_id,
                "the content does not match its stored hash: the row was edited after it was "
                "written",
            )
        if stop_at is not None and length == stop_at:
            hash_at_stop = computed
        expected_prev = ep.hash
    return Verification(length, computed, first_break, hash_at_stop)
