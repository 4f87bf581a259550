"""The concept map: merging, provenance, assumed prerequisites, bands, centrality, order, text."""

from __future__ import annotations

import json
import math
import zlib

import numpy as np
import numpy.typing as npt
import pytest

from tests.helpers.paths import REPO_ROOT
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.contrast import contrasting, contrasting_words
from tutor_memory.domain.conceptmap.graph import (
    MERGE_SIMILARITY,
    Band,
    ConceptMap,
    ConceptNode,
    FileConcepts,
    Provenance,
    TaughtNote,
    build_map,
)
from tutor_memory.domain.conceptmap.map_text import LINE_MAX_CHARS
from tutor_memory.domain.conceptmap.order import pagerank

# Wide enough that random unit vectors are nearly orthogonal (cosines around +-0.06).
DIM = 256


def axis(i: int) -> npt.NDArray[np.float32]:
    """A unit vector along axis i: concepts on different axes are unrelated (cosine 0)."""
    vector = np.zeros(DIM, dtype=np.float32)
    vector[i] = 1.0
    return vector


def tilted(i: int, j: int, cosine: float) -> npt.NDArray[np.float32]:
    """A unit vector whose cosine with axis(i) is `cosine`, leaning towards axis(j)."""
    vector = np.zeros(DIM, dtype=np.float32)
    vector[i] = cosine
    vector[j] = math.sqrt(1.0 - cosine**2)
    return vector


def concept(
    name: str,
    summary: str = "",
    definition: str = "",
    builds_on: tuple[str, ...] = (),
    pages: tuple[int, ...] = (),
) -> ExtractedConcept:
    return ExtractedConcept(name, summary, definition, builds_on, pages)


def random_unit(name: str) -> npt.NDArray[np.float32]:
    """The same unit vector for the same name (case-insensitively), unrelated to other names'."""
    vector = np.random.default_rng(zlib.crc32(name.casefold().encode())).normal(size=DIM)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def file(
    file_id: str,
    *concepts: ExtractedConcept,
    vectors: list[npt.NDArray[np.float32]] | None = None,
    version: int = 1,
) -> FileConcepts:
    """A file of concepts; unless vectors are given, names are unrelated by embedding."""
    if vectors is None:
        vectors = [random_unit(c.name) for c in concepts]
    matrix = np.stack(vectors) if vectors else np.zeros((0, DIM), np.float32)
    return FileConcepts(file_id, version, concepts, matrix.astype(np.float32))


def unrelated(file_id: str, *concepts: ExtractedConcept) -> FileConcepts:
    """A file whose concepts merge with others by key only, never by embedding."""
    return file(file_id, *concepts)


def build(
    *files: FileConcepts,
    taught: tuple[TaughtNote, ...] = (),
    confirmed: frozenset[str] = frozenset(),
) -> ConceptMap:
    return build_map(list(files), list(taught), set(confirmed), str.casefold)


def names(concept_map: ConceptMap) -> set[str]:
    return {node.name for node in concept_map.nodes}


def node(concept_map: ConceptMap, key: str) -> ConceptNode:
    found = concept_map.node_by_key(key)
    assert found is not None, f"no node {key!r}"
    return found


# --- merging and provenance (R3.3) ------------------------------------------------------------


def test_same_key_in_two_files_is_one_node_with_both_files_in_its_provenance() -> None:
    concept_map = build(
        unrelated("ch1", concept("Osmosis", "Water diffuses.", pages=(6, 9))),
        unrelated("ch3", concept("osmosis", "Water moves again.", pages=(2,))),
    )
    (osmosis,) = concept_map.nodes
    assert osmosis.name == "Osmosis"
    assert osmosis.provenance == (
        Provenance("ch1", 1, (6, 9)),
        Provenance("ch3", 1, (2,)),
    )


def test_merge_by_similar_vector_joins_names_with_different_keys() -> None:
    membrane = concept("cell membrane", "The cell's boundary.", pages=(2,))
    plasma = concept("plasma membrane", "The same boundary.", pages=(5,))
    concept_map = build(
        file("a", membrane, vectors=[axis(0)]),
        file("b", plasma, vectors=[tilted(0, 1, MERGE_SIMILARITY + 0.01)]),
    )
    (merged,) = concept_map.nodes
    assert merged.name == "cell membrane"
    assert merged.aliases == ("plasma membrane",)
    assert concept_map.node_by_key("plasma membrane") is merged
    assert [p.file_id for p in merged.provenance] == ["a", "b"]


