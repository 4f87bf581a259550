"""What a store of either engine keeps in memory per student and per chain is bounded
(store/lru.py, store/keyring.py): past the bound the least recently used data keys and chain ids
leave, and a student or chain whose entry left is read, written and erased as before. Beside
them, the per-chain caches of the use cases (app/caches.py) keep no bookkeeping for chains no
longer being loaded."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.keys import TEST_MASTER_KEY
from tutor_memory.app.caches import ChainCache
from tutor_memory.domain.episodes import ChainKey, Kind, validate_new_episode
from tutor_memory.domain.recall.facts import recall_facts
from tutor_memory.models.tokenizers import load_counter
from tutor_memory.store import keyring
from tutor_memory.store.lru import LruCache
from tutor_memory.store.postgres import store as postgres_store
from tutor_memory.store.postgres.store import PostgresStore
from tutor_memory.store.protocols import AppendStatus, PreparedEpisode
from tutor_memory.store.sqlite import store as sqlite_store
from tutor_memory.store.sqlite.store import SqliteStore

NOW = 1_800_000_000_000_000
DIM = 4
KEPT = 3
STUDENTS = 10


def _prepared(chain: ChainKey, summary: str) -> PreparedEpisode:
    ep = validate_new_episode(
        chain=chain,
        kind=Kind.QUESTION,
        summary=summary,
        text=f"{summary}, said at length",
        concepts=[],
        occurred_at_us=NOW - 1,
        evidence=[],
        check=None,
        quiz=None,
        client_key="",
        now_us=NOW,
        client_key_required=False,
    )
    (facts,) = recall_facts([ep], load_counter(None))
    return PreparedEpisode(ep, np.full(DIM, 0.5, dtype=np.float32), facts)


def chain(i: int) -> ChainKey:
    return ChainKey("t", f"student-{i}", "bio")


SmallStore = SqliteStore | PostgresStore


@pytest.fixture
def small_store(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    store_kind: str,
    request: pytest.FixtureRequest,
) -> Iterator[SmallStore]:
    """A store of either engine that keeps KEPT data keys and KEPT chain ids (SQLite: row ids;
    PostgreSQL: student keys and row ids)."""
    monkeypatch.setattr(keyring, "KEYS_KEPT", KEPT)
    monkeypatch.setattr(sqlite_store, "CHAIN_IDS_KEPT", KEPT)
    monkeypatch.setattr(postgres_store, "CHAIN_IDS_KEPT", KEPT)
    s: SmallStore
    if store_kind == "postgres":
        s = PostgresStore(request.getfixturevalue("postgres_url"), TEST_MASTER_KEY)
    else:
        s = SqliteStore(tmp_path / "db.sqlite3", TEST_MASTER_KEY)
    yield s
    s.close()


def kept_in_memory(store: SmallStore) -> dict[str, int]:
    """What the store keeps in memory now: data keys by student (SQLite reads and writes,
    PostgreSQL writes), by wrapped bytes (PostgreSQL reads), and chain ids."""
    if isinstance(store, PostgresStore):
        ring, chain_ids = store._ring, len(store._keys)
    else:
        ring, chain_ids = store._keys, len(store._chain_ids)
    return {
        "keys by student": len(ring._keys),
        "keys by wrapped bytes": len(ring._by_wrapped),
        "chain ids": chain_ids,
    }


def test_lru_drop_where_drops_only_the_matching_entries_and_counts_no_eviction() -> None:
    cache: LruCache[str, int] = LruCache(10)
    cache.put_many([("a1", 1), ("b1", 2), ("a2", 3)])
    cache.drop_where(lambda k: k.startswith("a"))
    assert [cache.get(k) for k in ("a1", "b1", "a2")] == [None, 2, None]
    assert len(cache) == 1
    assert cache.evictions == 0


def test_a_store_keeps_at_most_its_bound_of_data_keys_and_chain_ids(
    small_store: SmallStore,
) -> None:
    for i in range(STUDENTS):
        small_store.append([_prepared(chain(i), f"note {i}")], model_id="m", recorded_at_us=NOW)
    for i in range(STUDENTS):
        assert [e.summary for e in small_store.iter_chain(chain(i))] == [f"note {i}"]
    kept = kept_in_memory(small_store)
    assert max(kept.values()) == KEPT
    assert kept["chain ids"] == KEPT


def test_students_whose_key_and_chain_id_left_memory_read_and_write_as_before(
    small_store: SmallStore,
) -> None:
    for i in range(STUDENTS):
        small_store.append([_prepared(chain(i), f"note {i}")], model_id="m", recorded_at_us=NOW)
    # Student 0's key and chain id left long ago: its words open, and a new episode joins its
    # chain (the same chain id, the same data key: no second chain, no second key).
    outcomes = small_store.append(
        [_prepared(chain(0), "second note")], model_id="m", recorded_at_us=NOW
    )
    assert outcomes[0].status is AppendStatus.INSERTED
    episodes = list(small_store.iter_chain(chain(0)))
    assert [e.summary for e in episodes] == ["note 0", "second note"]
    assert [e.text for e in episodes] == ["note 0, said at length", "second note, said at length"]
    assert [e.seq for e in episodes] == [1, 2]
    assert small_store.chains().count(chain(0)) == 1
    assert small_store.check_data_keys() == STUDENTS


def test_erasing_a_student_whose_key_left_memory_erases_it(small_store: SmallStore) -> None:
    for i in range(STUDENTS):
        small_store.append([_prepared(chain(i), f"note {i}")], model_id="m", recorded_at_us=NOW)
    small_store.erase_student("t", "student-0", by="test", at_us=NOW, allow_plaintext_history=False)
    assert list(small_store.iter_chain(chain(0))) == []
    assert small_store.memory_rows(chain(0), [1]) == {}
    assert small_store.erasure_of("t", "student-0") is not None
    assert [e.text for e in small_store.iter_chain(chain(1))] == ["note 1, said at length"]


def test_a_chain_cache_keeps_no_bookkeeping_once_its_loads_end() -> None:
    cache: ChainCache[str] = ChainCache(lambda c: c.student, size=2)
    for i in range(50):
        cache.get(chain(i))
        cache.invalidate(chain(i))
    assert cache._loading == {}
    assert cache._generation == {}


def test_a_load_that_raced_an_invalidation_is_returned_but_not_kept() -> None:
    loading, release = threading.Event(), threading.Event()
    loads: list[ChainKey] = []

    def load(c: ChainKey) -> str:
        loads.append(c)
        if len(loads) == 1:
            loading.set()
            release.wait(5)
        return f"load {len(loads)}"

    cache: ChainCache[str] = ChainCache(load)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(cache.get(chain(0))))
    reader.start()
    assert loading.wait(5)
    cache.invalidate(chain(0))
    release.set()
    reader.join(5)
    assert got == ["load 1"]
    # Not kept: the next read loads again, and that load is kept.
    assert cache.get(chain(0)) == "load 2"
    assert cache.get(chain(0)) == "load 2"
    assert cache._generation == {}
