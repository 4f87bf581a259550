"""The Go, TypeScript and Python clients against one real server: the shared scenario
(scenario.json), each client's own unit tests, and each client's chat-turn example."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.toolchains import (
    GO_CLIENT,
    ROOT,
    TS_CLIENT,
    build_go,
    build_typescript,
    go_binary,
    node_binary,
    run_tool,
)
from tests.helpers.harness import TOKEN_A, write_tokens_file
from tests.helpers.postgres import PostgresCluster
from tests.helpers.server_process import ServerProcess
from tests.helpers.stores import STORE_KINDS
from tutor_memory_client import MemoryClient, pb

SCENARIO = Path(__file__).with_name("scenario.json")
# Seconds one client may take for the whole scenario (it waits out retry backoffs).
RUN_TIMEOUT = 120.0
# The last line every chat-turn example prints.
TURN_LINE = re.compile(
    r"question=(\d+) answer=(\d+) block=(\S*) memories=\[([\d, ]*)\] annotation=(\d+)"
)


@dataclass(frozen=True)
class Clients:
    """How to start each language's conformance runner and chat-turn example."""

    conformance: dict[str, list[str]]
    example: dict[str, list[str]]


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCENARIO.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module", params=STORE_KINDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """A server on each store: every client passes against both."""
    tmp = tmp_path_factory.mktemp("conformance")
    extra: list[str] = []
    if request.param == "postgres":
        cluster: PostgresCluster = request.getfixturevalue("postgres")
        extra = ["--store", cluster.create_database()]
    proc = ServerProcess(tmp / "data", write_tokens_file(tmp / "tokens.toml"), *extra)
    proc.wait_ready()
    yield proc
    proc.terminate()


@pytest.fixture(scope="module")
def clients(tmp_path_factory: pytest.TempPathFactory) -> Clients:
    go = build_go(tmp_path_factory.mktemp("go-bin"))
    dist = build_typescript()
    node = node_binary()
    return Clients(
        conformance={
            "go": [str(go["conformance"])],
            "typescript": [node, str(dist / "conformance" / "run.js")],
            "python": [sys.executable, "-m", "tests.conformance.run_python_client"],
        },
        example={
            "go": [str(go["chatturn"])],
            "typescript": [node, str(dist / "examples" / "chat_turn.js")],
            "python": [sys.executable, str(ROOT / "clients/python/examples/chat_turn.py")],
        },
    )


def unused_address() -> str:
    """An address where nothing listens: a port the kernel just handed out and took back."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"127.0.0.1:{port}"


def run_client(command: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize("language", ["go", "typescript", "python"])
def test_client_passes_the_shared_scenario(
    language: str, server: ServerProcess, clients: Clients
) -> None:
    """Episodes, a batch retried after a cut, listing, BuildBlock ids and text, AnnotateAnswer,
    INVALID_ARGUMENT, UNAUTHENTICATED, UNAVAILABLE retried with backoff, and the R6.6 prompt."""
    done = run_client(
        clients.conformance[language],
        "--scenario", str(SCENARIO),
        "--target", server.target,
        "--token", TOKEN_A,
        "--run-id", language,
        "--unreachable", unused_address(),
    )  # fmt: skip
    assert done.returncode == 0, f"{language} runner failed:\n{done.stdout}\n{done.stderr}"
    assert re.search(r": [1-9]\d* passed, 0 failed$", done.stdout.strip()), done.stdout


@pytest.mark.parametrize("language", ["go", "typescript", "python"])
def test_chat_turn_example_puts_memory_before_the_legacy_section_and_annotates(
    language: str, server: ServerProcess, clients: Clients, scenario: dict[str, Any]
) -> None:
    student = f"example-{language}"
    subject = scenario["subject_id"]
    earlier = scenario["episodes"][0]
    parts = scenario["prompt_cases"][0]["parts"]
    question = scenario["block"]["query"]
    answer = scenario["answer"]["text"]
    with MemoryClient(server.target, token=TOKEN_A) as memory:
        seeded = memory.append_episode(
            pb.NewEpisode(
                student_id=student,
                subject_id=subject,
                kind=earlier["kind"],
                summary=earlier["summary"],
                text=earlier["text"],
            )
        ).episode.episode_id
        done = run_client(
            clients.example[language],
            "--target", server.target,
            "--token", TOKEN_A,
            "--student", student,
            "--subject", subject,
            "--question", question,
            "--answer", answer,
            "--instructions", parts["instructions"],
            "--legacy-assessment", parts["legacy_assessment"],
        )  # fmt: skip
        assert done.returncode == 0, f"{language} example failed:\n{done.stdout}\n{done.stderr}"
        prompt, _, summary = done.stdout.strip().rpartition("\n\n")
        found = TURN_LINE.fullmatch(summary)
        assert found, done.stdout
        question_id, answer_id, block_id, memory_ids, annotation = found.groups()
        assert seeded in {int(i) for i in re.findall(r"\d+", memory_ids)}
        assert block_id
        assert int(annotation) > 0
        assert prompt.startswith(parts["instructions"])
        assert prompt.endswith(question)
        assert earlier["summary"] in prompt
        assert parts["legacy_assessment"].splitlines()[-1] not in prompt
        stored = {e.episode_id: e for e in memory.list_episodes(student, subject)}
    assert stored[int(question_id)].kind == pb.EPISODE_KIND_QUESTION
    assert stored[int(question_id)].text == question
    assert stored[int(answer_id)].kind == pb.EPISODE_KIND_ANSWER
    assert stored[int(answer_id)].text == answer


def test_go_client_unit_tests_pass() -> None:
    output = run_tool([go_binary(), "test", "./..."], GO_CLIENT)
    assert "ok  \ttutor-memory/clients/go/tutormemory" in output


def test_typescript_client_unit_tests_pass(clients: Clients) -> None:
    output = run_tool([node_binary(), "--test", "dist/test/"], TS_CLIENT)
    assert re.search(r"^# pass [1-9]\d*$", output, re.MULTILINE), output
    assert re.search(r"^# fail 0$", output, re.MULTILINE), output


def test_every_client_carries_the_same_legacy_assessment_phrases() -> None:
    copies = [
        ROOT / "clients/python/tutor_memory_client/data/legacy_assessment.json",
        GO_CLIENT / "tutormemory/legacy_assessment.json",
        TS_CLIENT / "src/legacy_assessment.json",
    ]
    contents = {path.read_bytes() for path in copies}
    assert len(contents) == 1, "the three legacy_assessment.json copies differ"
