"""`tutor-memory forget`, `master-key new` and `rotate-master-key`: erasure and the master key,
offline on a SQLite data directory (--data) or a PostgreSQL store (--store).

`forget` is the offline twin of the ForgetStudent RPC, for a stopped server: a running server
keeps the student's vectors and recall tables in memory until it restarts, so while one serves,
erase through the RPC instead. Rotation re-wraps every data key under the new master key in one
transaction (no episode is re-encrypted); stop the server, rotate, start it with the new key.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from tutor_memory.app.config import ServerConfig
from tutor_memory.cli.transfer import add_store_arguments
from tutor_memory.domain.clock import now_us, us_to_datetime
from tutor_memory.domain.errors import TutorMemoryError
from tutor_memory.domain.limits import check_identifier
from tutor_memory.store.masterkey import (
    MasterKeyError,
    load_master_key,
    read_master_key_file,
    write_master_key_file,
)


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    forget = sub.add_parser(
        "forget", help="erase a student (offline, on a stopped server's data directory)"
    )
    add_store_arguments(forget)
    forget.add_argument("--tenant", required=True)
    forget.add_argument("--student", required=True)
    forget.add_argument(
        "--allow-plaintext-history",
        action="store_true",
        help="also erase a student with episodes written before sealing (their words stay in "
        "the ledger; everything else goes)",
    )
    forget.add_argument(
        "--by", help="who asks, recorded with the erasure (default: the operator's login name)"
    )

    master = sub.add_parser("master-key", help="the master key that wraps the data keys")
    master_sub = master.add_subparsers(dest="master_command", required=True)
    new = master_sub.add_parser("new", help="write a new random master key file (mode 0600)")
    new.add_argument("--out", type=Path, required=True)

    rotate = sub.add_parser(
        "rotate-master-key", help="re-wrap every data key under a new master key (offline)"
    )
    add_store_arguments(rotate)
    rotate.add_argument(
        "--master-key-file",
        type=Path,
        help="the current master key (default: as `serve` finds it)",
    )
    rotate.add_argument(
        "--new-master-key-file", type=Path, required=True, help="the key to wrap them with"
    )


def forget(args: argparse.Namespace) -> int:
    from tutor_memory.app.root import ConfigError, open_store

    try:
        check_identifier("--tenant", args.tenant)
        check_identifier("--student", args.student)
    except TutorMemoryError as exc:
        print(f"forget: {exc}", file=sys.stderr)
        return 2
    config = ServerConfig(data_dir=args.data, store=args.store)
    if config.store is None and not config.database_path.exists():
        print(f"forget: no database at {config.database_path}", file=sys.stderr)
        return 2
    # Destroying a data key needs no master key.
    try:
        store = open_store(config, sealing=False)
    except ConfigError as exc:
        print(f"forget: cannot open the store: {exc}", file=sys.stderr)
        return 2
    try:
        outcome = store.erase_student(
            args.tenant,
            args.student,
            by=args.by or f"cli:{getpass.getuser()}",
            at_us=now_us(),
            allow_plaintext_history=args.allow_plaintext_history,
        )
    except TutorMemoryError as exc:
        print(f"forget: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
    e = outcome.erasure
    when = us_to_datetime(e.erased_at_us).isoformat(timespec="seconds")
    if outcome.already_erased:
        print(f"{args.tenant}/{args.student} was already erased at {when} by {e.erased_by}")
        return 0
    print(
        f"erased {args.tenant}/{args.student} at {when}: {e.chains} chains, {e.episodes} "
        "episodes; every chain still verifies"
    )
    if e.plaintext_history_kept:
        print(
            f"{e.plaintext_episodes} episodes were written before sealing: their words stay in "
            "the ledger's rows (the API no longer shows them)"
        )
    return 0


def master_key_new(args: argparse.Namespace) -> int:
    try:
        write_master_key_file(args.out)
    except FileExistsError:
        print(
            f"master-key new: {args.out} exists; a key file is never overwritten", file=sys.stderr
        )
        return 2
    except OSError as exc:
        print(f"master-key new: cannot write {args.out}: {exc}", file=sys.stderr)
        return 2
    print(f"master key written to {args.out} (mode 0600): keep it outside the data directory")
    return 0


def rotate_master_key(args: argparse.Namespace) -> int:
    from tutor_memory.app.root import ConfigError, open_store

    config = ServerConfig(
        data_dir=args.data, store=args.store, master_key_file=args.master_key_file
    )
    if config.store is None and not config.database_path.exists():
        print(f"rotate-master-key: no database at {config.database_path}", file=sys.stderr)
        return 2
    try:
        # Both keys are read before the store is opened, so a wrong path fails first.
        load_master_key(args.data, args.master_key_file)
        new = read_master_key_file(args.new_master_key_file)
    except MasterKeyError as exc:
        print(f"rotate-master-key: {exc}", file=sys.stderr)
        return 2
    try:
        store = open_store(config)
    except ConfigError as exc:
        print(f"rotate-master-key: cannot open the store: {exc}", file=sys.stderr)
        return 2
    try:
        done = store.rewrap_data_keys(new)
    except TutorMemoryError as exc:
        print(f"rotate-master-key: {exc}; nothing was changed", file=sys.stderr)
        return 2
    finally:
        store.close()
    print(
        f"re-wrapped {done} data keys under master key {new.key_id}; start the server with "
        f"--master-key-file {args.new_master_key_file}"
    )
    return 0
