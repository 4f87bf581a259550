"""After a restart: what the server holds, compared with what it acknowledged; then the retry of
everything the killed cycle sent.

Everything here goes through the public API (ListEpisodes, VerifyChain, the write RPCs), as a
client that lost its connection would.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import grpc

from bench._chaos_acks import AckBook, Outcome
from bench._chaos_digests import check_digests
from bench._chaos_plan import CHAINS, Chain, Item
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

# The largest page ListEpisodes serves.
LIST_PAGE = 1_000
# Deadline of one audit or retry call, in seconds.
AUDIT_TIMEOUT = 120.0


@dataclass(slots=True)
class Audit:
    stored_episodes: int = 0
    # Stored rows per (chain, client key): digests of different chains share a key.
    present: Counter[tuple[Chain, str]] = field(default_factory=Counter)
    # Problems by what they concern ("<chain> <key>", or the chain), each told in words a reader
    # can act on; keyed so that one item found lost by several audits counts once.
    lost: dict[str, str] = field(default_factory=dict)
    duplicates: dict[str, str] = field(default_factory=dict)
    wrong_content: dict[str, str] = field(default_factory=dict)
    unexpected_rows: dict[str, str] = field(default_factory=dict)
    verification_failures: dict[str, str] = field(default_factory=dict)
    # The nightly cycle's promises (see _chaos_digests).
    digests: int = 0
    undigested: dict[str, str] = field(default_factory=dict)
    digested_twice: dict[str, str] = field(default_factory=dict)

    def problems(self) -> list[str]:
        kinds = [self.lost, self.duplicates, self.wrong_content, self.unexpected_rows]
        kinds += [self.verification_failures, self.undigested, self.digested_twice]
        return [text for kind in kinds for text in kind.values()]


def list_chain(stub: pb_grpc.MemoryStub, chain: Chain) -> list[pb.Episode]:
    request = pb.ListEpisodesRequest(
        student_id=chain.student_id, subject_id=chain.subject_id, page_size=LIST_PAGE
    )
    out: list[pb.Episode] = []
    while True:
        reply: pb.ListEpisodesReply = stub.ListEpisodes(request, timeout=AUDIT_TIMEOUT)
        out.extend(reply.episodes)
        if not reply.next_page_token:
            return out
        request.page_token = reply.next_page_token


def _content_differs(stored: pb.Episode, sent: pb.NewEpisode) -> str | None:
    if stored.kind != sent.kind or stored.summary != sent.summary or stored.text != sent.text:
        return "kind, summary or text"
    if sent.HasField("occurred_at") and stored.occurred_at != sent.occurred_at:
        return "occurred_at"
    if sent.HasField("check") and stored.check != sent.check:
        return "check"
    return None


def audit(stub: pb_grpc.MemoryStub, book: AckBook) -> Audit:
    """Lists every chain: each acknowledged item must be stored exactly once, under the episode
    id its acknowledgement named and with the content sent; every chain must verify; the digests
    must keep the nightly cycle's promises."""
    result = Audit()
    for chain in CHAINS:
        episodes = list_chain(stub, chain)
        result.stored_episodes += len(episodes)
        _check_chain(stub, chain, episodes, result)
        for ep in episodes:
            result.present[chain, ep.client_key] += 1
            _check_row(book, chain, ep, result)
        digests = check_digests(chain, episodes, book)
        result.digests += digests.digests
        result.undigested |= digests.undigested
        result.digested_twice |= digests.digested_twice
        result.unexpected_rows |= digests.bad_digests
    for (chain, key), count in sorted(result.present.items()):
        if count > 1:
            result.duplicates[f"{chain} {key}"] = f"{key} of {chain} stored {count} times"
    for key, ack in sorted(book.acks.items()):
        chain = book.items[key].chain
        if (chain, key) not in result.present:
            result.lost[f"{chain} {key}"] = (
                f"{key} of {chain} acknowledged by {ack.rpc.value} in cycle {ack.cycle} as "
                f"episode {ack.episode_id}, not stored"
            )
    return result


