"""How much of a block is memory text: the words the shown turns say, against the whole block.

Memory text is, for each memory a block shows, the turn's own words and its shared photo's
caption, as the memory's line shows them (cut with an ellipsis when the summary was). Everything
else is overhead: the frame (header, section title, how-to-use line, end marker), the day lines,
each line's role mark (`- student: `, `- you: `), the speaker's name (`Caroline: `), the photo's
marks (`[shares a photo: ` and `]`) and repeat counts.

Counted with the counter the server's block uses (cl100k_base unless the server was given a
tokenizer), each piece with the space before it, which is how it stands in its line: counts add
up at a space that follows a non-space (`TokenCounter.lines_add_up`, the promise the block's own
count rests on), so a piece's count is what the line spends on it. The block's total is the
server's `tokens_used`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bench.locomo.dataset import Conversation, Turn
from bench.locomo.ingest import PHOTO_CLOSE, PHOTO_OPEN, speaker_mark, summary_of, turn_line
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory_client._proto import memory_pb2 as pb


class LineMismatch(RuntimeError):
    """A memory's line does not show the summary the harness stored for its turn."""


def turns_by_episode(conversation: Conversation, dia_of: Mapping[int, str]) -> dict[int, Turn]:
    by_dia = {t.dia_id: t for t in conversation.turns}
    return {episode_id: by_dia[dia] for episode_id, dia in dia_of.items()}


def memory_pieces(summary: str, speaker: str) -> list[str]:
    """The parts of a stored summary that are what the turn says: its words, then its photo's
    caption when it has one (each non-empty), without the speaker's name and the photo marks."""
    body = summary.removeprefix(speaker_mark(speaker))
    at = body.rfind(PHOTO_OPEN)
    if at < 0:
        return [body] if body else []
    words, caption = body[:at].rstrip(), body[at + len(PHOTO_OPEN) :].removesuffix(PHOTO_CLOSE)
    return [p for p in (words, caption) if p]


def memory_tokens(pieces: Sequence[str], counter: TokenCounter) -> int:
    return sum(counter.count(" " + p) for p in pieces)


def block_memory_tokens(
    reply: pb.BuildBlockReply, turns: Mapping[int, Turn], counter: TokenCounter
) -> int:
    """Tokens of the memory text of one block (each memory once, however many it stands for)."""
    total = 0
    for memory in reply.memories:
        turn = turns[memory.episode_id]
        summary = summary_of(turn_line(turn))
        if summary not in memory.line:
            raise LineMismatch(f"episode {memory.episode_id}: {memory.line!r} lacks {summary!r}")
        total += memory_tokens(memory_pieces(summary, turn.speaker), counter)
    return total