def test_vector_below_the_threshold_does_not_merge() -> None:
    concept_map = build(
        file("a", concept("mitosis", "Division."), vectors=[axis(0)]),
        file("b", concept("meiosis", "Other division."), vectors=[tilted(0, 1, 0.85)]),
    )
    assert names(concept_map) == {"mitosis", "meiosis"}


def test_threshold_is_inclusive_and_can_be_passed() -> None:
    files = [
        file("a", concept("x", "X."), vectors=[axis(0)]),
        file("b", concept("y", "Y."), vectors=[tilted(0, 1, 0.75)]),
    ]
    assert len(build_map(files, [], set(), str.casefold, merge_threshold=0.74)) == 1
    assert len(build_map(files, [], set(), str.casefold, merge_threshold=0.76)) == 2


def test_representative_vector_is_the_founders_so_chains_do_not_drift() -> None:
    # b is close to a, c is close to b but not to a: c must not join through b.
    b_vector = tilted(0, 1, 0.90)
    c_vector = np.zeros(DIM, dtype=np.float32)
    c_vector[:2] = np.array([0.62, 0.78]) / np.hypot(0.62, 0.78)
    assert float(b_vector @ c_vector) >= MERGE_SIMILARITY
    assert float(axis(0) @ c_vector) < MERGE_SIMILARITY
    concept_map = build(
        file(
            "f",
            concept("a", "A."),
            concept("b", "B."),
            concept("c", "C."),
            vectors=[axis(0), b_vector, c_vector],
        )
    )
    assert sorted(len(n.aliases) for n in concept_map.nodes) == [0, 1]
    assert names(concept_map) == {"a", "c"}


def test_two_names_of_one_concept_in_one_file_share_one_provenance_entry() -> None:
    concept_map = build(
        file(
            "ch1",
            concept("Cell Membrane", "Boundary.", pages=(2,)),
            concept("CELL MEMBRANE", "Boundary.", pages=(9, 2)),
        )
    )
    (membrane,) = concept_map.nodes
    assert membrane.provenance == (Provenance("ch1", 1, (2, 9)),)


def test_summary_and_definition_are_the_first_non_empty_ones() -> None:
    concept_map = build(
        unrelated("a", concept("Osmosis", "", "Definition from a.")),
        unrelated("b", concept("Osmosis", "Summary from b.", "Definition from b.")),
    )
    (osmosis,) = concept_map.nodes
    assert (osmosis.summary, osmosis.definition) == ("Summary from b.", "Definition from a.")


def test_vectors_must_have_one_row_per_concept() -> None:
    with pytest.raises(ValueError, match="one row per concept"):
        FileConcepts("f", 1, [concept("a")], np.zeros((2, DIM), np.float32))


# --- the contrast guard (R3.3) ----------------------------------------------------------------

PAIRS_FILE = REPO_ROOT / "bench" / "merge_pairs.json"

# The distinct concepts the similarity merge joined on the bundled embedder (bench, cosine >= 0.86).
MERGED_OPPOSITES = [
    ("prokaryotic cell", "eukaryotic cell"),
    ("endocytosis", "exocytosis"),
    ("endosymbiosis", "symbiosis"),
    ("aerobic respiration", "anaerobic respiration"),
    ("active transport", "passive transport"),
    ("hypotonic solution", "hypertonic solution"),
]


def bench_pairs(label: str) -> list[tuple[str, str]]:
    data = json.loads(PAIRS_FILE.read_text(encoding="utf-8"))
    return [(str(a), str(b)) for a, b, _ in data[label]]


@pytest.mark.parametrize(("a", "b"), MERGED_OPPOSITES)
def test_opposites_the_embedding_merges_are_contrasts_both_ways(a: str, b: str) -> None:
    assert contrasting(a, b)
    assert contrasting(b, a)


