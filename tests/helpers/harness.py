"""A real server in the test's own event loop on port 0, called through the generated stubs, with
two tenants' tokens."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import grpc

from tutor_memory.api.auth import token_sha256
from tutor_memory.api.server import App, create_server
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

TOKEN_A = "token-for-tenant-a"
TOKEN_B = "token-for-tenant-b"


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


A = auth(TOKEN_A)
B = auth(TOKEN_B)


def write_tokens_file(path: Path) -> Path:
    path.write_text(
        "[[tokens]]\n"
        f'tenant = "tenant-a"\nsha256 = "{token_sha256(TOKEN_A)}"\n\n'
        "[[tokens]]\n"
        f'tenant = "tenant-b"\nsha256 = "{token_sha256(TOKEN_B)}"\nname = "second"\n'
    )
    return path


def question(
    text: str, *, student: str = "s1", subject: str = "biology", key: str = "", seconds: int = 0
) -> pb.NewEpisode:
    ep = pb.NewEpisode(
        student_id=student,
        subject_id=subject,
        kind=pb.EPISODE_KIND_QUESTION,
        summary=text,
        text=text,
        client_key=key,
    )
    if seconds:
        ep.occurred_at.seconds = seconds
    return ep


@dataclass
class Harness:
    app: App
    channel: grpc.aio.Channel
    stub: pb_grpc.MemoryStub
    config: ServerConfig

    async def append(self, episode: pb.NewEpisode, md: object = A) -> pb.AppendEpisodeReply:
        reply: pb.AppendEpisodeReply = await self.stub.AppendEpisode(
            pb.AppendEpisodeRequest(episode=episode), metadata=md
        )
        return reply

    async def ingest(
        self, episodes: list[pb.NewEpisode], md: object = A, per_message: int = 7
    ) -> pb.IngestEpisodesReply:
        """Streams a batch; an odd group size makes messages straddle the server's chunks."""
        reply: pb.IngestEpisodesReply = await self.stub.IngestEpisodes(
            ingest_messages(episodes, per_message), metadata=md
        )
        # Their embeddings follow the acknowledgement (app/embedding_queue.py); the tests that
        # ingest and then recall by meaning want them there.
        await self.vectors_settled()
        return reply

    async def vectors_settled(self) -> None:
        """Waits until the embedding queue has embedded every committed episode."""
        queue = self.app.services.embedding
        assert await asyncio.to_thread(queue.wait_idle, 60.0), "the embedding queue never caught up"

    async def list_all(
        self, student: str = "s1", subject: str = "biology", md: object = A
    ) -> list[pb.Episode]:
        out: list[pb.Episode] = []
        request = pb.ListEpisodesRequest(student_id=student, subject_id=subject, page_size=1000)
        while True:
            reply = await self.stub.ListEpisodes(request, metadata=md)
            out.extend(reply.episodes)
            if not reply.next_page_token:
                return out
            request.page_token = reply.next_page_token


async def start_harness(config: ServerConfig, embedder: UseOnnxEmbedder) -> Harness:
    app = await create_server(config, embedder=embedder)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    return Harness(app, channel, pb_grpc.MemoryStub(channel), config)


async def stop_harness(h: Harness) -> None:
    await h.channel.close()
    await h.app.stop(grace=1.0)
