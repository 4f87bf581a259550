"""`tutor-memory`: the command line (serve, fetch-model, verify, token, ingest, consolidate)."""

from tutor_memory.cli.main import main

__all__ = ["main"]
