"""LoCoMo turns as episodes, written through IngestEpisodes: one chain per conversation.

Mapping, decided here (the report's notes repeat it):
- student_id is the conversation's sample_id, subject_id is SUBJECT; the client key is
  `<sample_id>/<dia_id>`, so the reply maps every dia_id to its episode id.
- speaker_a's turns are QUESTION episodes and speaker_b's are ANSWER episodes (two people chat;
  the server's salience gives answers 0.45 and questions 0.35, so speaker_b's turns weigh a
  little more in recall: that is a property of this mapping, not of the data).
- The summary (the one line a block shows) is `<speaker>: <text>`, with a shared photo's BLIP
  caption after it as `[shares a photo: <caption>]`; the speaker's name is in it because the
  questions name the speakers. White space is folded to single spaces (a summary is one line)
  and a line over the server's summary limit is cut with an ellipsis; `text` keeps it whole.
- occurred_at is the session's time (every turn of a session shares it; seq keeps their order).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bench.locomo.dataset import Conversation, Turn
from tutor_memory.domain.limits import MAX_SUMMARY_CHARS
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

SUBJECT = "locomo"
# Seconds one conversation's IngestEpisodes call may take (~700 turns take about one second).
INGEST_TIMEOUT_S = 300.0
# The acknowledgement comes before the embeddings (the server's embedding queue); the questions
# are asked once every turn is searchable by meaning, read by polling this often.
VECTORS_POLL_S = 0.1
ELLIPSIS = "…"


# What a line puts around a shared photo's caption (bench/locomo/memory_text.py reads it back).
PHOTO_OPEN = "[shares a photo: "
PHOTO_CLOSE = "]"


def speaker_mark(speaker: str) -> str:
    """What a line puts before the turn's words."""
    return f"{speaker}: "


def turn_line(turn: Turn) -> str:
    """The turn as one line of text: speaker, words, and the shared photo's caption."""
    photo = f" {PHOTO_OPEN}{turn.caption}{PHOTO_CLOSE}" if turn.caption else ""
    return " ".join(f"{speaker_mark(turn.speaker)}{turn.text}{photo}".split())


def summary_of(line: str) -> str:
    if len(line) <= MAX_SUMMARY_CHARS:
        return line
    return line[: MAX_SUMMARY_CHARS - len(ELLIPSIS)].rstrip() + ELLIPSIS


def client_key(conversation: Conversation, turn: Turn) -> str:
    return f"{conversation.sample_id}/{turn.dia_id}"


def episodes_of(conversation: Conversation) -> list[pb.NewEpisode]:
    out = []
    for turn in conversation.turns:
        line = turn_line(turn)
        kind = (
            pb.EPISODE_KIND_QUESTION
            if turn.speaker == conversation.speaker_a
            else pb.EPISODE_KIND_ANSWER
        )
        episode = pb.NewEpisode(
            student_id=conversation.sample_id,
            subject_id=SUBJECT,
            kind=kind,
            summary=summary_of(line),
            text=line,
            client_key=client_key(conversation, turn),
        )
        episode.occurred_at.FromDatetime(turn.occurred_at)
        out.append(episode)
    return out


@dataclass(frozen=True, slots=True)
class Ingested:
    episode_of: dict[str, int]  # dia_id -> episode id
    seconds: float  # the IngestEpisodes call, from first message sent to reply
    # From the reply until the chain's last embedding was in the index.
    vectors_seconds: float = 0.0

    @property
    def dia_of(self) -> dict[int, str]:
        return {e: d for d, e in self.episode_of.items()}


class IngestFailed(RuntimeError):
    pass


def ingest(stub: pb_grpc.MemoryStub, conversation: Conversation) -> Ingested:
    """Writes every turn of `conversation`; raises IngestFailed if any turn was not stored."""
    episodes = episodes_of(conversation)
    requests = list(ingest_messages(episodes))
    started = time.perf_counter()
    reply = stub.IngestEpisodes(iter(requests), timeout=INGEST_TIMEOUT_S)
    seconds = time.perf_counter() - started
    problems = [f"{i.client_key}: {i.reason}" for i in reply.items if not i.episode_id]
    if problems or len(reply.items) != len(episodes):
        raise IngestFailed(
            f"{conversation.sample_id}: {len(reply.items)} of {len(episodes)} items answered; "
            + "; ".join(problems[:5])
        )
    prefix = f"{conversation.sample_id}/"
    waited = wait_for_vectors(stub, conversation.sample_id)
    return Ingested(
        {i.client_key.removeprefix(prefix): i.episode_id for i in reply.items}, seconds, waited
    )


def wait_for_vectors(stub: pb_grpc.MemoryStub, student_id: str) -> float:
    """Seconds until BuildBlock reports no episode of the chain waiting for its embedding."""
    started = time.perf_counter()
    request = pb.BuildBlockRequest(
        student_id=student_id, subject_id=SUBJECT, query="when", budget_tokens=50
    )
    while stub.BuildBlock(request, timeout=INGEST_TIMEOUT_S).vectors_pending:
        if time.perf_counter() - started > INGEST_TIMEOUT_S:
            raise IngestFailed(f"{student_id}: the embeddings did not catch up")
        time.sleep(VECTORS_POLL_S)
    return time.perf_counter() - started
