/** TypeScript client for the Tutor Memory gRPC service: the generated messages and client (`pb`)
 * and a small wrapper around them. */
export * as pb from "./gen/tutor_memory/v1/memory.js";
export { type CallOptions, type ClientOptions, MemoryClient } from "./client.js";
export { countStatus, type ImportOptions, type ImportResult, importMessages } from "./import.js";
export { ingestMessages, ITEMS_PER_MESSAGE } from "./ingest.js";
export { composePrompt, isEmptyAssessment, type PromptParts } from "./prompt.js";
export { DEFAULT_ATTEMPTS, DEFAULT_TIMEOUT_MS, FIRST_BACKOFF_MS } from "./retry.js";
