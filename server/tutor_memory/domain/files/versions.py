"""A file as the ledger records it: its fingerprint, the summary line of the `file` episode that
records it, and the version row of a removal (SPEC R1.2, R3.1, R7.4)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from tutor_memory.domain.files.document import Document
from tutor_memory.domain.limits import MAX_FILE_ID_CHARS, MAX_SUMMARY_CHARS, check_identifier
from tutor_memory.domain.records import NewFileVersion

# The `file` episode lists at most this many concept names in its summary line.
SUMMARY_CONCEPTS = 8


def fingerprint(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def file_summary(label: str, document: Document, names: Sequence[str]) -> str:
    """The one-line summary of the `file` episode: the file, its pages, its first concepts."""
    head = f"File {label} ({len(document.pages)} pages)"
    if not names:
        return head[:MAX_SUMMARY_CHARS]
    shown = ", ".join(names[:SUMMARY_CONCEPTS])
    more = f" and {len(names) - SUMMARY_CONCEPTS} more" if len(names) > SUMMARY_CONCEPTS else ""
    return f"{head}: {shown}{more}"[:MAX_SUMMARY_CHARS]


def removal_row(file_id: str, version: int, dim: int) -> NewFileVersion:
    """The version row that records a removal: no fingerprint, no content."""
    return NewFileVersion(
        file_id=file_id,
        version=version,
        fingerprint="",
        filename="",
        kind="removed",
        title="",
        pages=0,
        size_bytes=0,
        extractor="",
        concepts=(),
        name_vectors=np.empty((0, dim), np.float32),
        rejected=(),
        passages=(),
    )


def check_file_id(file_id: str) -> None:
    """A file id: printable, one line, at most MAX_FILE_ID_CHARS (it reaches one-line summaries:
    "File a removed")."""
    check_identifier("file_id", file_id, MAX_FILE_ID_CHARS)
