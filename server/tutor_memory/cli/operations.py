"""`tutor-memory ingest FILE...` and `tutor-memory consolidate`: operations for people and cron.

`ingest` sends files to a running server (IngestFile), one call per file, with a progress bar.
`consolidate` runs the nightly cycle: through a running server for the caller's tenant
(Consolidate), or offline on a data directory for one pair, one tenant or every tenant, chain by
chain with a progress bar. Run the offline form when the server is stopped, or accept that a
running server shows the new digests after its next start (its in-memory caches do not see
another process's writes; the store stays consistent either way).
"""

from __future__ import annotations

import argparse
import asyncio
import mimetypes
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import grpc

from tutor_memory.app.config import DEFAULT_DATA_DIR, DEFAULT_LISTEN, ServerConfig

TOKEN_ENV = "TUTOR_MEMORY_TOKEN"
# IngestFile calls may carry a large PDF: the client's limit matches the server's default.
CLIENT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
BAR_WIDTH = 30


def progress(done: int, total: int, label: str = "") -> None:
    """A one-line progress bar on stderr, redrawn in place (cron logs get the final line)."""
    filled = BAR_WIDTH * done // max(total, 1)
    bar = "#" * filled + "." * (BAR_WIDTH - filled)
    end = "\n" if done >= total else ""
    print(f"\r[{bar}] {done}/{total} {label}"[:120].ljust(60), end=end, file=sys.stderr)


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ingest = sub.add_parser("ingest", help="send course files to a running server (IngestFile)")
    ingest.add_argument("files", nargs="+", type=Path)
    ingest.add_argument("--student", required=True)
    ingest.add_argument("--subject", required=True)
    ingest.add_argument("--target", default=DEFAULT_LISTEN, help="server HOST:PORT")
    ingest.add_argument("--token", help=f"bearer token (default: ${TOKEN_ENV})")
    ingest.add_argument("--file-id", help="file id for a single file (default: its file name)")

    cons = sub.add_parser("consolidate", help="run the nightly cycle (cron-friendly)")
    cons.add_argument("--now", help="days ending by then are digested, ISO 8601 (default: now)")
    cons.add_argument(
        "--time-zone", default="", help="IANA zone of a chain's days, set by its first run (UTC)"
    )
    cons.add_argument("--citation-batch", type=int, default=0, help="default 200 per chain")
    cons.add_argument("--student", default="")
    cons.add_argument("--subject", default="")
    cons.add_argument("--target", help="server HOST:PORT: consolidate the token's tenant there")
    cons.add_argument("--token", help=f"bearer token (default: ${TOKEN_ENV})")
    cons.add_argument("--data", type=Path, help="offline: the data directory of a stopped server")
    cons.add_argument(
        "--store",
        help="offline on PostgreSQL: its connection string (safe beside running servers)",
    )
    cons.add_argument("--tenant", help="offline: only this tenant (default: every tenant)")


def _metadata(token: str | None) -> list[tuple[str, str]]:
    token = token or os.environ.get(TOKEN_ENV, "")
    return [("authorization", f"Bearer {token}")] if token else []


def _channel(target: str) -> grpc.Channel:
    options = [
        ("grpc.max_send_message_length", CLIENT_MAX_MESSAGE_BYTES),
        ("grpc.max_receive_message_length", CLIENT_MAX_MESSAGE_BYTES),
    ]
    return grpc.insecure_channel(target, options=options)


def ingest(args: argparse.Namespace) -> int:
    from tutor_memory._proto import memory_pb2 as pb
    from tutor_memory._proto import memory_pb2_grpc as pb_grpc

    files: Sequence[Path] = args.files
    if args.file_id and len(files) != 1:
        print("--file-id names one file; give exactly one", file=sys.stderr)
        return 2
    failed = 0
    with _channel(args.target) as channel:
        stub = pb_grpc.MemoryStub(channel)
        for i, path in enumerate(files):
            progress(i, len(files), path.name)
            try:
                content = path.read_bytes()
                reply = stub.IngestFile(
                    pb.IngestFileRequest(
                        student_id=args.student,
                        subject_id=args.subject,
                        file_id=args.file_id or path.name,
                        filename=path.name,
                        media_type=mimetypes.guess_type(path.name)[0] or "",
                        content=content,
                    ),
                    metadata=_metadata(args.token),
                )
            except (OSError, grpc.RpcError) as exc:
                failed += 1
                detail = exc.details() if isinstance(exc, grpc.RpcError) else str(exc)
                print(f"\n{path}: FAILED: {detail}", file=sys.stderr)
                continue
            state = "unchanged" if reply.unchanged else f"version {reply.version}"
            print(
                f"\n{path}: {state}, {reply.pages} pages, {reply.passages} passages, "
                f"{len(reply.concepts)} concepts ({len(reply.rejected)} rejected); "
                f"the map has {reply.map_concepts}",
                file=sys.stderr,
            )
        progress(len(files), len(files), "done")
    return 1 if failed else 0


