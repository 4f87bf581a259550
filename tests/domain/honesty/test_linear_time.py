"""Grounding cuts and traces an answer in time linear in the answer (issue 12).

Grounding's sentence splitter and `ground` itself (two passages and a memory as sources) are timed
on adversarial shapes drawn by hypothesis at n and 16 n characters, as in
`tests.domain.text.test_linear_time` (see `tests.helpers.timing` for the bounds).
"""

from __future__ import annotations

from datetime import UTC, datetime

from tests.helpers.linear_time import linear_time_tests
from tests.helpers.timing import EntryPoint
from tutor_memory.domain.honesty.grounding import (
    SourceMemory,
    SourcePassage,
    ground,
    split_sentences,
)

PASSAGES = [
    SourcePassage("bio", 1, 1, "Osmosis is the diffusion of water across a membrane, e.g. 3.5 ml."),
    SourcePassage("bio", 1, 2, "La cellula è l'unità della vita. الخلية هي وحدة الحياة."),
]
MEMORIES = [SourceMemory(7, datetime(2026, 7, 1, tzinfo=UTC), "We covered osmosis in July.")]

ENTRY_POINTS = {
    "grounding.split_sentences": EntryPoint(split_sentences, 512, 0.8),
    "grounding.ground": EntryPoint(lambda text: ground(text, PASSAGES, MEMORIES), 256, 2.2),
}


(
    test_cost_grows_linearly_on_known_shapes,
    test_cost_grows_linearly_on_drawn_shapes,
    test_the_issue_shapes_stay_under_the_ceiling,
) = linear_time_tests(ENTRY_POINTS)
