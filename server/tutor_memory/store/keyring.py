"""Each student's data key as a store holds it in memory: unwrapped with the master key when first
needed, kept while recently used (at most KEYS_KEPT keys), dropped when the student is erased.
Engine-independent: an engine reads and writes the wrapped keys in its own table and asks the
ring to open, make and forget them.

Threading: the writer thread makes keys (inside its transaction, `pending` until the commit) and
reader threads open stored ones; a lock guards the pending keys (the kept ones are an LruCache,
thread-safe itself), and unwrapping twice at once is harmless (both get the same key).
"""

from __future__ import annotations

import threading

from tutor_memory.domain.errors import FailedPrecondition
from tutor_memory.domain.sealing import DataKey, MasterKey, NoMasterKey
from tutor_memory.store.lru import LruCache

Student = tuple[str, str]

# Data keys kept in memory (by student, and apart by wrapped bytes): each holds a ready AES-GCM
# cipher, 2.6 KiB of OpenSSL state (65,536 keys took 170 MiB of RssAnon, measured in-process), so
# a server that kept every student's key would grow with every student it ever served. A key
# that left is unwrapped again from its stored row: a read of one row and an AES key unwrap.
KEYS_KEPT = 4_096


class KeyRing:
    def __init__(self, master: MasterKey | None) -> None:
        self._master = master
        self._keys: LruCache[Student, DataKey] = LruCache(KEYS_KEPT)
        # Keys made inside the open write transaction: usable by it, kept only if it commits.
        self._pending: dict[Student, DataKey] = {}
        # Keys opened by `open_stored`, by their wrapped bytes.
        self._by_wrapped: LruCache[bytes, DataKey] = LruCache(KEYS_KEPT)
        self._lock = threading.Lock()

    @property
    def master(self) -> MasterKey:
        if self._master is None:
            raise NoMasterKey(
                "this process was given no master key, so it cannot seal or open episodes' "
                "words (verification needs none)"
            )
        return self._master

    def cached(self, student: Student) -> DataKey | None:
        with self._lock:
            return self._pending.get(student) or self._keys.get(student)

    def open_wrapped(self, student: Student, master_key_id: str, wrapped: bytes) -> DataKey:
        """The data key a stored wrapped key holds, kept for the next call."""
        key = self._unwrap(student, master_key_id, wrapped)
        self._keys.put(student, key)
        return key

    def _unwrap(self, student: Student, master_key_id: str, wrapped: bytes) -> DataKey:
        master = self.master
        if master_key_id != master.key_id:
            raise FailedPrecondition(
                f"the data key of student {student[1]!r} was wrapped by master key "
                f"{master_key_id}, and this server was given master key {master.key_id}: start "
                "it with the master key the data was written with (or finish a rotation)"
            )
        return DataKey(master.unwrap(student[0], student[1], wrapped))

    def open_stored(self, student: Student, master_key_id: str, wrapped: bytes) -> DataKey:
        """As `open_wrapped`, but remembered by the wrapped bytes, not by student: for an engine
        that reads the wrapped key with every row it opens (PostgreSQL, where another node may
        destroy it: a key gone from the table must not keep opening words from memory)."""
        known = self._by_wrapped.get(wrapped)
        if known is not None:
            return known
        key = self._unwrap(student, master_key_id, wrapped)
        self._by_wrapped.put(wrapped, key)
        return key

    def make(self, student: Student) -> tuple[DataKey, bytes]:
        """A new data key and its wrapped form, pending until `commit`."""
        key, raw = DataKey.generate()
        wrapped = self.master.wrap(student[0], student[1], raw)
        with self._lock:
            self._pending[student] = key
        return key, wrapped

    def commit(self) -> None:
        with self._lock:
            self._keys.put_many(list(self._pending.items()))
            self._pending.clear()

    def rollback(self) -> None:
        with self._lock:
            self._pending.clear()

    def forget(self, student: Student) -> None:
        """Drops the student's key from memory (erasure: the stored one is deleted beside)."""
        with self._lock:
            self._keys.pop(student)
            self._pending.pop(student, None)
            self._by_wrapped.clear()
