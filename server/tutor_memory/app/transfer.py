"""`tutor-memory export` and `import`: a whole store as one file, and back into a store of any
engine, every row byte for byte (store/transfer.py), so each chain verifies after the move and a
checkpoint taken before it still HOLDS.

The file is gzip-compressed JSON lines: a header naming the format and every table's columns,
then one line per row, `[table, [values...]]`, tables in load order. Values are JSON as they are
(Python writes floats with the shortest text that reads back to the same double), except bytes
(hashes, vectors): {"b64": "..."}. Recall facts (derived data) are not in the file; the import
derives them from the episodes with the server's own rules.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tutor_memory.domain.chain import verify_chain
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.facts import RecallFacts, recall_facts
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.store import codec
from tutor_memory.store.protocols import Store
from tutor_memory.store.transfer import TABLES, Row

FORMAT = "tutor-memory-export"
FORMAT_VERSION = 1
# Episodes whose words are derived per batch while importing.
TERMS_BATCH = 1_000


class TransferError(Exception):
    """The export file or the target store cannot be used; the message says why."""


@dataclass(slots=True)
class TransferReport:
    rows: dict[str, int] = field(default_factory=dict)
    chains_verified: int = 0
    broken: list[str] = field(default_factory=list)


def _encode(value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b64": base64.b64encode(bytes(value)).decode("ascii")}
    return value


def _decode(value: Any) -> object:
    if isinstance(value, dict):
        return base64.b64decode(value["b64"])
    return value


def export_store(store: Store, path: Path) -> TransferReport:
    report = TransferReport()
    with gzip.open(path, "wt", encoding="utf-8") as out:
        header = {"format": FORMAT, "version": FORMAT_VERSION, "tables": TABLES}
        out.write(json.dumps(header) + "\n")
        for table in TABLES:
            count = 0
            for row in store.dump_table(table):
                out.write(json.dumps([table, [_encode(v) for v in row]], ensure_ascii=False))
                out.write("\n")
                count += 1
            report.rows[table] = count
    return report


def _rows(path: Path, report: TransferReport, derived: list[tuple[int, int, RecallFacts]],
          counter: TokenCounter) -> Iterator[tuple[str, Row]]:  # fmt: skip
    """The file's rows, checked against the header; derives each episode's recall facts on the
    way."""
    chains: dict[int, ChainKey] = {}
    pending: list[tuple[int, Row]] = []

    def derive() -> None:
        episodes = [codec.episode_from_row(_episode_fields(chains[c], row)) for c, row in pending]
        for (chain_id, _), ep, facts in zip(
            pending, episodes, recall_facts(episodes, counter), strict=True
        ):
            derived.append((chain_id, ep.episode_id, facts))
        pending.clear()

    with gzip.open(path, "rt", encoding="utf-8") as src:
        try:
            header = json.loads(src.readline())
        except ValueError as exc:
            raise TransferError(f"{path} is not a tutor-memory export: {exc}") from exc
        if header.get("format") != FORMAT or header.get("version") != FORMAT_VERSION:
            raise TransferError(f"{path} is not a version-{FORMAT_VERSION} {FORMAT} file")
        if {t: tuple(c) for t, c in header.get("tables", {}).items()} != TABLES:
            raise TransferError(f"{path} has other tables or columns than this server stores")
        for line in src:
            table, values = json.loads(line)
            row = tuple(_decode(v) for v in values)
            if table == "chains":
                chains[int(str(row[0]))] = ChainKey(str(row[1]), str(row[2]), str(row[3]))
            elif table == "episodes":
                pending.append((int(str(row[1])), row))
                if len(pending) >= TERMS_BATCH:
                    derive()
            report.rows[table] = report.rows.get(table, 0) + 1
            yield table, row
    derive()


def _episode_fields(chain: ChainKey, row: Row) -> Row:
    """An `episodes` row of the file in codec.EPISODE_FIELDS order."""
    episode_id, _chain_id, *rest = row
    return (episode_id, chain.tenant, chain.student, chain.subject, *rest)


def import_store(store: Store, path: Path, counter: TokenCounter) -> TransferReport:
    """Loads an export into an empty store in one transaction, then verifies every chain."""
    if not store.is_empty():
        raise TransferError("the target store already holds chains: import only into an empty one")
    report = TransferReport()
    derived: list[tuple[int, int, RecallFacts]] = []
    # The facts are consumed only after every row was loaded, when all are derived.
    store.load_tables(_rows(path, report, derived, counter), iter_after(derived))
    for chain in store.chains():
        result = verify_chain(store.iter_chain(chain))
        report.chains_verified += 1
        if not result.ok:
            report.broken.append(f"{chain.tenant}/{chain.student}/{chain.subject}")
    return report


def iter_after(
    items: list[tuple[int, int, RecallFacts]],
) -> Iterator[tuple[int, int, RecallFacts]]:
    """Iterates `items` as it is when iteration starts (it is filled meanwhile)."""
    yield from items
