"""Self-verification of cited files: a lookup, not a model call (SPEC R7.4).

An episode's evidence records each cited file with its fingerprint (content hash) at that moment.
Verifying it later compares those fingerprints with the files' current ones:

- HOLDS: every cited file is still there with the fingerprint it had;
- CHANGED_REPLACED / CHANGED_REMOVED: at least one cited file now has another fingerprint
  (replaced) or no current version at all (removed); removed wins when both happened, as the
  stronger change;
- UNVERIFIABLE: the memory cites no file (a conversation, a check). A first-class result, not an
  error, and never HOLDS: calling a conversation "holds" would be the real defect.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# The label a recalled episode whose cited file changed carries into the block (R7.4, verbatim).
BLOCK_NOTE = "[note: the file cited here has since been replaced or removed]"


class CitationStatus(enum.Enum):
    """The verdict on one episode's citations. Values are stored."""

    HOLDS = "holds"
    CHANGED_REPLACED = "changed: replaced"
    CHANGED_REMOVED = "changed: removed"
    UNVERIFIABLE = "unverifiable"

    @property
    def changed(self) -> bool:
        """Whether the block must label the episode with BLOCK_NOTE."""
        return self in (CitationStatus.CHANGED_REPLACED, CitationStatus.CHANGED_REMOVED)


@dataclass(frozen=True, slots=True)
class CitationVerdict:
    status: CitationStatus
    # One sentence naming the files: "bio-1 was replaced; chem-2 was removed".
    detail: str


def _names(file_ids: Sequence[str]) -> str:
    return ", ".join(file_ids)


def verify_citations(
    cited: Sequence[tuple[str, str]], current: Mapping[str, str | None]
) -> CitationVerdict:
    """The verdict on an episode citing `cited` (file_id, fingerprint at the time) pairs, given
    each file's `current` fingerprint (None, or no entry, when the file has no current version).

    A file cited twice (two pages) is judged once per recorded fingerprint.
    """
    pairs = list(dict.fromkeys(cited))
    if not pairs:
        return CitationVerdict(
            CitationStatus.UNVERIFIABLE, "cites no file (a conversation or a check)"
        )
    removed = list(dict.fromkeys(f for f, _ in pairs if current.get(f) is None))
    replaced = list(
        dict.fromkeys(f for f, fp in pairs if (now := current.get(f)) is not None and now != fp)
    )
    if not removed and not replaced:
        files = list(dict.fromkeys(f for f, _ in pairs))
        which = "the cited file is" if len(files) == 1 else f"all {len(files)} cited files are"
        return CitationVerdict(CitationStatus.HOLDS, f"{which} unchanged: {_names(files)}")
    parts = []
    if replaced:
        parts.append(f"{_names(replaced)} {'was' if len(replaced) == 1 else 'were'} replaced")
    if removed:
        parts.append(f"{_names(removed)} {'was' if len(removed) == 1 else 'were'} removed")
    status = CitationStatus.CHANGED_REMOVED if removed else CitationStatus.CHANGED_REPLACED
    return CitationVerdict(status, "; ".join(parts))
