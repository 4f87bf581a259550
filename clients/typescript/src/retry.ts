import { setTimeout as sleep } from "node:timers/promises";
import { status } from "@grpc/grpc-js";

/** How long one attempt of a call may take unless the caller says otherwise. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** How many times a retryable call is tried. */
export const DEFAULT_ATTEMPTS = 4;
/** The wait before the first retry; each later wait doubles. */
export const FIRST_BACKOFF_MS = 200;

/** How a call is repeated. Only UNAVAILABLE (the server was not reached or went away) is
 * retried, and only for calls that cannot duplicate anything. */
export interface RetryPolicy {
  attempts: number;
  firstBackoffMs: number;
}

/** The gRPC status code an error carries, if any. */
export function codeOf(error: unknown): number | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === "number" ? code : undefined;
  }
  return undefined;
}

/** Runs `attempt` until it succeeds, fails with a code other than UNAVAILABLE, or runs out of
 * attempts. `retry` false means a single attempt. */
export async function withRetry<T>(
  policy: RetryPolicy,
  retry: boolean,
  attempt: () => Promise<T>,
): Promise<T> {
  let backoff = policy.firstBackoffMs;
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      if (!retry || tried >= policy.attempts || codeOf(error) !== status.UNAVAILABLE) {
        throw error;
      }
    }
    await sleep(backoff);
    backoff *= 2;
  }
}
