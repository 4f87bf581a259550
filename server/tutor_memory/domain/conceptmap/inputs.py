"""What the concept map is computed from: each current file's extraction, and what people taught."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.conceptmap.concept import ExtractedConcept


@dataclass(frozen=True, slots=True)
class FileConcepts:
    """The concepts of one current file version, with the embedding of each concept's name.

    `vectors[i]` is the L2-normalised embedding of `concepts[i].name`: one row per concept.
    """

    file_id: str
    version: int
    concepts: Sequence[ExtractedConcept]
    vectors: npt.NDArray[np.float32]

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.concepts):
            raise ValueError(
                f"file {self.file_id!r} v{self.version}: vectors must have one row per concept "
                f"({len(self.concepts)}), got shape {self.vectors.shape}"
            )


@dataclass(frozen=True, slots=True)
class TaughtNote:
    """A person taught the tutor something about `name` (R4.1): `note` is what they said."""

    name: str
    note: str
