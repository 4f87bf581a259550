/**
 * A small promise-based client: bearer token, a default deadline, and retries that are safe.
 * Only UNAVAILABLE is retried (the server was not reached or went away), with exponential
 * backoff, and only for calls that cannot duplicate anything: reads, and writes that carry client
 * keys. It mirrors clients/python/tutor_memory_client.
 */
import {
  type CallOptions as GrpcCallOptions,
  type ChannelCredentials,
  type ClientOptions as GrpcClientOptions,
  credentials as grpcCredentials,
  Metadata,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import { setTimeout as sleep } from "node:timers/promises";

import {
  type AnnotateAnswerReply,
  AnnotateAnswerRequest,
  type AppendEpisodeReply,
  AppendEpisodeRequest,
  type BuildBlockReply,
  BuildBlockRequest,
  type CheckpointReply,
  CheckpointRequest,
  type Episode,
  type ForgetStudentReply,
  ForgetStudentRequest,
  type ImportEpisodesReply,
  type IngestEpisodesReply,
  type IngestItemResult,
  type ListEpisodesReply,
  ListEpisodesRequest,
  MemoryClient as MemoryStub,
  type NewEpisode,
  type SignedCheckpoint,
  type VerifyChainReply,
  VerifyChainRequest,
} from "./gen/tutor_memory/v1/memory.js";
import { type ImportOptions, type ImportResult, importMessages } from "./import.js";
import { ingestMessages, ITEMS_PER_MESSAGE } from "./ingest.js";
import {
  codeOf,
  DEFAULT_ATTEMPTS,
  DEFAULT_TIMEOUT_MS,
  FIRST_BACKOFF_MS,
  type RetryPolicy,
  withRetry,
} from "./retry.js";

export interface ClientOptions {
  /** Bearer token of the caller's tenant; none in the server's development mode. */
  token?: string;
  /** Channel credentials (TLS); plaintext when absent, for loopback only. */
  credentials?: ChannelCredentials;
  /** Bounds each attempt of a call unless the call says otherwise; DEFAULT_TIMEOUT_MS. */
  timeoutMs?: number;
  /** How many times a retryable call is tried; DEFAULT_ATTEMPTS. */
  attempts?: number;
  /** Passed to the generated @grpc/grpc-js client. */
  channelOptions?: Partial<GrpcClientOptions>;
}

export interface CallOptions {
  /** Bounds each attempt of this call, instead of the client's timeoutMs. */
  timeoutMs?: number;
}

type Callback<T> = (error: ServiceError | null, reply: T) => void;

/** A promise for a call started with a node-style callback. */
function settle<T>(start: (callback: Callback<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((error, reply) => (error ? reject(error) : resolve(reply)));
  });
}

export class MemoryClient {
  /** The generated client on the same channel, for the RPCs the wrapper does not cover. */
  readonly stub: MemoryStub;
  private readonly token: string | undefined;
  private readonly timeoutMs: number;
  private readonly policy: RetryPolicy;

  constructor(target: string, options: ClientOptions = {}) {
    this.stub = new MemoryStub(
      target,
      options.credentials ?? grpcCredentials.createInsecure(),
      options.channelOptions,
    );
    this.token = options.token;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.policy = { attempts: options.attempts ?? DEFAULT_ATTEMPTS, firstBackoffMs: FIRST_BACKOFF_MS };
  }

  close(): void {
    this.stub.close();
  }

  private metadata(): Metadata {
    const metadata = new Metadata();
    if (this.token) {
      metadata.set("authorization", `Bearer ${this.token}`);
    }
    return metadata;
  }

  /** Options of one attempt: its deadline starts when the attempt does. */
  private attemptOptions(options: CallOptions): Partial<GrpcCallOptions> {
    return { deadline: Date.now() + (options.timeoutMs ?? this.timeoutMs) };
  }

  /** Appends one episode; retried on UNAVAILABLE only when it carries a clientKey. */
  appendEpisode(episode: NewEpisode, options: CallOptions = {}): Promise<AppendEpisodeReply> {
    const request = AppendEpisodeRequest.fromPartial({ episode });
    return withRetry(this.policy, episode.clientKey !== "", () =>
      settle<AppendEpisodeReply>((done) =>
        this.stub.appendEpisode(request, this.metadata(), this.attemptOptions(options), done),
      ),
    );
  }

  /** Streams a batch (every item needs a clientKey) in messages of ITEMS_PER_MESSAGE. A retry
   * resends the whole batch: items the server already stored come back as duplicates, never
   * twice. */
  ingestEpisodes(episodes: readonly NewEpisode[], options: CallOptions = {}): Promise<IngestEpisodesReply> {
    const messages = ingestMessages(episodes, ITEMS_PER_MESSAGE);
    return withRetry(this.policy, true, () =>
      settle<IngestEpisodesReply>((done) => {
        const call = this.stub.ingestEpisodes(this.metadata(), this.attemptOptions(options), done);
        let next = 0;
        // Honours backpressure; a failed call settles through `done`, whatever is left unsent.
        const pump = (): void => {
          while (next < messages.length) {
            if (!call.write(messages[next++])) {
              call.once("drain", pump);
              return;
            }
          }
          call.end();
        };
        pump();
      }),
    );
  }

