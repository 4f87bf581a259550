"""Structured logs are written by a thread of their own, to the stderr of the moment."""

from __future__ import annotations

import io
import json
import logging

import pytest

from tutor_memory.app import logs


def _flush() -> None:
    # Configuring again stops the previous writer thread once it has written what it holds.
    logs.configure("INFO")


def test_a_line_goes_to_the_stderr_of_when_it_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logs.configure("INFO")
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr("sys.stderr", first)
    logging.getLogger("tutor_memory.test").info("one", extra={"rpc": "BuildBlock"})
    _flush()
    monkeypatch.setattr("sys.stderr", second)
    logging.getLogger("tutor_memory.test").info("two")
    _flush()
    (line,) = first.getvalue().splitlines()
    assert json.loads(line)["msg"] == "one"
    assert json.loads(line)["rpc"] == "BuildBlock"
    assert [json.loads(x)["msg"] for x in second.getvalue().splitlines()] == ["two"]


def test_configuring_again_leaves_one_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr("sys.stderr", out)
    for _ in range(3):
        logs.configure("INFO")
    logging.getLogger("tutor_memory.test").warning("once")
    _flush()
    assert [json.loads(x)["msg"] for x in out.getvalue().splitlines()] == ["once"]
