"""Readiness bands (SPEC R3.5): how well the material covers a concept, in four steps."""

from __future__ import annotations

import enum


class Band(enum.Enum):
    """Where a concept stands; each band has one readiness number, in BAND_READINESS."""

    NAMED = "named"  # a file or two concepts mention it, nothing explains it
    EXPLAINED = "explained"  # a file explains it (a summary or a definition)
    CONFIRMED = "confirmed"  # a check on it passed
    TAUGHT = "taught"  # a person taught it (R4)

    @property
    def readiness(self) -> float:
        return BAND_READINESS[self]


# Readiness of each band, from the design document. The bands are about the material, not about
# the student: "confirmed" means a check showed the material works, not that the student masters it.
BAND_READINESS: dict[Band, float] = {
    Band.NAMED: 0.35,
    Band.EXPLAINED: 0.60,
    Band.CONFIRMED: 0.85,
    Band.TAUGHT: 1.0,
}
