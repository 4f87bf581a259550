"""Regressions the fuzzing found in the limits' own helpers (issue 12)."""

from __future__ import annotations

from tutor_memory.domain.limits import quoted


def test_a_quoted_value_is_bounded_after_escaping() -> None:
    # 64 line separators were quoted as 640 characters of "\u2028" escapes: an error detail that
    # grew tenfold with invisible input.
    shown = quoted("\u2028" * 1_000)
    assert len(shown) <= 64 + 3
    assert shown.endswith("…'")


def test_a_short_value_is_quoted_whole() -> None:
    assert quoted("Europe/Rome") == "'Europe/Rome'"
