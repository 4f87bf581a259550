"""BuildBlock through the real server: the design document's failures, as scenario tests."""

from __future__ import annotations

from datetime import UTC, datetime

import grpc
import pytest

from tests.helpers.harness import A, B, Harness, question, start_harness, stop_harness
from tutor_memory.app.config import ServerConfig
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.models.tokenizers import TiktokenCounter
from tutor_memory_client._proto import memory_pb2 as pb

NOW = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def ts(year: int, month: int, day: int, hour: int = 10) -> int:
    return int(datetime(year, month, day, hour, tzinfo=UTC).timestamp())


def episode(
    summary: str,
    seconds: int,
    *,
    kind: pb.EpisodeKind = pb.EPISODE_KIND_QUESTION,
    key: str,
    outcome: pb.CheckOutcome = pb.CHECK_OUTCOME_UNSPECIFIED,
    concepts: tuple[str, ...] = (),
) -> pb.NewEpisode:
    ep = question(summary, key=key, seconds=seconds)
    ep.kind = kind
    ep.concepts.extend(concepts)
    if kind == pb.EPISODE_KIND_CHECK:
        ep.check.outcome = outcome
        ep.check.topic = concepts[0] if concepts else summary
    return ep


async def block(
    h: Harness,
    query: str,
    *,
    budget: int = 1500,
    mode: pb.BlockMode = pb.BLOCK_MODE_FULL,
    md: object = A,
    deadline: float | None = None,
) -> pb.BuildBlockReply:
    request = pb.BuildBlockRequest(
        student_id="s1",
        subject_id="biology",
        query=query,
        budget_tokens=budget,
        time_zone="Europe/Rome",
        mode=mode,
    )
    request.now.seconds = int(NOW.timestamp())
    reply: pb.BuildBlockReply = await h.stub.BuildBlock(request, metadata=md, timeout=deadline)
    return reply


def wrong_osmosis_check(seconds: int, *, key: str) -> pb.NewEpisode:
    """A check on osmosis the student got wrong: a belief and a record item."""
    return episode(
        "Check on osmosis",
        seconds,
        kind=pb.EPISODE_KIND_CHECK,
        outcome=pb.CHECK_OUTCOME_WRONG,
        concepts=("osmosis",),
        key=key,
    )


def noise(n: int, start: int) -> list[pb.NewEpisode]:
    """n recent, irrelevant conversation turns, one an hour from `start`."""
    topics = ["fractions", "the weekend", "homework deadlines", "a football match", "music"]
    return [
        episode(
            f"Let's chat about {topics[i % len(topics)]}, take {i}", start + 3600 * i, key=f"n{i}"
        )
        for i in range(n)
    ]


async def test_old_exact_match_beats_500_newer_irrelevant_notes(harness: Harness) -> None:
    march = episode("What exactly happens in the Krebs cycle?", ts(2026, 3, 14), key="march")
    reply = await harness.ingest([march, *noise(520, ts(2026, 10, 1))])
    march_id = reply.items[0].episode_id
    got = await block(harness, "Can you remind me how the Krebs cycle works?")
    ids = [m.episode_id for m in got.memories]
    assert march_id in ids
    assert ids[0] == march_id or all(
        m.score <= got.memories[ids.index(march_id)].score for m in got.memories
    )
    assert "Krebs cycle" in got.text


async def test_month_question_puts_that_months_memories_in_the_block(harness: Harness) -> None:
    july = [
        episode("How does osmosis move water?", ts(2026, 7, 3), key="j1"),
        episode(
            "Osmosis moves water toward higher solute concentration.",
            ts(2026, 7, 3, 11),
            kind=pb.EPISODE_KIND_ANSWER,
            key="j2",
        ),
        wrong_osmosis_check(ts(2026, 7, 9), key="j3"),
    ]
    reply = await harness.ingest([*july, *noise(60, ts(2026, 9, 1))])
    july_ids = {r.episode_id for r in reply.items[:3]}
    got = await block(harness, "What did we cover in July?")
    assert got.time_window.label
    assert datetime.fromtimestamp(got.time_window.start.seconds, UTC).month in (6, 7)
    shown = {m.episode_id for m in got.memories}
    assert july_ids <= shown
    # Time is a filter: nothing from outside July.
    assert shown <= july_ids
    assert not got.no_record


