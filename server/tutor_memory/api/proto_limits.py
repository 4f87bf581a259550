"""The `Limit:` comments of a proto's request fields: which fields are request fields, what their
comments say, and the proto with those comments rewritten (`tutor_memory.api.limits_doc` says
what each limit is).

A request field is a field of a message some RPC takes, or of a message such a field holds, and
so on (NewEpisode inside AppendEpisodeRequest, Evidence inside NewEpisode). The proto is compiled
by the protoc of grpcio-tools (the one `make proto` uses) with its source information, which
gives each field's line and leading comment; no hand-written proto parser. It runs in a child
process: loaded into a process that has loaded psycopg, protoc's native library makes a later
import of onnxruntime_extensions (the embedder) abort the whole process.

A field's limit is the last paragraph of its leading comment, starting "Limit:", wrapped at the
proto's line length with continuation lines indented by two spaces:

    // The caller's stable name for the file; new bytes under the same id are a new version.
    // Limit: 1 to 256 characters; no control, invisible, bidirectional or separator
    //   characters, no space at either end
    string file_id = 3;
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from google.protobuf import descriptor_pb2

LIMIT_PREFIX = "Limit:"
# The proto's line length (as the code's).
LINE_CHARS = 100
# Index of `message_type` in FileDescriptorProto, `field` and `nested_type` in DescriptorProto:
# the steps of a SourceCodeInfo location's path.
_MESSAGE_TYPE, _FIELD, _NESTED_TYPE = 4, 2, 3


class UndocumentedFields(ValueError):
    """Request fields without a limit, or limits naming no request field."""

    def __init__(self, missing: Sequence[str], unknown: Sequence[str]) -> None:
        self.missing = list(missing)
        self.unknown = list(unknown)
        parts = []
        if missing:
            parts.append(
                "request fields without a limit (add them to tutor_memory.api.limits_doc.LIMITS): "
                + ", ".join(missing)
            )
        if unknown:
            parts.append("limits naming no request field: " + ", ".join(unknown))
        super().__init__("; ".join(parts))


@dataclass(frozen=True, slots=True)
class RequestField:
    """A request field as the proto declares it."""

    # "Message.field" ("Outer.Inner.field" for a nested message).
    name: str
    # 0-based line of its declaration.
    line: int
    # Its leading comment, without the comment markers.
    comment: str

    @property
    def field(self) -> str:
        return self.name.rpartition(".")[2]

    def limits(self) -> list[str]:
        """The `Limit:` paragraphs of its comment, each on one line."""
        found: list[list[str]] = []
        for line in self.comment.splitlines():
            text = line.strip()
            if text.startswith(LIMIT_PREFIX):
                found.append([text.removeprefix(LIMIT_PREFIX).strip()])
            elif found and text:
                found[-1].append(text)
        return [" ".join(parts) for parts in found]


def _compile(proto: str, path: str) -> descriptor_pb2.FileDescriptorProto:
    include = resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "src", path)
        source.parent.mkdir(parents=True)
        source.write_text(proto, encoding="utf-8")
        out = Path(tmp, "descriptor.pb")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                f"-I{Path(tmp, 'src')}",
                f"-I{include}",
                "--include_source_info",
                f"--descriptor_set_out={out}",
                path,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise ValueError(
                f"protoc could not compile {path} (status {done.returncode}): {done.stderr}"
            )
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return next(f for f in files.file if f.name == path)


def _messages(
    file: descriptor_pb2.FileDescriptorProto,
) -> Iterator[tuple[str, descriptor_pb2.DescriptorProto, tuple[int, ...]]]:
    """Every message of the file (nested ones too): its full name, itself, its location path."""

    def walk(
        prefix: str, message: descriptor_pb2.DescriptorProto, path: tuple[int, ...]
    ) -> Iterator[tuple[str, descriptor_pb2.DescriptorProto, tuple[int, ...]]]:
        name = f"{prefix}.{message.name}"
        yield name, message, path
        for i, nested in enumerate(message.nested_type):
            yield from walk(name, nested, (*path, _NESTED_TYPE, i))

    for i, message in enumerate(file.message_type):
        yield from walk(f".{file.package}", message, (_MESSAGE_TYPE, i))


def request_fields(proto: str, path: str) -> list[RequestField]:
    """The request fields of the proto (module docstring), in the order it declares them."""
    file = _compile(proto, path)
    messages = {name: (message, loc) for name, message, loc in _messages(file)}
    locations = {tuple(loc.path): loc for loc in file.source_code_info.location}
    wanted = [m.input_type for service in file.service for m in service.method]
    seen: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in seen or name not in messages:  # google.protobuf.Timestamp is not ours
            continue
        seen.add(name)
        wanted += [f.type_name for f in messages[name][0].field if f.type_name]
    prefix = f".{file.package}."
    found = []
    for name, (message, where) in messages.items():
        if name not in seen:
            continue
        for i, field in enumerate(message.field):
            loc = locations[(*where, _FIELD, i)]
            found.append(
                RequestField(
                    f"{name.removeprefix(prefix)}.{field.name}", loc.span[0], loc.leading_comments
                )
            )
    return sorted(found, key=lambda f: f.line)


def expected_limits(
    fields: Sequence[RequestField], patterns: Sequence[tuple[str, str]]
) -> dict[str, list[str]]:
    """Each request field's limits from (pattern, limit) pairs: the pairs naming the field
    ("Message.field"), else those of "*.field". Raises UndocumentedFields when a field has none
    or a pattern names no request field."""
    expected: dict[str, list[str]] = {}
    used: set[str] = set()
    missing = []
    for field in fields:
        own = [(p, limit) for p, limit in patterns if p == field.name]
        shared = [(p, limit) for p, limit in patterns if p == f"*.{field.field}"]
        chosen = own or shared
        if not chosen:
            missing.append(field.name)
        used.update(p for p, _ in chosen)
        expected[field.name] = [" ".join(limit.split()) for _, limit in chosen]
    unknown = list(dict.fromkeys(p for p, _ in patterns if p not in used))
    if missing or unknown:
        raise UndocumentedFields(missing, unknown)
    return expected


def _comment_lines(indent: str, limit: str) -> list[str]:
    wrapped = textwrap.wrap(
        f"{LIMIT_PREFIX} {limit}",
        width=LINE_CHARS - len(indent) - len("// "),
        subsequent_indent="  ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [f"{indent}// {line}" for line in wrapped]


def with_limit_comments(proto: str, path: str, patterns: Sequence[tuple[str, str]]) -> str:
    """`proto` with each request field's `Limit:` paragraphs (the last of its leading comment)
    replaced by those `patterns` give it (see `expected_limits`). `path` is the proto's import
    path ("tutor_memory/v1/memory.proto")."""
    fields = request_fields(proto, path)
    expected = expected_limits(fields, patterns)
    lines = proto.split("\n")
    # From the bottom up, so that the lines of the fields above stay where protoc saw them.
    for field in sorted(fields, key=lambda f: f.line, reverse=True):
        declaration = lines[field.line]
        indent = declaration[: len(declaration) - len(declaration.lstrip())]
        start = field.line
        while start > 0 and lines[start - 1].lstrip().startswith("//"):
            start -= 1
        first_limit = next(
            (
                i
                for i in range(start, field.line)
                if lines[i].lstrip().removeprefix("//").strip().startswith(LIMIT_PREFIX)
            ),
            field.line,
        )
        new = [line for limit in expected[field.name] for line in _comment_lines(indent, limit)]
        lines[first_limit : field.line] = new
    return "\n".join(lines)
