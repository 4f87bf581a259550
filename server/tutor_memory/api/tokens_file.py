"""The tokens file: who may call, with which scope, and each tenant's quotas. TOML; it stores only
the SHA-256 of each token, so the file itself grants nothing if it leaks.

    [[tokens]]
    tenant = "school-a"
    sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    name = "chat-service"        # the caller, shown in logs; default: the tenant
    read_only = true             # scope: read-only calls (default false)
    student_prefix = "7b-"       # scope: student ids starting with this (default: every student)
    subjects = ["biology"]       # scope: these subjects only (default: every subject)

    [tenants.school-a]
    requests_per_second = 50     # token bucket: sustained rate ...
    burst = 100                  # ... and calls at once after idling (default: one second's worth)
    max_episodes = 2000000       # stored episodes, digests included

Rotation: two entries with the same `name` are two valid tokens of one caller (they must name the
same tenant). Anything the parser does not know is an error naming its line: a typo in a scope
must not silently widen a token.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tutor_memory.app.access import Scope
from tutor_memory.app.quotas import TenantLimits
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import check_identifier

# The keys of a [[tokens]] entry: identity first, then the scope's limits.
IDENTITY_KEYS = ("tenant", "sha256", "name")
SCOPE_KEYS = ("read_only", "student_prefix", "subjects")
# The keys of a [tenants.NAME] table.
LIMIT_KEYS = ("requests_per_second", "burst", "max_episodes")

_HEX64 = re.compile(r"[0-9a-f]{64}")
_TOKENS_HEADER = re.compile(r"^\s*\[\[\s*tokens\s*\]\]")
_TENANT_HEADER = re.compile(
    r"""^\s*\[\s*tenants\s*\.\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[A-Za-z0-9_-]+))\s*\]"""
)
_ANY_HEADER = re.compile(r"^\s*\[")


@dataclass(frozen=True, slots=True)
class TokenEntry:
    tenant: str
    sha256: str
    name: str
    scope: Scope
    line: int


@dataclass(frozen=True, slots=True)
class TokensFile:
    entries: tuple[TokenEntry, ...]
    limits: dict[str, TenantLimits]


class TokensFileError(ValueError):
    """The file cannot be used; the message names the file, the line and the problem."""


# Makes the error for a line and a problem.
_Fail = Callable[[int, str], TokensFileError]


class _Lines:
    """Where each table and key of the file starts. tomllib keeps no positions, so headers and
    keys are found in the text: the n-th `[[tokens]]` header is the n-th entry."""

    def __init__(self, text: str) -> None:
        self._lines = text.splitlines()
        self.headers = [i + 1 for i, s in enumerate(self._lines) if _ANY_HEADER.match(s)]
        self.token_headers = [i + 1 for i, s in enumerate(self._lines) if _TOKENS_HEADER.match(s)]
        self.tenant_headers: dict[str, int] = {}
        for i, s in enumerate(self._lines):
            m = _TENANT_HEADER.match(s)
            if m:
                self.tenant_headers[m["dq"] or m["sq"] or m["bare"] or ""] = i + 1

    def key(self, section: int, key: str) -> int:
        """The line of `key` in the table whose header is on line `section` (else the header)."""
        end = next((h for h in self.headers if h > section), len(self._lines) + 1)
        k = re.escape(key)
        pattern = re.compile(rf"""^\s*(?:{k}|"{k}"|'{k}')\s*=""")
        for n in range(section + 1, end):
            if pattern.match(self._lines[n - 1]):
                return n
        return section

    def first_key(self, key: str) -> int:
        """The line of a top-level key (before any table), else 1."""
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
        for n, s in enumerate(self._lines, start=1):
            if _ANY_HEADER.match(s):
                break
            if pattern.match(s):
                return n
        return 1


def load_tokens_file(path: Path) -> TokensFile:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TokensFileError(f"tokens file {path}: {exc}") from exc
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib's message ends with "(at line N, column M)".
        raise TokensFileError(f"tokens file {path}: {exc}") from exc
    return parse_tokens(doc, text, str(path))


def parse_tokens(doc: dict[str, Any], text: str, source: str) -> TokensFile:
    lines = _Lines(text)

    def fail(line: int, problem: str) -> TokensFileError:
        return TokensFileError(f"tokens file {source}, line {line}: {problem}")

    for key in doc:
        if key not in ("tokens", "tenants"):
            raise fail(lines.first_key(key), f"unknown key {key!r} (the file holds [[tokens]] "
                       "entries and [tenants.NAME] tables)")  # fmt: skip
    entries = doc.get("tokens")
    if not isinstance(entries, list) or not entries:
        raise fail(1, "needs at least one [[tokens]] entry")
    if len(lines.token_headers) != len(entries):
        raise fail(1, "write every token as a [[tokens]] table (inline arrays are not read)")
    parsed: list[TokenEntry] = []
    seen: dict[str, int] = {}
    tenant_of_name: dict[str, tuple[str, int]] = {}
    for header, entry in zip(lines.token_headers, entries, strict=True):
        if not isinstance(entry, dict):
            raise fail(header, "a [[tokens]] entry must be a table")
        token = _token_entry(entry, header, lines, fail)
        if token.sha256 in seen:
            first_line = seen[token.sha256]
            raise fail(header, f"the same token is listed twice (first on line {first_line})")
        seen[token.sha256] = header
        first = tenant_of_name.setdefault(token.name, (token.tenant, header))
        if first[0] != token.tenant:
            raise fail(
                lines.key(header, "name"),
                f"caller {token.name!r} is tenant {first[0]!r} on line {first[1]}: the tokens of "
                "one caller (rotation) must name the same tenant",
            )
        parsed.append(token)
    return TokensFile(tuple(parsed), _tenant_limits(doc.get("tenants", {}), lines, fail))


def _token_entry(entry: dict[str, Any], header: int, lines: _Lines, fail: _Fail) -> TokenEntry:
    for key in entry:
        if key not in IDENTITY_KEYS + SCOPE_KEYS:
            raise fail(
                lines.key(header, key),
                f"unknown scope {key!r} (a token entry takes "
                f"{', '.join(IDENTITY_KEYS + SCOPE_KEYS)})",
            )
    tenant, digest = entry.get("tenant"), entry.get("sha256")
    if not isinstance(tenant, str):
        raise fail(lines.key(header, "tenant"), "tenant must be a string")
    try:
        check_identifier("tenant", tenant)
    except InvalidArgument as exc:
        raise fail(lines.key(header, "tenant"), str(exc)) from exc
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise fail(lines.key(header, "sha256"), "sha256 must be 64 lowercase hex characters")
    name = entry.get("name", tenant)
    if not isinstance(name, str) or not name:
        raise fail(lines.key(header, "name"), "name must be a non-empty string")

    read_only = entry.get("read_only", False)
    if not isinstance(read_only, bool):
        raise fail(lines.key(header, "read_only"), "read_only must be true or false")
    prefix = entry.get("student_prefix", "")
    if not isinstance(prefix, str):
        raise fail(lines.key(header, "student_prefix"), "student_prefix must be a string")
    if prefix:
        try:
            check_identifier("student_prefix", prefix)
        except InvalidArgument as exc:
            raise fail(lines.key(header, "student_prefix"), str(exc)) from exc
    subjects: frozenset[str] | None = None
    if "subjects" in entry:
        listed = entry["subjects"]
        if not isinstance(listed, list) or not listed:
            raise fail(lines.key(header, "subjects"), "subjects must be a non-empty list")
        for subject in listed:
            if not isinstance(subject, str):
                raise fail(lines.key(header, "subjects"), "every subject must be a string")
            try:
                check_identifier("subjects", subject)
            except InvalidArgument as exc:
                raise fail(lines.key(header, "subjects"), str(exc)) from exc
        subjects = frozenset(listed)
    return TokenEntry(tenant, digest, name, Scope(read_only, prefix, subjects), header)


def _tenant_limits(tables: Any, lines: _Lines, fail: _Fail) -> dict[str, TenantLimits]:
    if not isinstance(tables, dict):
        raise fail(lines.first_key("tenants"), "tenants must be tables: [tenants.NAME]")
    limits: dict[str, TenantLimits] = {}
    for tenant, table in tables.items():
        header = lines.tenant_headers.get(tenant, 1)
        if not isinstance(table, dict):
            raise fail(header, f"tenants.{tenant} must be a table")
        for key in table:
            if key not in LIMIT_KEYS:
                raise fail(
                    lines.key(header, key),
                    f"unknown limit {key!r} (a tenant takes {', '.join(LIMIT_KEYS)})",
                )
        rate = table.get("requests_per_second")
        if rate is not None and (
            isinstance(rate, bool) or not isinstance(rate, int | float) or not rate > 0
        ):
            raise fail(lines.key(header, "requests_per_second"), "must be a number above 0")
        burst = table.get("burst")
        if burst is not None and (
            isinstance(burst, bool) or not isinstance(burst, int) or burst < 1
        ):
            raise fail(lines.key(header, "burst"), "must be a whole number of at least 1")
        if burst is not None and rate is None:
            raise fail(lines.key(header, "burst"), "burst needs requests_per_second")
        most = table.get("max_episodes")
        if most is not None and (isinstance(most, bool) or not isinstance(most, int) or most < 0):
            raise fail(lines.key(header, "max_episodes"), "must be a whole number of at least 0")
        limits[tenant] = TenantLimits(None if rate is None else float(rate), burst, most)
    return limits


def entry_text(
    tenant: str,
    digest: str,
    *,
    name: str | None = None,
    read_only: bool = False,
    student_prefix: str = "",
    subjects: tuple[str, ...] = (),
) -> str:
    """A [[tokens]] entry as `tutor-memory token new` prints it (parsed by `parse_tokens`)."""
    lines = ["[[tokens]]", f"tenant = {_toml_str(tenant)}", f'sha256 = "{digest}"']
    if name:
        lines.append(f"name = {_toml_str(name)}")
    if read_only:
        lines.append("read_only = true")
    if student_prefix:
        lines.append(f"student_prefix = {_toml_str(student_prefix)}")
    if subjects:
        lines.append("subjects = [" + ", ".join(_toml_str(s) for s in subjects) + "]")
    return "\n".join(lines) + "\n"


def _toml_str(value: str) -> str:
    """A TOML basic string: JSON's escapes (\\n, \\", \\uXXXX) are TOML's too."""
    return json.dumps(value, ensure_ascii=False)