@pytest.mark.parametrize(("a", "b"), bench_pairs("same"))
def test_no_two_names_of_one_concept_in_the_bench_are_contrasts(a: str, b: str) -> None:
    assert not contrasting(a.casefold(), b.casefold())


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("diffusion", "difusion"),  # heads "dif" / "di": one letter apart
        ("osmosis", "ósmosis"),  # heads "o" / "ó"
        ("transporte activo", "trasporto attivo"),  # "act" / "att"
        ("photosynthesis", "fotosíntesis"),  # shared "esis", heads of 10 and 8 letters
        ("cell", "cellular"),  # no shared ending
        ("nucleus", "cell nucleus"),  # no word left to pair
        ("haemoglobin", "hemoglobin"),  # "ha" / "h"
        ("atypical", "typical"),  # a one-letter prefix is not told from a spelling
        ("osmosis", "reverse osmosis"),  # a separate qualifying word is not caught
        ("hydrophobic", "hydrophilic"),  # nor an opposite ending
    ],
)
def test_spellings_and_what_the_guard_does_not_catch_are_not_contrasts(a: str, b: str) -> None:
    assert not contrasting(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("intracellular", "extracellular"),
        ("homozygous", "heterozygous"),
        ("prophase", "metaphase"),
        ("trasporto attivo", "trasporto passivo"),
        # Documented cost: a two-letter transliteration looks like another prefix.
        ("fotosynthese", "photosynthese"),
    ],
)
def test_other_prefix_variants_are_contrasts(a: str, b: str) -> None:
    assert contrasting(a, b)


def test_contrasting_words_needs_a_shared_ending_of_three_letters() -> None:
    assert contrasting_words("abxyz", "cdxyz")
    assert not contrasting_words("abcxy", "defxy")
    assert not contrasting_words("osmosis", "osmosis")


def test_contrasting_words_needs_heads_of_at_most_five_letters() -> None:
    assert contrasting_words("abcdeosis", "vwxyzosis")
    assert not contrasting_words("abcdefosis", "vwxyzosis")


def test_similar_vectors_do_not_merge_contrasting_names() -> None:
    concept_map = build(
        file("a", concept("active transport", "Uses energy."), vectors=[axis(0)]),
        file("b", concept("passive transport", "Uses none."), vectors=[tilted(0, 1, 0.99)]),
    )
    assert names(concept_map) == {"active transport", "passive transport"}


def test_the_guard_checks_every_key_of_the_node_not_only_the_founders() -> None:
    concept_map = build(
        file(
            "f",
            concept("active transport", "A."),
            concept("trasporto attivo", "A."),
            concept("trasporto passivo", "P."),
            vectors=[axis(0), tilted(0, 1, 0.95), tilted(0, 2, 0.95)],
        )
    )
    active = node(concept_map, "active transport")
    assert active.aliases == ("trasporto attivo",)
    assert node(concept_map, "trasporto passivo") is not active


def test_a_contrasting_nearest_node_is_skipped_for_the_next_one_above_the_threshold() -> None:
    # The embedding puts "passive transport" nearer its opposite than its translation.
    active, italian, passive = axis(0), tilted(0, 1, 0.80), tilted(0, 1, 0.966)
    assert float(passive @ active) > float(passive @ italian) >= MERGE_SIMILARITY
    concept_map = build(
        file(
            "f",
            concept("active transport", "A."),
            concept("trasporto passivo", "P."),
            concept("passive transport", "P."),
            vectors=[active, italian, passive],
        )
    )
    assert len(concept_map) == 2
    assert node(concept_map, "passive transport") is node(concept_map, "trasporto passivo")


def test_key_equality_merges_whatever_the_guard_would_say() -> None:
    def last_word(name: str) -> str:
        return name.split()[-1].casefold()

    files = [
        unrelated("a", concept("active transport", "A.")),
        unrelated("b", concept("passive transport", "P.")),
    ]
    assert len(build_map(files, [], set(), last_word)) == 1


# --- edges and assumed prerequisites (R3.4) ---------------------------------------------------


def test_eleven_concepts_assuming_23_prerequisites_once_each_stay_11_nodes() -> None:
    assumed = [f"prerequisite {i}" for i in range(23)]
    concepts = [
        concept(f"concept {i}", f"Summary {i}.", builds_on=tuple(assumed[i::11])) for i in range(11)
    ]
    concept_map = build(unrelated("regulation", *concepts))
    assert len(concept_map.nodes) == 11
    assert concept_map.edges == ()
    recorded = [name for n in concept_map.nodes for name in n.assumed]
    assert sorted(recorded) == sorted(assumed)
    assert node(concept_map, "concept 0").assumed == (
        "prerequisite 0",
        "prerequisite 11",
        "prerequisite 22",
    )