async def test_empty_month_says_there_is_no_record(harness: Harness) -> None:
    await harness.ingest(noise(30, ts(2026, 9, 1)))
    got = await block(harness, "What did we do in February?")
    assert got.no_record
    assert list(got.memories) == []
    assert "NO RECORD" in got.text
    assert "FEBRUARY" in got.text.upper()


async def test_before_christmas_keeps_the_record_up_to_christmas_day(harness: Harness) -> None:
    # NOW is 20 November 2026: the last Christmas is 2025's.
    before = episode("How do I balance a redox equation?", ts(2025, 12, 10), key="b")
    after = episode("How do I balance a redox equation in base?", ts(2026, 1, 15), key="a")
    reply = await harness.ingest([before, after, *noise(30, ts(2026, 9, 1))])
    before_id, after_id = reply.items[0].episode_id, reply.items[1].episode_id
    got = await block(harness, "What did we cover before Christmas?")
    assert "Christmas 2025" in got.time_window.label
    shown = {m.episode_id for m in got.memories}
    assert before_id in shown
    assert after_id not in shown
    assert not got.no_record


async def test_an_empty_summer_says_there_is_no_record_but_a_question_about_seasons_is_no_period(
    harness: Harness,
) -> None:
    await harness.ingest(noise(30, ts(2026, 9, 1)))
    got = await block(harness, "cosa abbiamo fatto durante le vacanze estive?")
    assert got.no_record
    assert "SUMMER 2026" in got.text.upper()
    plain = await block(harness, "Why is it hotter in summer than in winter?")
    assert not plain.no_record
    assert not plain.time_window.label
    assert len(plain.memories) > 0


async def test_a_term_question_keeps_the_last_six_months_and_says_how_it_read_them(
    harness: Harness,
) -> None:
    # NOW is 20 November 2026: the term is read as 20 May 2026 up to now.
    last_year = wrong_osmosis_check(ts(2025, 11, 12), key="old")
    this_term = wrong_osmosis_check(ts(2026, 10, 8), key="new")
    reply = await harness.ingest([last_year, this_term, *noise(20, ts(2026, 11, 1))])
    old_id, new_id = (item.episode_id for item in reply.items[:2])
    got = await block(harness, "What did I get wrong since the start of term?")
    assert got.time_window.label.startswith("this term, read as the last 6 months (2026-05-20")
    shown = {m.episode_id for m in got.memories}
    assert new_id in shown
    assert old_id not in shown
    assert not got.no_record


async def earlier_question(harness: Harness, text: str) -> int:
    """One question of September's first week, then a month of noise from the 10th (nothing in
    NOW's week): the id of the question."""
    reply = await harness.ingest(
        [episode(text, ts(2026, 9, 3), key="q"), *noise(30, ts(2026, 9, 10))]
    )
    return reply.items[0].episode_id


def assert_unfiltered_block_shows(got: pb.BuildBlockReply, episode_id: int) -> None:
    """The block names no period, says no "no record", and shows the earlier question."""
    assert not got.no_record
    assert not got.HasField("time_window")
    assert episode_id in [m.episode_id for m in got.memories]


async def test_a_weekday_still_to_come_does_not_empty_the_block(harness: Harness) -> None:
    # NOW is a Friday and nothing happened last Monday: read as last Monday, the exam's day would
    # make a block that says there is no record and shows nothing about fractions.
    earlier = await earlier_question(harness, "How do I add fractions with different denominators?")
    got = await block(harness, "I have a test on Monday, can you help me with fractions?")
    assert_unfiltered_block_shows(got, earlier)
    asked = await block(harness, "What did we do on Monday?")
    assert asked.no_record
    assert asked.time_window.label.startswith("Monday")


async def test_an_exam_still_to_come_beside_a_question_of_the_past_does_not_empty_the_block(
    harness: Harness,
) -> None:
    # The question speaks of the past, which once read the exam's Monday as last Monday: a record
    # question about that Monday, with nothing in it, showing nothing about fractions.
    earlier = await earlier_question(harness, "How do I add fractions with different denominators?")
    got = await block(harness, "I have a test on Monday. What did we do on fractions?")
    assert got.record_mode
    assert_unfiltered_block_shows(got, earlier)
    framed = await block(harness, "On Monday in class, what did we do?")
    assert framed.no_record
    assert framed.time_window.label.startswith("Monday")


