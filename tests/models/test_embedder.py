"""The multilingual USE v3 ONNX embedder, run against the real model."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from tutor_memory.models.embedder import EMBED_MAX_CHARS, Embedder, UseOnnxEmbedder
from tutor_memory.models.fetch import (
    MODEL_FILE_NAME,
    MODEL_SHA256,
    ModelIntegrityError,
    default_model_dir,
    fetch_model,
)

DIM = 512

# The same sentence in English, Italian, Spanish and Arabic, for five unrelated
# topics. Measured with the pinned model (all pairs within a topic vs all pairs
# across topics): the lowest same-meaning cosine was 0.52 (Arabic vs Spanish,
# quadratic formula), the highest cross-topic cosine 0.25 (French Revolution vs
# train to Rome); the means were 0.79 and 0.09.
PARAPHRASES: dict[str, list[str]] = {
    "mitochondria": [
        "The mitochondria is the powerhouse of the cell",
        "Il mitocondrio è la centrale energetica della cellula",
        "La mitocondria es la central energética de la célula",
        "الميتوكوندريا هي مصنع الطاقة في الخلية",
    ],
    "revolution": [
        "The French Revolution began in 1789",
        "La Rivoluzione francese iniziò nel 1789",
        "La Revolución Francesa comenzó en 1789",
        "بدأت الثورة الفرنسية عام 1789",
    ],
    "quadratic": [
        "To solve a quadratic equation you can use the quadratic formula",
        "Per risolvere un'equazione quadratica puoi usare la formula quadratica",
        "Para resolver una ecuación cuadrática puedes usar la fórmula cuadrática",
        "لحل المعادلة التربيعية يمكنك استخدام الصيغة التربيعية",
    ],
    "train": [
        "The train to Rome leaves at nine in the morning",
        "Il treno per Roma parte alle nove del mattino",
        "El tren a Roma sale a las nueve de la mañana",
        "يغادر القطار إلى روما في الساعة التاسعة صباحا",
    ],
    "dog": [
        "My dog loves playing in the snow",
        "Al mio cane piace giocare sulla neve",
        "A mi perro le encanta jugar en la nieve",
        "كلبي يحب اللعب في الثلج",
    ],
}

# Required gap between the worst paraphrase and the best unrelated pair
# (measured gap: 0.27).
CROSS_LINGUAL_MARGIN = 0.2


@pytest.fixture(scope="module")
def embedder() -> UseOnnxEmbedder:
    return UseOnnxEmbedder(fetch_model(default_model_dir()))


def _assert_unit_rows(vectors: npt.NDArray[np.float32]) -> None:
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_embedder_satisfies_protocol_with_stable_model_id(embedder: UseOnnxEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.dim == DIM
    assert embedder.model_id == f"use-multilingual-v3-int8@{MODEL_SHA256[:8]}"


def test_embed_returns_contiguous_float32_unit_rows(embedder: UseOnnxEmbedder) -> None:
    vectors = embedder.embed(["What is a fraction?", "Photosynthesis needs light."])

    assert vectors.shape == (2, DIM)
    assert vectors.dtype == np.float32
    assert vectors.flags.c_contiguous
    assert np.isfinite(vectors).all()
    _assert_unit_rows(vectors)


def test_embed_of_empty_sequence_has_shape_zero_by_dim(embedder: UseOnnxEmbedder) -> None:
    vectors = embedder.embed([])

    assert vectors.shape == (0, DIM)
    assert vectors.dtype == np.float32


def test_embed_handles_empty_and_blank_strings(embedder: UseOnnxEmbedder) -> None:
    vectors = embedder.embed(["", "   ", "a real sentence", ""])

    assert vectors.shape == (4, DIM)
    assert np.isfinite(vectors).all()
    _assert_unit_rows(vectors)


def test_embed_of_150_texts_spans_batches_and_keeps_order(embedder: UseOnnxEmbedder) -> None:
    topics = ["fractions", "cell division", "past tense verbs", "gravity", "sonnets"]
    texts = [f"Question {i} about {topics[i % len(topics)]}" for i in range(150)]

    vectors = embedder.embed(texts)

    assert vectors.shape == (150, DIM)
    _assert_unit_rows(vectors)
    # Row i is the embedding of text i, whichever 64-text batch it ran in
    # (padding within a batch perturbs vectors slightly, hence the tolerance).
    for i in (0, 63, 64, 127, 128, 149):
        alone = embedder.embed([texts[i]])[0]
        assert float(vectors[i] @ alone) > 0.995


def test_embed_is_deterministic_for_the_same_input(embedder: UseOnnxEmbedder) -> None:
    text = ["The derivative of x squared is two x"]

    first = embedder.embed(text)
    second = embedder.embed(text)

    np.testing.assert_array_equal(first, second)


def test_small_batch_size_gives_the_same_vectors_as_one_by_one() -> None:
    small = UseOnnxEmbedder(fetch_model(default_model_dir()), batch_size=1)
    texts = ["one", "two words", "three whole words"]

    batched = small.embed(texts)
    single = np.vstack([small.embed([t]) for t in texts])

    np.testing.assert_array_equal(batched, single)


def test_cross_lingual_paraphrases_score_far_above_unrelated_pairs(
    embedder: UseOnnxEmbedder,
) -> None:
    vectors = {topic: embedder.embed(texts) for topic, texts in PARAPHRASES.items()}

    paraphrase = [
        float(v[i] @ v[j]) for v in vectors.values() for i, j in itertools.combinations(range(4), 2)
    ]
    unrelated = [
        float(np.max(vectors[a] @ vectors[b].T)) for a, b in itertools.combinations(vectors, 2)
    ]

    assert min(paraphrase) > max(unrelated) + CROSS_LINGUAL_MARGIN, (paraphrase, unrelated)


def test_each_translation_retrieves_its_own_english_sentence(embedder: UseOnnxEmbedder) -> None:
    topics = list(PARAPHRASES)
    english = embedder.embed([PARAPHRASES[t][0] for t in topics])

    for expected, topic in enumerate(topics):
        translations = embedder.embed(PARAPHRASES[topic][1:])
        nearest = np.argmax(translations @ english.T, axis=1)
        assert nearest.tolist() == [expected] * 3, topic


def test_concurrent_embed_calls_from_threads_match_serial_results(
    embedder: UseOnnxEmbedder,
) -> None:
    texts = [f"Thread-safety check sentence number {i}" for i in range(16)]
    serial = [embedder.embed([t]) for t in texts]

    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda t: embedder.embed([t]), texts))

    for a, b in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(a, b)


def test_only_a_texts_first_characters_reach_the_model(embedder: UseOnnxEmbedder) -> None:
    # The attention's cost is quadratic in the pieces: a hostile text longer than the cap costs
    # what the cap costs, and its vector is that of its beginning.
    head = "Osmosis moves water across a membrane. " * (EMBED_MAX_CHARS // 39 + 1)
    head = head[:EMBED_MAX_CHARS]
    long = head + " Photosynthesis happens in the chloroplast." * 100
    np.testing.assert_array_equal(embedder.embed([long]), embedder.embed([head]))
    assert not np.array_equal(embedder.embed([head[:-50]]), embedder.embed([head]))


def test_embed_rejects_a_bare_string(embedder: UseOnnxEmbedder) -> None:
    with pytest.raises(TypeError, match="sequence of strings"):
        embedder.embed("not a list")


def test_embedder_refuses_a_corrupt_model_file(tmp_path: Path) -> None:
    bad = tmp_path / MODEL_FILE_NAME
    bad.write_bytes(b"\x08\x07garbage")

    with pytest.raises(ModelIntegrityError, match=MODEL_SHA256):
        UseOnnxEmbedder(bad)


def test_embedder_refuses_a_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(ModelIntegrityError, match="missing"):
        UseOnnxEmbedder(tmp_path / MODEL_FILE_NAME)
