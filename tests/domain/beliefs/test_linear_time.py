"""Routing a check's topic to a concept runs in time linear in the topic and the evaluation
(issue 12): every RecordCheck goes through it, with both texts as long as the limits allow.

Timed on adversarial shapes drawn by hypothesis at n and 16 n characters, as in
`tests.domain.text.test_linear_time` (see `tests.helpers.timing` for the bounds). The topic and
the evaluation are the same hostile text, so that neither names a concept early and the router
reads both and then the spoken-expression list.
"""

from __future__ import annotations

from tests.helpers.linear_time import linear_time_tests
from tests.helpers.timing import EntryPoint
from tutor_memory.domain.beliefs.routing import route_topic
from tutor_memory.domain.beliefs.spoken import is_spoken_expression
from tutor_memory.domain.conceptmap.names import NameMatcher

# A course's names, none of which the hostile shapes spell, so routing never stops at a match.
MATCHER = NameMatcher(["photosynthesis", "cell wall", "light reaction", "chloroplast"])

ENTRY_POINTS = {
    "routing.route_topic": EntryPoint(lambda text: route_topic(text, text, MATCHER), 512, 0.8),
    "spoken.is_spoken_expression": EntryPoint(is_spoken_expression, 512, 0.4),
}


(
    test_cost_grows_linearly_on_known_shapes,
    test_cost_grows_linearly_on_drawn_shapes,
    test_the_issue_shapes_stay_under_the_ceiling,
) = linear_time_tests(ENTRY_POINTS)