async def test_a_period_the_question_only_mentions_does_not_empty_the_block(
    harness: Harness,
) -> None:
    # Nothing happened last week (NOW's): read as the question's period, the student's week off
    # would make a block that says there is no record and shows nothing about prime numbers.
    earlier = await earlier_question(harness, "Is 51 a prime number?")
    got = await block(harness, "I was off sick last week, what is a prime number?")
    assert not got.record_mode
    assert_unfiltered_block_shows(got, earlier)
    asked = await block(harness, "I was off sick last week, what did I miss?")
    assert asked.no_record
    assert asked.time_window.label.startswith("last week")


async def test_the_first_turn_of_a_day_asking_for_today_gets_its_subjects_memories(
    harness: Harness,
) -> None:
    # Nothing was recorded today (NOW's) yet: read as the record of today, the plan would make a
    # record-mode block that says there is no record of today and shows nothing about algebra.
    earlier = await earlier_question(harness, "How do I solve linear equations in algebra?")
    got = await block(harness, "Can we do some algebra today?")
    assert_unfiltered_block_shows(got, earlier)
    asked = await block(harness, "What did we do today?")
    assert asked.no_record
    assert asked.time_window.label.startswith("today")


async def test_nine_copies_of_a_question_collapse_into_one_with_a_count(harness: Harness) -> None:
    copies = [episode("What is a cell?", ts(2026, 9, 1 + i), key=f"c{i}") for i in range(9)]
    reply = await harness.ingest([*copies, *noise(20, ts(2026, 10, 1))])
    got = await block(harness, "what is a cell?")
    cells = [m for m in got.memories if "What is a cell?" in m.line]
    assert len(cells) == 1
    assert cells[0].repeats == 9
    assert cells[0].line.endswith("(9 times)")
    assert set(cells[0].repeated_ids) == {r.episode_id for r in reply.items[:9]}


@pytest.mark.parametrize(
    "query", ["ماذا أخطأت؟", "Cosa ho sbagliato finora?", "What did I get wrong?"]
)
async def test_record_question_switches_to_record_mode(harness: Harness, query: str) -> None:
    reply = await harness.ingest(
        [
            wrong_osmosis_check(ts(2026, 6, 2), key="w1"),
            episode("Can we go over mitosis?", ts(2026, 6, 2, 11), key="q1"),
            *noise(600, ts(2026, 9, 1)),
        ]
    )
    wrong_check = reply.items[0].episode_id
    got = await block(harness, query)
    assert got.record_mode
    lines = got.text.splitlines()
    assert lines[1].startswith("THE STUDENT IS ASKING ABOUT THEIR OWN RECORD")
    # A wrong check from months ago reaches the block past 600 newer turns.
    assert wrong_check in [m.episode_id for m in got.memories]
    # The conversation is kept (R6.4): questions and answers are in it too.
    kinds = {m.kind for m in got.memories}
    assert pb.EPISODE_KIND_QUESTION in kinds


@pytest.mark.parametrize(
    "query", ["am I getting any better?", "sto andando meglio?", "hab ich mich verbessert?"]
)
async def test_a_record_question_no_rule_knows_is_recognised_by_its_embedding(
    harness: Harness, query: str
) -> None:
    await harness.ingest(noise(5, ts(2026, 9, 1)))
    got = await block(harness, query)
    assert got.record_mode


async def test_a_record_question_recognised_by_example_keeps_the_topic_it_names(
    harness: Harness,
) -> None:
    # No rule knows the question and no topic is read from it ("better *at* X" is no topic
    # preposition): its own words are searched, so the old exchange about the topic stays.
    reply = await harness.ingest(
        [
            episode("How does the nitrogen cycle work?", ts(2026, 3, 14), key="nitrogen"),
            wrong_osmosis_check(ts(2026, 6, 2), key="w1"),
            *noise(600, ts(2026, 9, 1)),
        ]
    )
    nitrogen, wrong_check = reply.items[0].episode_id, reply.items[1].episode_id
    got = await block(harness, "am i getting better at the nitrogen cycle", budget=300)
    assert got.record_mode
    shown = [m.episode_id for m in got.memories]
    assert nitrogen in shown
    assert wrong_check in shown


