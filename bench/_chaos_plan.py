"""The crash campaign's workload, derived from the seed alone: chains, the items every lane sends,
the Consolidate calls and when the server is killed.

Every lane draws from its own generator seeded by (seed, cycle, lane), so the sequence of calls a
run makes is reproducible from its seed; only how far each lane gets before the kill depends on
timing. Lanes are endless: the kill, not the plan, ends the load, so it always lands mid-load.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass

from tutor_memory_client._proto import memory_pb2 as pb

# A fixed past clock (2025-01-01T00:00:00Z) for the times items carry: Consolidate digests only days
# that have ended, and a replay from the seed must produce the same items on any day.
BASE_SECONDS = 1_735_689_600
# Each cycle's timed items fall in their own UTC day after BASE_SECONDS (the chains' days are UTC:
# no call names a time zone), the day the cycle's Consolidate calls mostly digest.
DAY_SECONDS = 86_400

STUDENTS = ("student-0", "student-1", "student-2")
SUBJECTS = ("biology", "history")

# Concurrent lanes of each kind during a cycle's load.
INGEST_LANES = 2
APPEND_LANES = 2
# One lane only: two concurrent Consolidate runs on one chain are a known failure of the nightly
# cycle (issue 12), which this campaign does not set out to measure.
CONSOLIDATE_LANES = 1

# Items per IngestEpisodes stream, and items per stream message: 1 sends one message per item,
# odd sizes make messages straddle the server's commit chunks.
STREAM_ITEMS = (20, 300)
ITEMS_PER_MESSAGE = (1, 7, 32, 100)
# Pause between two Consolidate calls of the lane, in seconds.
CONSOLIDATE_PAUSE = (0.05, 0.3)
# Shares of the lane's calls whose `now` is the end of the cycle's own day (so that the items
# still arriving for it become late arrivals), the server's clock (unset), or the end of an earlier
# cycle's day; the rest.
NOW_END_OF_CYCLE_DAY = 0.4
NOW_UNSET = 0.3
# Seconds from the start of a cycle's load to the kill.
KILL_AFTER = (0.3, 2.5)

_CONCEPTS = (
    "osmosis", "mitosis", "photosynthesis", "the cell membrane", "enzymes", "meiosis",
    "the French Revolution", "the Industrial Revolution", "the Cold War", "feudalism",
)  # fmt: skip
_QUESTIONS = (
    "Why does {c} matter here?",
    "Can you give me another example of {c}?",
    "Che cos'è {c}, di preciso?",
    "¿Cómo se relaciona {c} con lo anterior?",
)
_ANSWERS = (
    "Think of {c} as a process with a cause and an effect; here the cause comes first.",
    "A short recap of {c}: two steps, and the second depends on the first.",
)


@dataclass(frozen=True, slots=True, order=True)
class Chain:
    student_id: str
    subject_id: str

    def __str__(self) -> str:
        return f"{self.student_id}/{self.subject_id}"


CHAINS = tuple(Chain(s, subject) for s in STUDENTS for subject in SUBJECTS)


@dataclass(frozen=True, slots=True)
class Item:
    """One episode the campaign sends, under a client key unique in the whole run."""

    chain: Chain
    episode: pb.NewEpisode

    @property
    def key(self) -> str:
        return self.episode.client_key


@dataclass(frozen=True, slots=True)
class Stream:
    """One IngestEpisodes call: its items, grouped `per_message` to a stream message."""

    items: tuple[Item, ...]
    per_message: int


@dataclass(frozen=True, slots=True)
class ConsolidateCall:
    """The nightly cycle for one chain, digesting the days that ended by `now_seconds` (None:
    the server's clock)."""

    chain: Chain
    now_seconds: int | None

    def request(self) -> pb.ConsolidateRequest:
        req = pb.ConsolidateRequest(
            student_id=self.chain.student_id, subject_id=self.chain.subject_id
        )
        if self.now_seconds is not None:
            req.now.seconds = self.now_seconds
        return req


def _rng(seed: int, cycle: int, lane: str) -> random.Random:
    # A string seed is hashed with SHA-512 by random.Random: stable across runs and processes.
    return random.Random(f"{seed}:{cycle}:{lane}")


def kill_after(seed: int, cycle: int) -> float:
    return _rng(seed, cycle, "kill").uniform(*KILL_AFTER)


def _episode(rng: random.Random, cycle: int, key: str, chain: Chain, timed: bool) -> pb.NewEpisode:
    concept = rng.choice(_CONCEPTS)
    roll = rng.random()
    if roll < 0.5:
        kind, text = pb.EPISODE_KIND_QUESTION, rng.choice(_QUESTIONS).format(c=concept)
    elif roll < 0.85:
        kind, text = pb.EPISODE_KIND_ANSWER, rng.choice(_ANSWERS).format(c=concept)
    else:
        kind, text = pb.EPISODE_KIND_CHECK, f"Checked {concept}."
    ep = pb.NewEpisode(
        student_id=chain.student_id,
        subject_id=chain.subject_id,
        kind=kind,
        summary=f"{text} ({key})",
        text=f"{text} [{key}]",
        concepts=[concept],
        client_key=key,
    )
    if kind == pb.EPISODE_KIND_CHECK:
        ep.check.outcome = rng.choice((pb.CHECK_OUTCOME_RIGHT, pb.CHECK_OUTCOME_WRONG))
        ep.check.topic = concept
        if rng.random() < 0.5:
            # Strictly positive: -0.0 is a known verification bug (issue 12), not a crash finding.
            ep.check.predicted_mastery = round(rng.uniform(0.05, 0.95), 2)
    if timed:
        ep.occurred_at.seconds = BASE_SECONDS + cycle * DAY_SECONDS + rng.randrange(DAY_SECONDS)
        ep.occurred_at.nanos = rng.randrange(1_000) * 1_000
    return ep


def ingest_streams(seed: int, cycle: int, lane: int) -> Iterator[Stream]:
    """The endless sequence of IngestEpisodes calls of one ingest lane; items span every chain
    and carry their own time in the cycle's day."""
    rng = _rng(seed, cycle, f"ingest-{lane}")
    for n in itertools.count():
        size = rng.randint(*STREAM_ITEMS)
        items = []
        for i in range(size):
            chain = rng.choice(CHAINS)
            key = f"c{cycle}-i{lane}-s{n}-{i}"
            items.append(Item(chain, _episode(rng, cycle, key, chain, timed=True)))
        yield Stream(tuple(items), rng.choice(ITEMS_PER_MESSAGE))


def appends(seed: int, cycle: int, lane: int) -> Iterator[Item]:
    """The endless sequence of AppendEpisode items of one append lane; half leave occurred_at
    unset (the server's now), as a live tutor does, which a retry must still match."""
    rng = _rng(seed, cycle, f"append-{lane}")
    for n in itertools.count():
        chain = rng.choice(CHAINS)
        key = f"c{cycle}-a{lane}-{n}"
        yield Item(chain, _episode(rng, cycle, key, chain, timed=rng.random() < 0.5))


def consolidations(seed: int, cycle: int, lane: int) -> Iterator[tuple[ConsolidateCall, float]]:
    """The endless sequence of (Consolidate call, pause before it) of one lane. Its days end
    while the ingest lanes still fill them, so later calls write follow-up digests of late
    arrivals; calls for earlier days find them done."""
    rng = _rng(seed, cycle, f"consolidate-{lane}")
    while True:
        chain = rng.choice(CHAINS)
        roll = rng.random()
        if roll < NOW_UNSET:
            now: int | None = None
        else:
            day = (
                cycle
                if cycle == 0 or roll < NOW_UNSET + NOW_END_OF_CYCLE_DAY
                else rng.randrange(cycle)
            )
            now = BASE_SECONDS + (day + 1) * DAY_SECONDS
        yield ConsolidateCall(chain, now), rng.uniform(*CONSOLIDATE_PAUSE)
