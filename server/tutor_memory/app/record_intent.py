"""The record examples embedded by the server's model, once per model (see
`tutor_memory.domain.recall.record_intent`).

They are embedded when the block builder starts, never on the read path: a turn embeds its query
and nothing else.
"""

from __future__ import annotations

import threading

from tutor_memory.domain.recall.record_intent import RecordExamples, example_texts
from tutor_memory.models.embedder import Embedder

_lock = threading.Lock()
_by_model: dict[str, RecordExamples] = {}


def embedded_examples(embedder: Embedder) -> RecordExamples:
    """The examples' vectors by `embedder`'s model; computed on the first call for a model."""
    with _lock:
        examples = _by_model.get(embedder.model_id)
        if examples is None:
            texts = example_texts()
            examples = RecordExamples(embedder.embed(texts.record), embedder.embed(texts.other))
            _by_model[embedder.model_id] = examples
        return examples