def _check_row(book: AckBook, chain: Chain, ep: pb.Episode, result: Audit) -> None:
    key = ep.client_key
    if ep.kind == pb.EPISODE_KIND_CONSOLIDATION:
        if chain not in book.chains_consolidated:
            result.unexpected_rows[f"{chain} {key}"] = (
                f"digest {key} of {chain}, a chain no Consolidate call named"
            )
        return
    item = book.items.get(key)
    if item is None or item.chain != chain:
        result.unexpected_rows[f"{chain} {key}"] = (
            f"episode {ep.episode_id} of {chain} with key {key!r}, which was never sent to it"
        )
        return
    differs = _content_differs(ep, item.episode)
    if differs is not None:
        result.wrong_content[f"{chain} {key}"] = (
            f"{key} of {chain}: stored {differs} differs from what was sent"
        )
    ack = book.acks.get(key)
    if ack is not None and ack.episode_id != ep.episode_id:
        result.wrong_content[f"{chain} {key} id"] = (
            f"{key} of {chain} acknowledged as episode {ack.episode_id}, stored as {ep.episode_id}"
        )


def _check_chain(
    stub: pb_grpc.MemoryStub, chain: Chain, episodes: list[pb.Episode], result: Audit
) -> None:
    verify: pb.VerifyChainReply = stub.VerifyChain(
        pb.VerifyChainRequest(student_id=chain.student_id, subject_id=chain.subject_id),
        timeout=AUDIT_TIMEOUT,
    )
    if not verify.ok:
        b = verify.first_break
        result.verification_failures[f"{chain} verify"] = (
            f"{chain}: VerifyChain breaks at seq {b.seq} (episode {b.episode_id}): {b.reason}"
        )
    if verify.length != len(episodes):
        result.verification_failures[f"{chain} length"] = (
            f"{chain}: VerifyChain length {verify.length}, ListEpisodes {len(episodes)} rows"
        )
    seqs = sorted(ep.seq for ep in episodes)
    if seqs != list(range(1, len(episodes) + 1)):
        result.verification_failures[f"{chain} seq"] = (
            f"{chain}: sequence numbers are not 1..{len(seqs)}"
        )


@dataclass(slots=True)
class Retry:
    items: int = 0
    inserted: int = 0
    duplicate: int = 0
    rejected: int = 0
    consolidate_calls: int = 0
    # Items whose retry disagreed with what the audit found stored, and calls that failed.
    problems: list[str] = field(default_factory=list)


def retry_cycle(
    stub: pb_grpc.MemoryStub,
    book: AckBook,
    cycle: int,
    present: Mapping[tuple[Chain, str], int],
) -> Retry:
    """Resends everything the killed cycle sent, by the RPC that first sent it: only items the
    audit did not find may be inserted, the others must come back as duplicates."""
    out = Retry()
    sends = book.sends[cycle]

    def tally(outcomes: Iterable[tuple[Item, Outcome]]) -> None:
        for item, outcome in outcomes:
            out.items += 1
            stored = (item.chain, item.key) in present
            if outcome is Outcome.INSERTED:
                out.inserted += 1
                if stored:
                    out.problems.append(f"retry of {item.key} inserted it again")
            elif outcome is Outcome.DUPLICATE:
                out.duplicate += 1
                if not stored:
                    out.problems.append(f"retry of {item.key} says duplicate, audit found none")
            else:
                out.rejected += 1
                out.problems.append(f"retry of {item.key} rejected")

    try:
        for item in sends.appends:
            reply: pb.AppendEpisodeReply = stub.AppendEpisode(
                pb.AppendEpisodeRequest(episode=item.episode), timeout=AUDIT_TIMEOUT
            )
            tally([(item, book.acknowledge_append(item, reply, cycle, by_retry=True))])
        for stream in sends.streams:
            if not stream.items:
                continue
            messages = ingest_messages([i.episode for i in stream.items], stream.per_message)
            ingested: pb.IngestEpisodesReply = stub.IngestEpisodes(messages, timeout=AUDIT_TIMEOUT)
            tally(book.acknowledge_ingest(stream.items, ingested.items, cycle, by_retry=True))
            if len(ingested.items) != len(stream.items):
                out.problems.append(
                    f"retry of a stream of {len(stream.items)} items answered for "
                    f"{len(ingested.items)}"
                )
        for call in sends.consolidations:
            out.consolidate_calls += 1
            send = book.sent_consolidation(cycle, call, by_retry=True)
            done: pb.ConsolidateReply = stub.Consolidate(call.request(), timeout=AUDIT_TIMEOUT)
            book.acknowledge_consolidation(send, done, cycle, by_retry=True)
    except grpc.RpcError as exc:
        code = exc.code() if isinstance(exc, grpc.Call) else None
        details = exc.details() if isinstance(exc, grpc.Call) else str(exc)
        out.problems.append(f"retry failed: {code} {details}")
    return out
