"""IngestFile and RemoveFile (SPEC R3.1-R3.3, R5.1): a file becomes a version row, its passages,
its validated concepts, and the `file` episode that records it — in one transaction.

The same bytes again are a no-op. New bytes under the same file id are a new version; the old
versions stay in the store, so a citation of them can later be checked ("replaced", R7.4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from tutor_memory.app.caches import CHAIN_CACHE_SIZE, ChainCache
from tutor_memory.app.changes import Change
from tutor_memory.app.executors import Executors
from tutor_memory.app.file_reading import FileReader
from tutor_memory.app.ledger import Ledger, PreparedBatch
from tutor_memory.app.maps import MapCache
from tutor_memory.domain.budget import WorkBudget
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.conceptmap.chain_map import ChainMap
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.episodes import (
    MAX_CONCEPTS,
    ChainKey,
    Evidence,
    Kind,
    NewEpisode,
    StoredEpisode,
)
from tutor_memory.domain.errors import AlreadyExists, InvalidArgument, NotFound
from tutor_memory.domain.files.search import (
    DEFAULT_PASSAGES,
    MAX_PASSAGES,
    FoundPassage,
    Passages,
    nearest,
    passages_bytes,
)
from tutor_memory.domain.files.versions import (
    file_summary,
    fingerprint,
    removal_row,
)
from tutor_memory.domain.limits import FILE_WORK_SECONDS, MAX_CONCEPT_CHARS, MAX_QUERY_CHARS
from tutor_memory.domain.records import NewFileVersion, NewPassage
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.protocols import AppendOutcome, AppendStatus, FileReads, StoreWriter

T = TypeVar("T")
PassageCache = ChainCache[Passages]

# Bytes of passages (texts and embeddings) kept in memory, over all chains. One course file may
# hold 5 million characters, about 4,200 passages and 12 MiB with their embeddings, so a bound
# on chains alone (CHAIN_CACHE_SIZE) would let a server fill gigabytes with the course files of
# students who asked once; beyond this, the least recently searched chains load again.
PASSAGE_CACHE_BYTES = 256 * 1024 * 1024


# Passages embedded between two checks of a file's work budget (about a second of work).
EMBED_BATCH = 64


@dataclass(frozen=True, slots=True)
class FileUpload:
    chain: ChainKey
    file_id: str
    filename: str
    media_type: str
    content: bytes
    occurred_at_us: int
    occurred_at_given: bool
    # Empty: the built-in extractor runs.
    concepts: tuple[ExtractedConcept, ...]


@dataclass(frozen=True, slots=True)
class IngestResult:
    file_id: str
    version: int
    fingerprint: str
    unchanged: bool
    pages: int
    passages: int
    extractor: str
    concepts: tuple[str, ...]
    rejected: tuple[tuple[str, str], ...]
    episode: StoredEpisode | None
    map_concepts: int


@dataclass(frozen=True, slots=True)
class RemoveResult:
    episode: StoredEpisode
    map_concepts: int


class FileIngest:
    """IngestFile, RemoveFile and SearchPassages."""

    def __init__(
        self,
        ledger: Ledger,
        store: FileReads,
        embedder: Embedder,
        maps: MapCache,
        passages: PassageCache,
        executors: Executors,
        reader: FileReader,
    ) -> None:
        self._ledger = ledger
        self._store = store
        self._embedder = embedder
        self._maps = maps
        self._passages = passages
        self._executors = executors
        self._reader = reader

    def close(self) -> None:
        """Stops the file-reading process (once the file thread's work is done)."""
        self._reader.close()

    async def _read(self, fn: Callable[[], T]) -> T:
        return await self._executors.run(self._executors.readers, fn)

    async def ingest(self, upload: FileUpload, *, deadline: float | None = None) -> IngestResult:
        """`deadline` is the caller's (event-loop time); the reading, extraction and embedding of
        the file also stop after FILE_WORK_SECONDS (RESOURCE_EXHAUSTED, nothing stored)."""
        budget = WorkBudget(
            "content: reading the file", deadline=deadline, cap_seconds=FILE_WORK_SECONDS
        )
        digest = fingerprint(upload.content)
        latest = await self._read(
            lambda: self._store.latest_file_version(upload.chain, upload.file_id)
        )
        if latest is not None and latest[1] == digest:
            chain_map = await self._read(lambda: self._maps.get(upload.chain))
            return IngestResult(
                upload.file_id, latest[0], digest, True, 0, 0, "", (), (), None,
                len(chain_map.map.nodes),
            )  # fmt: skip
        # On the file pool: reading a file and extracting its concepts can take seconds, and
        # must not hold up the embedding that every episode write needs.
        prepared, row = await self._executors.run_within(
            self._executors.files, budget, self._prepare, upload, digest, budget
        )
        expected = latest[0] if latest else 0

        def then(w: StoreWriter, outcomes: list[AppendOutcome]) -> None:
            (outcome,) = outcomes
            if outcome.status is not AppendStatus.INSERTED:
                raise AlreadyExists(outcome.reason or "the file episode already exists")
            now = w.latest_file_version(upload.chain, upload.file_id)
            if (now[0] if now else 0) != expected:
                raise AlreadyExists(
                    f"file_id: {upload.file_id!r} got a new version while this one was read; "
                    "send it again"
                )
            w.add_file_version(
                upload.chain,
                dataclasses.replace(row, version=expected + 1),
                episode_id=outcome.episode.episode_id,
                model_id=self._embedder.model_id,
                ingested_at_us=outcome.episode.recorded_at_us,
            )

        outcomes, _ = await self._ledger.write_with(prepared, then, also=Change.FILES)
        chain_map = await self._read(lambda: self._maps.get(upload.chain))
        by_key = {node.key: node.name for node in chain_map.map.nodes}
        names = tuple(
            dict.fromkeys(by_key.get(canonical_key(c.name), c.name) for c in row.concepts)
        )
        return IngestResult(
            upload.file_id, expected + 1, digest, False, row.pages, len(row.passages),
            row.extractor, names, row.rejected, outcomes[0].episode, len(chain_map.map.nodes),
        )  # fmt: skip

    def _prepare(
        self, upload: FileUpload, digest: str, budget: WorkBudget
    ) -> tuple[PreparedBatch, NewFileVersion]:
        read = self._reader.read(
            upload.content, upload.filename, upload.media_type, upload.concepts, budget
        )
        document, accepted, chunks = read.document, read.accepted, read.passages
        vectors = self._embed([c.name for c in accepted] + [p.text for p in chunks], budget)
        names = [c.name for c in accepted]
        episode = NewEpisode(
            chain=upload.chain,
            kind=Kind.FILE,
            summary=file_summary(upload.filename or upload.file_id, document, names),
            text=document.title,
            concepts=tuple(n[:MAX_CONCEPT_CHARS] for n in names[:MAX_CONCEPTS]),
            occurred_at_us=upload.occurred_at_us,
            occurred_at_given=upload.occurred_at_given,
            evidence=(Evidence(upload.file_id, 0, digest),),
            check=None,
            quiz=None,
            client_key="",
        )
        row = NewFileVersion(
            file_id=upload.file_id,
            version=0,
            fingerprint=digest,
            filename=upload.filename,
            kind=document.kind,
            title=document.title,
            pages=len(document.pages),
            size_bytes=len(upload.content),
            extractor=read.extractor,
            concepts=accepted,
            name_vectors=vectors[: len(accepted)],
            rejected=read.rejected,
            passages=tuple(
                NewPassage(p.page, p.text, vectors[len(accepted) + i]) for i, p in enumerate(chunks)
            ),
        )
        return self._ledger.prepare([episode]), row

    def _embed(self, texts: list[str], budget: WorkBudget) -> npt.NDArray[np.float32]:
        """The embeddings of `texts`, a batch at a time, the budget checked between batches: a
        long file's embedding is most of its work."""
        parts = [np.empty((0, self._embedder.dim), np.float32)]
        for start in range(0, len(texts), EMBED_BATCH):
            budget.check()
            parts.append(self._embedder.embed(texts[start : start + EMBED_BATCH]))
        return np.concatenate(parts)

    async def remove(self, chain: ChainKey, file_id: str, occurred_at_us: int) -> RemoveResult:
        latest = await self._read(lambda: self._store.latest_file_version(chain, file_id))
        if latest is None or not latest[1]:
            raise NotFound(f"file_id: no current file {file_id!r} in this chain")
        version, old_digest = latest
        episode = NewEpisode(
            chain=chain,
            kind=Kind.FILE,
            summary=f"File {file_id} removed",
            text="",
            concepts=(),
            occurred_at_us=occurred_at_us,
            occurred_at_given=True,
            evidence=(Evidence(file_id, 0, old_digest),),
            check=None,
            quiz=None,
            client_key="",
        )
        prepared = await self._ledger.embed([episode])

        def then(w: StoreWriter, outcomes: list[AppendOutcome]) -> None:
            now = w.latest_file_version(chain, file_id)
            if now != latest:
                raise AlreadyExists(f"file_id: {file_id!r} changed meanwhile; send it again")
            w.add_file_version(
                chain,
                removal_row(file_id, version + 1, self._embedder.dim),
                episode_id=outcomes[0].episode.episode_id,
                model_id=self._embedder.model_id,
                ingested_at_us=outcomes[0].episode.recorded_at_us,
            )

        outcomes, _ = await self._ledger.write_with(prepared, then, also=Change.FILES)
        chain_map = await self._read(lambda: self._maps.get(chain))
        return RemoveResult(outcomes[0].episode, len(chain_map.map.nodes))

    async def concept_map(self, chain: ChainKey) -> ChainMap:
        """The chain's concept map as it stands (GetMap)."""
        return await self._read(lambda: self._maps.get(chain))

    async def search_passages(self, chain: ChainKey, query: str, limit: int) -> list[FoundPassage]:
        """The chain's current passages nearest in meaning to `query`, best first (at most
        `limit`; 0 asks for the default)."""
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidArgument("query", f"longer than {MAX_QUERY_CHARS} characters")
        if not query.strip():
            raise InvalidArgument("query", "required")
        if limit > MAX_PASSAGES:
            raise InvalidArgument("limit", f"at most {MAX_PASSAGES}")
        stored, matrix = await self._read(lambda: self._passages.get(chain))
        if not stored:
            return []
        vector = await self._executors.run(self._executors.embed, self._embedder.embed, [query])
        # Off the event loop: a chain may hold tens of thousands of passages, and scoring and
        # sorting them all takes milliseconds (numpy lets go of the GIL while it multiplies).
        return await self._executors.run(
            self._executors.readers, nearest, stored, matrix, vector[0], limit or DEFAULT_PASSAGES
        )


def passage_cache(
    store: FileReads, model_id: str, fresh: Callable[[ChainKey], None] | None = None
) -> PassageCache:
    """Each chain's current passages and their embeddings, kept between calls: every
    SearchPassages and every grounded answer reads them, and they change only when a file
    version is added or removed (the change hook drops the chain then). Bounded in chains and in
    bytes (PASSAGE_CACHE_BYTES)."""
    return ChainCache(
        lambda chain: store.current_passages(chain, model_id),
        CHAIN_CACHE_SIZE,
        fresh,
        weigh=passages_bytes,
        max_bytes=PASSAGE_CACHE_BYTES,
    )
