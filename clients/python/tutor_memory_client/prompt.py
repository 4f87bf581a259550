"""Where the memory block goes in a chat prompt (SPEC R6.6).

A model reads the first authoritative statement about a student's record and stops there, so the
memory block must come before any legacy assessment section, and a legacy section that only says
"no quiz attempts recorded" must go when a memory block exists: it would contradict the memory.
The Go and TypeScript clients implement the same rule; tests/conformance/scenario.json pins all
three to the same cases.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

# Blank line between the prompt's parts.
PART_SEPARATOR = "\n\n"
# Characters that decorate a heading or a rule line ("## Assessment", "=====", "**Quizzes**")
# rather than say anything.
DECORATION = "#*=-_>"
# What ends a line, the same in all three clients (str.splitlines knows more breaks than Go and
# JavaScript do).
LINE_BREAK = re.compile(r"\r\n?|\n")


@dataclass(frozen=True)
class PromptParts:
    """The pieces of one turn's prompt, as the chat service has them."""

    # The system instructions; always first.
    instructions: str
    # BuildBlockReply.text: empty when the block was dropped or not asked for.
    memory_block: str
    # The chat service's own assessment section (quiz history), if it still has one.
    legacy_assessment: str = ""
    # Everything else, in order: material excerpts, the conversation, the question.
    context: Sequence[str] = field(default_factory=tuple)


@cache
def empty_assessment_phrases() -> frozenset[str]:
    """The normalised phrases a legacy section says when it holds no record (data file)."""
    text = resources.files("tutor_memory_client").joinpath("data/legacy_assessment.json")
    phrases: list[str] = json.loads(text.read_text(encoding="utf-8"))["empty_assessment_phrases"]
    return frozenset(_normalise(p) for p in phrases)


def _normalise(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!").rstrip()


def is_empty_assessment(section: str) -> bool:
    """True when every line of the section is a heading or a known "no quiz attempts" phrase,
    and at least one line is such a phrase."""
    phrases = empty_assessment_phrases()
    said_empty = False
    for raw in LINE_BREAK.split(section):
        line = raw.strip().strip(DECORATION).strip()
        if not line or line.endswith(":"):
            continue
        # "Quiz history: No quiz attempts recorded." carries its heading on the same line.
        content = line.rsplit(":", 1)[-1].strip().strip(DECORATION)
        if _normalise(content) not in phrases:
            return False
        said_empty = True
    return said_empty


def compose_prompt(parts: PromptParts) -> str:
    """Joins the parts: instructions, memory block, legacy assessment (unless R6.6 drops it),
    then the context. Blank parts are left out."""
    has_memory = bool(parts.memory_block.strip())
    legacy = parts.legacy_assessment
    if has_memory and is_empty_assessment(legacy):
        legacy = ""
    ordered = [parts.instructions, parts.memory_block, legacy, *parts.context]
    return PART_SEPARATOR.join(p.strip() for p in ordered if p.strip())
