"""`tutor-memory serve | fetch-model | verify | token new | ingest | consolidate`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from tutor_memory.api.auth import new_token, token_sha256
from tutor_memory.app import logs
from tutor_memory.app.config import (
    DEFAULT_BLOCK_CAP_SECONDS,
    DEFAULT_CACHE_BUDGET_MIB,
    DEFAULT_DATA_DIR,
    DEFAULT_GRACE_SECONDS,
    DEFAULT_LISTEN,
    DEFAULT_MAX_MESSAGE_BYTES,
    MIB,
    ServerConfig,
)
from tutor_memory.cli import operations as cli_ops
from tutor_memory.models.fetch import ModelIntegrityError, default_model_dir, fetch_model

log = logging.getLogger("tutor_memory.cli")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tutor-memory", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the gRPC server")
    serve.add_argument("--listen", default=DEFAULT_LISTEN, help="HOST:PORT (default %(default)s)")
    serve.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR, help="data directory")
    serve.add_argument(
        "--tokens", type=Path, help="tokens file (TOML); without it: development mode, loopback"
    )
    serve.add_argument("--model-dir", type=Path, help="where the embedding model was fetched")
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
    serve.add_argument("--max-message-bytes", type=int, default=DEFAULT_MAX_MESSAGE_BYTES)
    serve.add_argument("--grace-seconds", type=float, default=DEFAULT_GRACE_SECONDS)
    serve.add_argument("--log-level", default="INFO")

    fetch = sub.add_parser("fetch-model", help="download and verify the pinned embedding model")
    fetch.add_argument("--model-dir", type=Path, help=f"default: {default_model_dir()}")

    verify = sub.add_parser("verify", help="verify every hash chain in a data directory (offline)")
    verify.add_argument("--data", type=Path, default=DEFAULT_DATA_DIR)

    token = sub.add_parser("token", help="manage bearer tokens")
    token_sub = token.add_subparsers(dest="token_command", required=True)
    token_new = token_sub.add_parser("new", help="make a token and print its tokens-file entry")
    token_new.add_argument("--tenant", required=True)
    token_new.add_argument("--name", help="label shown in logs")
    cli_ops.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "fetch-model":
        path = fetch_model(args.model_dir or default_model_dir())
        print(f"model ready: {path}")
        return 0
    if args.command == "verify":
        return _verify(args.data)
    if args.command == "token":
        return _token_new(args.tenant, args.name)
    if args.command == "ingest":
        return cli_ops.ingest(args)
    if args.command == "consolidate":
        return cli_ops.consolidate(args)
    raise AssertionError(args.command)


def _serve(args: argparse.Namespace) -> int:
    from tutor_memory.api.server import ConfigError, serve

    logs.configure(args.log_level)
    config = ServerConfig(
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
    )
    try:
        asyncio.run(serve(config))
    except (ConfigError, ModelIntegrityError) as exc:
        log.error(f"cannot start: {exc}")
        return 2
    return 0


def _verify(data_dir: Path) -> int:
    from tutor_memory.app.root import open_store
    from tutor_memory.domain.chain import verify_chain

    config = ServerConfig(data_dir=data_dir)
    if not config.database_path.exists():
        print(f"no database at {config.database_path}", file=sys.stderr)
        return 2
    store = open_store(config)
    broken = 0
    try:
        for chain in store.chains():
            result = verify_chain(store.iter_chain(chain))
            name = f"{chain.tenant}/{chain.student}/{chain.subject}"
            if result.first_break is None:
                print(f"ok      {name}: {result.length} episodes, head {result.head_hash.hex()}")
            else:
                broken += 1
                b = result.first_break
                print(f"BROKEN  {name}: seq {b.seq} (episode {b.episode_id}): {b.reason}")
    finally:
        store.close()
    return 1 if broken else 0


def _token_new(tenant: str, name: str | None) -> int:
    token = new_token()
    print(f"token (give it to the caller; it is not stored): {token}")
    print("entry for the tokens file:")
    print("[[tokens]]")
    print(f'tenant = "{tenant}"')
    print(f'sha256 = "{token_sha256(token)}"')
    if name:
        print(f'name = "{name}"')
    return 0
