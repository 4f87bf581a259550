"""The hash chain over episodes (SPEC R1.4): how a link is computed and how a chain is verified.

Each episode stores the hash of the previous episode of its chain and its own hash, SHA-256 over a
canonical, length-prefixed encoding of every stored field (computed by the Rust core; the encoding
is documented in `_core.pyi`). Recomputing the chain from the rows shows any later edit, removal or
reordering as a break. An episode written since sealing (domain/sealing.py) is hashed as its row
is stored: its word columns empty and the ciphertext of its words beside them (encoding v2), so a
chain verifies from the stored rows alone, with no key, before and after its student's erasure.
This is tamper *evidence*, not prevention: someone with write access to the
database can rewrite history and re-hash it, and only a checkpoint kept outside the database (see
`signing.py`) proves that happened.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice
from typing import Final

from tutor_memory.domain.episodes import StoredEpisode
from tutor_memory.native import _core

# The prev_hash of the first episode of every chain.
GENESIS_HASH = bytes(32)

VERIFY_CHUNK: Final = 4096
"""Episodes handed to the Rust core per call by `verify_chain`. Each call holds references to its
episodes' fields (no copies) and hashes them with the GIL released, so memory stays bounded by one
chunk whatever the chain's length (100k+ episodes), while 4,096 keeps the per-call cost (a few
microseconds) negligible next to hashing the chunk."""


def recompute(ep: StoredEpisode, prev_hash: bytes) -> bytes:
    """The hash `ep` should have if it follows `prev_hash` (its own stored hash is not read).
    A sealed episode is hashed as stored: pass it as the store's `iter_links` reads it, not with
    its words opened."""
    return _core.episode_hash(prev_hash, ep)


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


def _reason(found: _core.LinkBreak) -> str:
    """What a break means, in the words VerifyChain reports."""
    if found.kind == "seq":
        return (
            f"expected seq {found.position}, found seq {found.seq}: episodes were removed or "
            "renumbered"
        )
    if found.kind == "prev_hash":
        return f"prev_hash does not match the hash of seq {found.seq - 1}: the link is broken"
    return "the content does not match its stored hash: the row was edited after it was written"


def verify_chain(episodes: Iterable[StoredEpisode], *, stop_at: int | None = None) -> Verification:
    """Walks one chain in seq order and names the first break.

    Hashes are recomputed from the content alone, starting at the genesis hash, so a rewrite that
    re-hashed every later row still differs from a checkpoint taken before it. `stop_at` asks for
    the recomputed hash after that many episodes (for checkpoint comparison). The walk itself is
    the Rust core's (`_core.verify_chain`, documented in `_core.pyi`), one call per `VERIFY_CHUNK`
    episodes.
    """
    walk = _core.ChainWalk(stop_at=stop_at)
    pending = iter(episodes)
    while chunk := list(islice(pending, VERIFY_CHUNK)):
        walk = _core.verify_chain(chunk, walk)
    found = walk.first_break
    first_break = None if found is None else ChainBreak(found.seq, found.episode_id, _reason(found))
    return Verification(walk.length, walk.head_hash, first_break, walk.hash_at_stop)
