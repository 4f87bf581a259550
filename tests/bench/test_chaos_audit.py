"""The crash campaign's checks catch what they are meant to catch: fed a server that lost an
acknowledged item, stored one twice, answers VerifyChain with a break, left an item out of the
digests a Consolidate reply promised or put it in two, the audit says so; and the acknowledgement
book maps per-item ingest results to the items sent."""

from __future__ import annotations

from typing import cast

from bench._chaos_acks import AckBook, Outcome
from bench._chaos_audit import audit, retry_cycle
from bench._chaos_plan import (
    BASE_SECONDS,
    CHAINS,
    Chain,
    ConsolidateCall,
    Item,
    appends,
    ingest_streams,
    kill_after,
)

from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

CHAIN = CHAINS[0]


class FakeServer:
    """Answers ListEpisodes (paged) and VerifyChain from rows set by the test."""

    def __init__(self) -> None:
        self.rows: dict[Chain, list[pb.Episode]] = {c: [] for c in CHAINS}
        self.broken: set[Chain] = set()
        self.next_id = 1

    def store(self, item: Item) -> pb.Episode:
        rows = self.rows[item.chain]
        e = item.episode
        ep = pb.Episode(
            episode_id=self.next_id,
            student_id=e.student_id,
            subject_id=e.subject_id,
            seq=len(rows) + 1,
            kind=e.kind,
            summary=e.summary,
            text=e.text,
            client_key=e.client_key,
            occurred_at=e.occurred_at,
            check=e.check,
        )
        self.next_id += 1
        rows.append(ep)
        return ep

    def ListEpisodes(self, request: pb.ListEpisodesRequest, timeout: float) -> pb.ListEpisodesReply:
        rows = self.rows[Chain(request.student_id, request.subject_id)]
        start = int(request.page_token or 0)
        end = start + 2  # tiny pages, so that paging is exercised
        reply = pb.ListEpisodesReply(episodes=rows[start:end])
        if end < len(rows):
            reply.next_page_token = str(end)
        return reply

    def VerifyChain(self, request: pb.VerifyChainRequest, timeout: float) -> pb.VerifyChainReply:
        chain = Chain(request.student_id, request.subject_id)
        reply = pb.VerifyChainReply(ok=chain not in self.broken, length=len(self.rows[chain]))
        if chain in self.broken:
            reply.first_break.seq = 1
            reply.first_break.reason = "hash does not recompute"
        return reply

    def AppendEpisode(
        self, request: pb.AppendEpisodeRequest, timeout: float
    ) -> pb.AppendEpisodeReply:
        # A broken server: inserts again whatever it is sent.
        item = Item(Chain(request.episode.student_id, request.episode.subject_id), request.episode)
        return pb.AppendEpisodeReply(episode=self.store(item), duplicate=False)


def _stub(server: FakeServer) -> pb_grpc.MemoryStub:
    return cast(pb_grpc.MemoryStub, server)


def _items(n: int) -> list[Item]:
    out = []
    for item in appends(seed=1, cycle=0, lane=0):
        out.append(item)
        if len(out) == n:
            return out
    raise AssertionError("unreachable")


def _sent_and_acknowledged(book: AckBook, server: FakeServer, items: list[Item]) -> None:
    for item in items:
        book.sent_append(0, item)
        stored = server.store(item)
        book.acknowledge_append(item, pb.AppendEpisodeReply(episode=stored), 0, by_retry=False)


def test_a_faithful_server_passes() -> None:
    server, book = FakeServer(), AckBook()
    _sent_and_acknowledged(book, server, _items(7))
    found = audit(_stub(server), book)
    assert found.problems() == []
    assert found.stored_episodes == 7


def test_a_lost_acknowledged_item_is_reported() -> None:
    server, book = FakeServer(), AckBook()
    items = _items(5)
    _sent_and_acknowledged(book, server, items)
    lost = items[2]
    server.rows[lost.chain] = [e for e in server.rows[lost.chain] if e.client_key != lost.key]
    found = audit(_stub(server), book)
    assert list(found.lost) == [f"{lost.chain} {lost.key}"]


def test_a_key_stored_twice_is_a_duplicate() -> None:
    server, book = FakeServer(), AckBook()
    items = _items(4)
    _sent_and_acknowledged(book, server, items)
    server.store(items[1])
    found = audit(_stub(server), book)
    assert list(found.duplicates) == [f"{items[1].chain} {items[1].key}"]
    # Its second row has another id than the one acknowledged.
    assert list(found.wrong_content) == [f"{items[1].chain} {items[1].key} id"]


def test_a_chain_that_does_not_verify_is_a_failure() -> None:
    server, book = FakeServer(), AckBook()
    _sent_and_acknowledged(book, server, _items(3))
    server.broken.add(CHAINS[1])
    found = audit(_stub(server), book)
    assert list(found.verification_failures) == [f"{CHAINS[1]} verify"]


def test_a_retry_that_inserts_a_stored_item_again_is_reported() -> None:
    server, book = FakeServer(), AckBook()
    items = _items(3)
    _sent_and_acknowledged(book, server, items)
    found = audit(_stub(server), book)
    retry = retry_cycle(_stub(server), book, 0, found.present)
    assert retry.inserted == 3
    assert retry.problems == [f"retry of {i.key} inserted it again" for i in items]
    assert len(audit(_stub(server), book).duplicates) == 3


