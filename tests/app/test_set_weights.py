"""The lexical and the dense set weighed by how well their best matches (domain.recall.candidates.
set_weights), as BuildBlock applies them: a paraphrase that shares no word with its question
outweighs the questions that share only the question's form words."""

from __future__ import annotations

import pytest
from bench.bench_centring import (
    PARAPHRASES,
    PROBE_NOW,
    PROBE_SUBJECT,
    probe_history,
    probe_request,
)

from tests.helpers.harness import A, Harness
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.block import BlockRequest, Mode
from tutor_memory.domain.recall.explain import Source
from tutor_memory.domain.recall.levers import Lever, RecallLevers

# "How do plants turn sunlight into sugar?" asked about as "... what we learned about
# photosynthesis?": no episode holds "photosynthesis", and "remind" and "learn" are in many of
# the other questions.
PAIR = 0
CHAIN = ChainKey("tenant-a", "s1", PROBE_SUBJECT)
# Sets whose relevance would stand in for a candidate's lexical one.
OTHER_MATCHES = {Source.DENSE, Source.NEIGHBOUR}


async def test_a_close_paraphrase_counts_fully_and_form_word_matches_count_less(
    harness: Harness,
) -> None:
    memory, query = PARAPHRASES[PAIR]
    reply = await harness.ingest(probe_history(memory, "s1", seed=PAIR))
    remembered = reply.items[0].episode_id
    builder = harness.app.services.blocks.builder
    req = BlockRequest(CHAIN, query, 300, int(PROBE_NOW.timestamp() * 1_000_000), "UTC", Mode.FULL)

    def lexical_and_paraphrase(levers: RecallLevers) -> tuple[float, float]:
        builder.levers = levers
        block = builder.build(req, explain=True)
        assert block.explanation is not None
        candidates = block.explanation.candidates
        # Found by their words alone (every episode here is also among the most recent).
        lexical = [
            c.relevance
            for c in candidates
            if Source.LEXICAL in c.found_by and not OTHER_MATCHES & set(c.found_by)
        ]
        paraphrase = next(c for c in candidates if c.episode_id == remembered)
        assert Source.DENSE in paraphrase.found_by
        assert lexical  # the form words do match other questions
        return max(lexical), paraphrase.relevance

    best_lexical, paraphrase = lexical_and_paraphrase(RecallLevers())
    assert paraphrase == pytest.approx(1.0)
    assert best_lexical < 0.75
    # The ablation's calibration lever off: ranks instead of grades, so both sets' best count 1.
    best_lexical, paraphrase = lexical_and_paraphrase(RecallLevers.without([Lever.CALIBRATION]))
    assert best_lexical == pytest.approx(1.0)


async def test_an_explained_block_reports_the_weights_and_a_plain_one_leaves_them_unset(
    harness: Harness,
) -> None:
    memory, query = PARAPHRASES[PAIR]
    await harness.ingest(probe_history(memory, "s1", seed=PAIR))
    request = probe_request("s1", query, 300, explain=True)
    explained = await harness.stub.BuildBlock(request, metadata=A)
    assert explained.dense_weight == pytest.approx(1.0)
    assert 0 < explained.lexical_weight < 0.75
    request.explain = False
    plain = await harness.stub.BuildBlock(request, metadata=A)
    assert (plain.lexical_weight, plain.dense_weight) == (0.0, 0.0)
