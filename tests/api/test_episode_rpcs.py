"""AppendEpisode, IngestEpisodes and ListEpisodes through the real server."""

from __future__ import annotations

import grpc
import pytest

from tests.helpers.harness import A, Harness, question
from tutor_memory.app.ingest import INGEST_CHUNK
from tutor_memory.domain.chain import GENESIS_HASH
from tutor_memory.domain.episodes import (
    SALIENCE_CHECK_WRONG,
    SALIENCE_QUESTION,
    SALIENCE_TAUGHT,
    ChainKey,
)
from tutor_memory_client._proto import memory_pb2 as pb

FINGERPRINT = "ab" * 32
DAY = 86_400
JAN_2025 = 1_735_689_600


async def test_append_then_list_round_trips_every_field(harness: Harness) -> None:
    check = pb.NewEpisode(
        student_id="s1",
        subject_id="biology",
        kind=pb.EPISODE_KIND_CHECK,
        summary="Osmosis check: wrong",
        text="Asked to explain osmosis; confused it with diffusion.",
        concepts=["osmosis", "diffusion"],
        evidence=[pb.Evidence(file_id="bio-ch3.pdf", page=12, file_fingerprint=FINGERPRINT)],
        check=pb.CheckResult(
            outcome=pb.CHECK_OUTCOME_WRONG, topic="osmosis", predicted_mastery=0.7
        ),
        client_key="c-1",
    )
    check.occurred_at.seconds = JAN_2025
    taught = pb.NewEpisode(
        student_id="s1",
        subject_id="biology",
        kind=pb.EPISODE_KIND_TAUGHT,
        summary="We call mitochondria the powerhouse",
        text="Remember that in our class we call the mitochondria the powerhouse of the cell.",
        concepts=["mitochondria"],
    )
    first = (await harness.append(check)).episode
    second = (await harness.append(taught)).episode

    assert (first.seq, second.seq) == (1, 2)
    assert first.prev_hash == GENESIS_HASH
    assert second.prev_hash == first.hash
    assert first.salience == SALIENCE_CHECK_WRONG
    assert second.salience == SALIENCE_TAUGHT
    assert first.recorded_at.seconds > 0

    listed = await harness.list_all()
    assert [e.episode_id for e in listed] == [first.episode_id, second.episode_id]
    got = listed[0]
    assert got == first
    assert list(got.concepts) == ["osmosis", "diffusion"]
    assert got.evidence[0].page == 12
    assert got.check.outcome == pb.CHECK_OUTCOME_WRONG
    assert got.check.predicted_mastery == pytest.approx(0.7)
    assert got.occurred_at.seconds == JAN_2025


async def test_append_with_same_client_key_and_content_is_a_duplicate(harness: Harness) -> None:
    ep = question("what is a cell?", key="k1", seconds=JAN_2025)
    first = await harness.append(ep)
    again = await harness.append(ep)
    assert not first.duplicate
    assert again.duplicate
    assert again.episode == first.episode
    assert len(await harness.list_all()) == 1


async def test_retry_without_occurred_at_still_matches_its_first_write(harness: Harness) -> None:
    ep = question("what is a cell?", key="k-now")
    first = await harness.append(ep)
    again = await harness.append(ep)
    assert again.duplicate
    assert again.episode.episode_id == first.episode.episode_id


async def test_same_client_key_with_other_content_is_already_exists(harness: Harness) -> None:
    await harness.append(question("what is a cell?", key="k1"))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.append(question("what is osmosis?", key="k1"))
    assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert "client_key" in (err.value.details() or "")
    assert len(await harness.list_all()) == 1


async def test_batch_ingest_counts_and_retry_never_duplicates(harness: Harness) -> None:
    n = max(INGEST_CHUNK * 2 + 17, 450)  # crosses chunk boundaries, holds the items below
    batch = [question(f"question number {i}", key=f"b-{i}", seconds=JAN_2025 + i) for i in range(n)]
    batch[5].kind = pb.EPISODE_KIND_UNSPECIFIED
    batch[300].client_key = ""
    batch[400].summary = ""

    first = await harness.ingest(batch)
    assert (first.inserted, first.duplicate, first.rejected) == (n - 3, 0, 3)
    assert [r.index for r in first.items] == list(range(n))
    rejected = {r.index: r.reason for r in first.items if r.status == pb.INGEST_STATUS_REJECTED}
    assert rejected.keys() == {5, 300, 400}
    assert rejected[5].startswith("kind:")
    assert rejected[300].startswith("client_key:")
    assert rejected[400].startswith("summary:")

    retry = await harness.ingest(batch)
    assert (retry.inserted, retry.duplicate, retry.rejected) == (0, n - 3, 3)
    ids_first = [r.episode_id for r in first.items]
    ids_retry = [r.episode_id for r in retry.items]
    assert ids_first == ids_retry

    stored = await harness.list_all()
    assert len(stored) == n - 3
    assert [e.seq for e in sorted(stored, key=lambda e: e.seq)] == list(range(1, n - 2))