def test_prerequisite_assumed_by_two_concepts_becomes_a_named_node() -> None:
    concept_map = build(
        unrelated(
            "ch1",
            concept("Diffusion", "Spreading.", builds_on=("Concentration Gradient",)),
            concept("Active Transport", "Against it.", builds_on=("concentration gradient",)),
        )
    )
    gradient = concept_map.node_by_key("concentration gradient")
    assert gradient is not None
    assert gradient.name == "Concentration Gradient"
    assert gradient.band is Band.NAMED
    assert gradient.readiness == 0.35
    assert gradient.provenance == ()
    assert {(e.prerequisite, e.concept) for e in concept_map.edges} == {
        ("concentration gradient", "diffusion"),
        ("concentration gradient", "active transport"),
    }
    assert all(not n.assumed for n in concept_map.nodes)


def test_one_concept_assuming_a_name_in_two_files_is_still_one_case() -> None:
    concept_map = build(
        unrelated("a", concept("Mitochondria", "Energy.", builds_on=("Glucose",))),
        unrelated("b", concept("Mitochondria", "Energy.", builds_on=("glucose",))),
    )
    (mitochondria,) = concept_map.nodes
    assert mitochondria.assumed == ("Glucose",)


def test_builds_on_within_a_file_makes_an_edge_from_prerequisite_to_concept() -> None:
    concept_map = build(
        unrelated(
            "ch1",
            concept("Osmosis", "Water.", builds_on=("Diffusion", "cell membrane")),
            concept("Diffusion", "Spreading."),
            concept("Cell Membrane", "Boundary."),
        )
    )
    assert {(e.prerequisite, e.concept, e.weight) for e in concept_map.edges} == {
        ("diffusion", "osmosis", 1),
        ("cell membrane", "osmosis", 1),
    }
    osmosis = concept_map.node_by_key("osmosis")
    assert osmosis is not None
    assert set(osmosis.prerequisites) == {"Diffusion", "Cell Membrane"}


def test_builds_on_a_concept_explained_by_another_file_makes_an_edge() -> None:
    concept_map = build(
        unrelated("ch2", concept("Mitochondria", "Energy.", builds_on=("Cytoplasm",))),
        unrelated("ch1", concept("Cytoplasm", "Gel.")),
    )
    assert [(e.prerequisite, e.concept) for e in concept_map.edges] == [
        ("cytoplasm", "mitochondria")
    ]
    assert all(not n.assumed for n in concept_map.nodes)


def test_builds_on_a_taught_concept_makes_an_edge() -> None:
    concept_map = build(
        unrelated("ch1", concept("Osmosis", "Water.", builds_on=("Water Potential",))),
        taught=(TaughtNote("water potential", "we call it the water's push"),),
    )
    assert [(e.prerequisite, e.concept) for e in concept_map.edges] == [
        ("water potential", "osmosis")
    ]


def test_edge_weight_counts_the_files_that_assert_the_link() -> None:
    concept_map = build(
        unrelated("ch1", concept("Osmosis", "W.", builds_on=("Diffusion",)), concept("Diffusion")),
        unrelated("ch3", concept("Osmosis", "W.", builds_on=("diffusion",))),
        unrelated("ch4", concept("Osmosis", "W.", builds_on=("Diffusion", "DIFFUSION"))),
    )
    (edge,) = concept_map.edges
    assert (edge.prerequisite, edge.concept, edge.weight) == ("diffusion", "osmosis", 3)


def test_a_concept_never_builds_on_itself() -> None:
    concept_map = build(
        unrelated("f", concept("Cell Membranes", "B.", builds_on=("cell membranes",)))
    )
    assert concept_map.edges == ()
    assert concept_map.nodes[0].assumed == ()


# --- readiness bands (R3.5) and teaching (R4.1, R4.2) -----------------------------------------


