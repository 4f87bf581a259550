"""What the campaign sent and what the server acknowledged: the one place that turns replies into
acknowledgements.

An item is acknowledged when a reply naming it arrived: an AppendEpisode reply, or an
IngestItemResult of an IngestEpisodes reply with status inserted or duplicate. Today
IngestEpisodes answers once, at the end of the stream, so a stream cut by the kill acknowledges
nothing; a server that acknowledges chunk by chunk would call `acknowledge_ingest` once per chunk
with that chunk's results, and nothing else here changes.

A Consolidate call is acknowledged when its reply arrived. Its reply names no digest, so what it
promises is checked through the items: every item acknowledged before the call was sent, on a day
that had ended by the call's `now`, must be covered by a digest. For that, acknowledgements are
numbered in the order they arrived, and a call remembers the number reached when it was sent.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from bench._chaos_plan import Chain, ConsolidateCall, Item
from tutor_memory_client._proto import memory_pb2 as pb

MICROS_PER_SECOND = 1_000_000


class Rpc(StrEnum):
    APPEND = "AppendEpisode"
    INGEST = "IngestEpisodes"
    CONSOLIDATE = "Consolidate"


class Outcome(StrEnum):
    """What one reply said about one item."""

    INSERTED = "inserted"
    DUPLICATE = "duplicate"
    REJECTED = "rejected"


# Any other status (rejected, or one this campaign does not know) acknowledges nothing.
_INGEST_OUTCOMES = {
    pb.INGEST_STATUS_INSERTED: Outcome.INSERTED,
    pb.INGEST_STATUS_DUPLICATE: Outcome.DUPLICATE,
}


@dataclass(frozen=True, slots=True)
class Ack:
    rpc: Rpc
    episode_id: int
    cycle: int
    by_retry: bool
    # Position among all acknowledgements of the run, in the order they arrived.
    order: int


@dataclass(frozen=True, slots=True)
class ConsolidationSend:
    """A Consolidate call as it left the client."""

    call: ConsolidateCall
    # Items acknowledged before the call was sent have an order below this.
    watermark: int
    # Days that ended by this moment (µs since the epoch) are the call's to digest: its explicit
    # `now`, or the client's clock when it was sent (the server's clock is no earlier).
    now_us: int


@dataclass(frozen=True, slots=True)
class ConsolidationAck:
    send: ConsolidationSend
    cycle: int
    by_retry: bool
    # Digests the reply says were written.
    digests: int


@dataclass(slots=True)
class SentStream:
    """The part of one IngestEpisodes stream that left the client, in stream order."""

    per_message: int
    items: list[Item] = field(default_factory=list)


@dataclass(slots=True)
class CycleSends:
    appends: list[Item] = field(default_factory=list)
    streams: list[SentStream] = field(default_factory=list)
    consolidations: list[ConsolidateCall] = field(default_factory=list)


class AckBook:
    """Thread-safe: the load's lanes record into one book."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # Every item sent, by client key (keys are unique across the run, not only per chain).
        self.items: dict[str, Item] = {}
        self.sends: defaultdict[int, CycleSends] = defaultdict(CycleSends)
        self.acks: dict[str, Ack] = {}
        self.consolidation_acks: list[ConsolidationAck] = []
        # Chains some Consolidate call named: only these may hold digests.
        self.chains_consolidated: set[Chain] = set()
        # Problems seen in replies themselves, in words: a rejected item, a reply naming another
        # key than was sent at its index, one key acknowledged under two episode ids.
        self.reply_findings: list[str] = []

    # ---- sends ----

    def start_stream(self, cycle: int, per_message: int) -> SentStream:
        stream = SentStream(per_message)
        with self._lock:
            self.sends[cycle].streams.append(stream)
        return stream

    def sent_in_stream(self, stream: SentStream, items: Iterable[Item]) -> None:
        with self._lock:
            for item in items:
                stream.items.append(item)
                self.items[item.key] = item

    def sent_append(self, cycle: int, item: Item) -> None:
        with self._lock:
            self.sends[cycle].appends.append(item)
            self.items[item.key] = item

    def sent_consolidation(
        self, cycle: int, call: ConsolidateCall, *, by_retry: bool
    ) -> ConsolidationSend:
        now_us = (
            call.now_seconds * MICROS_PER_SECOND
            if call.now_seconds is not None
            else time.time_ns() // 1_000
        )
        with self._lock:
            if not by_retry:  # a retry resends the cycle's calls: they are listed already
                self.sends[cycle].consolidations.append(call)
            self.chains_consolidated.add(call.chain)
            return ConsolidationSend(call, len(self.acks), now_us)

    # ---- acknowledgements ----

    def acknowledge_append(
        self, item: Item, reply: pb.AppendEpisodeReply, cycle: int, *, by_retry: bool
    ) -> Outcome:
        outcome = Outcome.DUPLICATE if reply.duplicate else Outcome.INSERTED
        if reply.episode.client_key != item.key:
            self._finding(f"AppendEpisode {item.key}: reply names {reply.episode.client_key!r}")
        self._ack(item.key, Rpc.APPEND, reply.episode.episode_id, cycle, by_retry)
        return outcome

    def acknowledge_ingest(
        self,
        stream_items: Sequence[Item],
        results: Iterable[pb.IngestItemResult],
        cycle: int,
        *,
        by_retry: bool,
    ) -> list[tuple[Item, Outcome]]:
        """Records the per-item results of one IngestEpisodes reply (or, one day, of one chunk);
        `stream_items` are the stream's items in the order sent, which `index` counts."""
        out: list[tuple[Item, Outcome]] = []
        for result in results:
            item = stream_items[result.index]
            if result.client_key != item.key:
                self._finding(
                    f"IngestEpisodes index {result.index}: sent {item.key}, "
                    f"reply names {result.client_key!r}"
                )
            outcome = _INGEST_OUTCOMES.get(result.status, Outcome.REJECTED)
            if outcome is Outcome.REJECTED:
                self._finding(
                    f"IngestEpisodes {item.key} {pb.IngestStatus.Name(result.status)}: "
                    f"{result.reason}"
                )
            else:
                self._ack(item.key, Rpc.INGEST, result.episode_id, cycle, by_retry)
            out.append((item, outcome))
        return out

    def acknowledge_consolidation(
        self, send: ConsolidationSend, reply: pb.ConsolidateReply, cycle: int, *, by_retry: bool
    ) -> None:
        with self._lock:
            self.consolidation_acks.append(
                ConsolidationAck(send, cycle, by_retry, reply.consolidation_episodes)
            )

    def _ack(self, key: str, rpc: Rpc, episode_id: int, cycle: int, by_retry: bool) -> None:
        with self._lock:
            first = self.acks.setdefault(
                key, Ack(rpc, episode_id, cycle, by_retry, order=len(self.acks))
            )
        if first.episode_id != episode_id:
            self._finding(
                f"{key} acknowledged as episode {first.episode_id} (cycle {first.cycle}) and "
                f"as episode {episode_id} (cycle {cycle})"
            )

    def _finding(self, text: str) -> None:
        with self._lock:
            self.reply_findings.append(text)

    # ---- figures ----

    def acknowledged_by_load(self, cycle: int) -> dict[str, int]:
        """Items the cycle's load saw acknowledged before the kill, and Consolidate calls."""
        with self._lock:
            acks = [a for a in self.acks.values() if a.cycle == cycle and not a.by_retry]
            calls = sum(a.cycle == cycle and not a.by_retry for a in self.consolidation_acks)
        return {
            Rpc.APPEND.value: sum(a.rpc is Rpc.APPEND for a in acks),
            Rpc.INGEST.value: sum(a.rpc is Rpc.INGEST for a in acks),
            Rpc.CONSOLIDATE.value: calls,
        }
