"""The import process (app/import_facts.py): an import's chunks get the same recall facts there as
on the ingest thread, small imports never start it, and a dead or refused process leaves the
thread to do the work."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

import pytest

from tutor_memory.app import worker_processes
from tutor_memory.app.import_facts import PROCESS_START_ITEMS, ImportFacts
from tutor_memory.app.worker_processes import MAX_PROCESS_FAILURES
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode, validate_new_episode
from tutor_memory.domain.recall.facts import RecallFacts, recall_facts
from tutor_memory.models.tokenizers import TiktokenCounter

# Sent 2026-12-04 12:00 UTC: "last week" in an answer names a period of the record.
NOW_US = 1_796_385_600_000_000
READY_SECONDS = 60.0
TEXTS = [
    (Kind.QUESTION, "what is a fraction?"),
    (Kind.ANSWER, "Last week we covered fractions and you got every sum right."),
    (Kind.ANSWER, "A fraction is a part of a whole."),
    (Kind.ANSWER, "La settimana scorsa abbiamo visto le frazioni."),
    (Kind.QUESTION, "ما هو الكسر؟"),
    (Kind.ANSWER, "Hier, on a révisé la photosynthèse ensemble."),
]


def episodes(n: int) -> list[NewEpisode]:
    out = []
    for i in range(n):
        kind, text = TEXTS[i % len(TEXTS)]
        out.append(
            validate_new_episode(
                chain=ChainKey("t", f"student-{i % 3}", "maths"),
                kind=kind,
                summary=text[:60],
                text=f"{text} (turn {i})",
                concepts=[],
                occurred_at_us=NOW_US,
                evidence=[],
                check=None,
                quiz=None,
                client_key=f"k{i}",
                now_us=NOW_US,
                client_key_required=False,
            )
        )
    return out


class Renamed(TiktokenCounter):
    """Counts like the default tokenizer under another name (as a server given another file)."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "tokenizer.json:other.json"


COUNTER = TiktokenCounter()
# One chunk of an import (app/ingest.py INGEST_CHUNK).
CHUNK = episodes(128)
EXPECTED = recall_facts(CHUNK, COUNTER)


@pytest.fixture
def thread() -> Iterator[ThreadPoolExecutor]:
    pool = ThreadPoolExecutor(1)
    yield pool
    pool.shutdown()


@pytest.fixture
def facts(thread: ThreadPoolExecutor) -> Iterator[ImportFacts]:
    """Import facts with one process, counting as the server's default tokenizer does."""
    made = ImportFacts(COUNTER, thread, tokenizer=None, processes=1)
    yield made
    made.close()


def derive(
    facts: ImportFacts, chunk: list[NewEpisode] = CHUNK, imported: int = PROCESS_START_ITEMS
) -> list[RecallFacts]:
    """`chunk`'s facts, as a chunk of an import that has received `imported` items so far."""
    return asyncio.run(facts.derive(chunk, imported=imported))


def wait_until(predicate: Callable[[], bool]) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while not predicate():
        assert time.monotonic() < deadline, "the import process did not get ready"
        time.sleep(0.05)


def start_process(facts: ImportFacts) -> None:
    """Starts the process with a whole chunk (derived on the thread) and waits until it answers."""
    assert derive(facts) == EXPECTED
    wait_until(lambda: facts.ready_processes() > 0)


def worker_pids(facts: ImportFacts) -> list[int]:
    pool = facts._pool
    assert pool is not None
    return [p.pid for p in pool._processes.values() if p.pid is not None]


def test_the_process_derives_the_same_facts_as_the_thread(facts: ImportFacts) -> None:
    start_process(facts)
    in_process = derive(facts)
    assert in_process == EXPECTED
    # The narration of "last week" is flagged wherever it is derived.
    assert any(f.flagged for f in in_process)


def test_imports_smaller_than_the_start_size_never_start_the_process(facts: ImportFacts) -> None:
    for imported in range(len(CHUNK), PROCESS_START_ITEMS, len(CHUNK)):
        assert derive(facts, imported=imported) == EXPECTED
    assert facts._pool is None


def test_no_process_is_started_when_configured_with_none(thread: ThreadPoolExecutor) -> None:
    facts = ImportFacts(COUNTER, thread, tokenizer=None, processes=0)
    for _ in range(3):
        assert derive(facts) == EXPECTED
    assert facts._pool is None
    facts.close()


def test_a_killed_process_leaves_the_chunk_to_the_thread_and_a_new_one_starts(
    facts: ImportFacts,
) -> None:
    start_process(facts)
    (first,) = worker_pids(facts)
    os.kill(first, signal.SIGKILL)
    # The chunk sent to the dead process is derived on the thread, and so is the next one,
    # which starts a new process.
    assert derive(facts) == EXPECTED
    assert derive(facts) == EXPECTED
    wait_until(lambda: facts.ready_processes() > 0)
    (second,) = worker_pids(facts)
    assert second != first
    assert derive(facts) == EXPECTED


def test_after_repeated_failures_the_thread_does_all_the_work(facts: ImportFacts) -> None:
    for _ in range(MAX_PROCESS_FAILURES):
        start_process(facts)
        os.kill(worker_pids(facts)[0], signal.SIGKILL)
        assert derive(facts) == EXPECTED
    assert derive(facts) == EXPECTED
    assert facts._pool is None


class Unstartable(ProcessPoolExecutor):
    """A pool whose processes cannot be started (the system is out of processes)."""

    def submit(self, *args: object, **kwargs: object) -> NoReturn:
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")


def test_a_process_that_cannot_be_started_leaves_every_chunk_to_the_thread(
    facts: ImportFacts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_processes, "ProcessPoolExecutor", Unstartable)
    for _ in range(MAX_PROCESS_FAILURES + 1):
        assert derive(facts) == EXPECTED
    assert facts._failures == MAX_PROCESS_FAILURES
    assert facts._pool is None


def test_a_process_counting_with_another_tokenizer_is_not_used(
    thread: ThreadPoolExecutor,
) -> None:
    counter = Renamed()
    facts = ImportFacts(counter, thread, tokenizer=None, processes=1)
    try:
        derive(facts)
        ready = facts._ready
        assert ready is not None
        ready.result(timeout=READY_SECONDS)
        assert facts.ready_processes() == 0
        assert derive(facts) == recall_facts(CHUNK, counter)
        assert facts._pool is None
    finally:
        facts.close()


def test_close_stops_the_process(facts: ImportFacts) -> None:
    start_process(facts)
    (pid,) = worker_pids(facts)
    facts.close()
    wait_until(lambda: not _alive(pid))


def test_the_process_ends_when_the_server_that_started_it_is_killed(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import asyncio, sys, time
        from concurrent.futures import ThreadPoolExecutor
        sys.path[:0] = {sys.path!r}
        from tests.app.test_import_facts import episodes, worker_pids
        from tutor_memory.app.import_facts import PROCESS_START_ITEMS, ImportFacts
        from tutor_memory.models.tokenizers import TiktokenCounter

        facts = ImportFacts(
            TiktokenCounter(), ThreadPoolExecutor(1), tokenizer=None, processes=1
        )
        asyncio.run(facts.derive(episodes(128), imported=PROCESS_START_ITEMS))
        while not facts.ready_processes() > 0:
            time.sleep(0.05)
        print(worker_pids(facts)[0], flush=True)
        time.sleep(600)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    ) as server:
        try:
            assert server.stdout is not None
            worker = int(server.stdout.readline())
            assert _alive(worker)
        finally:
            server.kill()
    wait_until(lambda: not _alive(worker))


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
