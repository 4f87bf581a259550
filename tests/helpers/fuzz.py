"""Fuzzing with hypothesis: random protobuf messages built from their descriptors, hostile text,
and the two run lengths (a short run in every `make test`, a long one with `make fuzz`).

`FUZZ_EXAMPLES` is the number of examples per property: small by default, large when the
environment variable TUTOR_MEMORY_FUZZ_EXAMPLES says so (`make fuzz`).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Examples per property in a plain test run, and in `make fuzz` (through the environment).
DEFAULT_EXAMPLES = 150
FUZZ_EXAMPLES = int(os.environ.get("TUTOR_MEMORY_FUZZ_EXAMPLES", DEFAULT_EXAMPLES))

fuzz_settings = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Characters that break naive code: controls, separators, bidirectional and zero-width marks,
# combining marks, Arabic, emoji, punctuation runs; plus any code point hypothesis picks.
_HOSTILE = (
    "\x00\t\n\r\x0b\x85\u2028\u2029\u200b\u200d\u202e\ufeff\u0301\u064b.!?;:#*-_`~|>[]()'\"؟،😀"
)
hostile_text = st.text(
    alphabet=st.one_of(
        st.sampled_from(list(_HOSTILE)),
        st.characters(exclude_categories=["Cs"]),
        st.sampled_from(list("abcdefghij osmosis")),
    ),
    max_size=400,
) | st.builds(lambda c, n: c * n, st.sampled_from([*list(_HOSTILE), "a. ", "# ", "ab"]),
              st.integers(0, 3000))  # fmt: skip

_INTS = {
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int64": st.integers(-(2**63), 2**63 - 1),
    "uint32": st.integers(0, 2**32 - 1),
    "uint64": st.integers(0, 2**64 - 1),
}


def _scalar(field: Any) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind == field.TYPE_STRING:
        return hostile_text
    if kind == field.TYPE_BYTES:
        return st.binary(max_size=256)
    if kind in (field.TYPE_DOUBLE, field.TYPE_FLOAT):
        return st.floats(allow_nan=True, allow_infinity=True)
    if kind == field.TYPE_BOOL:
        return st.booleans()
    if kind == field.TYPE_ENUM:
        return st.integers(-2, 12)
    if kind in (field.TYPE_INT32, field.TYPE_SINT32, field.TYPE_SFIXED32):
        return _INTS["int32"]
    if kind in (field.TYPE_UINT32, field.TYPE_FIXED32):
        return _INTS["uint32"]
    if kind in (field.TYPE_UINT64, field.TYPE_FIXED64):
        return _INTS["uint64"]
    return _INTS["int64"]


def messages(cls: type[Message], depth: int = 0) -> st.SearchStrategy[Message]:
    """Random instances of a generated message class: any field may be set to any value of its
    type (timestamps included, with any seconds and nanos protobuf can carry)."""

    @st.composite
    def build(draw: st.DrawFn) -> Message:
        msg = cls()
        for field in cls.DESCRIPTOR.fields:
            if not draw(st.booleans()):
                continue
            if field.message_type is not None:
                if depth >= 2:
                    continue
                child_cls = GetMessageClass(field.message_type)  # type: ignore[arg-type]
                if field.is_repeated:
                    target = getattr(msg, field.name)
                    for _ in range(draw(st.integers(0, 3))):
                        target.add().CopyFrom(draw(messages(child_cls, depth + 1)))
                else:
                    getattr(msg, field.name).CopyFrom(draw(messages(child_cls, depth + 1)))
                continue
            if field.is_repeated:
                values = draw(st.lists(_scalar(field), max_size=4))
                with contextlib.suppress(ValueError, TypeError):
                    getattr(msg, field.name).extend(values)
                continue
            # A value protobuf itself refuses cannot reach the server.
            with contextlib.suppress(ValueError, TypeError):
                setattr(msg, field.name, draw(_scalar(field)))
        return msg

    return build()
