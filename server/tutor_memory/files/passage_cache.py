"""Each chain's current passages and their embeddings, kept in memory between calls: every
SearchPassages and every grounded answer reads them, and they change only when a file version is
added or removed (files.ingest drops the chain then)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tutor_memory.chain_cache import ChainCache
from tutor_memory.store.base import LedgerStore
from tutor_memory.store.records import StoredPassage

Passages = tuple[list[StoredPassage], npt.NDArray[np.float32]]
PassageCache = ChainCache[Passages]


def passage_cache(store: LedgerStore, model_id: str) -> PassageCache:
    return ChainCache(lambda chain: store.current_passages(chain, model_id))
