"""Loads the phrasing set and checks its schema, so that a mislabelled or malformed item fails
loudly instead of skewing the figures."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

SET_DIR = Path(__file__).resolve().parent
LANGUAGES = ("en", "it", "es", "fr", "de", "pt", "ar")
# Issue 13 asks for a phrasing set "of at least 60 questions per language".
MIN_MESSAGES_PER_LANGUAGE = 60

_MESSAGE_KEYS = {"text", "record", "topic", "period", "period_text", "teaching"}
_NARRATION_KEYS = {"text", "narration"}
_OPTIONAL_KEYS = {"note"}
_FILE_KEYS = {"language", "now", "time_zone", "messages", "narrations"}


class SchemaError(ValueError):
    """A phrasing file breaks the schema described in bench/phrasing/README.md."""


@dataclass(frozen=True, slots=True)
class Message:
    text: str
    record: bool
    topic: str
    period: bool
    period_text: str
    teaching: bool
    note: str


@dataclass(frozen=True, slots=True)
class Narration:
    text: str
    narration: bool
    note: str


@dataclass(frozen=True, slots=True)
class LanguageSet:
    language: str
    now: dt.datetime  # aware, in time_zone
    time_zone: str
    messages: tuple[Message, ...]
    narrations: tuple[Narration, ...]

    @property
    def now_us(self) -> int:
        """`now` as the server's clock counts it: microseconds since the Unix epoch."""
        return int(self.now.timestamp()) * 1_000_000 + self.now.microsecond


def _keys(item: Mapping[str, Any], required: set[str], where: str) -> None:
    missing = required - item.keys()
    unknown = item.keys() - required - _OPTIONAL_KEYS
    if missing or unknown:
        raise SchemaError(
            f"{where}: missing keys {sorted(missing)}, unknown keys {sorted(unknown)}"
        )


def _typed(item: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = item.get(key, "" if kind is str else None)
    if type(value) is not kind:
        raise SchemaError(f"{where}: {key!r} must be a {kind.__name__}, got {value!r}")
    return value


def _message(item: Any, where: str) -> Message:
    if not isinstance(item, dict):
        raise SchemaError(f"{where}: an item must be an object")
    _keys(item, _MESSAGE_KEYS, where)
    text = _typed(item, "text", str, where).strip()
    record, period, teaching = (
        _typed(item, k, bool, where) for k in ("record", "period", "teaching")
    )
    topic, period_text, note = (
        _typed(item, k, str, where) for k in ("topic", "period_text", "note")
    )
    if not text:
        raise SchemaError(f"{where}: empty text")
    if topic and not record:
        raise SchemaError(f"{where}: a topic is only labelled on a record question")
    if period != bool(period_text):
        raise SchemaError(f"{where}: period_text is set exactly when period is true")
    for key, span in (("topic", topic), ("period_text", period_text)):
        if span.casefold() not in text.casefold():
            raise SchemaError(f"{where}: {key} {span!r} is not written in the text")
    return Message(text, record, topic, period, period_text, teaching, note)


def _narration(item: Any, where: str) -> Narration:
    if not isinstance(item, dict):
        raise SchemaError(f"{where}: an item must be an object")
    _keys(item, _NARRATION_KEYS, where)
    text = _typed(item, "text", str, where).strip()
    if not text:
        raise SchemaError(f"{where}: empty text")
    return Narration(text, _typed(item, "narration", bool, where), _typed(item, "note", str, where))


def _unique(texts: Sequence[str], where: str) -> None:
    seen: set[str] = set()
    for text in texts:
        if text in seen:
            raise SchemaError(f"{where}: {text!r} appears twice")
        seen.add(text)


def parse_language_set(raw: Any, where: str) -> LanguageSet:
    """One language's file, parsed and checked; `where` names it in error messages."""
    if not isinstance(raw, dict):
        raise SchemaError(f"{where}: the file must hold one object")
    if raw.keys() != _FILE_KEYS:
        raise SchemaError(f"{where}: the file's keys must be {sorted(_FILE_KEYS)}")
    language = _typed(raw, "language", str, where)
    if language not in LANGUAGES:
        raise SchemaError(f"{where}: unknown language {language!r}")
    time_zone = _typed(raw, "time_zone", str, where)
    try:
        zone = ZoneInfo(time_zone)
        now = dt.datetime.fromisoformat(_typed(raw, "now", str, where))
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise SchemaError(f"{where}: bad now or time_zone: {e}") from e
    if now.tzinfo is not None:
        raise SchemaError(f"{where}: now is a local time without offset (time_zone gives it)")
    messages = _typed(raw, "messages", list, where)
    narrations = _typed(raw, "narrations", list, where)
    parsed = LanguageSet(
        language,
        now.replace(tzinfo=zone),
        time_zone,
        tuple(_message(m, f"{where} message {i}") for i, m in enumerate(messages)),
        tuple(_narration(n, f"{where} narration {i}") for i, n in enumerate(narrations)),
    )
    _unique([m.text for m in parsed.messages] + [n.text for n in parsed.narrations], where)
    return parsed


def load_language(path: Path) -> LanguageSet:
    parsed = parse_language_set(json.loads(path.read_text(encoding="utf-8")), path.name)
    if path.stem != parsed.language:
        raise SchemaError(f"{path.name}: holds language {parsed.language!r}")
    return parsed


def load_set(directory: Path = SET_DIR) -> list[LanguageSet]:
    """Every language of the set, in LANGUAGES order; each file must exist."""
    return [load_language(directory / f"{language}.json") for language in LANGUAGES]
