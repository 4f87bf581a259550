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

    @property
    def lines_add_up(self) -> bool:
        """Whether counts add up over lines and over words: count(a + "\n" + b) equals
        count(a + "\n") + count(b), and count(a + " " + b) equals count(a) + count(" " + b), for
        every a, and every b that does not start with whitespace, where a ends with a non-space
        in the second case. Then a block is counted by adding its lines' counts
        (`domain.recall.block_tokens`); a tokenizer that cannot promise it has each block counted
        whole."""
        ...
