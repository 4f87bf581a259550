"""`tutor-memory serve | fetch-model | verify | token new | backup | restore | ingest |
consolidate | export | import | forget | master-key new | rotate-master-key`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

from tutor_memory.api.auth import new_token, token_sha256
from tutor_memory.api.tokens_file import entry_text
from tutor_memory.app import logs
from tutor_memory.app.config import (
    DEFAULT_BLOCK_CAP_SECONDS,
    DEFAULT_CACHE_BUDGET_MIB,
    DEFAULT_DATA_DIR,
    DEFAULT_FILE_PROCESSES,
    DEFAULT_GRACE_SECONDS,
    DEFAULT_IMPORT_PROCESSES,
    DEFAULT_LISTEN,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_READINESS_PROBE_SECONDS,
    MIB,
    ServerConfig,
)
from tutor_memory.app.executors import in_background, settle
from tutor_memory.cli import erasure as cli_erasure
from tutor_memory.cli import operations as cli_ops
from tutor_memory.cli import transfer as cli_transfer
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import check_identifier
from tutor_memory.domain.recall.levers import ALL_ON, Lever, RecallLevers, parse_levers
from tutor_memory.models.fetch import ModelIntegrityError, default_model_dir, fetch_model
from tutor_memory.store.postgres.database import DEFAULT_POOL_SIZE

if TYPE_CHECKING:
    from tutor_memory.models.embedder import Embedder

log = logging.getLogger("tutor_memory.cli")


def _levers(value: str) -> RecallLevers:
    try:
        return parse_levers(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tutor-memory", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the gRPC server")
    serve.add_argument("--listen", default=DEFAULT_LISTEN, help="HOST:PORT (default %(default)s)")
    serve.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help="data directory (the SQLite file, unless --store; the server's signing key)",
    )
    serve.add_argument(
        "--store",
        help="a PostgreSQL connection string (postgresql://user@host/db); default: SQLite "
        "in --data",
    )
    serve.add_argument(
        "--sync",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="check each chain's head in the store before reads that use the caches, for stores "
        "other processes write (default: on with --store, off with SQLite)",
    )
    serve.add_argument(
        "--pool-size",
        type=int,
        default=DEFAULT_POOL_SIZE,
        help="PostgreSQL connections this process keeps at most (default %(default)s)",
    )
    serve.add_argument(
        "--tokens", type=Path, help="tokens file (TOML); without it: development mode, loopback"
    )
    serve.add_argument("--model-dir", type=Path, help="where the embedding model was fetched")
    serve.add_argument(
        "--master-key-file",
        type=Path,
        help="the master key wrapping the students' data keys (default: "
        "$TUTOR_MEMORY_MASTER_KEY_FILE, $TUTOR_MEMORY_MASTER_KEY, else DATA/master.key)",
    )
    serve.add_argument("--tls-cert", type=Path, help="PEM certificate chain (with --tls-key)")
    serve.add_argument("--tls-key", type=Path, help="PEM private key (with --tls-cert)")
    serve.add_argument(
        "--tokenizer", type=Path, help="the chat model's tokenizer.json (default: cl100k_base)"
    )
    serve.add_argument(
        "--block-cap-seconds",
        type=float,
        default=DEFAULT_BLOCK_CAP_SECONDS,
        help="hard cap on building one memory block (default %(default)s)",
    )
    serve.add_argument(
        "--cache-memory-mib",
        type=int,
        default=DEFAULT_CACHE_BUDGET_MIB,
        help="memory for the chains' recall tables and vector indexes; beyond it the least "
        "recently used chains are evicted and load again on their next call "
        "(default %(default)s)",
    )
    serve.add_argument(
        "--import-processes",
        type=int,
        default=DEFAULT_IMPORT_PROCESSES,
        help="processes that derive batch imports' recall facts beside the server's own; 0: "
        "its ingest thread does (default %(default)s)",
    )
    serve.add_argument(
        "--file-processes",
        type=int,
        default=DEFAULT_FILE_PROCESSES,
        help="processes that read course files (IngestFile), 0 or 1; 0: the server's file "
        "thread does (default %(default)s)",
    )
    serve.add_argument("--max-message-bytes", type=int, default=DEFAULT_MAX_MESSAGE_BYTES)
    serve.add_argument("--grace-seconds", type=float, default=DEFAULT_GRACE_SECONDS)
    serve.add_argument(
        "--metrics-listen", help="HOST:PORT of the Prometheus /metrics endpoint (default: none)"
    )
    serve.add_argument(
        "--readiness-probe-seconds",
        type=float,
        default=DEFAULT_READINESS_PROBE_SECONDS,
        help="how often readiness checks that the store answers (default %(default)s)",
    )
    serve.add_argument(
        "--recall-off",
        type=_levers,
        default=ALL_ON,
        metavar="LEVER[,LEVER]",
        help="turn recall levers off, to measure what each adds (benchmarks only): "
        + ", ".join(lever.value for lever in Lever)
        + " (default: all on)",
    )
    serve.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the --listen port, each with its own caches and the "
        "head check of --sync; worker I serves metrics on the --metrics-listen port + I, and "
        "only worker 0 the console (default %(default)s)",
    )
    # Set by the supervisor of --workers on each worker it starts.
    serve.add_argument("--worker-index", type=int, help=argparse.SUPPRESS)
    serve.add_argument("--log-level", default="INFO")
    serve.add_argument(
        "--console-listen",
        metavar="HOST:PORT",
        help="also serve the read-only web console there (off by default; a bare PORT means "
        "127.0.0.1:PORT; without --tokens, loopback only)",
    )

    fetch = sub.add_parser("fetch-model", help="download and verify the pinned embedding model")
    fetch.add_argument("--model-dir", type=Path, help=f"default: {default_model_dir()}")

    verify = sub.add_parser("verify", help="verify every hash chain of a store (offline)")
    cli_transfer.add_store_arguments(verify)

    token = sub.add_parser("token", help="manage bearer tokens")
    token_sub = token.add_subparsers(dest="token_command", required=True)
    token_new = token_sub.add_parser("new", help="make a token and print its tokens-file entry")
    token_new.add_argument("--tenant", required=True)
    token_new.add_argument(
        "--name", help="the caller, shown in logs; a second token with the same name rotates it"
    )
    token_new.add_argument("--read-only", action="store_true", help="scope: read-only calls")
    token_new.add_argument(
        "--student-prefix", default="", help="scope: student ids starting with this"
    )
    token_new.add_argument(
        "--subject",
        action="append",
        default=[],
        dest="subjects",
        help="scope: this subject (repeat for several; default: every subject)",
    )

    backup = sub.add_parser("backup", help="copy a data directory to one file, while it serves")
    backup.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR)
    backup.add_argument("--out", type=Path, required=True, help="the backup file to write")
    restore = sub.add_parser("restore", help="bring a backup back into a new data directory")
    restore.add_argument("--from", dest="source", type=Path, required=True, help="backup file")
    restore.add_argument("--data", type=Path, required=True, help="an empty or new directory")
    restore.add_argument(
        "--master-key-file",
        type=Path,
        help="check that this master key opens every data key of the backup before restoring",
    )
    cli_ops.add_commands(sub)
    cli_transfer.add_commands(sub)
    cli_erasure.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args, argv)
    if args.command == "fetch-model":
        path = fetch_model(args.model_dir or default_model_dir())
        print(f"model ready: {path}")
        return 0
    if args.command == "verify":
        return _verify(cli_transfer.store_config(args))
    if args.command == "token":
        return _token_new(args)
    if args.command == "backup":
        return _backup(args.data, args.out)
    if args.command == "restore":
        return _restore(args.source, args.data, args.master_key_file)
    if args.command == "ingest":
        return cli_ops.ingest(args)
    if args.command == "consolidate":
        return cli_ops.consolidate(args)
    if args.command == "export":
        return cli_transfer.export(args)
    if args.command == "import":
        return cli_transfer.import_(args)
    if args.command == "forget":
        return cli_erasure.forget(args)
    if args.command == "master-key":
        return cli_erasure.master_key_new(args)
    if args.command == "rotate-master-key":
        return cli_erasure.rotate_master_key(args)
    raise AssertionError(args.command)


def _serve(args: argparse.Namespace, argv: Sequence[str]) -> int:
    logs.configure(args.log_level)
    config = _server_config(args)
    # The model's load (most of a second) starts before the server's modules are imported (a
    # quarter of a second), beside them; the supervisor of `--workers` serves no calls and
    # loads none.
    supervises = args.workers > 1 and args.worker_index is None
    model = None if supervises else in_background(_load_model, config.model_dir)
    try:
        return _serve_with(config, args, argv, model, supervises=supervises)
    finally:
        # A start that failed exits next: exiting while the model still loads on another thread
        # can abort the process (SIGABRT from the runtime's threads) instead of exiting with the
        # start's status.
        settle(model)


def _load_model(model_dir: Path | None) -> Embedder:
    # Imported here, on the loading thread: numpy and the runtime are part of what it overlaps.
    from tutor_memory.models.embedder import load_embedder

    return load_embedder(model_dir)


def _server_config(args: argparse.Namespace) -> ServerConfig:
    return ServerConfig(
        listen=args.listen,
        data_dir=args.data,
        tokens_file=args.tokens,
        model_dir=args.model_dir,
        max_message_bytes=args.max_message_bytes,
        grace_seconds=args.grace_seconds,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tokenizer=args.tokenizer,
        block_cap_seconds=args.block_cap_seconds,
        cache_budget_bytes=args.cache_memory_mib * MIB,
        import_processes=args.import_processes,
        file_processes=args.file_processes,
        store=args.store,
        sync=args.sync,
        pool_size=args.pool_size,
        metrics_listen=args.metrics_listen,
        readiness_probe_seconds=args.readiness_probe_seconds,
        master_key_file=args.master_key_file,
        recall_levers=args.recall_off,
    )


def _serve_with(
    config: ServerConfig,
    args: argparse.Namespace,
    argv: Sequence[str],
    model: Future[Embedder] | None,
    *,
    supervises: bool,
) -> int:
    from tutor_memory.api.server import ConfigError, serve
    from tutor_memory.cli import workers

    try:
        workers.check_worker_config(config, args.workers)
        if supervises:
            workers.prepare(config)
            return workers.supervise(argv, args.workers)
    except (ConfigError, ModelIntegrityError) as exc:
        log.error(f"cannot start: {exc}")
        return 2
    if args.worker_index is not None:
        config = workers.worker_config(config, args.worker_index)
    alongside = None
    if args.console_listen and not args.worker_index:
        from tutor_memory.cli.console_gate import console_beside
        from tutor_memory.console.server import DEFAULT_CONSOLE_HOST

        listen = args.console_listen
        alongside = console_beside(listen if ":" in listen else f"{DEFAULT_CONSOLE_HOST}:{listen}")
    try:
        asyncio.run(serve(config, alongside, model))
    except (ConfigError, ModelIntegrityError) as exc:
        log.error(f"cannot start: {exc}")
        return 2
    return 0


def _verify(config: ServerConfig) -> int:
    from tutor_memory.app.root import ConfigError, open_store
    from tutor_memory.domain.chain import verify_chain

    if config.store is None and not config.database_path.exists():
        print(f"no database at {config.database_path}", file=sys.stderr)
        return 2
    # Verification reads the ciphertext the hashes cover: no master key is needed.
    try:
        store = open_store(config, sealing=False)
    except ConfigError as exc:
        print(f"cannot open the store: {exc}", file=sys.stderr)
        return 2
    broken = 0
    try:
        for chain in store.chains():
            result = verify_chain(store.iter_links(chain))
            name = f"{chain.tenant}/{chain.student}/{chain.subject}"
            erased = " (student erased)" if store.erasure_of(chain.tenant, chain.student) else ""
            if result.first_break is None:
                print(
                    f"ok      {name}: {result.length} episodes, head "
                    f"{result.head_hash.hex()}{erased}"
                )
            else:
                broken += 1
                b = result.first_break
                print(f"BROKEN  {name}: seq {b.seq} (episode {b.episode_id}): {b.reason}")
    finally:
        store.close()
    return 1 if broken else 0


def _token_new(args: argparse.Namespace) -> int:
    try:
        check_identifier("--tenant", args.tenant)
        if args.name is not None:
            check_identifier("--name", args.name)
        if args.student_prefix:
            check_identifier("--student-prefix", args.student_prefix)
        for subject in args.subjects:
            check_identifier("--subject", subject)
    except InvalidArgument as exc:
        print(f"token new: {exc}", file=sys.stderr)
        return 2
    token = new_token()
    print(f"token (give it to the caller; it is not stored): {token}")
    print("entry for the tokens file:")
    print(
        entry_text(
            args.tenant,
            token_sha256(token),
            name=args.name,
            read_only=args.read_only,
            student_prefix=args.student_prefix,
            subjects=tuple(dict.fromkeys(args.subjects)),
        ),
        end="",
    )
    return 0


def _backup(data_dir: Path, out: Path) -> int:
    from tutor_memory.app.backup import BackupError, backup

    try:
        report = backup(data_dir, out)
    except BackupError as exc:
        print(f"backup failed: {exc}", file=sys.stderr)
        return 2
    print(
        f"backup written: {report.path} ({report.bytes} bytes): {report.chains} chains, "
        f"{report.episodes} episodes, and the server key (keep the file as secret as the key)"
    )
    for name in report.skipped:
        print(f"not server state, left out: {data_dir / name}", file=sys.stderr)
    if report.master_key_left_out:
        print(
            f"the master key {data_dir / 'master.key'} is never put in a backup: keep a copy of "
            "it apart from the backup; the restored words open only with it",
            file=sys.stderr,
        )
    return 0


def _restore(source: Path, data_dir: Path, master_key_file: Path | None) -> int:
    from tutor_memory.app.backup import BackupError, restore
    from tutor_memory.store.masterkey import MasterKeyError, read_master_key_file

    try:
        master = None if master_key_file is None else read_master_key_file(master_key_file)
        report = restore(source, data_dir, master)
    except MasterKeyError as exc:
        print(f"restore failed: {exc}", file=sys.stderr)
        return 2
    except BackupError as exc:
        print(f"restore failed: {exc}", file=sys.stderr)
        return 2
    print(
        f"restored into {report.data_dir}: {report.chains} chains, {report.episodes} episodes, "
        "every chain verifies"
    )
    if report.data_keys_checked is None:
        print(
            "no --master-key-file given: the students' data keys were not checked; start the "
            "server with the master key the backup's server used"
        )
    else:
        print(f"the master key opens all {report.data_keys_checked} data keys")
    return 0