def test_bands_named_explained_confirmed_taught() -> None:
    concept_map = build(
        unrelated(
            "f",
            concept("Named"),
            concept("Explained", "", "A definition."),
            concept("Confirmed", "A summary."),
            concept("Taught", "A summary."),
        ),
        taught=(TaughtNote("taught", "as we say in class"),),
        confirmed=frozenset({"confirmed", "taught", "not in the map"}),
    )
    bands = {n.name: (n.band, n.readiness) for n in concept_map.nodes}
    assert bands == {
        "Named": (Band.NAMED, 0.35),
        "Explained": (Band.EXPLAINED, 0.60),
        "Confirmed": (Band.CONFIRMED, 0.85),
        "Taught": (Band.TAUGHT, 1.0),
    }


def test_confirmation_by_an_alias_key_counts() -> None:
    concept_map = build(
        file("a", concept("cell membrane", "B."), vectors=[axis(0)]),
        file("b", concept("plasma membrane", "B."), vectors=[axis(0)]),
        confirmed=frozenset({"plasma membrane"}),
    )
    assert concept_map.nodes[0].band is Band.CONFIRMED


def test_taught_note_attaches_to_the_node_with_its_key_and_shows_in_its_line() -> None:
    concept_map = build(
        unrelated(
            "ch2",
            concept(
                "Mitochondria",
                "Mitochondria release energy from glucose.",
                builds_on=("Cytoplasm",),
            ),
            concept("Cytoplasm", "Cytoplasm is the gel-like substance inside the cell membrane."),
        ),
        taught=(
            TaughtNote(
                "mitochondria", "in our class we call the mitochondria the powerhouse of the cell"
            ),
        ),
    )
    mitochondria = concept_map.node_by_key("mitochondria")
    assert mitochondria is not None
    assert mitochondria.band is Band.TAUGHT
    assert len(concept_map.nodes) == 2
    assert concept_map.line(mitochondria) == (
        "- Mitochondria: Mitochondria release energy from glucose. [taught: in our class we call "
        "the mitochondria the powerhouse of the cell] (builds on: Cytoplasm)"
    )


def test_taught_note_naming_no_concept_creates_a_taught_node_of_that_name() -> None:
    concept_map = build(
        unrelated("ch1", concept("Osmosis", "Water.")),
        taught=(
            TaughtNote("Turgor", "turgor is what keeps the plant upright"),
            TaughtNote("turgor", "and it is lost when the plant wilts"),
        ),
    )
    turgor = concept_map.node_by_key("turgor")
    assert turgor is not None
    assert (turgor.name, turgor.band, turgor.provenance) == ("Turgor", Band.TAUGHT, ())
    assert turgor.taught == (
        "turgor is what keeps the plant upright",
        "and it is lost when the plant wilts",
    )
    assert concept_map.line(turgor) == (
        "- Turgor [taught: turgor is what keeps the plant upright; and it is lost when the plant "
        "wilts]"
    )


# --- centrality, subject readiness, header (R3.5, R3.6) ---------------------------------------


def _hub_course() -> FileConcepts:
    """Cell Membrane is a prerequisite of four concepts; Osmosis also builds on Diffusion."""
    return unrelated(
        "course",
        concept("Osmosis", "O.", builds_on=("Cell Membrane", "Diffusion")),
        concept("Cytoplasm", "C.", builds_on=("Cell Membrane",)),
        concept("Cell Wall", "W.", builds_on=("Cell Membrane",)),
        concept("Active Transport", "A.", builds_on=("Cell Membrane",)),
        concept("Diffusion", "D."),
        concept("Cell Membrane", "M."),
    )


def test_the_prerequisite_everything_builds_on_is_the_most_central() -> None:
    concept_map = build(_hub_course())
    ranked = sorted(concept_map.nodes, key=lambda n: -n.centrality)
    assert ranked[0].name == "Cell Membrane"
    assert ranked[1].name == "Diffusion"
    assert math.isclose(sum(n.centrality for n in concept_map.nodes), 1.0)


def test_pagerank_ranks_the_hub_first_sums_to_one_and_repeats_exactly() -> None:
    # Node 5 is a prerequisite of 0, 1, 2 and 3, with the heaviest link to 3; 4 only of 0.
    links = {(5, 0): 2, (4, 0): 1, (5, 1): 1, (5, 2): 1, (5, 3): 3, (0, 3): 1}
    scores = pagerank(6, links)
    assert max(range(6), key=scores.__getitem__) == 5
    # 1, 2 and 3 are prerequisites of nothing: they get only the teleport share.
    assert scores[1] == scores[2] == scores[3] == min(scores)
    assert math.isclose(sum(scores), 1.0)
    assert pagerank(6, links) == scores
    assert pagerank(6, dict(reversed(links.items()))) == scores


