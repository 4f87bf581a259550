"""Text embedding backends.

The default (and only) backend runs Google's multilingual Universal Sentence
Encoder v3 as an int8 ONNX graph (see :mod:`tutor_memory.model_fetch`). The
SentencePiece tokenizer is part of the graph, so raw strings go in and 512-d,
L2-normalised float32 vectors come out.

Threading: the server calls :meth:`Embedder.embed` from gRPC worker threads,
concurrently and without a lock. That is safe for :class:`UseOnnxEmbedder`:
``onnxruntime.InferenceSession.run`` is thread-safe and releases the GIL while
the graph executes, and the embedder keeps no other mutable state. Each session
is pinned to one intra-op and one inter-op thread so that concurrency comes from
the server's worker threads rather than from oversubscribed ORT thread pools.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from tutor_memory.models.fetch import (
    MODEL_FILE_NAME,
    MODEL_SHA256,
    default_model_dir,
    verify_model,
)

# Output dimensionality of the multilingual USE v3 graph.
USE_DIM = 512

# Stable identifier stored next to every vector this backend produces; changes
# if (and only if) the model bytes change.
USE_MODEL_ID = f"{MODEL_FILE_NAME.removesuffix('.onnx')}@{MODEL_SHA256[:8]}"

# Name of the graph's 1-D string input and of its float32 [n, 512] output.
_INPUT_NAME = "inputs"
_OUTPUT_NAME = "outputs"

# Only a text's first this-many characters go through the graph. The encoder's attention costs
# memory and time quadratic in its SentencePiece pieces: 8,000 characters of "a. " (5,300 pieces)
# took 199 ms and 124 MB of RSS per call on the development machine, so four such queries at once
# raised the server's RSS by 450 MB (bench/bench_hostile.py), while 2,000 characters of ordinary
# prose are about 500 pieces and already more than one sentence encoder input can summarise.
EMBED_MAX_CHARS = 2_000

# Rows whose norm is below this are left as zero vectors instead of divided.
_MIN_NORM = 1e-12


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    ``embed`` returns a C-contiguous float32 array of shape ``(len(texts), dim)``
    whose rows are L2-normalised (so a dot product is a cosine similarity); an
    empty input gives shape ``(0, dim)``. Implementations must be safe to call
    from several threads at once.
    """

    @property
    def dim(self) -> int:
        """Length of each embedding vector."""
        ...

    @property
    def model_id(self) -> str:
        """Stable identifier of the model, used to tag stored vectors."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``; see the class docstring for the contract."""
        ...


def _l2_normalise(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Scale rows to unit length; all-zero (or near-zero) rows stay zero."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    safe = np.where(norms > _MIN_NORM, norms, np.float32(1.0))
    out = np.where(norms > _MIN_NORM, vectors / safe, np.float32(0.0))
    return np.ascontiguousarray(out, dtype=np.float32)


class UseOnnxEmbedder:
    """Multilingual Universal Sentence Encoder v3 (int8 ONNX) on the CPU.

    ``model_path`` must be the pinned model file; its sha256 is checked before
    the session is built (raising
    :class:`~tutor_memory.model_fetch.ModelIntegrityError` otherwise).
    ``batch_size`` bounds how many texts go through the graph per ``run`` call
    when embedding large ingest batches. Safe to share between threads.
    """

    def __init__(
        self,
        model_path: Path,
        *,
        intra_op_threads: int = 1,
        batch_size: int = 64,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if intra_op_threads < 1:
            raise ValueError(f"intra_op_threads must be >= 1, got {intra_op_threads}")
        model_path = Path(model_path)
        verify_model(model_path)

        import onnxruntime as ort
        import onnxruntime_extensions

        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_op_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.register_custom_ops_library(onnxruntime_extensions.get_library_path())
        self._session: Any = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._batch_size = batch_size
        self._model_path = model_path

        inputs = [i.name for i in self._session.get_inputs()]
        outputs = [o.name for o in self._session.get_outputs()]
        if _INPUT_NAME not in inputs or _OUTPUT_NAME not in outputs:
            raise RuntimeError(
                f"{model_path}: expected input {_INPUT_NAME!r} and output {_OUTPUT_NAME!r}, "
                f"graph has inputs {inputs} and outputs {outputs}"
            )

    @property
    def dim(self) -> int:
        return USE_DIM

    @property
    def model_id(self) -> str:
        return USE_MODEL_ID

    @property
    def model_path(self) -> Path:
        return self._model_path

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` (each cut to its first ``EMBED_MAX_CHARS`` characters) in batches of
        ``batch_size``.

        Called from server worker threads; ``InferenceSession.run`` releases the
        GIL, so concurrent calls run in parallel.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings, not a single string")
        n = len(texts)
        out = np.empty((n, USE_DIM), dtype=np.float32)
        # The graph fails on a zero-length batch, so an empty input never reaches it.
        for start in range(0, n, self._batch_size):
            chunk = texts[start : start + self._batch_size]
            for text in chunk:
                if not isinstance(text, str):
                    raise TypeError(f"embed() texts must be str, got {type(text).__name__}")
            batch = np.array([text[:EMBED_MAX_CHARS] for text in chunk], dtype=object)
            (vectors,) = self._session.run([_OUTPUT_NAME], {_INPUT_NAME: batch})
            vectors = np.asarray(vectors, dtype=np.float32)
            if vectors.shape != (len(chunk), USE_DIM):
                raise RuntimeError(
                    f"embedding model returned shape {vectors.shape}, "
                    f"expected {(len(chunk), USE_DIM)}"
                )
            out[start : start + len(chunk)] = vectors
        # The graph already emits ~unit vectors; renormalise defensively so the
        # dot-product-equals-cosine contract holds exactly and zero rows stay finite.
        return _l2_normalise(out)


def load_embedder(model_dir: Path | None = None) -> UseOnnxEmbedder:
    """The pinned model from `model_dir` (default: `default_model_dir()`), checked against its
    sha256."""
    return UseOnnxEmbedder(Path(model_dir or default_model_dir()) / MODEL_FILE_NAME)
