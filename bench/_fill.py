"""Data directories for the start-up and memory benchmarks: many episodes written straight into
the store, in this process, without the server or the embedder.

The texts are LoCoMo turns (cycled), so recall facts, stems and postings have the sizes of real
chat; the vectors are random unit vectors, seeded, since what an index costs to hold and to load
does not depend on the values (embedding a million turns would take this machine an hour). A
directory is built once and reused while its marker file says it holds what is asked for.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from bench.bench_ingest import locomo_turns
from tutor_memory.api.auth import DEV_TENANT
from tutor_memory.app.config import DATABASE_FILE_NAME
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode
from tutor_memory.domain.recall.facts import recall_facts
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.models.embedder import USE_DIM, USE_MODEL_ID
from tutor_memory.models.tokenizers import load_counter
from tutor_memory.store.masterkey import load_master_key
from tutor_memory.store.protocols import PreparedEpisode
from tutor_memory.store.sqlite.store import SqliteStore

MARKER = "bench-fill.json"
# Episodes written per transaction.
FILL_CHUNK = 2_000
SUBJECT = "conversation"
# Episodes are an hour apart, from this time on (2024-01-01 UTC).
FIRST_OCCURRED_US = 1_704_067_200_000_000
HOUR_US = 3_600_000_000


def student(i: int) -> str:
    return f"student-{i:05d}"


def chain(i: int) -> ChainKey:
    return ChainKey(DEV_TENANT, student(i), SUBJECT)


def filled(data_dir: Path, chains: int, per_chain: int) -> Path:
    """`data_dir` holding `chains` chains of `per_chain` episodes each (built if missing)."""
    # Sealed: written with the master key a server on the directory reads (episodes' words are
    # sealed since erasure landed; a directory filled before holds plaintext rows and is rebuilt).
    want = {"chains": chains, "per_chain": per_chain, "model": USE_MODEL_ID, "sealed": True}
    marker = data_dir / MARKER
    if marker.exists() and json.loads(marker.read_text()) == want:
        return data_dir
    if data_dir.exists():
        for path in sorted(data_dir.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
    data_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    turns = [text for _, _, text in locomo_turns()]
    counter = load_counter(None)
    rng = np.random.default_rng(14)
    store = SqliteStore(data_dir / DATABASE_FILE_NAME, load_master_key(data_dir))
    try:
        batch: list[NewEpisode] = []
        for c in range(chains):
            for i in range(per_chain):
                text = turns[(c * per_chain + i) % len(turns)]
                batch.append(
                    NewEpisode(
                        chain=chain(c),
                        kind=Kind.QUESTION if i % 2 == 0 else Kind.ANSWER,
                        summary=text[:200],
                        text=text,
                        concepts=(),
                        occurred_at_us=FIRST_OCCURRED_US + i * HOUR_US,
                        occurred_at_given=True,
                        evidence=(),
                        check=None,
                        quiz=None,
                        client_key=f"fill-{c}-{i}",
                    )
                )
                if len(batch) == FILL_CHUNK:
                    _write(store, batch, counter, rng)
                    batch = []
        if batch:
            _write(store, batch, counter, rng)
    finally:
        store.close()
    marker.write_text(json.dumps(want))
    print(
        f"filled {data_dir}: {chains} x {per_chain} episodes in "
        f"{time.perf_counter() - started:.0f} s"
    )
    return data_dir


def _write(
    store: SqliteStore, batch: list[NewEpisode], counter: TokenCounter, rng: np.random.Generator
) -> None:
    vectors = rng.standard_normal((len(batch), USE_DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    facts = recall_facts(batch, counter)
    items = [PreparedEpisode(ep, vectors[i], facts[i]) for i, ep in enumerate(batch)]
    store.append(items, model_id=USE_MODEL_ID, recorded_at_us=FIRST_OCCURRED_US)
