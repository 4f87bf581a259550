"""IngestFile and RemoveFile (SPEC R3.1-R3.3, R5.1): a file becomes a version row, its passages,
its validated concepts, and the `file` episode that records it — in one transaction.

The same bytes again are a no-op. New bytes under the same file id are a new version; the old
versions stay in the store, so a citation of them can later be checked ("replaced", R7.4).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tutor_memory.app.ledger import Ledger, PreparedBatch
from tutor_memory.app.maps import MapCache
from tutor_memory.app.passage_cache import PassageCache
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.extract import MAX_CONCEPTS_PER_FILE, OfflineExtractor
from tutor_memory.domain.conceptmap.headings import clean_name, rejection_reason
from tutor_memory.domain.episodes import (
    MAX_CONCEPT_CHARS,
    MAX_CONCEPTS,
    MAX_FILE_ID_CHARS,
    MAX_SUMMARY_CHARS,
    ChainKey,
    Evidence,
    Kind,
    NewEpisode,
    StoredEpisode,
    check_identifier,
)
from tutor_memory.domain.errors import AlreadyExists, InvalidArgument, NotFound
from tutor_memory.domain.files.document import Document
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.files.passages import passages
from tutor_memory.domain.files.read import read_document
from tutor_memory.domain.records import NewFileVersion, NewPassage
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.protocols import AppendOutcome, AppendStatus, StoreWriter

# What a caller-supplied concept may carry (the extractor's own output stays within these too).
MAX_CONCEPT_SUMMARY_CHARS = 500
MAX_CONCEPT_DEFINITION_CHARS = 1_000
MAX_BUILDS_ON = 16
# The `file` episode lists at most this many concept names in its summary line.
SUMMARY_CONCEPTS = 8

EXTRACTOR_BUILTIN = "builtin"
EXTRACTOR_CALLER = "caller"


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


def fingerprint(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def validate_caller_concepts(
    concepts: Sequence[ExtractedConcept], pages: int
) -> tuple[list[ExtractedConcept], list[tuple[str, str]]]:
    """The caller's concepts checked exactly as the built-in extractor's: malformed ones are an
    INVALID_ARGUMENT naming the field; section headings are rejected one by one (R3.2)."""
    if len(concepts) > MAX_CONCEPTS_PER_FILE:
        raise InvalidArgument(
            "concepts", f"{len(concepts)} given, at most {MAX_CONCEPTS_PER_FILE} per file"
        )
    for i, c in enumerate(concepts):
        field = f"concepts[{i}]"
        if not c.name.strip():
            raise InvalidArgument(f"{field}.name", "required")
        if len(c.name) > MAX_CONCEPT_CHARS:
            raise InvalidArgument(f"{field}.name", f"longer than {MAX_CONCEPT_CHARS} characters")
        if len(c.summary) > MAX_CONCEPT_SUMMARY_CHARS:
            raise InvalidArgument(
                f"{field}.summary", f"longer than {MAX_CONCEPT_SUMMARY_CHARS} characters"
            )
        if len(c.definition) > MAX_CONCEPT_DEFINITION_CHARS:
            raise InvalidArgument(
                f"{field}.definition", f"longer than {MAX_CONCEPT_DEFINITION_CHARS} characters"
            )
        if len(c.builds_on) > MAX_BUILDS_ON:
            raise InvalidArgument(f"{field}.builds_on", f"more than {MAX_BUILDS_ON} names")
        for j, name in enumerate(c.builds_on):
            if not name.strip() or len(name) > MAX_CONCEPT_CHARS:
                raise InvalidArgument(
                    f"{field}.builds_on[{j}]", f"must be 1 to {MAX_CONCEPT_CHARS} characters"
                )
        for j, page in enumerate(c.pages):
            if not 1 <= page <= pages:
                raise InvalidArgument(
                    f"{field}.pages[{j}]", f"page {page} is not in the file (1 to {pages})"
                )
    return screen(concepts)


def screen(
    concepts: Sequence[ExtractedConcept],
) -> tuple[list[ExtractedConcept], list[tuple[str, str]]]:
    """Splits concepts into accepted ones and (name, reason) rejections by the heading validator;
    a name seen twice in one file is kept once."""
    accepted: list[ExtractedConcept] = []
    rejected: list[tuple[str, str]] = []
    seen: set[str] = set()
    for c in concepts:
        name = " ".join(c.name.split())
        reason = rejection_reason(name)
        if reason is not None:
            rejected.append((name, reason))
            continue
        # "2.1 Osmosis" is the concept Osmosis: numbering and markup are the file's furniture.
        name = clean_name(name) or name
        if name.casefold() in seen:
            continue
        seen.add(name.casefold())
        accepted.append(
            ExtractedConcept(name, c.summary.strip(), c.definition.strip(), c.builds_on, c.pages)
        )
    return accepted, rejected


def _file_summary(upload: FileUpload, document: Document, names: Sequence[str]) -> str:
    label = upload.filename or upload.file_id
    head = f"File {label} ({len(document.pages)} pages)"
    if not names:
        return head[:MAX_SUMMARY_CHARS]
    shown = ", ".join(names[:SUMMARY_CONCEPTS])
    more = f" and {len(names) - SUMMARY_CONCEPTS} more" if len(names) > SUMMARY_CONCEPTS else ""
    return f"{head}: {shown}{more}"[:MAX_SUMMARY_CHARS]


class FileIngest:
    def __init__(
        self, ledger: Ledger, embedder: Embedder, maps: MapCache, passage_cache: PassageCache
    ) -> None:
        self.ledger = ledger
        self.embedder = embedder
        self.maps = maps
        self.passage_cache = passage_cache
        self.extractor = OfflineExtractor()

    async def ingest(self, upload: FileUpload) -> IngestResult:
        check_identifier("student_id", upload.chain.student)
        check_identifier("subject_id", upload.chain.subject)
        _check_file_id(upload.file_id)
        digest = fingerprint(upload.content)
        latest = await self.ledger.read(
            lambda: self.ledger.store.latest_file_version(upload.chain, upload.file_id)
        )
        if latest is not None and latest[1] == digest:
            chain_map = await self.ledger.read(lambda: self.maps.get(upload.chain))
            return IngestResult(
                upload.file_id, latest[0], digest, True, 0, 0, "", (), (), None,
                len(chain_map.map.nodes),
            )  # fmt: skip
        prepared, row = await self.ledger.on_embed_thread(lambda: self._prepare(upload, digest))
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
                _with_version(row, expected + 1),
                episode_id=outcome.episode.episode_id,
                model_id=self.embedder.model_id,
                ingested_at_us=outcome.episode.recorded_at_us,
            )

        outcomes, _ = await self.ledger.write_with(prepared, then)
        self.maps.invalidate(upload.chain)
        self.passage_cache.invalidate(upload.chain)
        chain_map = await self.ledger.read(lambda: self.maps.get(upload.chain))
        by_key = {node.key: node.name for node in chain_map.map.nodes}
        names = tuple(
            dict.fromkeys(by_key.get(canonical_key(c.name), c.name) for c in row.concepts)
        )
        return IngestResult(
            upload.file_id, expected + 1, digest, False, row.pages, len(row.passages),
            row.extractor, names, row.rejected, outcomes[0].episode, len(chain_map.map.nodes),
        )  # fmt: skip

    def _prepare(self, upload: FileUpload, digest: str) -> tuple[PreparedBatch, NewFileVersion]:
        try:
            document = read_document(upload.content, upload.filename, upload.media_type)
        except FileRejected as exc:
            raise InvalidArgument("content", exc.reason) from exc
        if upload.concepts:
            accepted, rejected = validate_caller_concepts(upload.concepts, len(document.pages))
            extractor = EXTRACTOR_CALLER
        else:
            accepted, rejected = screen(self.extractor.extract(document))
            extractor = EXTRACTOR_BUILTIN
        chunks = passages(document)
        vectors = self.embedder.embed([c.name for c in accepted] + [p.text for p in chunks])
        names = [c.name for c in accepted]
        episode = NewEpisode(
            chain=upload.chain,
            kind=Kind.FILE,
            summary=_file_summary(upload, document, names),
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
            extractor=extractor,
            concepts=tuple(accepted),
            name_vectors=vectors[: len(accepted)],
            rejected=tuple(rejected),
            passages=tuple(
                NewPassage(p.page, p.text, vectors[len(accepted) + i]) for i, p in enumerate(chunks)
            ),
        )
        return self.ledger.prepare([episode]), row

    async def remove(self, chain: ChainKey, file_id: str, occurred_at_us: int) -> RemoveResult:
        check_identifier("student_id", chain.student)
        check_identifier("subject_id", chain.subject)
        _check_file_id(file_id)
        latest = await self.ledger.read(
            lambda: self.ledger.store.latest_file_version(chain, file_id)
        )
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
        prepared = await self.ledger.embed([episode])

        def then(w: StoreWriter, outcomes: list[AppendOutcome]) -> None:
            now = w.latest_file_version(chain, file_id)
            if now != latest:
                raise AlreadyExists(f"file_id: {file_id!r} changed meanwhile; send it again")
            w.add_file_version(
                chain,
                removal_row(file_id, version + 1, self.embedder.dim),
                episode_id=outcomes[0].episode.episode_id,
                model_id=self.embedder.model_id,
                ingested_at_us=outcomes[0].episode.recorded_at_us,
            )

        outcomes, _ = await self.ledger.write_with(prepared, then)
        self.maps.invalidate(chain)
        self.passage_cache.invalidate(chain)
        chain_map = await self.ledger.read(lambda: self.maps.get(chain))
        return RemoveResult(outcomes[0].episode, len(chain_map.map.nodes))


def removal_row(file_id: str, version: int, dim: int) -> NewFileVersion:
    """The version row that records a removal: no fingerprint, no content."""
    return NewFileVersion(
        file_id=file_id,
        version=version,
        fingerprint="",
        filename="",
        kind="removed",
        title="",
        pages=0,
        size_bytes=0,
        extractor="",
        concepts=(),
        name_vectors=np.empty((0, dim), np.float32),
        rejected=(),
        passages=(),
    )


def _with_version(row: NewFileVersion, version: int) -> NewFileVersion:
    return dataclasses.replace(row, version=version)


def _check_file_id(file_id: str) -> None:
    if not file_id.strip():
        raise InvalidArgument("file_id", "required")
    if len(file_id) > MAX_FILE_ID_CHARS:
        raise InvalidArgument("file_id", f"longer than {MAX_FILE_ID_CHARS} characters")
