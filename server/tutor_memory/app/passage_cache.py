"""Each chain's current passages and their embeddings, kept in memory between calls: every
SearchPassages and every grounded answer reads them, and they change only when a file version is
added or removed (files.ingest drops the chain then)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tutor_memory.app.caches import ChainCache
from tutor_memory.domain.records import StoredPassage
from tutor_memory.store.protocols import LedgerStore

Passages = tuple[list[StoredPassage], npt.NDArray[np.float32]]
PassageCache = ChainCache[Passages]


def passage_cache(store: LedgerStore, model_id: str) -> PassageCache:
    return ChainCache(lambda chain: store.current_passages(chain, model_id))
