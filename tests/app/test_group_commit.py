"""Group commit (app/group_commit.py): writes that wait together commit in one transaction, in
the order they came, and one write's failure is never another's."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from tutor_memory.app.group_commit import GroupCommit


class FakeStore:
    """Records each transaction's batches; a batch named "bad" makes its transaction fail."""

    def __init__(self) -> None:
        self.transactions: list[list[str]] = []
        self.after_calls: list[list[str]] = []
        self.fail_after = False

    def commit(self, batches: Sequence[str]) -> list[str]:
        if "bad" in batches:
            raise ValueError("the store refused the transaction")
        self.transactions.append(list(batches))
        return [f"stored {b}" for b in batches]

    def after(self, batches: Sequence[str], results: Sequence[str]) -> None:
        if self.fail_after:
            raise RuntimeError("the caches did not follow")
        self.after_calls.append(list(batches))


def held_lane() -> tuple[ThreadPoolExecutor, threading.Event]:
    """A one-thread lane kept busy until the event is set, so that writes pile up behind it."""
    lane = ThreadPoolExecutor(1)
    release = threading.Event()
    lane.submit(release.wait)
    return lane, release


def submit_all(group: GroupCommit[str, str], names: Sequence[str]) -> list[Future[str]]:
    return [group.submit(name, 1) for name in names]


def test_writes_that_wait_together_commit_in_one_transaction_in_arrival_order() -> None:
    store = FakeStore()
    lane, release = held_lane()
    group = GroupCommit(lane, store.commit, store.after)
    futures = submit_all(group, ["a", "b", "c", "d"])
    assert group.waiting() == 4
    release.set()
    assert [f.result(timeout=10) for f in futures] == ["stored a", "stored b", "stored c",
                                                       "stored d"]  # fmt: skip
    assert store.transactions == [["a", "b", "c", "d"]]
    assert store.after_calls == [["a", "b", "c", "d"]]
    lane.shutdown()


def test_a_lone_write_commits_at_once_in_its_own_transaction() -> None:
    store = FakeStore()
    lane = ThreadPoolExecutor(1)
    group = GroupCommit(lane, store.commit, store.after)
    assert group.submit("a", 1).result(timeout=10) == "stored a"
    assert group.submit("b", 1).result(timeout=10) == "stored b"
    assert store.transactions == [["a"], ["b"]]
    lane.shutdown()


def test_a_group_stops_at_its_size_and_the_rest_follows_in_order() -> None:
    store = FakeStore()
    lane, release = held_lane()
    group = GroupCommit(lane, store.commit, store.after, max_size=5)
    # Sizes 2, 2, 2, 1: the first two fill 4 of 5, the third would make 6.
    futures = [group.submit(name, 2) for name in ("a", "b", "c")] + [group.submit("d", 1)]
    release.set()
    for f in futures:
        f.result(timeout=10)
    assert store.transactions == [["a", "b"], ["c", "d"]]
    lane.shutdown()


def test_a_failed_group_commits_each_write_alone_and_only_the_bad_one_fails() -> None:
    store = FakeStore()
    lane, release = held_lane()
    group = GroupCommit(lane, store.commit, store.after)
    good_before, bad, good_after = submit_all(group, ["a", "bad", "c"])
    release.set()
    assert good_before.result(timeout=10) == "stored a"
    assert good_after.result(timeout=10) == "stored c"
    with pytest.raises(ValueError, match="refused"):
        bad.result(timeout=10)
    # The group wrote nothing; then each alone, in order.
    assert store.transactions == [["a"], ["c"]]
    assert store.after_calls == [["a"], ["c"]]
    lane.shutdown()


def test_when_the_caches_fail_after_a_commit_every_write_of_the_group_hears_of_it() -> None:
    store = FakeStore()
    store.fail_after = True
    lane, release = held_lane()
    group = GroupCommit(lane, store.commit, store.after)
    futures = submit_all(group, ["a", "b"])
    release.set()
    for f in futures:
        with pytest.raises(RuntimeError, match="caches"):
            f.result(timeout=10)
    # Committed once: nothing is written again.
    assert store.transactions == [["a", "b"]]
    lane.shutdown()


def test_a_write_cancelled_before_its_group_runs_is_left_out() -> None:
    store = FakeStore()
    lane, release = held_lane()
    group = GroupCommit(lane, store.commit, store.after)
    kept, cancelled = submit_all(group, ["a", "b"])
    assert cancelled.cancel()
    release.set()
    assert kept.result(timeout=10) == "stored a"
    assert store.transactions == [["a"]]
    lane.shutdown()


def test_a_write_submitted_after_the_lane_stopped_fails_instead_of_waiting_forever() -> None:
    store = FakeStore()
    lane = ThreadPoolExecutor(1)
    lane.shutdown()
    group = GroupCommit(lane, store.commit, store.after)
    with pytest.raises(RuntimeError, match="shutdown"):
        group.submit("a", 1).result(timeout=10)
    assert group.waiting() == 0
    assert store.transactions == []
