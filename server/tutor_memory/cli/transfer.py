"""`tutor-memory export` and `tutor-memory import`: a whole store into one file, and that file into
an empty store of either engine (app/transfer.py). Run them with the servers of the source
stopped, or at least not writing: the export reads each table in turn."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tutor_memory.app.config import DEFAULT_DATA_DIR, ServerConfig


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    """--data and --store, as `serve` takes them: which store a command opens."""
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA_DIR, help="SQLite: the data directory"
    )
    parser.add_argument("--store", help="PostgreSQL: a postgresql:// connection string")


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser("export", help="write every row of a store to one file")
    add_store_arguments(export)
    export.add_argument("--out", type=Path, required=True, help="the file to write (.jsonl.gz)")
    import_ = sub.add_parser("import", help="load an export file into an empty store")
    add_store_arguments(import_)
    import_.add_argument("file", type=Path, help="a file written by `tutor-memory export`")


def store_config(args: argparse.Namespace) -> ServerConfig:
    return ServerConfig(data_dir=args.data, store=args.store)


def export(args: argparse.Namespace) -> int:
    from tutor_memory.app.root import ConfigError, open_store
    from tutor_memory.app.transfer import export_store

    config = store_config(args)
    if config.store is None and not config.database_path.exists():
        print(f"no database at {config.database_path}", file=sys.stderr)
        return 2
    try:
        store = open_store(config)
    except ConfigError as exc:
        print(f"cannot open the store: {exc}", file=sys.stderr)
        return 2
    try:
        report = export_store(store, args.out)
    finally:
        store.close()
    rows = ", ".join(f"{table} {n}" for table, n in report.rows.items())
    print(f"exported to {args.out}: {rows}")
    return 0


def import_(args: argparse.Namespace) -> int:
    from tutor_memory.app.root import ConfigError, open_store
    from tutor_memory.app.transfer import TransferError, import_store
    from tutor_memory.models.tokenizers import load_counter

    try:
        store = open_store(store_config(args))
    except ConfigError as exc:
        print(f"cannot open the store: {exc}", file=sys.stderr)
        return 2
    try:
        report = import_store(store, args.file, load_counter(None))
    except TransferError as exc:
        print(f"import refused: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
    rows = ", ".join(f"{table} {n}" for table, n in report.rows.items())
    print(f"imported {args.file}: {rows}")
    if report.broken:
        print(f"BROKEN chains after the import: {', '.join(report.broken)}", file=sys.stderr)
        return 1
    print(f"{report.chains_verified} chains verified")
    return 0