  /** Imports a batch of any size with ImportEpisodes (every item needs a clientKey), calling
   * `onProgress` with each acknowledged chunk. A stream that breaks with UNAVAILABLE is resumed
   * with only the items no reply acknowledged. */
  async importEpisodes(episodes: readonly NewEpisode[], options: ImportOptions = {}): Promise<ImportResult> {
    const done = new Map<number, IngestItemResult>();
    let backoff = this.policy.firstBackoffMs;
    let attempts = 0;
    for (let attempt = 1; ; attempt++) {
      const todo = episodes.map((_, i) => i).filter((i) => !done.has(i));
      if (todo.length === 0) {
        break;
      }
      attempts = attempt;
      try {
        await this.importOnce(episodes, todo, done, options);
        break;
      } catch (error) {
        if (attempt >= this.policy.attempts || codeOf(error) !== status.UNAVAILABLE) {
          throw error;
        }
      }
      await sleep(backoff);
      backoff *= 2;
    }
    const items = [...done.keys()].sort((a, b) => a - b).map((i) => done.get(i) as IngestItemResult);
    return { items, attempts };
  }

  /** Streams the items at positions `todo`, recording each acknowledged one in `done` under its
   * position in the batch. */
  private importOnce(
    episodes: readonly NewEpisode[],
    todo: number[],
    done: Map<number, IngestItemResult>,
    options: ImportOptions,
  ): Promise<void> {
    const messages = importMessages(todo.map((i) => episodes[i]));
    const callOptions = options.timeoutMs === undefined ? {} : { deadline: Date.now() + options.timeoutMs };
    return new Promise<void>((resolve, reject) => {
      const call = this.stub.importEpisodes(this.metadata(), callOptions);
      call.on("data", (reply: ImportEpisodesReply) => {
        for (const item of reply.items) {
          // The stream counts from its own start: back to the batch's positions.
          const position = todo[item.index];
          done.set(position, { ...item, index: position });
        }
        options.onProgress?.(reply);
      });
      call.on("error", reject);
      call.on("end", () => resolve());
      let next = 0;
      // Honours backpressure; a failed call settles through "error", whatever is left unsent.
      const pump = (): void => {
        while (next < messages.length) {
          if (!call.write(messages[next++])) {
            call.once("drain", pump);
            return;
          }
        }
        call.end();
      };
      pump();
    });
  }

  /** Every episode of the chain the request names, oldest first, fetched page by page (the
   * request's pageToken is the starting point). Each page is retried on UNAVAILABLE. */
  async *listEpisodes(request: Partial<ListEpisodesRequest>, options: CallOptions = {}): AsyncGenerator<Episode> {
    const page = ListEpisodesRequest.fromPartial(request);
    for (;;) {
      const reply = await withRetry(this.policy, true, () =>
        settle<ListEpisodesReply>((done) =>
          this.stub.listEpisodes(page, this.metadata(), this.attemptOptions(options), done),
        ),
      );
      yield* reply.episodes;
      if (!reply.nextPageToken) {
        return;
      }
      page.pageToken = reply.nextPageToken;
    }
  }

  /** Recomputes the chain's hashes; with a checkpoint it also says whether it still holds. */
  verifyChain(
    studentId: string,
    subjectId: string,
    checkpoint?: SignedCheckpoint,
    options: CallOptions = {},
  ): Promise<VerifyChainReply> {
    const request = VerifyChainRequest.fromPartial({ studentId, subjectId, checkpoint });
    return withRetry(this.policy, true, () =>
      settle<VerifyChainReply>((done) =>
        this.stub.verifyChain(request, this.metadata(), this.attemptOptions(options), done),
      ),
    );
  }

  /** The chain head signed by the server. */
  async checkpoint(studentId: string, subjectId: string, options: CallOptions = {}): Promise<SignedCheckpoint | undefined> {
    const request = CheckpointRequest.fromPartial({ studentId, subjectId });
    const reply = await withRetry(this.policy, true, () =>
      settle<CheckpointReply>((done) =>
        this.stub.checkpoint(request, this.metadata(), this.attemptOptions(options), done),
      ),
    );
    return reply.checkpoint;
  }

  /** Erases the student in every subject (the right to be forgotten). Retried: a second call
   * changes nothing and says alreadyErased. */
  forgetStudent(studentId: string, allowPlaintextHistory = false, options: CallOptions = {}): Promise<ForgetStudentReply> {
    const request = ForgetStudentRequest.fromPartial({ studentId, allowPlaintextHistory });
    return withRetry(this.policy, true, () =>
      settle<ForgetStudentReply>((done) =>
        this.stub.forgetStudent(request, this.metadata(), this.attemptOptions(options), done),
      ),
    );
  }

  /** The memory block for one chat turn. It only reads, so it is retried on UNAVAILABLE; give it
   * a short timeoutMs: a late block should be skipped, not awaited (SPEC R6.1). */
  buildBlock(request: Partial<BuildBlockRequest>, options: CallOptions = {}): Promise<BuildBlockReply> {
    const message = BuildBlockRequest.fromPartial(request);
    return withRetry(this.policy, true, () =>
      settle<BuildBlockReply>((done) =>
        this.stub.buildBlock(message, this.metadata(), this.attemptOptions(options), done),
      ),
    );
  }

  /** Saves which block and memories were shown for the turn the answer closes. Never retried:
   * each call writes an annotation row. */
  annotateAnswer(request: Partial<AnnotateAnswerRequest>, options: CallOptions = {}): Promise<AnnotateAnswerReply> {
    const message = AnnotateAnswerRequest.fromPartial(request);
    return withRetry(this.policy, false, () =>
      settle<AnnotateAnswerReply>((done) =>
        this.stub.annotateAnswer(message, this.metadata(), this.attemptOptions(options), done),
      ),
    );
  }
}
