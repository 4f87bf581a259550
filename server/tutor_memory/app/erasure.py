"""ForgetStudent and `tutor-memory forget` (issue 16): erase one student of a tenant.

The store does the durable part in one transaction (the erasure recorded, the data key destroyed,
the derived rows deleted: `Store.erase_student`); then every in-memory cache drops the student's
chains: the vector index and the recall tables here, every other cache through the change hook
(`Change.ERASED`). It runs on the writer thread, so no write of the student can commit between the
erasure and the dropping of the caches. A student erased before: the earlier record, nothing done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from tutor_memory.app.changes import Change, ChangeHub
from tutor_memory.app.executors import Executors
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.erasure import ErasureOutcome
from tutor_memory.domain.limits import check_identifier
from tutor_memory.index.recall_tables import RecallTables
from tutor_memory.index.vectors import VectorIndex
from tutor_memory.store.protocols import Erasing, ErasureReads


class ErasureStore(Erasing, ErasureReads, Protocol):
    def chains(self) -> list[ChainKey]: ...


class Eraser:
    def __init__(
        self,
        store: ErasureStore,
        vectors: VectorIndex,
        tables: RecallTables,
        changes: ChangeHub,
        executors: Executors,
        *,
        clock: Callable[[], int] = now_us,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._tables = tables
        self._changes = changes
        self._executors = executors
        self._clock = clock

    async def forget(
        self, tenant: str, student: str, *, by: str, allow_plaintext_history: bool
    ) -> ErasureOutcome:
        """Erases the student; NotFound for a student with no episode, FailedPrecondition for
        one with plaintext history unless `allow_plaintext_history` (see Store.erase_student)."""
        check_identifier("student_id", student)
        return await self._executors.run(
            self._executors.writer, self.forget_now, tenant, student, by, allow_plaintext_history
        )

    def forget_now(
        self, tenant: str, student: str, by: str, allow_plaintext_history: bool
    ) -> ErasureOutcome:
        """As `forget`, on the calling thread (the writer thread, or an offline command)."""
        outcome = self._store.erase_student(
            tenant,
            student,
            by=by,
            at_us=self._clock(),
            allow_plaintext_history=allow_plaintext_history,
        )
        for chain in self._store.chains():
            if chain.tenant == tenant and chain.student == student:
                self._vectors.remove(chain)
                self._tables.remove(chain)
                self._changes.changed(chain, Change.ERASED)
        return outcome
