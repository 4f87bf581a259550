"""The kinds of annotation row (SPEC R1.5): facts about an episode that arrive after it and are
stored beside it, never by editing it. The values are stored: never rename one."""

from __future__ import annotations

import enum


class AnnotationKind(enum.StrEnum):
    # Which block and memories were shown for the turn an answer closes (R7.2).
    SHOWN_MEMORIES = "shown_memories"
    # An answer's grounding status and its sentences' sources (R7.3).
    GROUNDING = "grounding"
    # A citation check's verdict on an episode that cites files (R7.4).
    CITATION = "citation"
