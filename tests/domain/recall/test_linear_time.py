"""Recall's detectors read a message in time linear in it (issue 12).

Narration, the period a question asks about, record-question detection (the phrase lists, and
the test for whether a question may be read as a record question at all), and time-window parsing
are timed on adversarial shapes drawn by hypothesis at n and 16 n characters, as in
`tests.domain.text.test_linear_time` (see `tests.helpers.timing` for the bounds).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.helpers.linear_time import linear_time_tests
from tests.helpers.timing import EntryPoint
from tutor_memory.domain.recall.asked_period import asked_window
from tutor_memory.domain.recall.narration import is_narration
from tutor_memory.domain.recall.record_intent import could_be_about_the_record
from tutor_memory.domain.recall.record_mode import is_record_question, record_topic
from tutor_memory.domain.recall.timewindow import parse_time_window

NOW_US = (datetime(2026, 11, 25, 14, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(
    microseconds=1
)
TZ = "Europe/Rome"

ENTRY_POINTS = {
    "asked_period.asked_window": EntryPoint(lambda text: asked_window(text, NOW_US, TZ), 256, 2.2),
    "narration.is_narration": EntryPoint(lambda text: is_narration(text, NOW_US, TZ), 256, 1.2),
    "record_mode.is_record_question": EntryPoint(is_record_question, 512, 0.5),
    "record_mode.record_topic": EntryPoint(record_topic, 512, 7.0),
    "record_intent.could_be_about_the_record": EntryPoint(could_be_about_the_record, 512, 0.6),
    "timewindow.parse_time_window": EntryPoint(
        lambda text: parse_time_window(text, NOW_US, TZ), 256, 1.3
    ),
}


(
    test_cost_grows_linearly_on_known_shapes,
    test_cost_grows_linearly_on_drawn_shapes,
    test_the_issue_shapes_stay_under_the_ceiling,
) = linear_time_tests(ENTRY_POINTS)
