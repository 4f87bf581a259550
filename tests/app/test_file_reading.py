"""The file-reading process (app/file_reading.py): a file read there is read exactly as on the
thread, a refusal keeps its words, and a read nobody waits for ends the process."""

from __future__ import annotations

import errno
import os
import pickle
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import NoReturn

import pytest

from tests.helpers.processes import ended
from tutor_memory.app.file_reading import (
    PROCESS_MIN_BYTES,
    FileReader,
    read_file,
)
from tutor_memory.app.worker_processes import MAX_PROCESS_FAILURES
from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.errors import DeadlineExceeded, InvalidArgument, ResourceExhausted
from tutor_memory.domain.files.errors import FileRejected


def _course(chapters: int) -> bytes:
    """A Markdown course of `chapters` sections, each a heading and a paragraph."""
    return "".join(
        f"# Chapter {i}: the cell\n\nThe **mitochondrion** is the powerhouse of the cell. "
        f"Osmosis moves water across the membrane, section {i}. " * 8 + "\n\n"
        for i in range(chapters)
    ).encode()


SMALL = _course(2)
LARGE = _course(40)
# Seconds of reading on this machine: long enough to be stopped in the middle.
SLOW = _course(1_500)


@pytest.fixture
def reader() -> Iterator[FileReader]:
    reader = FileReader(processes=1)
    yield reader
    reader.close()


def _read(reader: FileReader, content: bytes, budget: WorkBudget | None = None) -> object:
    return reader.read(content, "course.md", "text/markdown", (), budget or unlimited())


def _reading_pid(reader: FileReader) -> int:
    deadline = time.monotonic() + 30
    while reader._pid is None or not reader._pid.done():
        assert time.monotonic() < deadline, "the reading process never started"
        time.sleep(0.01)
    return reader._pid.result()


def test_the_sizes_pick_the_two_paths() -> None:
    assert len(SMALL) < PROCESS_MIN_BYTES <= len(LARGE)


def test_a_large_file_read_in_the_process_equals_the_same_file_read_on_the_thread(
    reader: FileReader,
) -> None:
    assert reader.running_processes() == 0
    assert _read(reader, LARGE) == read_file(LARGE, "course.md", "text/markdown", (), unlimited())
    assert reader.running_processes() == 1
    assert _reading_pid(reader) != os.getpid()


def test_small_files_never_start_the_process_and_go_to_it_once_it_runs(
    reader: FileReader,
) -> None:
    expected = read_file(SMALL, "course.md", "text/markdown", (), unlimited())
    assert _read(reader, SMALL) == expected
    assert reader.running_processes() == 0
    _read(reader, LARGE)
    assert _read(reader, SMALL) == expected
    assert reader.running_processes() == 1


def test_a_callers_concepts_are_checked_in_the_process_as_on_the_thread(
    reader: FileReader,
) -> None:
    concepts = (
        ExtractedConcept("Mitochondrion", "the powerhouse", "an organelle", pages=(1,)),
        ExtractedConcept("Osmosis", "water moves", "diffusion of water", pages=(2,)),
    )
    read = reader.read(LARGE, "course.md", "text/markdown", concepts, unlimited())
    on_thread = read_file(LARGE, "course.md", "text/markdown", concepts, unlimited())
    assert read == on_thread
    assert read.extractor == "caller"
    assert [c.name for c in read.accepted] == ["Mitochondrion", "Osmosis"]
    outside = (ExtractedConcept("Osmosis", "water moves", "diffusion", pages=(999,)),)
    with pytest.raises(InvalidArgument, match=r"concepts\[0\]\.pages\[0\]: page 999 is not in"):
        reader.read(LARGE, "course.md", "text/markdown", outside, unlimited())


def test_a_file_refused_in_the_process_is_invalid_argument_naming_content_in_the_same_words(
    reader: FileReader,
) -> None:
    broken = LARGE + b"\xff\xfe not utf-8"
    with pytest.raises(InvalidArgument) as on_thread:
        read_file(broken, "course.md", "text/markdown", (), unlimited())
    with pytest.raises(InvalidArgument) as in_process:
        _read(reader, broken)
    assert in_process.value.field == "content"
    assert str(in_process.value) == str(on_thread.value)
    assert reader.running_processes() == 1  # a refusal is not a failure of the process


def test_a_read_past_its_cap_stops_in_the_process_with_resource_exhausted(
    reader: FileReader,
) -> None:
    _read(reader, LARGE)  # the process runs
    started = time.monotonic()
    with pytest.raises(
        ResourceExhausted, match=r"content: reading the file: needs more than 0\.2 s"
    ):
        _read(reader, SLOW, WorkBudget("content: reading the file", cap_seconds=0.2))
    assert time.monotonic() - started < 2.5  # reading it all takes seconds


def test_a_cancelled_read_ends_the_process_and_the_next_file_gets_a_new_one(
    reader: FileReader,
) -> None:
    _read(reader, LARGE)
    first = _reading_pid(reader)
    budget = WorkBudget("content: reading the file")
    threading.Timer(0.3, budget.cancel).start()
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="the call was cancelled"):
        _read(reader, SLOW, budget)
    assert time.monotonic() - started < 2.5
    assert ended(first, within=10), "the cancelled read's process still runs"
    assert reader.running_processes() == 0
    assert _read(reader, LARGE) == read_file(LARGE, "course.md", "text/markdown", (), unlimited())
    assert _reading_pid(reader) != first
    assert reader._failures == 0


def test_a_process_killed_during_a_read_is_replaced_and_the_file_read_again(
    reader: FileReader,
) -> None:
    _read(reader, LARGE)
    first = _reading_pid(reader)
    threading.Timer(0.3, os.kill, (first, 9)).start()
    read = _read(reader, SLOW)
    assert read == read_file(SLOW, "course.md", "text/markdown", (), unlimited())
    assert _reading_pid(reader) != first
    assert reader._failures == 0  # reset by the read that succeeded


def test_with_no_process_configured_every_file_is_read_on_the_thread() -> None:
    reader = FileReader(processes=0)
    try:
        _read(reader, LARGE)
        assert reader.running_processes() == 0
    finally:
        reader.close()


def test_after_repeated_deaths_files_are_read_on_the_thread(
    reader: FileReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tutor_memory.app import worker_processes

    class Unstartable(ProcessPoolExecutor):
        def submit(self, *args: object, **kwargs: object) -> NoReturn:
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(worker_processes, "ProcessPoolExecutor", Unstartable)
    expected = read_file(LARGE, "course.md", "text/markdown", (), unlimited())
    for _ in range(MAX_PROCESS_FAILURES + 1):
        assert _read(reader, LARGE) == expected
    assert reader._failures == MAX_PROCESS_FAILURES


@pytest.mark.parametrize(
    "error",
    [
        InvalidArgument("content", "not valid UTF-8 at byte 12"),
        FileRejected("encrypted PDF"),
        ResourceExhausted("content: needs more than 30 s"),
        DeadlineExceeded("content: the call's deadline passed"),
    ],
)
def test_an_error_raised_in_a_worker_process_reaches_the_server_as_itself(
    error: Exception,
) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)


def test_a_budget_carried_to_another_process_runs_out_when_the_original_does() -> None:
    now = [100.0]
    original = WorkBudget("work", deadline=105.0, cap_seconds=2.0, clock=lambda: now[0])
    copy = WorkBudget.from_terms(original.terms())
    assert copy.terms() == original.terms()
    assert copy.terms().cap_at == 102.0
