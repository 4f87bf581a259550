"""Python client for the Tutor Memory gRPC service: the generated stubs and a small wrapper."""

from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client.client import (
    ITEMS_PER_MESSAGE,
    ImportResult,
    MemoryClient,
    import_messages,
    ingest_messages,
)
from tutor_memory_client.prompt import PromptParts, compose_prompt, is_empty_assessment

__all__ = [
    "ITEMS_PER_MESSAGE",
    "ImportResult",
    "MemoryClient",
    "PromptParts",
    "compose_prompt",
    "import_messages",
    "ingest_messages",
    "is_empty_assessment",
    "pb",
]