class CycleCounts(Protocol):
    """What a run of the nightly cycle reports: the RPC's reply and the in-process summary."""

    chains_active: int
    consolidation_episodes: int
    beliefs_decayed: int
    citations_verified: int
    citations_changed: int
    chains_already_done: int


def summary_line(counts: CycleCounts) -> str:
    return (
        f"chains active: {counts.chains_active}, consolidation episodes: "
        f"{counts.consolidation_episodes}, beliefs decayed: {counts.beliefs_decayed}, "
        f"citations verified: {counts.citations_verified} ({counts.citations_changed} "
        f"changed), already done: {counts.chains_already_done}"
    )


def _end_us(now: str | None) -> int:
    if not now:
        return int(datetime.now(tz=UTC).timestamp() * 1_000_000)
    parsed = datetime.fromisoformat(now)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1_000_000)


def consolidate(args: argparse.Namespace) -> int:
    offline = args.data is not None or args.store is not None
    if (args.target is None) == (not offline):
        print(
            "give either --target (a running server) or --data / --store (offline)",
            file=sys.stderr,
        )
        return 2
    if args.subject and not args.student:
        print("--subject needs --student", file=sys.stderr)
        return 2
    end_us = _end_us(args.now)
    if args.target is not None:
        return _consolidate_remote(args, end_us)
    return asyncio.run(_consolidate_offline(args, end_us))


def _consolidate_remote(args: argparse.Namespace, end_us: int) -> int:
    from google.protobuf.timestamp_pb2 import Timestamp

    from tutor_memory._proto import memory_pb2 as pb
    from tutor_memory._proto import memory_pb2_grpc as pb_grpc

    now = Timestamp(seconds=end_us // 1_000_000, nanos=(end_us % 1_000_000) * 1_000)
    with _channel(args.target) as channel:
        try:
            reply = pb_grpc.MemoryStub(channel).Consolidate(
                pb.ConsolidateRequest(
                    student_id=args.student,
                    subject_id=args.subject,
                    now=now,
                    time_zone=args.time_zone,
                    citation_batch=args.citation_batch,
                ),
                metadata=_metadata(args.token),
            )
        except grpc.RpcError as exc:
            print(f"consolidate failed: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
    print(summary_line(reply))
    return 0


async def _consolidate_offline(args: argparse.Namespace, end_us: int) -> int:
    from tutor_memory.app.nightly import (
        DEFAULT_CITATION_BATCH,
        DEFAULT_TIME_ZONE,
        Consolidation,
        Scope,
    )
    from tutor_memory.app.root import ConfigError, build_services

    data: Path = args.data or DEFAULT_DATA_DIR
    config = ServerConfig(data_dir=data, store=args.store)
    if config.store is None and not config.database_path.exists():
        print(f"no database at {config.database_path}", file=sys.stderr)
        return 2
    try:
        services = build_services(config)
    except ConfigError as exc:
        print(f"cannot open the store: {exc}", file=sys.stderr)
        return 2
    try:
        summary = await services.nightly.run(
            Consolidation(
                Scope(args.tenant, args.student, args.subject),
                end_us=end_us,
                time_zone=args.time_zone or DEFAULT_TIME_ZONE,
                citation_batch=args.citation_batch or DEFAULT_CITATION_BATCH,
            ),
            progress=lambda done, total: progress(done, total, "chains"),
        )
    finally:
        services.close()
    print(summary_line(summary))
    return 0
