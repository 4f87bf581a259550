import assert from "node:assert/strict";
import { test } from "node:test";
import { status } from "@grpc/grpc-js";

import { withRetry } from "../src/retry.js";

/** Retries quickly so the tests measure behaviour, not sleeps. */
const FAST = { attempts: 3, firstBackoffMs: 1 };

/** A call that fails with each code in turn, then succeeds; `calls.count` counts its calls. */
function failing(calls: { count: number }, ...codes: number[]): () => Promise<string> {
  return async () => {
    calls.count++;
    const code = codes[calls.count - 1];
    if (code !== undefined) {
      throw Object.assign(new Error("injected"), { code });
    }
    return "ok";
  };
}

test("UNAVAILABLE is retried until the call succeeds", async () => {
  const calls = { count: 0 };
  assert.equal(await withRetry(FAST, true, failing(calls, status.UNAVAILABLE, status.UNAVAILABLE)), "ok");
  assert.equal(calls.count, 3);
});

test("retries stop after the last attempt", async () => {
  const calls = { count: 0 };
  const codes = Array<number>(5).fill(status.UNAVAILABLE);
  await assert.rejects(withRetry(FAST, true, failing(calls, ...codes)), { code: status.UNAVAILABLE });
  assert.equal(calls.count, FAST.attempts);
});

test("other codes are never retried", async () => {
  for (const code of [status.UNAUTHENTICATED, status.INVALID_ARGUMENT, status.DEADLINE_EXCEEDED]) {
    const calls = { count: 0 };
    await assert.rejects(withRetry(FAST, true, failing(calls, code)), { code });
    assert.equal(calls.count, 1);
  }
});

test("a call that may duplicate is tried once", async () => {
  const calls = { count: 0 };
  await assert.rejects(withRetry(FAST, false, failing(calls, status.UNAVAILABLE)), { code: status.UNAVAILABLE });
  assert.equal(calls.count, 1);
});
