import { IngestEpisodesRequest, type NewEpisode } from "./gen/tutor_memory/v1/memory.js";

/** Items per IngestEpisodes stream message: the server reads each message separately, so many
 * items per message cost far less than one each, while 100 items of the largest allowed text
 * (64 KiB) stay well under the server's 16 MiB message limit. */
export const ITEMS_PER_MESSAGE = 100;

/** Groups a batch into stream messages of `perMessage` items (the last may be short). */
export function ingestMessages(
  episodes: readonly NewEpisode[],
  perMessage: number = ITEMS_PER_MESSAGE,
): IngestEpisodesRequest[] {
  const size = Math.max(1, Math.floor(perMessage));
  const messages: IngestEpisodesRequest[] = [];
  for (let start = 0; start < episodes.length; start += size) {
    messages.push(IngestEpisodesRequest.fromPartial({ episodes: episodes.slice(start, start + size) }));
  }
  return messages;
}
