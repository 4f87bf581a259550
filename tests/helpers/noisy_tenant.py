"""A tenant that calls as fast as it can, ignoring retry hints: `python -m
tests.helpers.noisy_tenant --target HOST:PORT --token T --seconds S --threads N` calls BuildBlock
back to back from N threads for S seconds (bounded), and prints one JSON line: calls that
succeeded, calls refused with RESOURCE_EXHAUSTED, other failures, and whether the refusals
carried a RetryInfo."""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import Counter

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc


def _retry_hinted(err: grpc.RpcError) -> bool:
    status = rpc_status.from_call(err)
    if status is None:
        return False
    return any(detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR) for detail in status.details)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    metadata = (("authorization", f"Bearer {args.token}"),)
    request = pb.BuildBlockRequest(
        student_id="loud", subject_id="biology", query="osmosis", budget_tokens=800
    )
    end = time.monotonic() + args.seconds

    def hammer() -> None:
        with grpc.insecure_channel(args.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            while time.monotonic() < end:
                try:
                    stub.BuildBlock(request, metadata=metadata, timeout=5)
                    outcome = "ok"
                except grpc.RpcError as err:
                    if err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                        outcome = "exhausted" if _retry_hinted(err) else "exhausted_no_hint"
                    else:
                        outcome = "failed"
                with lock:
                    counts[outcome] += 1

    threads = [threading.Thread(target=hammer) for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(dict(counts)))


if __name__ == "__main__":
    main()
