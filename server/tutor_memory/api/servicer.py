"""The gRPC servicer of tutor_memory.v1.Memory: it only translates. Each handler converts the
request (`api.convert`), awaits one use case (`app`), and converts the result back.

Authentication, status mapping and the log line are the interceptor's (`api.interceptors`); the
handler reads the caller with `current_caller()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory._proto import memory_pb2_grpc as pb_grpc
from tutor_memory.api.convert import beliefs as beliefs_pb
from tutor_memory.api.convert import blocks as blocks_pb
from tutor_memory.api.convert import episodes as episodes_pb
from tutor_memory.api.convert import files as files_pb
from tutor_memory.api.convert.common import chain_of, occurred_at
from tutor_memory.api.interceptors import current_caller
from tutor_memory.app.executors import Executors
from tutor_memory.app.ingest import ItemResult, ItemStatus, Rejected, counts
from tutor_memory.app.root import Services
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import ChainKey, NewEpisode
from tutor_memory.domain.errors import InvalidArgument, Unavailable
from tutor_memory.store.protocols import AppendStatus


def _deadline(context: grpc.aio.ServicerContext) -> float | None:
    """The caller's deadline in event-loop time."""
    remaining = context.time_remaining()
    return None if remaining is None else asyncio.get_running_loop().time() + remaining


def _convert_items(
    request: pb.IngestEpisodesRequest | pb.ImportEpisodesRequest, tenant: str
) -> list[NewEpisode | Rejected]:
    """The items of one stream message, each converted, or rejected with its reason."""
    out: list[NewEpisode | Rejected] = []
    at = now_us()
    for item in request.episodes:
        try:
            out.append(
                episodes_pb.new_episode_from_proto(
                    item, tenant=tenant, now_us=at, client_key_required=True
                )
            )
        except InvalidArgument as exc:
            out.append(Rejected(item.client_key, str(exc)))
    return out


async def _ingest_items(
    requests: AsyncIterator[pb.IngestEpisodesRequest] | AsyncIterator[pb.ImportEpisodesRequest],
    tenant: str,
    executors: Executors,
) -> AsyncIterator[NewEpisode | Rejected]:
    """The items of an ingest stream, converted on the ingest thread: a message of a hundred
    items costs milliseconds that the event loop owes to the other calls."""
    async for request in requests:
        for item in await executors.run(executors.ingest, _convert_items, request, tenant):
            yield item


def _chain(student_id: str, subject_id: str) -> ChainKey:
    return chain_of(current_caller().tenant, student_id, subject_id)


