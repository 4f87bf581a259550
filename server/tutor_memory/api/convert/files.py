"""Files and the concept map: IngestFile, RemoveFile, SearchPassages, GetMap, Teach."""

from __future__ import annotations

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.api.convert.common import occurred_at
from tutor_memory.api.convert.enums import BAND_TO_PROTO
from tutor_memory.api.convert.episodes import episode_to_proto
from tutor_memory.app.files import FileUpload, IngestResult
from tutor_memory.domain.conceptmap.chain_map import ChainMap
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.screening import check_caller_concepts
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.files.read import MAX_FILE_BYTES
from tutor_memory.domain.files.search import FoundPassage
from tutor_memory.domain.files.versions import check_file_id
from tutor_memory.domain.limits import MAX_FILENAME_CHARS, MAX_MEDIA_TYPE_CHARS, check_line


def upload_from_proto(msg: pb.IngestFileRequest, chain: ChainKey) -> FileUpload:
    check_file_id(msg.file_id)
    check_line("filename", msg.filename, MAX_FILENAME_CHARS, required=False)
    check_line("media_type", msg.media_type, MAX_MEDIA_TYPE_CHARS, required=False)
    if len(msg.content) > MAX_FILE_BYTES:
        raise InvalidArgument(
            "content", f"{len(msg.content)} bytes, more than the {MAX_FILE_BYTES} allowed"
        )
    at, given = occurred_at("occurred_at", msg.HasField("occurred_at"), msg.occurred_at)
    concepts = tuple(
        ExtractedConcept(c.name, c.summary, c.definition, tuple(c.builds_on), tuple(c.pages))
        for c in msg.concepts
    )
    check_caller_concepts(concepts)
    return FileUpload(
        chain=chain,
        file_id=msg.file_id,
        filename=msg.filename,
        media_type=msg.media_type,
        content=msg.content,
        occurred_at_us=at,
        occurred_at_given=given,
        concepts=concepts,
    )


def file_id_of(msg: pb.RemoveFileRequest) -> str:
    check_file_id(msg.file_id)
    return msg.file_id


def ingest_file_reply(result: IngestResult) -> pb.IngestFileReply:
    reply = pb.IngestFileReply(
        file_id=result.file_id,
        version=result.version,
        fingerprint=result.fingerprint,
        unchanged=result.unchanged,
        pages=result.pages,
        passages=result.passages,
        extractor=result.extractor,
        concepts=list(result.concepts),
        rejected=[pb.RejectedConcept(name=n, reason=r) for n, r in result.rejected],
        map_concepts=result.map_concepts,
    )
    if result.episode is not None:
        reply.episode.CopyFrom(episode_to_proto(result.episode))
    return reply


def passages_reply(found: list[FoundPassage]) -> pb.SearchPassagesReply:
    return pb.SearchPassagesReply(
        passages=[
            pb.Passage(
                ref=pb.PassageRef(
                    file_id=f.passage.file_id, version=f.passage.version, page=f.passage.page
                ),
                text=f.passage.text,
                score=f.score,
                file_fingerprint=f.passage.fingerprint,
            )
            for f in found
        ]
    )


def map_to_proto(chain_map: ChainMap) -> pb.GetMapReply:
    concept_map = chain_map.map
    name_of = {node.key: node.name for node in concept_map.nodes}
    return pb.GetMapReply(
        nodes=[
            pb.ConceptNode(
                name=node.name,
                key=node.key,
                summary=node.summary,
                definition=node.definition,
                readiness=node.readiness,
                band=BAND_TO_PROTO[node.band],
                centrality=node.centrality,
                provenance=[
                    pb.Provenance(file_id=p.file_id, version=p.version, pages=list(p.pages))
                    for p in node.provenance
                ],
                assumed=list(node.assumed),
                taught=list(node.taught),
                layer=node.layer,
            )
            for node in concept_map.nodes
        ],
        edges=[
            pb.ConceptEdge(
                prerequisite=name_of.get(e.prerequisite, e.prerequisite),
                concept=name_of.get(e.concept, e.concept),
                weight=float(e.weight),
            )
            for e in concept_map.edges
        ],
        teaching_order=list(concept_map.teaching_order),
        cycles=[pb.ConceptCycle(names=list(c)) for c in concept_map.cycles],
        subject_readiness=concept_map.subject_readiness,
        header=concept_map.header(),
    )
