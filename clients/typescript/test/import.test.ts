import assert from "node:assert/strict";
import { test } from "node:test";
import { type sendUnaryData, Server, ServerCredentials, type ServerDuplexStream, status } from "@grpc/grpc-js";

import { MemoryClient } from "../src/client.js";
import {
  type ImportEpisodesReply,
  type ImportEpisodesRequest,
  IngestStatus,
  MemoryService,
  NewEpisode,
} from "../src/gen/tutor_memory/v1/memory.js";
import { ITEMS_PER_MESSAGE } from "../src/ingest.js";

/** A server whose first ImportEpisodes stream acknowledges its first message and then breaks
 * with UNAVAILABLE; later streams are acknowledged whole. Records the keys each stream carried. */
function breakingServer(streams: string[][]): Server {
  const server = new Server();
  const unimplemented = (_call: unknown, callback: sendUnaryData<unknown>): void =>
    callback({ code: status.UNIMPLEMENTED });
  const handlers: Record<string, unknown> = {};
  for (const name of Object.keys(MemoryService)) {
    handlers[name] = unimplemented;
  }
  handlers.importEpisodes = (call: ServerDuplexStream<ImportEpisodesRequest, ImportEpisodesReply>): void => {
    const first = streams.length === 0;
    const keys: string[] = [];
    streams.push(keys);
    let index = 0;
    call.on("data", (message: ImportEpisodesRequest) => {
      const items = message.episodes.map((e) => {
        keys.push(e.clientKey);
        return {
          index: index++,
          clientKey: e.clientKey,
          status: IngestStatus.INGEST_STATUS_INSERTED,
          episodeId: 1000 + keys.length,
          reason: "",
        };
      });
      call.write({ items, inserted: 0, duplicate: 0, rejected: 0, vectorsPending: 0 });
      if (first) {
        call.emit("error", { code: status.UNAVAILABLE, details: "injected: the connection went away" });
      }
    });
    call.on("end", () => call.end());
  };
  server.addService(MemoryService, handlers as never);
  return server;
}

test("a broken import resends only what was not acknowledged", async () => {
  const streams: string[][] = [];
  const server = breakingServer(streams);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  const client = new MemoryClient(`127.0.0.1:${port}`, { attempts: 3 });
  try {
    const batch = Array.from({ length: 250 }, (_, i) => NewEpisode.fromPartial({ clientKey: `k${i}` }));
    let progress = 0;
    const result = await client.importEpisodes(batch, { onProgress: () => progress++ });
    assert.equal(result.attempts, 2);
    assert.equal(streams.length, 2);
    assert.equal(streams[1].length, batch.length - ITEMS_PER_MESSAGE);
    assert.equal(streams[1][0], `k${ITEMS_PER_MESSAGE}`);
    assert.ok(progress >= 2);
    assert.deepEqual(
      result.items.map((r) => [r.index, r.clientKey]),
      batch.map((e, i) => [i, e.clientKey]),
    );
  } finally {
    client.close();
    server.forceShutdown();
  }
});
