"""What the domain needs of a tokenizer: counting the tokens of the text a block shows.

The implementations (the chat model's own tokenizer, or cl100k_base) are in
`tutor_memory.models.tokenizers`; the domain only counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class TokenCounter(Protocol):
    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def count_many(self, texts: Sequence[str]) -> list[int]: ...