@pytest.mark.parametrize(
    ("query", "chatter"),
    [
        ("which questions did I get wrong in the quizzes?", "Are the quizzes on the website yet?"),
        ("cosa ho sbagliato nelle verifiche?", "Le verifiche sono già sul sito della classe?"),
    ],
)
async def test_a_record_question_that_names_the_records_own_events_is_about_the_whole_record(
    harness: Harness, query: str, chatter: str
) -> None:
    # "the quizzes" is the record's own word, not a topic: read as one, the record was searched
    # for it, and the chatter about quizzes filled the block in place of what was got wrong.
    about_quizzes = [
        episode(f"{chatter} ({i})", ts(2026, 9, 1, 8) + i, key=f"z{i}") for i in range(40)
    ]
    reply = await harness.ingest(
        [wrong_osmosis_check(ts(2026, 6, 2), key="w1"), *about_quizzes, *noise(200, ts(2026, 9, 2))]
    )
    wrong_check = reply.items[0].episode_id
    got = await block(harness, query, budget=300)
    assert got.record_mode
    assert wrong_check in [m.episode_id for m in got.memories]


@pytest.mark.parametrize(
    ("query", "old"),
    [
        ("i logaritmi li abbiamo già fatti, vero?", "Come si calcolano i logaritmi in base 2?"),
        ("did you already show me how logarithms work?", "How do logarithms work in base 2?"),
        ("les logarithmes, tu me les as déjà expliqués ?", "C'est quoi un logarithme en base 2 ?"),
    ],
)
async def test_asking_whether_a_topic_was_done_recalls_the_old_exchange_about_it(
    harness: Harness, query: str, old: str
) -> None:
    # A question of whether a topic was done, or explained, asks the record about that topic,
    # said before or after its phrase.
    reply = await harness.ingest(
        [episode(old, ts(2026, 3, 2), key="old"), *noise(300, ts(2026, 9, 2))]
    )
    got = await block(harness, query, budget=300)
    assert got.record_mode
    assert reply.items[0].episode_id in [m.episode_id for m in got.memories]


async def test_french_on_asking_about_a_day_is_a_record_question_about_it(
    harness: Harness,
) -> None:
    # "on" (we) is the student and the tutor in a French sentence: the question asks what the
    # sessions of last Monday (NOW's) were about. Read without a person, it was no record question.
    reply = await harness.ingest(
        [
            episode("Comment on calcule un logarithme en base 2 ?", ts(2026, 11, 16, 15), key="m"),
            *noise(20, ts(2026, 11, 17)),
        ]
    )
    got = await block(harness, "lundi dernier on était sur quel chapitre ?")
    assert got.record_mode
    assert got.time_window.label.startswith("Monday")
    assert [m.episode_id for m in got.memories] == [reply.items[0].episode_id]


@pytest.mark.parametrize(
    "query",
    [
        "abbiamo fatto i logaritmi in classe, ma cos'è la base?",
        "on a vu les logarithmes en cours, mais c'est quoi la base ?",
    ],
)
async def test_saying_what_was_done_before_a_subject_question_is_no_record_question(
    harness: Harness, query: str
) -> None:
    await harness.ingest(noise(5, ts(2026, 9, 1)))
    got = await block(harness, query)
    assert not got.record_mode


@pytest.mark.parametrize("query", ["what is a prime number?", "perché è caduto l'impero romano?"])
async def test_a_subject_question_stays_out_of_record_mode(harness: Harness, query: str) -> None:
    await harness.ingest(noise(5, ts(2026, 9, 1)))
    got = await block(harness, query)
    assert not got.record_mode


async def test_episodes_mode_has_no_record_mode(harness: Harness) -> None:
    await harness.ingest(noise(5, ts(2026, 9, 1)))
    got = await block(harness, "What did I get wrong?", mode=pb.BLOCK_MODE_EPISODES)
    assert not got.record_mode


async def test_tutor_narration_is_not_recalled_as_a_memory_of_july(harness: Harness) -> None:
    reply = await harness.ingest(
        [
            episode("What is photosynthesis?", ts(2026, 7, 10), key="real"),
            episode(
                "In July we covered photosynthesis and osmosis.",
                ts(2026, 8, 20),
                kind=pb.EPISODE_KIND_ANSWER,
                key="narration",
            ),
        ]
    )
    real, narration = (r.episode_id for r in reply.items)
    got = await block(harness, "What did we cover in July?")
    shown = [m.episode_id for m in got.memories]
    assert real in shown
    assert narration not in shown


