"""The ablation benchmark's graders (bench/eval/grading.py) over hand-made BuildBlock replies."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bench.eval.grading import Shown, grade, named
from bench.eval.history import Month
from bench.eval.questions import Category, Expected, Question, WrongConcept

from tutor_memory.domain.recall.block_text import EARLIER_WORK_TITLE
from tutor_memory.domain.recall.sections import BELIEFS_TITLE
from tutor_memory_client._proto import memory_pb2 as pb

ROME = ZoneInfo("Europe/Rome")
MARCH = Month(
    "2025-03",
    2025,
    3,
    datetime(2025, 3, 1, tzinfo=ROME),
    datetime(2025, 4, 1, tzinfo=ROME),
    active=False,
)
IDS = {"s/0001": 11, "s/0002": 12, "s/0003": 13, "s/0004": 14, "s/0005": 15, "s/0006": 16}


def question(category: Category, expected: Expected) -> Question:
    return Question("s/x/1", 0, category, "?", "en", False, "", expected)


def memory(episode_id: int, *repeats: int, at: datetime | None = None) -> pb.BlockMemory:
    m = pb.BlockMemory(episode_id=episode_id, repeated_ids=[episode_id, *repeats])
    m.occurred_at.FromDatetime(at or datetime(2025, 6, 1, 12, tzinfo=UTC))
    return m


def reply(
    text: str = "",
    memories: tuple[pb.BlockMemory, ...] = (),
    beliefs: tuple[tuple[str, str], ...] = (),
    no_record: bool = False,
) -> pb.BuildBlockReply:
    sections = []
    if beliefs:
        sections.append(
            pb.BlockSection(
                title=BELIEFS_TITLE,
                lines=[line for _, line in beliefs],
                concepts=[c for c, _ in beliefs],
            )
        )
    sections.append(
        pb.BlockSection(title=EARLIER_WORK_TITLE, episode_ids=[m.episode_id for m in memories])
    )
    return pb.BuildBlockReply(
        text=text, sections=sections, memories=list(memories), no_record=no_record
    )


def shown(r: pb.BuildBlockReply, *passages: str) -> Shown:
    return Shown.of(r, passages)


WRONG = question(
    Category.WRONG,
    Expected(
        wrong=(
            WrongConcept("Osmosis", ("s/0001", "s/0002")),
            WrongConcept("Cell membrane", ("s/0003", "s/0004")),
        )
    ),
)


def test_wrong_passes_when_each_concept_is_shown_by_a_check_or_a_struggles_belief() -> None:
    r = reply(
        memories=(memory(12),),  # the tutor's verdict on osmosis
        beliefs=(("Cell membrane", "- struggles with Cell membrane (0.69)"),),
    )
    assert grade(WRONG, shown(r), IDS).passed


def test_wrong_counts_a_check_a_collapsed_memory_stands_for() -> None:
    r = reply(memories=(memory(99, 11), memory(13)))
    assert grade(WRONG, shown(r), IDS).passed


def test_wrong_fails_naming_the_concept_that_is_missing() -> None:
    result = grade(WRONG, shown(reply(memories=(memory(11),))), IDS)
    assert not result.passed
    assert result.reason == "not named as got wrong: Cell membrane"


def test_wrong_does_not_accept_an_understands_belief_or_a_mere_mention() -> None:
    r = reply(
        text="We talked about the cell membrane a lot.",
        memories=(memory(11),),
        beliefs=(("Cell membrane", "- understands Cell membrane (0.60)"),),
    )
    assert not grade(WRONG, shown(r), IDS).passed


def test_review_needs_every_prerequisite_named_in_the_block_or_the_passages() -> None:
    q = question(Category.REVIEW, Expected(names=("Diffusion", "Cell membrane")))
    block = reply(text="- Osmosis: ... (builds on: Diffusion)")
    assert not grade(q, shown(block), IDS).passed
    assert grade(q, shown(block, "The CELL MEMBRANE surrounds the cell."), IDS).passed


def test_a_name_counts_only_as_whole_words() -> None:
    s = shown(reply(text="Cell membranes and subforces"))
    assert not named("Cell membrane", s)
    assert not named("Force", s)
    assert named("الغشاء الخلوي", shown(reply(text="(builds on: الغشاء الخلوي)")))


def test_explain_finds_the_definition_whatever_the_case_and_white_space() -> None:
    q = question(Category.EXPLAIN, Expected(definition="Osmosis is the diffusion of water."))
    assert grade(
        q, shown(reply(), "Intro. osmosis is the\n diffusion of  water. More."), IDS
    ).passed
    assert not grade(q, shown(reply(text="Osmosis is about water.")), IDS).passed


def test_active_month_counts_each_memory_once_up_to_the_minimum() -> None:
    q = question(
        Category.ACTIVE_MONTH,
        Expected(keys=("s/0001", "s/0002", "s/0003", "s/0004"), min_shown=3, month=MARCH),
    )
    collapsed = reply(memories=(memory(11, 12, 13), memory(14)))
    assert not grade(q, shown(collapsed), IDS).passed
    assert grade(q, shown(reply(memories=(memory(11), memory(12), memory(14)))), IDS).passed


def test_empty_month_passes_only_with_no_record_and_nothing_of_the_month() -> None:
    q = question(Category.EMPTY_MONTH, Expected(month=MARCH, narration_keys=("s/0005",)))
    assert grade(q, shown(reply(no_record=True)), IDS).passed
    assert grade(q, shown(reply(no_record=False)), IDS).reason == "no_record not set"
    in_march = memory(16, at=datetime(2025, 3, 10, 17, tzinfo=ROME))
    assert not grade(q, shown(reply(memories=(in_march,), no_record=True)), IDS).passed
    narration = memory(15, at=datetime(2025, 5, 2, tzinfo=UTC))
    result = grade(q, shown(reply(memories=(narration,), no_record=True)), IDS)
    assert result.reason == "memory 15 is a tutor narration"


def test_empty_month_bounds_are_the_students_calendar() -> None:
    q = question(Category.EMPTY_MONTH, Expected(month=MARCH))
    # 23:30 UTC on 31 March is already April in Rome.
    april_in_rome = memory(16, at=datetime(2025, 3, 31, 23, 30, tzinfo=UTC))
    assert grade(q, shown(reply(memories=(april_in_rome,), no_record=True)), IDS).passed
    late_march = memory(16, at=datetime(2025, 3, 31, 21, 0, tzinfo=UTC))
    assert not grade(q, shown(reply(memories=(late_march,), no_record=True)), IDS).passed


def test_old_match_needs_the_old_answers_id() -> None:
    q = question(Category.OLD_MATCH, Expected(keys=("s/0006",)))
    assert grade(q, shown(reply(memories=(memory(40, 16),))), IDS).passed
    assert not grade(q, shown(reply(text="the lighthouse", memories=(memory(40),))), IDS).passed


def test_an_empty_block_passes_only_what_the_passages_answer() -> None:
    passages = ("Osmosis is the diffusion of water.", "Diffusion needs a membrane.")
    empty = shown(reply(), *passages)
    explain = question(Category.EXPLAIN, Expected(definition="Osmosis is the diffusion of water."))
    review = question(Category.REVIEW, Expected(names=("Diffusion",)))
    assert grade(explain, empty, IDS).passed
    assert grade(review, empty, IDS).passed
    memory_only = [
        WRONG,
        question(Category.EMPTY_MONTH, Expected(month=MARCH)),
        question(Category.OLD_MATCH, Expected(keys=("s/0006",))),
    ]
    for q in memory_only:
        assert not grade(q, empty, IDS).passed, q.category


def test_shown_ids_include_repeats_and_sections() -> None:
    s = shown(reply(memories=(memory(5, 6, 7),)))
    assert s.ids == {5, 6, 7}
    assert s.memories[0].occurred_at == datetime(2025, 6, 1, 12, tzinfo=UTC)