async def test_batch_sent_one_item_per_message_is_the_same_batch(harness: Harness) -> None:
    batch = [question(f"q{i}", key=f"k{i}") for i in range(INGEST_CHUNK + 3)]
    reply = await harness.ingest(batch, per_message=1)
    assert reply.inserted == len(batch)
    assert [r.index for r in reply.items] == list(range(len(batch)))
    assert [e.summary for e in await harness.list_all()] == [e.summary for e in batch]


async def test_batch_with_repeated_key_inside_it_stores_one(harness: Harness) -> None:
    batch = [question("same", key="dup"), question("same", key="dup"), question("other", key="x")]
    reply = await harness.ingest(batch)
    statuses = [r.status for r in reply.items]
    assert statuses == [
        pb.INGEST_STATUS_INSERTED,
        pb.INGEST_STATUS_DUPLICATE,
        pb.INGEST_STATUS_INSERTED,
    ]
    assert len(await harness.list_all()) == 2


async def test_batch_spans_several_chains(harness: Harness) -> None:
    batch = [
        question("q1", student="s1", key="1"),
        question("q2", student="s2", key="2"),
        question("q3", student="s1", subject="chemistry", key="3"),
    ]
    reply = await harness.ingest(batch)
    assert reply.inserted == 3
    assert len(await harness.list_all("s1", "biology")) == 1
    assert len(await harness.list_all("s2", "biology")) == 1
    assert len(await harness.list_all("s1", "chemistry")) == 1


async def test_list_is_time_ordered_ranged_and_paged(harness: Harness) -> None:
    # Written out of time order: listing follows occurred_at, not arrival.
    days = [5, 1, 3, 2, 4, 9, 7]
    await harness.ingest(
        [question(f"day {d}", key=f"d{d}", seconds=JAN_2025 + d * DAY) for d in days]
    )
    request = pb.ListEpisodesRequest(student_id="s1", subject_id="biology", page_size=2)
    request.occurred_from.seconds = JAN_2025 + 2 * DAY
    request.occurred_to.seconds = JAN_2025 + 8 * DAY
    seen: list[str] = []
    pages = 0
    while True:
        reply = await harness.stub.ListEpisodes(request, metadata=A)
        pages += 1
        seen.extend(e.summary for e in reply.episodes)
        if not reply.next_page_token:
            break
        request.page_token = reply.next_page_token
    assert seen == ["day 2", "day 3", "day 4", "day 5", "day 7"]
    assert pages == 3


async def test_page_token_of_another_query_is_refused(harness: Harness) -> None:
    await harness.ingest([question(f"q{i}", key=f"q{i}") for i in range(3)])
    first = await harness.stub.ListEpisodes(
        pb.ListEpisodesRequest(student_id="s1", subject_id="biology", page_size=1),
        metadata=A,
    )
    assert first.next_page_token
    for token, problem in ((first.next_page_token, "different query"), ("%%%", "malformed")):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await harness.stub.ListEpisodes(
                pb.ListEpisodesRequest(
                    student_id="s2", subject_id="biology", page_size=1, page_token=token
                ),
                metadata=A,
            )
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert problem in (err.value.details() or "")


async def test_unknown_student_lists_nothing(harness: Harness) -> None:
    assert await harness.list_all("nobody", "biology") == []


async def test_question_salience_comes_from_the_table(harness: Harness) -> None:
    reply = await harness.append(question("what is a cell?"))
    assert reply.episode.salience == SALIENCE_QUESTION


async def test_the_episode_list_pages_newest_first_before_each_position(harness: Harness) -> None:
    """The console's newest-first timeline reads through the use case ListEpisodes reads with;
    both stores order by (occurred_at, seq) descending and page strictly before a position, ties
    of occurred_at broken by seq."""
    times = [JAN_2025 + DAY * d for d in (3, 1, 1, 5, 2, 1, 4)]
    await harness.ingest([question(f"q{i}", key=f"k{i}", seconds=t) for i, t in enumerate(times)])
    episodes = harness.app.services.episodes
    chain = ChainKey("tenant-a", "s1", "biology")
    # Days 1 to 4: q3 (day 5) is outside.
    window = {
        "occurred_from_us": (JAN_2025 + DAY) * 1_000_000,
        "occurred_to_us": (JAN_2025 + 5 * DAY) * 1_000_000,
    }

    async def every_page(newest_first: bool) -> list[str]:
        seen: list[str] = []
        after = None
        while True:
            page = await episodes.list(
                chain, **window, after=after, limit=2, newest_first=newest_first
            )
            seen.extend(e.summary for e in page.episodes)
            if not page.more:
                return seen
            after = (page.episodes[-1].occurred_at_us, page.episodes[-1].seq)

    oldest = await every_page(False)
    assert oldest == ["q1", "q2", "q5", "q4", "q0", "q6"]
    assert await every_page(True) == oldest[::-1]
