"""The episode-hash test vectors shared with ``cargo test``: the Rust core, the pure-Python
reference and the server's own ``recompute`` must give every case of
``rust_core/tests/vectors/episode_hash.json`` its expected digest.

The same file is read by ``rust_core/tests/episode_vectors.rs`` (pure Rust, no Python). The digests
of the cases without a negative zero are those of the encoding before floats were canonicalised,
so every hash stored before that change still verifies; a case with ``-0.0`` expects the digest of
its twin with ``0.0`` (issue 12).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from tests.helpers.paths import REPO_ROOT
from tutor_memory.domain.chain import recompute
from tutor_memory.domain.episodes import (
    ChainKey,
    Check,
    Evidence,
    Kind,
    Outcome,
    Quiz,
    StoredEpisode,
)
from tutor_memory.native import _core, _reference

VECTORS = REPO_ROOT / "rust_core" / "tests" / "vectors" / "episode_hash.json"
CASES: list[dict[str, Any]] = json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]
IDS = [case["name"] for case in CASES]
IMPLS: dict[str, Callable[[bytes, Any], bytes]] = {
    "rust": _core.episode_hash,
    "python": _reference.episode_hash,
}


def as_object(value: Any) -> Any:
    """The JSON episode as an object with a StoredEpisode's attributes."""
    if isinstance(value, dict):
        # A sealed case's ciphertext is hex in JSON (`sealed_hex`), bytes on the object.
        return SimpleNamespace(
            **{
                "sealed" if key == "sealed_hex" else key: bytes.fromhex(item)
                if key == "sealed_hex"
                else as_object(item)
                for key, item in value.items()
            }
        )
    if isinstance(value, list):
        return [as_object(item) for item in value]
    return value


def as_stored(ep: dict[str, Any]) -> StoredEpisode:
    """The JSON episode as the server's own StoredEpisode (its kind and outcome as enums)."""
    check, quiz = ep["check"], ep["quiz"]
    return StoredEpisode(
        episode_id=1,
        chain=ChainKey(**ep["chain"]),
        seq=ep["seq"],
        kind=Kind(ep["kind"]),
        summary=ep["summary"],
        text=ep["text"],
        concepts=tuple(ep["concepts"]),
        salience=ep["salience"],
        occurred_at_us=ep["occurred_at_us"],
        recorded_at_us=ep["recorded_at_us"],
        evidence=tuple(Evidence(**e) for e in ep["evidence"]),
        check=None
        if check is None
        else Check(Outcome(check["outcome"]), check["topic"], check["predicted_mastery"]),
        quiz=None if quiz is None else Quiz(**quiz),
        client_key=ep["client_key"],
        prev_hash=bytes.fromhex(ep["prev_hash"]),
        hash=b"",
        sealed=bytes.fromhex(ep["sealed_hex"]) if "sealed_hex" in ep else None,
    )


def test_the_file_has_the_cases_the_issue_asks_for() -> None:
    assert len(CASES) >= 10
    assert len(set(IDS)) == len(IDS)
    texts = " ".join(c["episode"]["text"] for c in CASES)
    assert any("\u0600" <= ch <= "\u06ff" for ch in texts)  # Arabic
    assert any(c["episode"]["concepts"] for c in CASES)
    assert any(c["episode"]["evidence"] for c in CASES)
    assert any(c["episode"]["quiz"] for c in CASES)
    masteries = [c["episode"]["check"]["predicted_mastery"] for c in CASES if c["episode"]["check"]]
    assert 0.5 in masteries
    assert any(m == 0.0 and math.copysign(1.0, m) < 0 for m in masteries if m is not None)
    assert any("sealed_hex" in c["episode"] for c in CASES)


def test_a_sealed_case_differs_from_its_plaintext_twin() -> None:
    for case in CASES:
        ep = case["episode"]
        if "sealed_hex" in ep:
            plain = {k: v for k, v in ep.items() if k != "sealed_hex"}
            digest = _core.episode_hash(bytes.fromhex(ep["prev_hash"]), as_object(plain))
            assert digest.hex() != case["expected_hex"], case["name"]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_vector_hashes_to_its_expected_digest(impl: str, case: dict[str, Any]) -> None:
    ep = case["episode"]
    digest = IMPLS[impl](bytes.fromhex(ep["prev_hash"]), as_object(ep))
    assert digest.hex() == case["expected_hex"]


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c["episode"]["kind"] in set(Kind)],
    ids=[c["name"] for c in CASES if c["episode"]["kind"] in set(Kind)],
)
def test_the_servers_recompute_gives_the_same_digests(case: dict[str, Any]) -> None:
    ep = case["episode"]
    assert recompute(as_stored(ep), bytes.fromhex(ep["prev_hash"])).hex() == case["expected_hex"]


def test_negative_zero_cases_expect_their_twins_digest() -> None:
    by_name = {c["name"]: c for c in CASES}
    twins = [("check, mastery -0.0", "check, mastery 0.0"), ("empty, salience -0.0", "empty")]
    for negative, positive in twins:
        assert by_name[negative]["expected_hex"] == by_name[positive]["expected_hex"]
