"""RPCs of the concept map (SPEC R3, R4): IngestFile, RemoveFile, SearchPassages, GetMap, Teach."""

from __future__ import annotations

import grpc
import numpy as np
from google.protobuf.timestamp_pb2 import Timestamp

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.api import convert
from tutor_memory.api.auth import Caller
from tutor_memory.api.handlers import Authenticated, rpc
from tutor_memory.app.files import FileIngest, FileUpload
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.maps import MapCache
from tutor_memory.app.teaching import Teacher
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.conceptmap.bands import Band
from tutor_memory.domain.conceptmap.chain_map import ChainMap
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.episodes import check_occurred_at
from tutor_memory.domain.errors import InvalidArgument

# SearchPassages: at most this many passages per call, and how many when the caller says 0.
MAX_PASSAGES = 50
DEFAULT_PASSAGES = 5

BAND_TO_PROTO = {
    Band.NAMED: pb.READINESS_BAND_NAMED,
    Band.EXPLAINED: pb.READINESS_BAND_EXPLAINED,
    Band.CONFIRMED: pb.READINESS_BAND_CONFIRMED,
    Band.TAUGHT: pb.READINESS_BAND_TAUGHT,
}


def occurred_at(field: str, has: bool, ts: Timestamp) -> tuple[int, bool]:
    """(occurred_at in µs, whether the caller gave it); unset means now. The same limits as an
    appended episode's: not before 1970, not in the future."""
    now = now_us()
    if not has:
        return now, False
    return check_occurred_at(field, convert.timestamp_to_us(field, ts), now), True


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


class MapRpcs(Authenticated):
    ledger: Ledger
    maps: MapCache
    files: FileIngest
    teacher: Teacher

    @rpc
    async def IngestFile(
        self, request: pb.IngestFileRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.IngestFileReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        at, given = occurred_at("occurred_at", request.HasField("occurred_at"), request.occurred_at)
        upload = FileUpload(
            chain=chain,
            file_id=request.file_id,
            filename=request.filename,
            media_type=request.media_type,
            content=request.content,
            occurred_at_us=at,
            occurred_at_given=given,
            concepts=tuple(
                ExtractedConcept(
                    c.name, c.summary, c.definition, tuple(c.builds_on), tuple(c.pages)
                )
                for c in request.concepts
            ),
        )
        result = await self.files.ingest(upload)
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
            reply.episode.CopyFrom(convert.episode_to_proto(result.episode))
        return reply

    @rpc
    async def RemoveFile(
        self, request: pb.RemoveFileRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.RemoveFileReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        at, _ = occurred_at("occurred_at", request.HasField("occurred_at"), request.occurred_at)
        result = await self.files.remove(chain, request.file_id, at)
        return pb.RemoveFileReply(
            episode=convert.episode_to_proto(result.episode), map_concepts=result.map_concepts
        )

    @rpc
    async def SearchPassages(
        self, request: pb.SearchPassagesRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.SearchPassagesReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        if not request.query.strip():
            raise InvalidArgument("query", "required")
        if request.limit > MAX_PASSAGES:
            raise InvalidArgument("limit", f"at most {MAX_PASSAGES}")
        limit = request.limit or DEFAULT_PASSAGES
        embedder = self.ledger.embedder
        passages, matrix = await self.ledger.read(lambda: self.files.passage_cache.get(chain))
        if not passages:
            return pb.SearchPassagesReply()
        query = (await self.ledger.on_embed_thread(lambda: embedder.embed([request.query])))[0]
        sims = matrix @ query
        best = np.argsort(-sims, kind="stable")[:limit]
        return pb.SearchPassagesReply(
            passages=[
                pb.Passage(
                    ref=pb.PassageRef(
                        file_id=passages[i].file_id,
                        version=passages[i].version,
                        page=passages[i].page,
                    ),
                    text=passages[i].text,
                    score=float(sims[i]),
                    file_fingerprint=passages[i].fingerprint,
                )
                for i in best
            ]
        )

    @rpc
    async def GetMap(
        self, request: pb.GetMapRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.GetMapReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        chain_map = await self.ledger.read(lambda: self.maps.get(chain))
        return map_to_proto(chain_map)

    @rpc
    async def Teach(
        self, request: pb.TeachRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.TeachReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        at, given = occurred_at("occurred_at", request.HasField("occurred_at"), request.occurred_at)
        taught = await self.teacher.teach(chain, request.text, at, occurred_at_given=given)
        return pb.TeachReply(
            concept=taught.concept,
            created=taught.created,
            note=taught.note,
            episode=convert.episode_to_proto(taught.episode),
        )
