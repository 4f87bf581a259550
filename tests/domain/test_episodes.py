"""R1.3 salience is fixed by what an episode is; validation names the field it refuses."""

from __future__ import annotations

import pytest

from tutor_memory.domain.episodes import (
    ChainKey,
    Check,
    Kind,
    Outcome,
    salience_of,
    validate_new_episode,
)
from tutor_memory.domain.errors import InvalidArgument

NOW = 1_800_000_000_000_000
CHAIN = ChainKey("t", "s", "bio")


def test_salience_order_is_the_design_documents() -> None:
    taught = salience_of(Kind.TAUGHT, None)
    wrong = salience_of(Kind.CHECK, Check(Outcome.WRONG, "osmosis", None))
    right = salience_of(Kind.CHECK, Check(Outcome.RIGHT, "osmosis", None))
    question = salience_of(Kind.QUESTION, None)
    assert taught > wrong > right > question
    assert (taught, wrong, right, question) == (0.85, 0.70, 0.60, 0.35)
    others = [salience_of(k, None) for k in (Kind.QUIZ, Kind.FILE, Kind.ANSWER, Kind.CONSOLIDATION)]
    assert all(question < s < right for s in others)


def _validate(**overrides: object) -> object:
    fields: dict[str, object] = {
        "chain": CHAIN,
        "kind": Kind.QUESTION,
        "summary": "what is osmosis?",
        "text": "",
        "concepts": [],
        "occurred_at_us": None,
        "evidence": [],
        "check": None,
        "quiz": None,
        "client_key": "",
        "now_us": NOW,
        "client_key_required": False,
    }
    fields.update(overrides)
    return validate_new_episode(**fields)  # type: ignore[arg-type]


def test_missing_occurred_at_is_taken_from_the_server_clock() -> None:
    ep = _validate()
    assert ep.occurred_at_us == NOW  # type: ignore[attr-defined]
    assert not ep.occurred_at_given  # type: ignore[attr-defined]


def test_small_client_clock_skew_is_accepted() -> None:
    ep = _validate(occurred_at_us=NOW + 60_000_000)
    assert ep.occurred_at_given  # type: ignore[attr-defined]


def test_batch_items_need_a_client_key() -> None:
    with pytest.raises(InvalidArgument) as err:
        _validate(client_key_required=True)
    assert err.value.field == "client_key"


def test_negative_occurred_at_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="occurred_at: before 1970"):
        _validate(occurred_at_us=-1)