async def test_month_with_only_a_narration_of_it_has_no_record(harness: Harness) -> None:
    await harness.ingest(
        [
            episode(
                "In May we studied the cell membrane.",
                ts(2026, 5, 20),
                kind=pb.EPISODE_KIND_ANSWER,
                key="narration",
            )
        ]
    )
    got = await block(harness, "what did we study in May?")
    assert got.no_record
    assert list(got.memories) == []


@pytest.mark.parametrize("budget", [50, 80, 120, 200, 400, 800, 1500, 3000, 8000])
async def test_block_never_exceeds_its_budget(harness: Harness, budget: int) -> None:
    long_ones = [
        episode(
            ("Explain the light reactions of photosynthesis in detail " * 8)[:480] + f" v{i}",
            ts(2026, 9, 1) + i,
            key=f"l{i}",
        )
        for i in range(60)
    ]
    await harness.ingest([*long_ones, *noise(200, ts(2026, 10, 1))])
    counter = TiktokenCounter()
    for query in ("photosynthesis light reactions", "", "what did I get wrong?", "in September?"):
        got = await block(harness, query, budget=budget)
        assert got.tokens_used <= budget
        assert counter.count(got.text) == got.tokens_used
        assert got.budget_tokens == budget


async def test_one_millisecond_deadline_drops_the_block_and_the_next_call_works(
    harness: Harness,
) -> None:
    await harness.ingest(noise(300, ts(2026, 9, 1)))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await block(harness, "football", deadline=0.001)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    got = await block(harness, "football")
    assert got.memories


async def test_hard_cap_drops_the_block(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    from dataclasses import replace

    h = await start_harness(replace(server_config, block_cap_seconds=0.0), embedder)
    try:
        await h.ingest(noise(50, ts(2026, 9, 1)))
        got = await block(h, "football")
        assert got.dropped
        assert got.text == ""
    finally:
        await stop_harness(h)


async def test_window_mode_shows_the_last_twenty_turns(harness: Harness) -> None:
    reply = await harness.ingest(noise(50, ts(2026, 9, 1)))
    got = await block(harness, "anything", mode=pb.BLOCK_MODE_WINDOW, budget=8000)
    assert {m.episode_id for m in got.memories} == {r.episode_id for r in reply.items[-20:]}


async def test_none_mode_is_an_empty_block(harness: Harness) -> None:
    await harness.ingest(noise(5, ts(2026, 9, 1)))
    got = await block(harness, "football", mode=pb.BLOCK_MODE_NONE)
    assert got.text == ""
    assert list(got.memories) == []


async def test_block_of_another_tenant_shows_nothing_of_this_one(harness: Harness) -> None:
    await harness.ingest(noise(20, ts(2026, 9, 1)))
    got = await block(harness, "football", md=B)
    assert list(got.memories) == []
    assert "nothing recorded yet" in got.text


async def test_annotate_answer_saves_the_shown_memories(harness: Harness) -> None:
    await harness.ingest(noise(20, ts(2026, 9, 1)))
    got = await block(harness, "football")
    answer = await harness.append(
        episode(
            "Here is how the match relates to energy.",
            ts(2026, 11, 20),
            kind=pb.EPISODE_KIND_ANSWER,
            key="answer-1",
        )
    )
    ids = [m.episode_id for m in got.memories]
    request = pb.AnnotateAnswerRequest(
        student_id="s1",
        subject_id="biology",
        answer_episode_id=answer.episode.episode_id,
        block_id=got.block_id,
        memory_ids=ids,
    )
    reply = await harness.stub.AnnotateAnswer(request, metadata=A)
    assert reply.annotation_id > 0
    saved = harness.app.services.store.annotations(
        ChainKey("tenant-a", "s1", "biology"), answer.episode.episode_id, "shown_memories"
    )
    assert len(saved) == 1
    assert got.block_id in saved[0].body

    # An id the block did not show is refused, even one the chain holds (R7.2).
    for bad_ids, code in (
        ([ids[0], 10**9], grpc.StatusCode.INVALID_ARGUMENT),
        ([ids[0], answer.episode.episode_id], grpc.StatusCode.INVALID_ARGUMENT),
    ):
        request.memory_ids[:] = bad_ids
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await harness.stub.AnnotateAnswer(request, metadata=A)
        assert err.value.code() == code
    request.memory_ids[:] = ids
    request.answer_episode_id = ids[0]  # a question, not an answer
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.AnnotateAnswer(request, metadata=A)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # Another tenant cannot annotate this chain's answer: the block was not issued for its chain.
    request.answer_episode_id = answer.episode.episode_id
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.AnnotateAnswer(request, metadata=B)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (err.value.details() or "").startswith("block_id:")


async def test_blocks_survive_a_restart(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    h = await start_harness(server_config, embedder)
    await h.ingest(
        [episode("What is the Krebs cycle?", ts(2026, 3, 1), key="k"), *noise(50, ts(2026, 9, 1))]
    )
    before = await block(h, "Krebs cycle")
    await stop_harness(h)
    h = await start_harness(server_config, embedder)
    try:
        after = await block(h, "Krebs cycle")
        assert [m.episode_id for m in after.memories] == [m.episode_id for m in before.memories]
        assert after.block_id == before.block_id
    finally:
        await stop_harness(h)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("budget_tokens", 0, "budget_tokens:"),
        ("time_zone", "Mars/Olympus", "time_zone:"),
        # Within the character limit, too long for a file name of the zone database.
        pytest.param("time_zone", "\U00010000" * 64, "time_zone:", id="time_zone-too-long-a-name"),
        ("query", "x" * 9000, "query:"),
        ("mode", 42, "mode:"),
    ],
)
async def test_bad_block_request_is_invalid_argument(
    harness: Harness, field: str, value: object, message: str
) -> None:
    request = pb.BuildBlockRequest(student_id="s1", subject_id="biology", budget_tokens=500)
    setattr(request, field, value)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.BuildBlock(request, metadata=A)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (err.value.details() or "")