def test_pagerank_of_no_links_is_uniform_and_of_no_nodes_is_empty() -> None:
    assert pagerank(4, {}) == pytest.approx([0.25] * 4)
    assert pagerank(0, {}) == []


def test_hubs_come_first_within_a_layer_and_prerequisites_before_dependents() -> None:
    concept_map = build(_hub_course())
    assert concept_map.teaching_order[:2] == ("Cell Membrane", "Diffusion")
    layers = {n.name: n.layer for n in concept_map.nodes}
    assert layers == {
        "Cell Membrane": 0,
        "Diffusion": 0,
        "Osmosis": 1,
        "Active Transport": 1,
        "Cell Wall": 1,
        "Cytoplasm": 1,
    }
    # Osmosis and the three leaves share layer 1 and centrality: ties go by name.
    assert concept_map.teaching_order[2:] == (
        "Active Transport",
        "Cell Wall",
        "Cytoplasm",
        "Osmosis",
    )


def test_layer_is_one_more_than_the_deepest_prerequisite() -> None:
    concept_map = build(
        unrelated(
            "f",
            concept("Endosymbiosis", "E.", builds_on=("Mitochondria", "Cytoplasm")),
            concept("Mitochondria", "M.", builds_on=("Cytoplasm",)),
            concept("Cytoplasm", "C.", builds_on=("Cell Membrane",)),
            concept("Cell Membrane", "B."),
        )
    )
    assert [(n.name, n.layer) for n in concept_map.nodes] == [
        ("Cell Membrane", 0),
        ("Cytoplasm", 1),
        ("Mitochondria", 2),
        ("Endosymbiosis", 3),
    ]


def test_cycles_are_condensed_placed_as_one_unit_and_reported() -> None:
    concept_map = build(
        unrelated(
            "f",
            concept("Photosynthesis", "P.", builds_on=("Respiration",)),
            concept("Respiration", "R.", builds_on=("Photosynthesis", "Glucose Basics")),
            concept("Glucose Basics", "G."),
            concept("Carbon Cycle", "C.", builds_on=("Photosynthesis",)),
        )
    )
    assert len(concept_map.cycles) == 1
    assert set(concept_map.cycles[0]) == {"Photosynthesis", "Respiration"}
    layers = {n.name: n.layer for n in concept_map.nodes}
    assert layers == {"Glucose Basics": 0, "Photosynthesis": 1, "Respiration": 1, "Carbon Cycle": 2}
    assert concept_map.teaching_order[0] == "Glucose Basics"
    assert concept_map.teaching_order[-1] == "Carbon Cycle"
    # Inside the cycle, the more central member first.
    inside = [n for n in concept_map.nodes if n.name in concept_map.cycles[0]]
    assert inside[0].centrality >= inside[1].centrality
    assert tuple(n.name for n in inside) == concept_map.cycles[0]


def test_subject_readiness_weighs_an_unexplained_hub_more_than_a_leaf() -> None:
    def readiness(unexplained: str) -> float:
        concepts = [
            concept(name, "" if name == unexplained else "Explained.", builds_on=deps)
            for name, deps in [
                ("Hub", ()),
                ("Leaf A", ("Hub",)),
                ("Leaf B", ("Hub",)),
                ("Leaf C", ("Hub",)),
            ]
        ]
        return build(unrelated("f", *concepts)).subject_readiness

    assert readiness("Hub") < readiness("Leaf A") < 0.60


def test_subject_readiness_is_the_centrality_weighted_mean() -> None:
    concept_map = build(_hub_course(), confirmed=frozenset({"osmosis"}))
    expected = sum(n.centrality * n.readiness for n in concept_map.nodes) / sum(
        n.centrality for n in concept_map.nodes
    )
    assert math.isclose(concept_map.subject_readiness, expected)


def test_header_says_the_number_is_about_the_material() -> None:
    concept_map = build(unrelated("f", *(concept(f"C{i}", "S.") for i in range(16))))
    assert concept_map.header() == (
        "SUBJECT MAP (16 concepts; the files explain 60% of it, this is about the material, "
        "NOT the student's mastery):"
    )


