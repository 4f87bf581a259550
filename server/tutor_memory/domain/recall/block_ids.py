"""Block ids that carry what their block showed (R7.2), sealed by the server.

AnnotateAnswer must accept as "shown" only the memories the named block actually showed; a caller
that could name any episode of the chain could inflate an answer's grounding. Rather than keep a
record of every block it ever built (a write per turn on the read path), the server puts the ids
of the block's memories into the block id itself, with a MAC under a secret only it holds. The id
stays deterministic (the same request and the same memories give the same id, so a replayed turn
is recognisable) and verifies on any server holding the same key.

Form: "b1." + base64url(request digest, then the sorted memory ids as unsigned LEB128 deltas) +
"." + base64url(the first 16 bytes of HMAC-SHA256 over the chain and that payload).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.recall.block import BlockRequest

# The version prefix of the id's form.
BLOCK_ID_VERSION = "b1"
# Bytes of the request digest and of the MAC kept in an id.
DIGEST_BYTES = 12
MAC_BYTES = 16


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _request_digest(req: BlockRequest) -> bytes:
    h = hashlib.blake2b(digest_size=DIGEST_BYTES)
    for part in (req.chain.tenant, req.chain.student, req.chain.subject, req.query):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    h.update(f"{req.now_us}:{req.budget_tokens}:{req.mode.value}".encode())
    return h.digest()


def _pack_ids(ids: Sequence[int]) -> bytes:
    out = bytearray()
    previous = 0
    for value in sorted(set(ids)):
        delta = value - previous
        previous = value
        while True:
            byte = delta & 0x7F
            delta >>= 7
            out.append(byte | (0x80 if delta else 0))
            if not delta:
                break
    return bytes(out)


def _unpack_ids(data: bytes) -> tuple[int, ...]:
    ids = []
    value = shift = previous = 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            previous += value
            ids.append(previous)
            value = shift = 0
    if shift:
        raise ValueError("truncated id")
    return tuple(ids)


class BlockIds:
    """Issues and reads block ids under one secret."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _mac(self, chain: ChainKey, payload: bytes) -> bytes:
        h = hmac.new(self._secret, digestmod=hashlib.sha256)
        for part in (BLOCK_ID_VERSION, chain.tenant, chain.student, chain.subject):
            encoded = part.encode("utf-8", "surrogatepass")
            h.update(len(encoded).to_bytes(4, "big"))
            h.update(encoded)
        h.update(payload)
        return h.digest()[:MAC_BYTES]

    def issue(self, req: BlockRequest, memory_ids: Sequence[int]) -> str:
        payload = _request_digest(req) + _pack_ids(memory_ids)
        return f"{BLOCK_ID_VERSION}.{_b64(payload)}.{_b64(self._mac(req.chain, payload))}"

    def shown(self, chain: ChainKey, block_id: str) -> frozenset[int]:
        """The episode ids the block showed; INVALID_ARGUMENT naming block_id when it is not an
        id this server issued for this chain."""
        problem = "not a block id this server issued for this student and subject"
        try:
            version, payload_text, mac_text = block_id.split(".")
            payload, mac = _unb64(payload_text), _unb64(mac_text)
        except (ValueError, binascii.Error):
            raise InvalidArgument("block_id", problem) from None
        if (
            version != BLOCK_ID_VERSION
            or len(payload) < DIGEST_BYTES
            or not hmac.compare_digest(mac, self._mac(chain, payload))
        ):
            raise InvalidArgument("block_id", problem)
        try:
            return frozenset(_unpack_ids(payload[DIGEST_BYTES:]))
        except ValueError:
            raise InvalidArgument("block_id", problem) from None
