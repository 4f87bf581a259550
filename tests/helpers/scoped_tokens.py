"""A tokens file of one tenant ("school") with a token of each scope: unscoped, read-only, a
student prefix ("7b-") and a subject list (biology); the API's and the console's scope tests
share it."""

from __future__ import annotations

from tutor_memory.api.auth import token_sha256

FULL, READER, CLASS_7B, BIOLOGY = "full-token", "reader-token", "class-7b-token", "bio-token"

TOKENS = f"""
[[tokens]]
tenant = "school"
name = "admin"
sha256 = "{token_sha256(FULL)}"

[[tokens]]
tenant = "school"
name = "reports"
sha256 = "{token_sha256(READER)}"
read_only = true

[[tokens]]
tenant = "school"
name = "class-7b"
sha256 = "{token_sha256(CLASS_7B)}"
student_prefix = "7b-"

[[tokens]]
tenant = "school"
name = "biology-tutor"
sha256 = "{token_sha256(BIOLOGY)}"
subjects = ["biology"]
"""
