"""rank_and_pack on the ranking requests real turns make of bench_block's chain: the Rust core,
its numpy twin (bench/rank_numpy.py) and its pure-Python twin (native/_reference.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from bench import rank_numpy
from bench.hot_path.conftest import RANKED_QUERIES, SIZES, OpenChain
from tutor_memory.domain.recall.ranking import RankRequest
from tutor_memory.native import _core, _reference

IMPLEMENTATIONS: dict[str, Callable[[RankRequest], tuple[Any, Any, Any, int]]] = {
    "rust": _core.rank_and_pack,
    "numpy": rank_numpy.rank_and_pack,
    "python": _reference.rank_and_pack,
}


@pytest.mark.parametrize("implementation", list(IMPLEMENTATIONS))
@pytest.mark.parametrize("turn", list(RANKED_QUERIES))
@pytest.mark.parametrize("size", list(SIZES))
def test_rank_and_pack(
    benchmark: Any,
    open_chain: Callable[[str], OpenChain],
    size: str,
    turn: str,
    implementation: str,
) -> None:
    chain = open_chain(size)
    request = chain.rank_requests[turn]
    benchmark.group = f"rank_and_pack {size} {turn}"
    benchmark.extra_info.update(
        episodes=chain.episodes, candidates=len(request.cand_ids), implementation=implementation
    )
    got = benchmark(IMPLEMENTATIONS[implementation], request)
    # Every implementation packs what the reference packs.
    expected = _reference.rank_and_pack(request) if implementation != "python" else got
    assert np.array_equal(got[0], expected[0])
    assert got[3] == expected[3] > 0
