"""Text work beside the block: grounding an answer in its passages (AnnotateAnswer) and finding
a map's concept names in a turn (routing). These were timed unit tests; a shared machine made
them flaky, so their speed is measured here and the tests keep only what the code returns."""

from __future__ import annotations

import random
from typing import Any

from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.honesty.grounding import GroundingStatus, SourcePassage, ground

# An answer of this many sentences, each taken from one passage, against this many passages.
ANSWER_SENTENCES = 10
PASSAGES = 50
# The map the name matcher routes a turn against, and the length of the turn.
MAP_NAMES = 1_000
TURN_CHARS = 300


def _passages(seed: int) -> list[SourcePassage]:
    """PASSAGES passages of about 1,200 characters drawn from a random vocabulary."""
    rng = random.Random(seed)
    vocabulary = [
        "".join(rng.choices("abcdefghilmnoprstuv", k=rng.randint(3, 11))) for _ in range(3000)
    ]
    return [
        SourcePassage(f"file-{i}", 1, i, " ".join(rng.choices(vocabulary, k=150)) + ".")
        for i in range(PASSAGES)
    ]


def _answer_from(passages: list[SourcePassage]) -> str:
    """ANSWER_SENTENCES sentences, each fifteen words of one passage."""
    return " ".join(
        " ".join(p.text.split()[5:20]).capitalize() + "." for p in passages[:ANSWER_SENTENCES]
    )


def test_ground_an_answer_in_passages_read_before(benchmark: Any) -> None:
    # The common case: the same files answer a subject's questions.
    passages = _passages(1)
    answer = _answer_from(passages)
    ground(answer, passages, [])
    benchmark.group = "text paths"
    result = benchmark(ground, answer, passages, [])
    assert result.status is GroundingStatus.ANSWERED


def test_ground_an_answer_in_new_passages(benchmark: Any) -> None:
    # Every round grounds in passages no earlier round read.
    rounds = iter(range(1_000, 10_000_000))

    def setup() -> tuple[tuple[str, list[SourcePassage], list[Any]], dict[str, Any]]:
        passages = _passages(next(rounds))
        return (_answer_from(passages), passages, []), {}

    benchmark.group = "text paths"
    result = benchmark.pedantic(ground, setup=setup, rounds=30)
    assert result.status is GroundingStatus.ANSWERED


def test_find_concept_names_in_a_turn(benchmark: Any) -> None:
    biology = ["Cell Membrane", "Osmosis", "Diffusion", "Cell", "Mitochondria", "Krebs cycle"]
    names = [f"Concept {i} of the course" for i in range(MAP_NAMES - len(biology))] + biology
    matcher = NameMatcher(names)
    text = (
        "Osmosis is the diffusion of water across the cell membrane, and the Krebs cycle runs in "
        "the mitochondria; concept 512 of the course says active transport needs energy. "
    ) * 2
    text = text[:TURN_CHARS]
    benchmark.group = "text paths"
    found = benchmark(matcher.find, text)
    assert "Concept 512 of the course" in found
