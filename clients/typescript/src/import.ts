import {
  type ImportEpisodesReply,
  ImportEpisodesRequest,
  type IngestItemResult,
  type IngestStatus,
  type NewEpisode,
} from "./gen/tutor_memory/v1/memory.js";
import { ingestMessages, ITEMS_PER_MESSAGE } from "./ingest.js";

/** Groups an import into ImportEpisodes stream messages of `perMessage` items. */
export function importMessages(
  episodes: readonly NewEpisode[],
  perMessage: number = ITEMS_PER_MESSAGE,
): ImportEpisodesRequest[] {
  return ingestMessages(episodes, perMessage).map((m) => ImportEpisodesRequest.fromPartial({ episodes: m.episodes }));
}

/** What an import stored: one result per item, `index` being the item's position in the batch
 * given to importEpisodes (not in the stream of a resumed attempt). */
export interface ImportResult {
  items: IngestItemResult[];
  /** Streams opened: more than one when a broken stream was resumed. */
  attempts: number;
}

/** How many items of an import ended in `status`. */
export function countStatus(result: ImportResult, status: IngestStatus): number {
  return result.items.filter((item) => item.status === status).length;
}

export interface ImportOptions {
  /** Called with each acknowledged chunk. */
  onProgress?: (reply: ImportEpisodesReply) => void;
  /** Bounds each stream; by default an import has no deadline (it reports progress instead). */
  timeoutMs?: number;
}
