"""The server's intent detectors, as the phrasing evaluation calls them.

This is the only module of bench/phrasing that imports the server: when the server's modules move,
repoint the imports here and nothing else. Each function answers one decision of the phrasing set
with a plain value, whatever richer object the server returns.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from tutor_memory.app.record_intent import embedded_examples
from tutor_memory.domain.conceptmap.teaching import detect_teaching
from tutor_memory.domain.recall.asked_period import asked_window
from tutor_memory.domain.recall.narration import is_narration
from tutor_memory.domain.recall.record_intent import RecordExamples, is_record_intent
from tutor_memory.domain.recall.record_mode import record_topic as _record_topic
from tutor_memory.models.embedder import load_embedder


@functools.cache
def _embedding() -> tuple[Callable[[str], npt.NDArray[np.float32]], RecordExamples]:
    """The server's embedder (one query at a time, as BuildBlock embeds it) and the record
    examples it embedded, as the server holds them."""
    embedder = load_embedder()
    return (lambda text: embedder.embed([text])[0]), embedded_examples(embedder)


def record(text: str) -> bool:
    """The message asks about the student's own record (rules, then the examples by the query's
    embedding, as BuildBlock decides)."""
    embed, examples = _embedding()
    return is_record_intent(text, embed(text), examples)


def period(text: str, now_us: int, time_zone: str) -> bool:
    """The message asks about a period the server understands (any window counts, right or
    wrong), as BuildBlock reads it."""
    return asked_window(text, now_us, time_zone) is not None


def teaching(text: str) -> bool:
    """The message teaches the tutor something to keep."""
    return detect_teaching(text) is not None


def narration(text: str, now_us: int, time_zone: str) -> bool:
    """The tutor's sentence narrates what happened in a period of the record."""
    return is_narration(text, now_us, time_zone)


# The topic a record question is about, or None when it names none (or is no record question,
# as the server asks for a topic only in record mode).
def _topic_of_record_question(text: str) -> str | None:
    return _record_topic(text) if record(text) else None


record_topic: Callable[[str], str | None] | None = _topic_of_record_question


def sources() -> dict[str, str | None]:
    """Which server function answers each decision, for the report."""

    def name(f: Callable[..., object] | None) -> str | None:
        return None if f is None else f"{f.__module__}.{f.__qualname__}"

    return {
        "record": name(is_record_intent),
        "record_topic": name(record_topic),
        "period": name(asked_window),
        "teaching": name(detect_teaching),
        "narration": name(is_narration),
    }