async def test_the_turns_own_question_is_not_a_memory_of_it(harness: Harness) -> None:
    """The documented client flow stores the question, then asks for the block."""
    earlier = episode("What is osmosis?", ts(2026, 9, 1), key="earlier")
    await harness.ingest([earlier, *noise(30, ts(2026, 10, 1))])
    now = episode("What is osmosis?", int(NOW.timestamp()) - 2, key="this-turn")
    this_turn = (await harness.append(now)).episode.episode_id
    got = await block(harness, "What is osmosis?")
    shown = {i for m in got.memories for i in m.repeated_ids}
    assert this_turn not in shown
    (osmosis,) = [m for m in got.memories if "osmosis" in m.line]
    assert osmosis.repeats == 1
    assert "(2 times)" not in got.text


async def test_an_old_turn_holding_every_query_word_beats_many_newer_partial_matches(
    harness: Harness,
) -> None:
    """Lexical recall reaches the whole history: no cap of newest matches per word."""
    old = episode("Chlorophyll drives photosynthesis in the leaf", ts(2026, 2, 2), key="old")
    newer = [
        episode(
            f"Note {i} about {'chlorophyll' if i % 2 else 'photosynthesis'}",
            ts(2026, 6, 1) + 60 * i,
            key=f"p{i}",
        )
        for i in range(1_200)
    ]
    reply = await harness.ingest([old, *newer])
    old_id = reply.items[0].episode_id
    got = await block(harness, "chlorophyll and photosynthesis", budget=300)
    assert old_id in [m.episode_id for m in got.memories]


async def test_memories_of_one_day_share_one_date_line(harness: Harness) -> None:
    day = ts(2026, 9, 3)
    await harness.ingest(
        [
            episode("What is osmosis?", day, key="q1"),
            episode("Osmosis moves water.", day + 60, kind=pb.EPISODE_KIND_ANSWER, key="a1"),
        ]
    )
    got = await block(harness, "osmosis", budget=600)
    earlier = next(s for s in got.sections if s.title.startswith("EARLIER WORK"))
    assert list(earlier.lines) == [
        "03 Sep 2026:",
        "- student: What is osmosis?",
        "- you: Osmosis moves water.",
    ]
    assert list(earlier.episode_ids) == [m.episode_id for m in got.memories]


@pytest.mark.parametrize("query", ["what is a prime number?", "am I getting any better?"])
async def test_a_question_left_to_the_examples_searches_its_text_while_it_is_embedded(
    harness: Harness, query: str
) -> None:
    await harness.ingest(noise(5, ts(2026, 9, 1)))
    got = await block(harness, query)
    stages = [t.stage for t in got.timings]
    # The text search is timed before the wait for the embedding that decides the mode, once.
    assert stages.index("text") < stages.index("record_intent")
    assert stages.count("text") == 1