class MemoryServicer(pb_grpc.MemoryServicer):
    def __init__(self, services: Services | None = None) -> None:
        self._services = services

    def attach(self, services: Services) -> None:
        """The services, once loaded: the server listens (health answers) while they load, and
        the call gate refuses Memory calls until then."""
        self._services = services

    @property
    def _s(self) -> Services:
        if self._services is None:
            raise Unavailable("the server is loading its data; retry shortly")
        return self._services

    # -- the episode log -----------------------------------------------------------------------

    async def AppendEpisode(
        self, request: pb.AppendEpisodeRequest, context: grpc.aio.ServicerContext
    ) -> pb.AppendEpisodeReply:
        episode = episodes_pb.new_episode_from_proto(
            request.episode,
            tenant=current_caller().tenant,
            now_us=now_us(),
            client_key_required=False,
        )
        outcome = await self._s.episodes.append(episode, deadline=_deadline(context))
        return pb.AppendEpisodeReply(
            episode=episodes_pb.episode_to_proto(outcome.episode),
            duplicate=outcome.status is AppendStatus.DUPLICATE,
        )

    async def IngestEpisodes(
        self,
        request_iterator: AsyncIterator[pb.IngestEpisodesRequest],
        context: grpc.aio.ServicerContext,
    ) -> pb.IngestEpisodesReply:
        items = _ingest_items(request_iterator, current_caller().tenant, self._s.executors)
        results = await self._s.ingest.ingest(items, deadline=_deadline(context))
        return episodes_pb.ingest_reply(results)

    async def ImportEpisodes(
        self,
        request_iterator: AsyncIterator[pb.ImportEpisodesRequest],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[pb.ImportEpisodesReply]:
        items = _ingest_items(request_iterator, current_caller().tenant, self._s.executors)
        # The use case calls back from its own task as each chunk commits; the replies pass
        # through this queue so that this generator alone writes to the stream.
        acks: asyncio.Queue[pb.ImportEpisodesReply | None] = asyncio.Queue()
        totals = dict.fromkeys(ItemStatus, 0)

        async def committed(chunk: list[ItemResult]) -> None:
            for status, n in counts(chunk).items():
                totals[status] += n
            pending = self._s.embedding.pending()
            await acks.put(episodes_pb.import_reply(chunk, totals, pending))

        async def run() -> None:
            try:
                await self._s.ingest.run(items, committed, deadline=_deadline(context))
            finally:
                await acks.put(None)

        task = asyncio.create_task(run())
        try:
            while (reply := await acks.get()) is not None:
                yield reply
            await task  # raises what stopped the import, after every acknowledgement went out
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait([task])

    async def ListEpisodes(
        self, request: pb.ListEpisodesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListEpisodesReply:
        chain = _chain(request.student_id, request.subject_id)
        page = await self._s.episodes.list(
            chain,
            occurred_from_us=episodes_pb.optional_time(
                "occurred_from", request.HasField("occurred_from"), request.occurred_from
            ),
            occurred_to_us=episodes_pb.optional_time(
                "occurred_to", request.HasField("occurred_to"), request.occurred_to
            ),
            after=episodes_pb.decode_page_token(request),
            limit=episodes_pb.page_size(request.page_size),
        )
        token = episodes_pb.encode_page_token(request, page.episodes[-1]) if page.more else ""
        return pb.ListEpisodesReply(
            episodes=[episodes_pb.episode_to_proto(ep) for ep in page.episodes],
            next_page_token=token,
        )

    async def VerifyChain(
        self, request: pb.VerifyChainRequest, context: grpc.aio.ServicerContext
    ) -> pb.VerifyChainReply:
        chain = _chain(request.student_id, request.subject_id)
        checkpoint = (
            episodes_pb.checkpoint_from_proto(request.checkpoint, chain)
            if request.HasField("checkpoint")
            else None
        )
        return episodes_pb.verify_reply(await self._s.episodes.verify(chain, checkpoint))

    async def Checkpoint(
        self, request: pb.CheckpointRequest, context: grpc.aio.ServicerContext
    ) -> pb.CheckpointReply:
        chain = _chain(request.student_id, request.subject_id)
        checkpoint = await self._s.episodes.checkpoint(chain)
        return pb.CheckpointReply(checkpoint=episodes_pb.checkpoint_to_proto(checkpoint))

    # -- the memory block ----------------------------------------------------------------------

    async def BuildBlock(
        self, request: pb.BuildBlockRequest, context: grpc.aio.ServicerContext
    ) -> pb.BuildBlockReply:
        req = blocks_pb.block_request_from_proto(
            request, tenant=current_caller().tenant, now_us=now_us()
        )
        blocks = self._s.blocks
        block = await blocks.build(req, context.time_remaining(), explain=request.explain)
        if block is None:
            reply = blocks_pb.dropped_reply(req, blocks.tokenizer)
        else:
            reply = blocks_pb.block_to_proto(
                block, budget_tokens=req.budget_tokens, tokenizer=blocks.tokenizer
            )
        reply.vectors_pending = self._s.embedding.pending_of(req.chain)
        return reply

    async def AnnotateAnswer(
        self, request: pb.AnnotateAnswerRequest, context: grpc.aio.ServicerContext
    ) -> pb.AnnotateAnswerReply:
        chain = _chain(request.student_id, request.subject_id)
        shown = beliefs_pb.shown_from_proto(request)
        done = await self._s.answers.annotate(chain, shown, deadline=_deadline(context))
        return beliefs_pb.annotate_reply(done)

    # -- files and the concept map -------------------------------------------------------------

    async def IngestFile(
        self, request: pb.IngestFileRequest, context: grpc.aio.ServicerContext
    ) -> pb.IngestFileReply:
        chain = _chain(request.student_id, request.subject_id)
        result = await self._s.files.ingest(
            files_pb.upload_from_proto(request, chain), deadline=_deadline(context)
        )
        return files_pb.ingest_file_reply(result)

    async def RemoveFile(
        self, request: pb.RemoveFileRequest, context: grpc.aio.ServicerContext
    ) -> pb.RemoveFileReply:
        chain = _chain(request.student_id, request.subject_id)
        at, _ = occurred_at("occurred_at", request.HasField("occurred_at"), request.occurred_at)
        result = await self._s.files.remove(chain, files_pb.file_id_of(request), at)
        return pb.RemoveFileReply(
            episode=episodes_pb.episode_to_proto(result.episode), map_concepts=result.map_concepts
        )

    async def SearchPassages(
        self, request: pb.SearchPassagesRequest, context: grpc.aio.ServicerContext
    ) -> pb.SearchPassagesReply:
        chain = _chain(request.student_id, request.subject_id)
        found = await self._s.files.search_passages(chain, request.query, request.limit)
        return files_pb.passages_reply(found)

    async def GetMap(
        self, request: pb.GetMapRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetMapReply:
        chain = _chain(request.student_id, request.subject_id)
        return files_pb.map_to_proto(await self._s.files.concept_map(chain))

    async def Teach(
        self, request: pb.TeachRequest, context: grpc.aio.ServicerContext
    ) -> pb.TeachReply:
        chain = _chain(request.student_id, request.subject_id)
        at, given = occurred_at("occurred_at", request.HasField("occurred_at"), request.occurred_at)
        taught = await self._s.teacher.teach(
            chain, request.text, at, occurred_at_given=given, deadline=_deadline(context)
        )
        return pb.TeachReply(
            concept=taught.concept,
            created=taught.created,
            note=taught.note,
            episode=episodes_pb.episode_to_proto(taught.episode),
        )

    # -- beliefs, reports and the nightly cycle ------------------------------------------------

    async def RecordCheck(
        self, request: pb.RecordCheckRequest, context: grpc.aio.ServicerContext
    ) -> pb.RecordCheckReply:
        chain = _chain(request.student_id, request.subject_id)
        recorded = await self._s.beliefs.record_check(
            beliefs_pb.check_report_from_proto(request, chain), deadline=_deadline(context)
        )
        return beliefs_pb.record_check_reply(recorded)

    async def GetBeliefHistory(
        self, request: pb.GetBeliefHistoryRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetBeliefHistoryReply:
        chain = _chain(request.student_id, request.subject_id)
        concept = beliefs_pb.history_concept(request)
        return beliefs_pb.histories_reply(await self._s.beliefs.history(chain, concept))

    async def Rederive(
        self, request: pb.RederiveRequest, context: grpc.aio.ServicerContext
    ) -> pb.RederiveReply:
        chain = _chain(request.student_id, request.subject_id)
        done = await self._s.beliefs.rederive(chain, deadline=_deadline(context))
        return pb.RederiveReply(
            retired=done.retired, derived=done.derived, checks_replayed=done.checks_replayed
        )

    async def GetReport(
        self, request: pb.GetReportRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetReportReply:
        chain = _chain(request.student_id, request.subject_id)
        return beliefs_pb.report_reply(await self._s.reporter.report(chain, now_us()))

    async def ForgetStudent(
        self, request: pb.ForgetStudentRequest, context: grpc.aio.ServicerContext
    ) -> pb.ForgetStudentReply:
        caller = current_caller()
        outcome = await self._s.eraser.forget(
            caller.tenant,
            request.student_id,
            by=caller.name,
            allow_plaintext_history=request.allow_plaintext_history,
        )
        return episodes_pb.forget_reply(outcome)

    async def Consolidate(
        self, request: pb.ConsolidateRequest, context: grpc.aio.ServicerContext
    ) -> pb.ConsolidateReply:
        run = beliefs_pb.consolidate_from_proto(request, current_caller().tenant)
        return beliefs_pb.consolidate_reply(await self._s.nightly.run(run))