def test_ingest_results_acknowledge_by_index_and_rejections_acknowledge_nothing() -> None:
    book = AckBook()
    items = _items(3)
    results = [
        pb.IngestItemResult(
            index=2, client_key=items[2].key, status=pb.INGEST_STATUS_INSERTED, episode_id=9
        ),
        pb.IngestItemResult(
            index=0, client_key=items[0].key, status=pb.INGEST_STATUS_REJECTED, reason="text"
        ),
        pb.IngestItemResult(
            index=1, client_key=items[1].key, status=pb.INGEST_STATUS_DUPLICATE, episode_id=4
        ),
    ]
    outcomes = book.acknowledge_ingest(items, results, 0, by_retry=False)
    assert [(i.key, o) for i, o in outcomes] == [
        (items[2].key, Outcome.INSERTED),
        (items[0].key, Outcome.REJECTED),
        (items[1].key, Outcome.DUPLICATE),
    ]
    assert {k: a.episode_id for k, a in book.acks.items()} == {items[2].key: 9, items[1].key: 4}
    assert len(book.reply_findings) == 1


def test_the_workload_is_reproducible_from_the_seed() -> None:
    def first(seed: int) -> tuple[list[bytes], list[bytes], float]:
        streams = ingest_streams(seed, cycle=3, lane=1)
        stream = next(streams)
        appended = appends(seed, cycle=3, lane=0)
        return (
            [i.episode.SerializeToString() for i in stream.items],
            [next(appended).episode.SerializeToString() for _ in range(5)],
            kill_after(seed, 3),
        )

    assert first(5) == first(5)
    assert first(5) != first(6)


# ---- the nightly cycle's promises ----

DAY = 86_400


def _timed(key: str, seconds: int) -> Item:
    ep = pb.NewEpisode(
        student_id=CHAIN.student_id,
        subject_id=CHAIN.subject_id,
        kind=pb.EPISODE_KIND_QUESTION,
        summary=key,
        text=key,
        client_key=key,
    )
    ep.occurred_at.seconds = seconds
    return Item(CHAIN, ep)


def _digest(server: FakeServer, day_start: int, first: int, last: int, key: str = "") -> None:
    rows = server.rows[CHAIN]
    ep = pb.Episode(
        episode_id=server.next_id,
        seq=len(rows) + 1,
        kind=pb.EPISODE_KIND_CONSOLIDATION,
        client_key=key or f"digest:{day_start * 1_000_000}:{first}:{last}",
    )
    ep.occurred_at.seconds = day_start + DAY - 1
    server.next_id += 1
    rows.append(ep)


def _consolidated(book: AckBook, now_seconds: int) -> None:
    send = book.sent_consolidation(0, ConsolidateCall(CHAIN, now_seconds), by_retry=False)
    reply = pb.ConsolidateReply(consolidation_episodes=1)
    book.acknowledge_consolidation(send, reply, 0, by_retry=False)


def test_items_digested_once_keep_the_promise() -> None:
    server, book = FakeServer(), AckBook()
    _sent_and_acknowledged(
        book, server, [_timed("a", BASE_SECONDS + 10), _timed("b", BASE_SECONDS + 20)]
    )
    _consolidated(book, BASE_SECONDS + DAY)
    _digest(server, BASE_SECONDS, 1, 2)
    found = audit(_stub(server), book)
    assert found.problems() == []
    assert found.digests == 1


def test_an_acknowledged_item_of_an_ended_day_in_no_digest_is_reported() -> None:
    server, book = FakeServer(), AckBook()
    _sent_and_acknowledged(
        book, server, [_timed("a", BASE_SECONDS + 10), _timed("b", BASE_SECONDS + 20)]
    )
    _consolidated(book, BASE_SECONDS + DAY)
    _digest(server, BASE_SECONDS, 1, 1)
    found = audit(_stub(server), book)
    assert list(found.undigested) == [f"{CHAIN} b"]


def test_no_digest_is_owed_for_a_day_not_ended_or_an_item_acknowledged_after_the_call() -> None:
    server, book = FakeServer(), AckBook()
    _sent_and_acknowledged(book, server, [_timed("next-day", BASE_SECONDS + DAY + 5)])
    _consolidated(book, BASE_SECONDS + DAY)
    _sent_and_acknowledged(book, server, [_timed("late", BASE_SECONDS + 30)])
    assert audit(_stub(server), book).problems() == []


def test_an_item_in_two_digests_is_reported() -> None:
    server, book = FakeServer(), AckBook()
    _sent_and_acknowledged(
        book, server, [_timed("a", BASE_SECONDS + 10), _timed("b", BASE_SECONDS + 20)]
    )
    _consolidated(book, BASE_SECONDS + DAY)
    _digest(server, BASE_SECONDS, 1, 2)
    _digest(server, BASE_SECONDS, 2, 2)
    found = audit(_stub(server), book)
    assert list(found.digested_twice) == [f"{CHAIN} b"]


def test_a_digest_key_the_campaign_cannot_read_is_reported() -> None:
    server, book = FakeServer(), AckBook()
    _sent_and_acknowledged(book, server, [_timed("a", BASE_SECONDS + 10)])
    _consolidated(book, BASE_SECONDS + DAY)
    _digest(server, BASE_SECONDS, 1, 1, key="digest-of-day-one")
    found = audit(_stub(server), book)
    assert list(found.unexpected_rows) == [f"{CHAIN} digest-of-day-one"]
    assert list(found.undigested) == [f"{CHAIN} a"]
