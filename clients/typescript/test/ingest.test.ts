import assert from "node:assert/strict";
import { test } from "node:test";

import { NewEpisode } from "../src/gen/tutor_memory/v1/memory.js";
import { ingestMessages, ITEMS_PER_MESSAGE } from "../src/ingest.js";

test("a batch is grouped into messages in order", () => {
  const batch = Array.from({ length: 250 }, (_, i) => NewEpisode.fromPartial({ clientKey: String(i) }));
  const messages = ingestMessages(batch, ITEMS_PER_MESSAGE);
  assert.deepEqual(messages.map((m) => m.episodes.length), [100, 100, 50]);
  assert.deepEqual(
    messages.flatMap((m) => m.episodes.map((e) => e.clientKey)),
    batch.map((e) => e.clientKey),
  );
});

test("an empty batch is no message", () => {
  assert.deepEqual(ingestMessages([]), []);
});
