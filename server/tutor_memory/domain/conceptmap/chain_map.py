"""One chain's concept map as the read path uses it: the map, a matcher for the names it spells,
one embedding per node to route a query by meaning, and each file's current fingerprint.

The map is derived data: the file versions' extractions, the `taught` episodes and the right checks
are the record, and `graph.build_map` turns them into the same map every time.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.conceptmap.graph import ConceptMap, TaughtNote
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.conceptmap.teaching import detect_teaching
from tutor_memory.domain.episodes import StoredEpisode

# A query is routed to a concept by meaning from this cosine similarity between the query's
# embedding and the concept name's (multilingual USE). Names are short, so similarities run lower
# than sentence-to-sentence ones: a question about a concept by another wording scores 0.45-0.7
# with its name, unrelated ones stay under 0.35 (checked by hand on the biology fixture course;
# not tuned on evaluation data).
ROUTE_SIMILARITY_MIN = 0.45
# At most this many concepts a query is routed to by meaning (names it spells out always count).
ROUTE_BY_MEANING_MAX = 3


@dataclass(frozen=True, slots=True)
class ChainMap:
    """One chain's map with what routing needs: a name matcher and one vector per node."""

    map: ConceptMap
    matcher: NameMatcher
    # Row i is the embedding of map.nodes[i]'s name.
    vectors: npt.NDArray[np.float32]
    # file_id -> current fingerprint, or None for a file that was removed.
    fingerprints: dict[str, str | None]

    def nbytes(self) -> int:
        """About what the chain's map holds in memory (a cache weighs it by this)."""
        held = self.map.nbytes() + self.matcher.nbytes() + self.vectors.nbytes
        held += sys.getsizeof(self.fingerprints)
        for file_id, fingerprint in self.fingerprints.items():
            held += sys.getsizeof(file_id) + sys.getsizeof(fingerprint)
        return held

    def route(self, query: str, query_vector: npt.NDArray[np.float32] | None) -> list[str]:
        """Names of the concepts a query is about: those it names, then the nearest by meaning."""
        named = self.matcher.find(query)
        routed = dict.fromkeys(named)
        if query_vector is not None and len(self.vectors):
            sims = self.vectors @ query_vector
            for i in np.argsort(-sims)[:ROUTE_BY_MEANING_MAX]:
                if sims[i] < ROUTE_SIMILARITY_MIN:
                    break
                routed.setdefault(self.map.nodes[int(i)].name)
        return list(routed)


def taught_notes(episodes: Sequence[StoredEpisode]) -> list[TaughtNote]:
    """The notes of `taught` episodes, oldest first: the concept is the episode's first concept
    tag (set when the note was routed), the note is re-read from the sentence by today's rules,
    falling back to the summary for an episode a client wrote without a trigger phrase."""
    notes = []
    for ep in episodes:
        teaching = detect_teaching(ep.text) if ep.text else None
        name = ep.concepts[0] if ep.concepts else (teaching.topic if teaching else "")
        if not name:
            continue
        notes.append(TaughtNote(name, teaching.note if teaching else ep.summary))
    return notes