def test_empty_map_has_a_truthful_header() -> None:
    concept_map = build()
    assert len(concept_map) == 0
    assert concept_map.subject_readiness == 0.0
    assert concept_map.header().startswith("SUBJECT MAP (0 concepts; the files explain 0% of it")


def test_a_single_concept_is_singular_in_the_header() -> None:
    assert (
        build(unrelated("f", concept("Osmosis")))
        .header()
        .startswith("SUBJECT MAP (1 concept; the files explain 35% of it")
    )


# --- lines ------------------------------------------------------------------------------------


def test_line_without_summary_or_prerequisites_is_just_the_name() -> None:
    concept_map = build(unrelated("f", concept("Osmosis")))
    assert concept_map.line(concept_map.nodes[0]) == "- Osmosis"


def test_long_line_is_capped_and_cut_at_a_word_keeping_the_prerequisites() -> None:
    summary = " ".join(["Osmosis moves water across membranes"] * 20) + "."
    note = " ".join(["in class we say water chases salt"] * 10)
    concept_map = build(
        unrelated(
            "f",
            concept("Osmosis", summary, builds_on=("Diffusion",)),
            concept("Diffusion", "D."),
        ),
        taught=(TaughtNote("osmosis", note),),
    )
    osmosis = concept_map.node_by_key("osmosis")
    assert osmosis is not None
    line = concept_map.line(osmosis)
    assert len(line) <= LINE_MAX_CHARS
    assert line.startswith("- Osmosis: Osmosis moves water")
    assert "… [taught: in class we say water chases salt" in line
    assert line.endswith("…] (builds on: Diffusion)")
    # Cuts fall between words: every clipped word is whole.
    words = set(summary.split()) | set(note.split()) | {"…"}
    body = line.removeprefix("- Osmosis: ").split(" (builds on")[0]
    for word in body.replace("[taught:", " ").replace("]", " ").replace("…", " … ").split():
        assert word in words


# --- lookups ----------------------------------------------------------------------------------


def test_prerequisites_of_lists_direct_ones_first_then_theirs() -> None:
    concept_map = build(
        unrelated(
            "f",
            concept("Endosymbiosis", "E.", builds_on=("Mitochondria", "Chloroplasts")),
            concept("Mitochondria", "M.", builds_on=("Cytoplasm",)),
            concept("Chloroplasts", "C.", builds_on=("Cytoplasm",)),
            concept("Cytoplasm", "Y.", builds_on=("Cell Membrane",)),
            concept("Cell Membrane", "B."),
        )
    )
    review = [n.name for n in concept_map.prerequisites_of("endosymbiosis")]
    assert set(review[:2]) == {"Mitochondria", "Chloroplasts"}
    assert review[2:] == ["Cytoplasm", "Cell Membrane"]
    assert [n.name for n in concept_map.prerequisites_of("endosymbiosis", limit=3)] == review[:3]
    assert concept_map.prerequisites_of("cell membrane") == []


def test_prerequisites_of_an_unknown_key_raises() -> None:
    with pytest.raises(KeyError, match="photosynthesis"):
        build(unrelated("f", concept("Osmosis"))).prerequisites_of("photosynthesis")


def test_node_by_key_returns_none_for_an_unknown_key() -> None:
    assert build(unrelated("f", concept("Osmosis"))).node_by_key("diffusion") is None


def test_the_same_inputs_always_give_the_same_map() -> None:
    first, second = build(_hub_course()), build(_hub_course())
    assert first.nodes == second.nodes
    assert first.edges == second.edges
    assert first.header() == second.header()


def test_a_long_prerequisite_list_is_shortened_with_an_ellipsis() -> None:
    prerequisites = tuple(f"Prerequisite Concept Number {i}" for i in range(12))
    concept_map = build(
        unrelated(
            "f",
            concept("Ecology", "Everything together.", builds_on=prerequisites),
            *(concept(name, "P.") for name in prerequisites),
        )
    )
    ecology = concept_map.node_by_key("ecology")
    assert ecology is not None
    line = concept_map.line(ecology)
    assert len(line) <= LINE_MAX_CHARS
    assert line.startswith("- Ecology: Everything together. (builds on: Prerequisite Concept")
    assert line.endswith(", …)")
