"""Structured logs: one JSON object per line on stderr, with the extra fields a call attached.

A record is formatted where it is logged and written to stderr by a thread of its own
(`logging.handlers.QueueListener`): one line per call is logged on the event loop, and a write to
stderr can block (a pipe whose reader is slow), which must never hold up every call in flight.
The lines still queued are written at exit; a process killed with SIGKILL may lose the last few.
"""

from __future__ import annotations

import atexit
import json
import logging
import logging.handlers
import queue
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

# Attributes every LogRecord has; anything else on a record came from `extra=` and is logged.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update((k, v) for k, v in vars(record).items() if k not in _STANDARD)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class _FormattedHere(logging.handlers.QueueHandler):
    """Queues the record already formatted as its JSON line (with its traceback, if any), so
    that the writer thread only writes."""

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        line = logging.makeLogRecord({"msg": self.format(record), "levelno": record.levelno})
        line.levelname = record.levelname
        return line


class _ToCurrentStderr(logging.StreamHandler[TextIO]):
    """Writes each line to `sys.stderr` as it is when the line is written: the writer thread
    writes after the call that logged, by which time the stream may have been swapped (a test's
    captured stderr, closed once the test ends)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


# The writer thread of the last `configure`, stopped (its queue written out) by the next one.
_listener: logging.handlers.QueueListener | None = None


def configure(level: str = "INFO") -> None:
    global _listener
    if _listener is not None:
        atexit.unregister(_listener.stop)
        _listener.stop()
    lines: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
    handler = _FormattedHere(lines)
    handler.setFormatter(JsonFormatter())
    writer = _ToCurrentStderr()
    writer.setFormatter(logging.Formatter("%(message)s"))
    listener = logging.handlers.QueueListener(lines, writer)
    listener.start()
    atexit.register(listener.stop)
    _listener = listener
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
