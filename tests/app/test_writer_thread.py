"""The writer thread's two lanes (app/writer_thread.py): a write a caller waits on goes before
queued bulk work, and a bulk job can let such writes go between its transactions."""

from __future__ import annotations

import threading

import pytest

from tutor_memory.app.writer_thread import WriterThread


def hold(writer: WriterThread) -> threading.Event:
    """Keeps the thread busy with a bulk job until the event is set."""
    release = threading.Event()
    started = threading.Event()

    def held() -> None:
        started.set()
        release.wait(10)

    writer.bulk.submit(held)
    assert started.wait(10)
    return release


def test_queued_urgent_writes_run_before_queued_bulk_work() -> None:
    writer = WriterThread()
    order: list[str] = []
    release = hold(writer)
    done = [writer.bulk.submit(order.append, "bulk"), writer.urgent.submit(order.append, "urgent")]
    release.set()
    for future in done:
        future.result(timeout=10)
    assert order == ["urgent", "bulk"]
    writer.shutdown()


def test_a_bulk_job_giving_way_runs_the_waiting_urgent_writes_in_the_middle_of_itself() -> None:
    writer = WriterThread()
    order: list[str] = []
    queued = threading.Event()
    go_on = threading.Event()

    def long_bulk_job() -> None:
        order.append("bulk part 1")
        queued.set()
        assert go_on.wait(10)
        assert writer.urgent_waiting()
        writer.give_way()
        assert not writer.urgent_waiting()
        order.append("bulk part 2")

    bulk = writer.bulk.submit(long_bulk_job)
    assert queued.wait(10)
    urgent = [writer.urgent.submit(order.append, f"urgent {i}") for i in (1, 2)]
    go_on.set()
    bulk.result(timeout=10)
    assert [f.done() for f in urgent] == [True, True]
    assert order == ["bulk part 1", "urgent 1", "urgent 2", "bulk part 2"]
    writer.shutdown()


def test_an_urgent_write_that_fails_while_a_bulk_job_gives_way_fails_alone() -> None:
    writer = WriterThread()
    queued = threading.Event()
    go_on = threading.Event()

    def refused() -> None:
        raise ValueError("the store refused it")

    def long_bulk_job() -> str:
        queued.set()
        assert go_on.wait(10)
        writer.give_way()
        return "bulk finished"

    bulk = writer.bulk.submit(long_bulk_job)
    assert queued.wait(10)
    urgent = writer.urgent.submit(refused)
    go_on.set()
    assert bulk.result(timeout=10) == "bulk finished"
    with pytest.raises(ValueError, match="refused"):
        urgent.result(timeout=10)
    writer.shutdown()


def test_only_the_writer_thread_may_give_way() -> None:
    writer = WriterThread()
    with pytest.raises(RuntimeError, match="only on the writer thread"):
        writer.give_way()
    writer.shutdown()
