// Package tutormemory is a small client for the Tutor Memory gRPC service (package memoryv1 holds
// the generated stubs): a bearer token on every call, a default deadline, retries with backoff on
// UNAVAILABLE only and only for calls that cannot duplicate anything (reads, and writes that carry
// client keys), batch ingest grouped into stream messages, and the prompt-composition rule of
// SPEC R6.6 (ComposePrompt). It mirrors clients/python/tutor_memory_client.
package tutormemory
