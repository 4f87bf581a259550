"""`tutor-memory export` and `import`: a whole store as one file, and back into a store of any
engine, every row byte for byte (store/transfer.py), so each chain verifies after the move and a
checkpoint taken before it still HOLDS.

The file is gzip-compressed JSON lines: a header naming the format and every table's columns,
then one line per row, `[table, [values...]]`, tables in load order. Values are JSON as they are
(Python writes floats with the shortest text that reads back to the same double), except bytes
(hashes, vectors): {"b64": "..."}. Recall facts (derived data) are not in the file; the import
derives them from the episodes with the server's own rules, opening sealed words with the master
key that wrapped the data keys in the file (they travel wrapped, as stored). An erased student's
episodes get no facts: the erasure deleted theirs, and their words no longer open.
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
from tutor_memory.domain.episodes import ChainKey, StoredEpisode
from tutor_memory.domain.recall.facts import RecallFacts, recall_facts
from tutor_memory.domain.sealing import DataKey, MasterKey
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


def _rows(
    path: Path,
    report: TransferReport,
    derived: list[tuple[int, int, RecallFacts]],
    counter: TokenCounter,
    master: MasterKey | None,
) -> Iterator[tuple[str, Row]]:
    """The file's rows, checked against the header; derives each episode's recall facts on the
    way."""
    chains: dict[int, ChainKey] = {}
    wrapped: dict[tuple[str, str], tuple[str, bytes]] = {}
    keys: dict[tuple[str, str], DataKey] = {}
    erased: set[tuple[str, str]] = set()
    pending: list[tuple[int, Row]] = []

    def data_key(chain: ChainKey) -> DataKey:
        who = (chain.tenant, chain.student)
        if who not in keys:
            if who not in wrapped:
                raise TransferError(
                    f"{path}: student {chain.student!r} has sealed episodes and no key"
                )
            if master is None:
                raise TransferError(f"{path} holds sealed episodes: give the master key")
            key_id, blob = wrapped[who]
            if key_id != master.key_id:
                raise TransferError(
                    f"{path}: the data keys were wrapped by master key {key_id}, and the master "
                    f"key given is {master.key_id}"
                )
            keys[who] = DataKey(master.unwrap(chain.tenant, chain.student, blob))
        return keys[who]

    def derive() -> None:
        episodes: list[tuple[int, StoredEpisode]] = []
        for chain_id, row in pending:
            chain = chains[chain_id]
            if (chain.tenant, chain.student) in erased:
                continue
            *fields, sealed = _episode_fields(chain, row)
            ep = codec.episode_from_row(fields)
            if sealed is not None:
                ep = codec.with_words(ep, bytes(sealed), data_key(chain))  # type: ignore[call-overload]
            episodes.append((chain_id, ep))
        made = recall_facts([ep for _, ep in episodes], counter)
        for (chain_id, ep), facts in zip(episodes, made, strict=True):
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
            elif table == "student_keys":
                wrapped[(str(row[0]), str(row[1]))] = (str(row[2]), bytes(row[3]))  # type: ignore[call-overload]
            elif table == "erasures":
                erased.add((str(row[0]), str(row[1])))
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


def import_store(
    store: Store, path: Path, counter: TokenCounter, master: MasterKey | None = None
) -> TransferReport:
    """Loads an export into an empty store in one transaction, then verifies every chain (as
    stored: an erased student's chains too). `master` opens the sealed words the recall facts
    are derived from: the master key that wrapped the file's data keys."""
    if not store.is_empty():
        raise TransferError("the target store already holds chains: import only into an empty one")
    report = TransferReport()
    derived: list[tuple[int, int, RecallFacts]] = []
    # The facts are consumed only after every row was loaded, when all are derived.
    store.load_tables(_rows(path, report, derived, counter, master), iter_after(derived))
    for chain in store.chains():
        result = verify_chain(store.iter_links(chain))
        report.chains_verified += 1
        if not result.ok:
            report.broken.append(f"{chain.tenant}/{chain.student}/{chain.subject}")
    return report


def iter_after(
    items: list[tuple[int, int, RecallFacts]],
) -> Iterator[tuple[int, int, RecallFacts]]:
    """Iterates `items` as it is when iteration starts (it is filled meanwhile)."""
    yield from items
