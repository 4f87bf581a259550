"""The conformance scenario (scenario.json) run through the Python client wrapper.

    python -m tests.conformance.run_python_client --scenario tests/conformance/scenario.json \
        --target 127.0.0.1:PORT --token TOKEN --run-id py --unreachable 127.0.0.1:FREE_PORT

Exits 1 and names every mismatch when the server or the client does not do what the scenario
says; the Go and TypeScript runners check the same things in the same order.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from tutor_memory_client import MemoryClient, PromptParts, compose_prompt, pb

# Per-call deadline for the scenario's calls: generous, since CI machines are small and shared.
CALL_TIMEOUT = 20.0


class Checks:
    """Counts checks and keeps every failure, so one run names all the mismatches."""

    def __init__(self) -> None:
        self.passed = 0
        self.failures: list[str] = []

    def expect(self, ok: bool, what: str) -> None:
        if ok:
            self.passed += 1
        else:
            self.failures.append(what)

    def equal(self, got: object, want: object, what: str) -> None:
        self.expect(got == want, f"{what}: got {got!r}, want {want!r}")


def timestamp(text: str) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(datetime.fromisoformat(text))
    return stamp


def new_episode(spec: dict[str, Any], student_id: str, subject_id: str) -> pb.NewEpisode:
    episode = pb.NewEpisode(
        student_id=student_id,
        subject_id=subject_id,
        kind=spec["kind"],
        summary=spec["summary"],
        text=spec["text"],
        client_key=spec["client_key"],
        occurred_at=timestamp(spec["occurred_at"]),
    )
    if "salience" in spec:
        episode.salience = spec["salience"]
    return episode


def batch_items(batch: dict[str, Any], student_id: str, subject_id: str) -> list[pb.NewEpisode]:
    items = []
    for i in range(batch["count"]):
        spec = {
            k: v.replace("{i}", str(i)) if isinstance(v, str) else v
            for k, v in batch["template"].items()
        }
        if i in batch.get("without_key", ()):
            spec["client_key"] = ""
        items.append(new_episode(spec, student_id, subject_id))
    return items


def rpc_code(call: Callable[[], object]) -> tuple[grpc.StatusCode | None, str]:
    """The status code and message a call fails with, or (None, "") when it succeeds."""
    try:
        call()
    except grpc.RpcError as exc:
        if isinstance(exc, grpc.Call):
            return exc.code(), exc.details() or ""
        raise
    return None, ""


def run(scenario: dict[str, Any], args: argparse.Namespace, checks: Checks) -> None:
    student = scenario["student_prefix"] + args.run_id
    subject = scenario["subject_id"]
    ids: dict[str, int] = {}
    with MemoryClient(args.target, token=args.token, timeout=CALL_TIMEOUT) as client:
        for seq, spec in enumerate(scenario["episodes"], start=1):
            reply = client.append_episode(new_episode(spec, student, subject))
            ids[spec["client_key"]] = reply.episode.episode_id
            checks.equal(reply.episode.seq, seq, f"append {spec['client_key']}: seq")
            checks.equal(reply.duplicate, False, f"append {spec['client_key']}: duplicate")
        first = scenario["episodes"][0]
        again = client.append_episode(new_episode(first, student, subject))
        checks.equal(again.duplicate, True, "append again with the same key: duplicate")
        checks.equal(again.episode.episode_id, ids[first["client_key"]], "append again: id")

        batch = scenario["batch"]
        items = batch_items(batch, student, subject)
        cut = batch["interrupted_after"]
        partial = client.ingest_episodes(items[:cut])
        checks.equal(
            (partial.inserted, partial.duplicate, partial.rejected), (cut, 0, 0), "first send"
        )
        retried = client.ingest_episodes(items)
        missing = len(batch["without_key"])
        checks.equal(
            (retried.inserted, retried.duplicate, retried.rejected),
            (len(items) - cut - missing, cut, missing),
            "retried batch: inserted, duplicate, rejected",
        )
        for i, result in enumerate(retried.items):
            checks.equal(result.index, i, f"retried batch item {i}: index")
            if i in batch["without_key"]:
                checks.equal(result.status, pb.INGEST_STATUS_REJECTED, f"item {i}: status")
                checks.expect(
                    batch["rejected_reason_contains"] in result.reason,
                    f"item {i}: reason {result.reason!r} names the missing key",
                )
            elif i < cut:
                checks.equal(result.status, pb.INGEST_STATUS_DUPLICATE, f"item {i}: status")
                checks.equal(result.episode_id, partial.items[i].episode_id, f"item {i}: id")
            else:
                checks.equal(result.status, pb.INGEST_STATUS_INSERTED, f"item {i}: status")

        check_import(client, scenario["import"], student, checks)

        listed = list(
            client.list_episodes(student, subject, page_size=scenario["list"]["page_size"])
        )
        stored = len(scenario["episodes"]) + len(items) - missing
        checks.equal(sorted(e.seq for e in listed), list(range(1, stored + 1)), "listed seqs")
        times = [e.occurred_at.ToNanoseconds() for e in listed]
        checks.equal(times, sorted(times), "listed oldest first")
        by_key = {e.client_key: e.episode_id for e in listed}
        checks.equal({k: by_key.get(k) for k in ids}, ids, "listed ids of the appended keys")

        spec = scenario["block"]
        block = client.build_block(
            student,
            subject,
            spec["query"],
            budget_tokens=spec["budget_tokens"],
            now=timestamp(spec["now"]),
            time_zone=spec["time_zone"],
        )
        checks.equal(
            [m.episode_id for m in block.memories],
            [ids[k] for k in spec["memory_keys"]],
            "block memory ids",
        )
        for text in spec["text_contains"]:
            checks.expect(text in block.text, f"block text holds {text!r}:\n{block.text}")
        for text in spec["text_lacks"]:
            checks.expect(text not in block.text, f"block text lacks {text!r}:\n{block.text}")
        checks.expect(block.tokens_used <= spec["budget_tokens"], "block within its budget")
        checks.expect(bool(block.block_id), "block has an id")

        answer = client.append_episode(new_episode(scenario["answer"], student, subject))
        annotation = client.annotate_answer(
            student,
            subject,
            answer.episode.episode_id,
            block.block_id,
            [m.episode_id for m in block.memories],
        )
        checks.expect(annotation.annotation_id > 0, "annotation saved with an id")

        bad = scenario["bad_request"]
        code, message = rpc_code(
            lambda: client.append_episode(new_episode(bad["episode"], student, subject))
        )
        checks.equal(code, grpc.StatusCode[bad["code"]], "bad request: code")
        checks.expect(bad["message_contains"] in message, f"bad request: message {message!r}")

        check_forget(client, scenario["forget"], student, subject, checks)

    wrong = scenario["wrong_token"]
    with MemoryClient(args.target, token=wrong["token"], timeout=CALL_TIMEOUT) as stranger:
        code, _ = rpc_code(lambda: list(stranger.list_episodes(student, subject)))
        checks.equal(code, grpc.StatusCode[wrong["code"]], "wrong token: code")

    check_unreachable(scenario, args, student, subject, checks)

    for case in scenario["prompt_cases"]:
        parts = case["parts"]
        prompt = compose_prompt(
            PromptParts(
                instructions=parts["instructions"],
                memory_block=parts["memory_block"],
                legacy_assessment=parts["legacy_assessment"],
                context=parts["context"],
            )
        )
        checks.equal(prompt, case["expected"], f"prompt: {case['name']}")


def check_forget(
    client: MemoryClient, spec: dict[str, Any], student: str, subject: str, checks: Checks
) -> None:
    first = client.forget_student(student)
    checks.expect(not first.already_erased, "forget: the first call erases")
    checks.equal(first.erasure.chains, spec["chains"], "forget: chains erased")
    checks.expect(first.erasure.episodes > 0, "forget: episodes counted")
    verified = client.verify_chain(student, subject)
    checks.expect(
        verified.ok and verified.erased, f"forget: the chain verifies, erased: {verified}"
    )
    code, _ = rpc_code(lambda: list(client.list_episodes(student, subject)))
    checks.equal(code, grpc.StatusCode[spec["list_code"]], "forget: list code")
    again = client.forget_student(student)
    checks.expect(again.already_erased, "forget: a second call changes nothing")
    code, _ = rpc_code(lambda: client.forget_student(spec["unknown_student"]))
    checks.equal(code, grpc.StatusCode[spec["unknown_code"]], "forget: unknown student code")


def check_import(client: MemoryClient, spec: dict[str, Any], student: str, checks: Checks) -> None:
    """ImportEpisodes: progress per committed chunk, and a resumed import that stores only what
    the first one did not."""
    items = batch_items(spec, student, spec["subject_id"])
    first = spec["acknowledged_first"]
    replies: list[pb.ImportEpisodesReply] = []
    done = client.import_episodes(items[:first], on_progress=replies.append)
    checks.equal((done.inserted, done.duplicate, done.rejected), (first, 0, 0), "first import")
    checks.equal(sum(len(r.items) for r in replies), first, "first import: items acknowledged")
    replies.clear()
    resumed = client.import_episodes(items, on_progress=replies.append)
    checks.equal(
        (resumed.inserted, resumed.duplicate, resumed.rejected),
        (len(items) - first, first, 0),
        "resumed import: inserted, duplicate, rejected",
    )
    checks.expect(
        len(replies) >= spec["min_progress_replies"],
        f"resumed import: {len(replies)} progress replies",
    )
    checks.equal(sum(len(r.items) for r in replies), len(items), "resumed import: acknowledged")
    last = replies[-1] if replies else pb.ImportEpisodesReply()
    checks.equal(
        (last.inserted, last.duplicate, last.rejected),
        (len(items) - first, first, 0),
        "resumed import: totals of the last reply",
    )
    checks.equal([r.index for r in resumed.items], list(range(len(items))), "resumed: indices")
    for i, result in enumerate(resumed.items):
        want = pb.INGEST_STATUS_DUPLICATE if i < first else pb.INGEST_STATUS_INSERTED
        checks.equal(result.status, want, f"resumed import item {i}: status")
        if i < first:
            checks.equal(result.episode_id, done.items[i].episode_id, f"import item {i}: id")


def check_unreachable(
    scenario: dict[str, Any], args: argparse.Namespace, student: str, subject: str, checks: Checks
) -> None:
    spec = scenario["unreachable"]
    episode = new_episode(scenario["episodes"][0], student, subject)
    with MemoryClient(args.unreachable, token=args.token, attempts=scenario["attempts"]) as client:
        started = time.monotonic()
        code, _ = rpc_code(lambda: client.append_episode(episode))
        keyed = time.monotonic() - started
        episode.client_key = ""
        started = time.monotonic()
        unkeyed_code, _ = rpc_code(lambda: client.append_episode(episode))
        unkeyed = time.monotonic() - started
    checks.equal(code, grpc.StatusCode[spec["code"]], "unreachable keyed write: code")
    checks.expect(keyed >= spec["min_retry_seconds"], f"keyed write retried ({keyed:.2f} s)")
    checks.equal(unkeyed_code, grpc.StatusCode[spec["code"]], "unreachable unkeyed write: code")
    checks.expect(
        unkeyed < spec["min_retry_seconds"], f"unkeyed write not retried ({unkeyed:.2f} s)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", type=Path, required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--unreachable", required=True, help="an address where nothing listens")
    args = parser.parse_args(argv)
    scenario = json.loads(args.scenario.read_text(encoding="utf-8"))
    checks = Checks()
    run(scenario, args, checks)
    for failure in checks.failures:
        print(f"FAIL {failure}", file=sys.stderr)
    print(f"python client: {checks.passed} passed, {len(checks.failures)} failed")
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
