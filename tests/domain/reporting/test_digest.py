"""R8.1: the day compressed into one deterministic consolidation note."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from tutor_memory.domain.episodes import (
    SALIENCE_ANSWER,
    SALIENCE_CHECK_RIGHT,
    SALIENCE_CHECK_WRONG,
    SALIENCE_FILE,
    SALIENCE_QUESTION,
    SALIENCE_TAUGHT,
)
from tutor_memory.domain.reporting.digest import (
    HEADLINES,
    NOTE_SUMMARY_CHARS,
    DayEpisode,
    consolidation_note,
)

START = datetime(2026, 3, 3, tzinfo=UTC)
END = START + timedelta(days=1)


def at(hour: int, minute: int = 0) -> datetime:
    return START + timedelta(hours=hour, minutes=minute)


def question(i: int, when: datetime, text: str = "What is osmosis?") -> DayEpisode:
    return DayEpisode(i, "question", text, SALIENCE_QUESTION, when, ("osmosis",), None, None)


def check(i: int, when: datetime, right: bool, topic: str, *, routed: bool = True) -> DayEpisode:
    """A check; `routed` when its topic names a concept of the map."""
    salience = SALIENCE_CHECK_RIGHT if right else SALIENCE_CHECK_WRONG
    outcome = "right" if right else "wrong"
    concepts = (topic,) if routed else ()
    return DayEpisode(
        i, "check", f"Check on {topic}: {outcome}", salience, when, concepts, right, topic
    )


DAY = [
    question(1, at(9)),
    DayEpisode(
        2, "answer", "Osmosis is water diffusion.", SALIENCE_ANSWER, at(9, 1), (), None, None
    ),
    check(3, at(9, 5), True, "osmosis"),
    check(4, at(9, 10), False, "Cell membrane"),
    check(5, at(10), False, "osmosis"),
    DayEpisode(6, "file", "bio-1.pdf arrived", SALIENCE_FILE, at(11), (), None, None),
    DayEpisode(
        7,
        "taught",
        "Taught: in our class we call the mitochondria the powerhouse of the cell",
        SALIENCE_TAUGHT,
        at(12),
        ("mitochondria",),
        None,
        None,
    ),
    check(8, at(13), True, "cytoplasm"),
    check(9, at(14), True, "ask me the questions", routed=False),
    question(10, at(15), "And diffusion?"),
]


def test_a_quiet_window_writes_nothing() -> None:
    assert consolidation_note([], START, END) is None
    outside = [question(1, START - timedelta(minutes=1)), question(2, END)]
    assert consolidation_note(outside, START, END) is None


def test_a_window_with_only_consolidation_episodes_is_quiet() -> None:
    digest = DayEpisode(
        99, "consolidation", "Day of 02 Mar 2026: 3 episodes", 0.4, at(1), (), None, None
    )
    assert consolidation_note([digest], START, END) is None


def test_the_note_never_summarises_its_own_kind() -> None:
    digest = DayEpisode(
        99, "consolidation", "Day of 02 Mar 2026: 3 episodes", 0.99, at(23), (), None, None
    )
    with_digest = consolidation_note([*DAY, digest], START, END)
    without = consolidation_note(DAY, START, END)
    assert with_digest == without
    assert with_digest is not None
    assert 99 not in with_digest.episode_ids
    assert "Day of 02 Mar" not in with_digest.text


def test_the_summary_is_one_short_line_with_counts_and_topics() -> None:
    note = consolidation_note(DAY, START, END)
    assert note is not None
    assert note.summary == (
        "Day of 03 Mar 2026: 10 episodes, 5 checks (3 right, 2 wrong); topics: ask me the "
        "questions, Cell membrane, cytoplasm, mitochondria, osmosis"
    )
    assert "\n" not in note.summary
    assert len(note.summary) <= NOTE_SUMMARY_CHARS


def test_the_text_counts_kinds_checks_and_topics() -> None:
    note = consolidation_note(DAY, START, END)
    assert note is not None
    lines = note.text.splitlines()
    assert lines[:4] == [
        "Day of 03 Mar 2026 (UTC): 10 episodes.",
        "By kind: 2 questions, 1 answer, 5 checks, 1 file, 1 thing taught.",
        "Checks: 5 checks (3 right, 2 wrong).",
        "Topics: ask me the questions, Cell membrane, cytoplasm, mitochondria, osmosis.",
    ]


def test_the_five_most_salient_headlines_salience_first_then_newest() -> None:
    note = consolidation_note(DAY, START, END)
    assert note is not None
    headlines = note.text.splitlines()[5:]
    assert len(headlines) == HEADLINES
    assert headlines == [
        "- 12:00 · the student taught you: Taught: in our class we call the mitochondria the "
        "powerhouse of the cell",
        "- 10:00 · check: Check on osmosis: wrong",
        "- 09:10 · check: Check on Cell membrane: wrong",
        "- 14:00 · check: Check on ask me the questions: right",
        "- 13:00 · check: Check on cytoplasm: right",
    ]


def test_concepts_are_the_episodes_concept_names_sorted_without_case_duplicates() -> None:
    # A topic that routed to no concept is a topic of the day, not a concept of the note.
    day = [*DAY, check(11, at(16), True, "cell membrane")]
    note = consolidation_note(day, START, END)
    assert note is not None
    assert note.concepts == (
        "Cell membrane",
        "cytoplasm",
        "mitochondria",
        "osmosis",
    )


def test_same_input_in_any_order_gives_a_byte_identical_note() -> None:
    first = consolidation_note(DAY, START, END)
    for seed in range(5):
        shuffled = DAY[:]
        random.Random(seed).shuffle(shuffled)
        assert consolidation_note(shuffled, START, END) == first


def test_times_and_the_day_are_given_in_the_students_time_zone() -> None:
    rome_start = datetime(2026, 3, 2, 23, tzinfo=UTC)  # midnight in Rome
    note = consolidation_note(
        [question(1, rome_start + timedelta(hours=10))],
        rome_start,
        rome_start + timedelta(days=1),
        tz_name="Europe/Rome",
    )
    assert note is not None
    assert note.summary.startswith("Day of 03 Mar 2026: 1 episode, no check")
    assert note.text.splitlines()[-1] == "- 10:00 · student: What is osmosis?"


def test_a_window_across_midnight_is_named_by_its_ends() -> None:
    start = at(14)
    note = consolidation_note([question(1, at(15))], start, start + timedelta(days=1))
    assert note is not None
    assert note.summary.startswith("From 03 Mar 2026 14:00 to 04 Mar 2026 14:00: 1 episode")


def test_a_crowded_day_keeps_the_summary_within_its_limit() -> None:
    day = [check(i, at(i % 24, i % 60), i % 2 == 0, f"topic number {i:03d}") for i in range(60)]
    note = consolidation_note(day, START, END)
    assert note is not None
    assert len(note.summary) <= NOTE_SUMMARY_CHARS
    assert note.summary.endswith("more")
    assert note.summary.startswith(
        "Day of 03 Mar 2026: 60 episodes, 60 checks (30 right, 30 wrong)"
    )


def test_local_days_follow_the_zone_and_its_daylight_saving_changes() -> None:
    from zoneinfo import ZoneInfo

    from tutor_memory.domain.reporting.digest import local_day

    rome = ZoneInfo("Europe/Rome")
    # 29 March 2026: clocks go forward in Rome, the day is 23 hours long.
    noon = int(datetime(2026, 3, 29, 12, tzinfo=rome).timestamp() * 1_000_000)
    start, end = local_day(noon, rome)
    assert start == int(datetime(2026, 3, 29, tzinfo=rome).timestamp() * 1_000_000)
    assert (end - start) == 23 * 3_600 * 1_000_000
    # 23:30 UTC on 28 March is already 29 March in Rome.
    late = int(datetime(2026, 3, 28, 23, 30, tzinfo=UTC).timestamp() * 1_000_000)
    assert local_day(late, rome) == (start, end)


def test_a_follow_up_note_says_it_holds_late_additions() -> None:
    start = datetime(2026, 3, 2, tzinfo=UTC)
    note = consolidation_note(
        [question(1, start + timedelta(hours=15), "And diffusion?")],
        start,
        start + timedelta(days=1),
        follow_up=True,
    )
    assert note is not None
    assert note.summary.startswith("Late additions to day of 02 Mar 2026: 1 episode")
