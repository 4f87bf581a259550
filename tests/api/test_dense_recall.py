"""A memory found by meaning alone: a paraphrase that shares no content word with the question,
among hundreds of questions of the question's own form about other things (issue 13's class;
`bench.bench_centring` measures all of its pairs, with and without centring)."""

from __future__ import annotations

import pytest
from bench.bench_centring import PARAPHRASES, probe_history, probe_request

from tests.helpers.harness import A, Harness

# Two the plain cosine misses at 300 tokens (bench/results/centring.md): Italian and English.
CASES = [pytest.param(4, id="italian"), pytest.param(7, id="english")]


@pytest.mark.parametrize("pair", CASES)
async def test_a_paraphrase_among_hundreds_of_same_form_questions_is_in_a_small_block(
    harness: Harness, pair: int
) -> None:
    memory, query = PARAPHRASES[pair]
    # The chain the benchmark builds for this pair (the seed is the pair's index there).
    reply = await harness.ingest(probe_history(memory, "s1", seed=pair))
    remembered = reply.items[0].episode_id
    got = await harness.stub.BuildBlock(probe_request("s1", query, 300), metadata=A)
    assert remembered in [m.episode_id for m in got.memories]
