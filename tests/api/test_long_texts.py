"""Text work on long texts runs on its own thread, one text at a time (app/executors.py,
LONG_TEXT_CHARS): the event loop then waits behind one thread holding the GIL, not two, and the
texts of ordinary turns keep the text pool, so they never queue behind a long one."""

from __future__ import annotations

import asyncio
import threading

from tests.helpers.harness import A, Harness, question
from tutor_memory.app.executors import LONG_TEXT_CHARS, Executors
from tutor_memory_client._proto import memory_pb2 as pb

# Four times the long-text limit, in words that teach nothing.
LONG_QUESTION = ("Why do cells divide and how does the membrane hold? " * 400)[
    : 4 * LONG_TEXT_CHARS
]


def ask(text: str, key: str) -> pb.AppendEpisodeRequest:
    episode = question(text[:80], key=key)
    episode.text = text
    return pb.AppendEpisodeRequest(episode=episode)


def test_text_past_the_limit_goes_to_the_long_text_thread() -> None:
    executors = Executors()
    try:
        assert executors.text_pool(0) is executors.text
        assert executors.text_pool(LONG_TEXT_CHARS) is executors.text
        assert executors.text_pool(LONG_TEXT_CHARS + 1) is executors.long_text
    finally:
        executors.shutdown()


async def test_an_ordinary_question_is_stored_while_a_long_one_waits_for_its_thread(
    harness: Harness,
) -> None:
    # The long-text thread is held, so the long question's text work cannot start.
    release = threading.Event()
    held = harness.app.services.executors.long_text.submit(release.wait, 60)
    try:
        long_call = asyncio.ensure_future(
            harness.stub.AppendEpisode(ask(LONG_QUESTION, "long"), metadata=A, timeout=60)
        )
        short = await harness.stub.AppendEpisode(
            ask("What is osmosis?", "short"), metadata=A, timeout=60
        )
        assert short.episode.summary == "What is osmosis?"
        # Held on its thread, the long question has written nothing yet.
        assert [e.episode_id for e in await harness.list_all()] == [short.episode.episode_id]
        assert not long_call.done()
    finally:
        release.set()
    long = await long_call
    assert held.result(timeout=10)
    assert long.episode.text == LONG_QUESTION
    assert {e.episode_id for e in await harness.list_all()} == {
        short.episode.episode_id,
        long.episode.episode_id,
    }
