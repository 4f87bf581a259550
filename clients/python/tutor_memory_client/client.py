"""A small synchronous client: bearer token, a default deadline, and retries that are safe.

Only UNAVAILABLE is retried (the server was not reached or went away), with exponential backoff,
and only for calls that cannot duplicate anything: reads, and writes that carry client keys.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

# Seconds a call may take unless the caller says otherwise.
DEFAULT_TIMEOUT = 30.0
# Attempts for a retryable call, and the first backoff (doubled each time).
DEFAULT_ATTEMPTS = 4
FIRST_BACKOFF_SECONDS = 0.2

# Items per IngestEpisodes stream message: the server reads each message separately, so many
# items per message cost far less than one each, while 100 items of the largest allowed text
# (64 KiB) still stay well under the server's 32 MiB message limit.
ITEMS_PER_MESSAGE = 100

T = TypeVar("T")


def ingest_messages(
    episodes: Iterable[pb.NewEpisode], per_message: int = ITEMS_PER_MESSAGE
) -> Iterator[pb.IngestEpisodesRequest]:
    """Groups a batch into stream messages of `per_message` items."""
    group: list[pb.NewEpisode] = []
    for episode in episodes:
        group.append(episode)
        if len(group) == per_message:
            yield pb.IngestEpisodesRequest(episodes=group)
            group = []
    if group:
        yield pb.IngestEpisodesRequest(episodes=group)


def import_messages(
    episodes: Iterable[pb.NewEpisode], per_message: int = ITEMS_PER_MESSAGE
) -> Iterator[pb.ImportEpisodesRequest]:
    """Groups an import into ImportEpisodes stream messages of `per_message` items."""
    for message in ingest_messages(episodes, per_message):
        yield pb.ImportEpisodesRequest(episodes=message.episodes)


@dataclass
class ImportResult:
    """What an import stored: one result per item, `index` being the item's position in the
    batch given to `import_episodes` (not in the stream of a resumed attempt)."""

    items: list[pb.IngestItemResult] = field(default_factory=list)
    # Streams opened: more than one when a broken stream was resumed.
    attempts: int = 0

    def count(self, status: int) -> int:
        return sum(1 for r in self.items if r.status == status)

    @property
    def inserted(self) -> int:
        return self.count(pb.INGEST_STATUS_INSERTED)

    @property
    def duplicate(self) -> int:
        return self.count(pb.INGEST_STATUS_DUPLICATE)

    @property
    def rejected(self) -> int:
        return self.count(pb.INGEST_STATUS_REJECTED)


class MemoryClient:
    def __init__(
        self,
        target: str,
        *,
        token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        attempts: int = DEFAULT_ATTEMPTS,
    ) -> None:
        self._channel = (
            grpc.secure_channel(target, credentials)
            if credentials is not None
            else grpc.insecure_channel(target)
        )
        self.stub = pb_grpc.MemoryStub(self._channel)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self._timeout = timeout
        self._attempts = attempts

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, fn: Callable[[], T], *, retry: bool) -> T:
        backoff = FIRST_BACKOFF_SECONDS
        for attempt in range(1, self._attempts + 1):
            try:
                return fn()
            except grpc.RpcError as exc:
                code = exc.code() if isinstance(exc, grpc.Call) else None
                if not retry or code != grpc.StatusCode.UNAVAILABLE or attempt == self._attempts:
                    raise
                time.sleep(backoff)
                backoff *= 2
        raise AssertionError("unreachable")

    def append_episode(
        self, episode: pb.NewEpisode, *, timeout: float | None = None
    ) -> pb.AppendEpisodeReply:
        """Appends one episode; retried on UNAVAILABLE only when it carries a client_key."""
        request = pb.AppendEpisodeRequest(episode=episode)
        reply: pb.AppendEpisodeReply = self._call(
            lambda: self.stub.AppendEpisode(
                request, timeout=timeout or self._timeout, metadata=self._metadata
            ),
            retry=bool(episode.client_key),
        )
        return reply

    def ingest_episodes(
        self, episodes: Iterable[pb.NewEpisode], *, timeout: float | None = None
    ) -> pb.IngestEpisodesReply:
        """Streams a batch (every item needs a client_key). A retry resends the whole batch:
        items the server already stored come back as duplicates, never twice."""
        batch = list(episodes)
        reply: pb.IngestEpisodesReply = self._call(
            lambda: self.stub.IngestEpisodes(
                ingest_messages(batch),
                timeout=timeout or self._timeout,
                metadata=self._metadata,
            ),
            retry=True,
        )
        return reply

    def import_episodes(
        self,
        episodes: Sequence[pb.NewEpisode],
        *,
        on_progress: Callable[[pb.ImportEpisodesReply], None] | None = None,
        timeout: float | None = None,
    ) -> ImportResult:
        """Imports a batch of any size with ImportEpisodes (every item needs a client_key),
        calling `on_progress` with each acknowledged chunk. A stream that breaks with
        UNAVAILABLE is resumed with only the items no reply acknowledged. `timeout` bounds each
        stream; by default an import has no deadline (it reports progress instead)."""
        done: dict[int, pb.IngestItemResult] = {}
        result = ImportResult()
        backoff = FIRST_BACKOFF_SECONDS
        for attempt in range(1, self._attempts + 1):
            todo = [i for i in range(len(episodes)) if i not in done]
            if not todo:
                break
            result.attempts = attempt
            try:
                replies = self.stub.ImportEpisodes(
                    import_messages(episodes[i] for i in todo),
                    timeout=timeout,
                    metadata=self._metadata,
                )
                for reply in replies:
                    for item in reply.items:
                        # The stream counts from its own start: back to the batch's positions.
                        original = pb.IngestItemResult()
                        original.CopyFrom(item)
                        original.index = todo[item.index]
                        done[original.index] = original
                    if on_progress is not None:
                        on_progress(reply)
                break
            except grpc.RpcError as exc:
                code = exc.code() if isinstance(exc, grpc.Call) else None
                if code != grpc.StatusCode.UNAVAILABLE or attempt == self._attempts:
                    raise
                time.sleep(backoff)
                backoff *= 2
        result.items = [done[i] for i in sorted(done)]
        return result

    def list_episodes(
        self,
        student_id: str,
        subject_id: str,
        *,
        occurred_from: Timestamp | None = None,
        occurred_to: Timestamp | None = None,
        page_size: int = 0,
    ) -> Iterator[pb.Episode]:
        """Every episode of the chain, oldest first, optionally inside [occurred_from,
        occurred_to), fetched page by page."""
        request = pb.ListEpisodesRequest(
            student_id=student_id,
            subject_id=subject_id,
            occurred_from=occurred_from,
            occurred_to=occurred_to,
            page_size=page_size,
        )
        while True:
            reply: pb.ListEpisodesReply = self._call(
                lambda: self.stub.ListEpisodes(
                    request, timeout=self._timeout, metadata=self._metadata
                ),
                retry=True,
            )
            yield from reply.episodes
            if not reply.next_page_token:
                return
            request.page_token = reply.next_page_token

    def verify_chain(
        self, student_id: str, subject_id: str, checkpoint: pb.SignedCheckpoint | None = None
    ) -> pb.VerifyChainReply:
        request = pb.VerifyChainRequest(
            student_id=student_id, subject_id=subject_id, checkpoint=checkpoint
        )
        reply: pb.VerifyChainReply = self._call(
            lambda: self.stub.VerifyChain(request, timeout=self._timeout, metadata=self._metadata),
            retry=True,
        )
        return reply

    def forget_student(
        self, student_id: str, *, allow_plaintext_history: bool = False
    ) -> pb.ForgetStudentReply:
        """Erases the student in every subject (the right to be forgotten). Retried: a second
        call changes nothing and says already_erased."""
        request = pb.ForgetStudentRequest(
            student_id=student_id, allow_plaintext_history=allow_plaintext_history
        )
        reply: pb.ForgetStudentReply = self._call(
            lambda: self.stub.ForgetStudent(
                request, timeout=self._timeout, metadata=self._metadata
            ),
            retry=True,
        )
        return reply

    def build_block(
        self,
        student_id: str,
        subject_id: str,
        query: str,
        *,
        budget_tokens: int,
        now: Timestamp | None = None,
        time_zone: str = "",
        mode: pb.BlockMode = pb.BLOCK_MODE_UNSPECIFIED,
        timeout: float | None = None,
        explain: bool = False,
    ) -> pb.BuildBlockReply:
        """The memory block for one chat turn. A read, so retried on UNAVAILABLE; give it a short
        `timeout`: a block that is late should be skipped, not awaited (SPEC R6.1). `explain`
        also returns why each candidate was shown or dropped (`reply.candidates`): slower, for
        debugging."""
        request = pb.BuildBlockRequest(
            student_id=student_id,
            subject_id=subject_id,
            query=query,
            budget_tokens=budget_tokens,
            now=now,
            time_zone=time_zone,
            mode=mode,
            explain=explain,
        )
        reply: pb.BuildBlockReply = self._call(
            lambda: self.stub.BuildBlock(
                request, timeout=timeout or self._timeout, metadata=self._metadata
            ),
            retry=True,
        )
        return reply

    def annotate_answer(
        self,
        student_id: str,
        subject_id: str,
        answer_episode_id: int,
        block_id: str,
        memory_ids: Iterable[int],
        *,
        timeout: float | None = None,
    ) -> pb.AnnotateAnswerReply:
        """Saves which block and memories were shown for the turn the answer closes. Never
        retried: each call writes an annotation row."""
        request = pb.AnnotateAnswerRequest(
            student_id=student_id,
            subject_id=subject_id,
            answer_episode_id=answer_episode_id,
            block_id=block_id,
            memory_ids=list(memory_ids),
        )
        reply: pb.AnnotateAnswerReply = self._call(
            lambda: self.stub.AnnotateAnswer(
                request, timeout=timeout or self._timeout, metadata=self._metadata
            ),
            retry=False,
        )
        return reply

    def checkpoint(self, student_id: str, subject_id: str) -> pb.SignedCheckpoint:
        request = pb.CheckpointRequest(student_id=student_id, subject_id=subject_id)
        reply: pb.CheckpointReply = self._call(
            lambda: self.stub.Checkpoint(request, timeout=self._timeout, metadata=self._metadata),
            retry=True,
        )
        return reply.checkpoint
