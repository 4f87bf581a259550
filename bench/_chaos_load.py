"""A cycle's mixed load: ingest, append and Consolidate lanes, each a thread with its own channel,
calling the server back to back until it dies.

A call that fails after the kill was interrupted by it; a call that fails before the kill is an
unexpected error and is reported (the lane goes on).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import grpc

from bench._chaos_acks import AckBook, Rpc
from bench._chaos_plan import (
    APPEND_LANES,
    CONSOLIDATE_LANES,
    INGEST_LANES,
    ConsolidateCall,
    Item,
    Stream,
    appends,
    consolidations,
    ingest_streams,
)
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

# Deadline of one load call, in seconds: far above any call's normal duration, so that only a
# hung server ends a call this way.
CALL_TIMEOUT = 120.0
# Seconds to wait for the lanes to notice the kill.
JOIN_TIMEOUT = CALL_TIMEOUT + 10.0


@dataclass(slots=True)
class LoadTally:
    calls: dict[str, int] = field(default_factory=lambda: {rpc.value: 0 for rpc in Rpc})
    # Calls cut by the kill, by RPC: proof that the kill landed mid-load.
    interrupted: dict[str, int] = field(default_factory=lambda: {rpc.value: 0 for rpc in Rpc})
    unexpected_errors: list[str] = field(default_factory=list)


class Load:
    def __init__(self, target: str, seed: int, cycle: int, book: AckBook) -> None:
        self.target = target
        self.seed = seed
        self.cycle = cycle
        self.book = book
        self.tally = LoadTally()
        self._lock = threading.Lock()
        self._killed = threading.Event()
        lanes: list[tuple[str, Callable[[pb_grpc.MemoryStub], None]]] = []
        lanes += [(f"ingest-{n}", self._ingest_lane(n)) for n in range(INGEST_LANES)]
        lanes += [(f"append-{n}", self._append_lane(n)) for n in range(APPEND_LANES)]
        lanes += [(f"consolidate-{n}", self._consolidate_lane(n)) for n in range(CONSOLIDATE_LANES)]
        self._threads = [
            threading.Thread(target=self._run, args=(body,), name=name, daemon=True)
            for name, body in lanes
        ]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def killed(self) -> None:
        """Told just before the server is killed: from now on a failed call was interrupted."""
        self._killed.set()

    def join(self) -> None:
        for t in self._threads:
            t.join(JOIN_TIMEOUT)
            if t.is_alive():
                raise RuntimeError(f"load lane {t.name} did not stop after the kill")

    def _run(self, body: Callable[[pb_grpc.MemoryStub], None]) -> None:
        with grpc.insecure_channel(self.target) as channel:
            body(pb_grpc.MemoryStub(channel))

    def _call(self, rpc: Rpc, what: str, call: Callable[[], None]) -> bool:
        """Makes one call; False once the server is gone."""
        with self._lock:
            self.tally.calls[rpc.value] += 1
        try:
            call()
        except grpc.RpcError as exc:
            with self._lock:
                if self._killed.is_set():
                    self.tally.interrupted[rpc.value] += 1
                    return False
                code = exc.code() if isinstance(exc, grpc.Call) else None
                details = exc.details() if isinstance(exc, grpc.Call) else str(exc)
                self.tally.unexpected_errors.append(f"{rpc.value} {what}: {code} {details}")
        return not self._killed.is_set()

    def _ingest_lane(self, lane: int) -> Callable[[pb_grpc.MemoryStub], None]:
        def body(stub: pb_grpc.MemoryStub) -> None:
            for stream in ingest_streams(self.seed, self.cycle, lane):
                call = functools.partial(self._ingest, stub, stream)
                if not self._call(Rpc.INGEST, stream.items[0].key, call):
                    return

        return body

    def _ingest(self, stub: pb_grpc.MemoryStub, stream: Stream) -> None:
        sent = self.book.start_stream(self.cycle, stream.per_message)

        def messages() -> Iterator[pb.IngestEpisodesRequest]:
            # Items count as sent when gRPC takes their message, not when the stream is planned.
            for start in range(0, len(stream.items), stream.per_message):
                group = stream.items[start : start + stream.per_message]
                self.book.sent_in_stream(sent, group)
                yield pb.IngestEpisodesRequest(episodes=[i.episode for i in group])

        reply: pb.IngestEpisodesReply = stub.IngestEpisodes(messages(), timeout=CALL_TIMEOUT)
        self.book.acknowledge_ingest(stream.items, reply.items, self.cycle, by_retry=False)

    def _append_lane(self, lane: int) -> Callable[[pb_grpc.MemoryStub], None]:
        def body(stub: pb_grpc.MemoryStub) -> None:
            for item in appends(self.seed, self.cycle, lane):
                call = functools.partial(self._append, stub, item)
                if not self._call(Rpc.APPEND, item.key, call):
                    return

        return body

    def _append(self, stub: pb_grpc.MemoryStub, item: Item) -> None:
        self.book.sent_append(self.cycle, item)
        reply: pb.AppendEpisodeReply = stub.AppendEpisode(
            pb.AppendEpisodeRequest(episode=item.episode), timeout=CALL_TIMEOUT
        )
        self.book.acknowledge_append(item, reply, self.cycle, by_retry=False)

    def _consolidate_lane(self, lane: int) -> Callable[[pb_grpc.MemoryStub], None]:
        def body(stub: pb_grpc.MemoryStub) -> None:
            for consolidation, pause in consolidations(self.seed, self.cycle, lane):
                if self._killed.wait(pause):
                    return
                call = functools.partial(self._consolidate, stub, consolidation)
                what = f"{consolidation.chain} now={consolidation.now_seconds}"
                if not self._call(Rpc.CONSOLIDATE, what, call):
                    return

        return body

    def _consolidate(self, stub: pb_grpc.MemoryStub, consolidation: ConsolidateCall) -> None:
        send = self.book.sent_consolidation(self.cycle, consolidation, by_retry=False)
        reply: pb.ConsolidateReply = stub.Consolidate(consolidation.request(), timeout=CALL_TIMEOUT)
        self.book.acknowledge_consolidation(send, reply, self.cycle, by_retry=False)


def run_until_killed(load: Load, kill_after: float, kill: Callable[[], None]) -> float:
    """Starts the load, kills the server `kill_after` seconds later, waits for the lanes to stop;
    returns the seconds the load actually ran."""
    started = time.monotonic()
    load.start()
    time.sleep(max(0.0, kill_after - (time.monotonic() - started)))
    ran = time.monotonic() - started
    load.killed()
    kill()
    load.join()
    return ran
