/**
 * The conformance scenario (tests/conformance/scenario.json) run through the TypeScript client:
 *
 *   node dist/conformance/run.js --scenario ../../tests/conformance/scenario.json \
 *       --target 127.0.0.1:PORT --token TOKEN --run-id ts --unreachable 127.0.0.1:FREE_PORT
 *
 * Exits 1 and names every mismatch when the server or the client does not do what the scenario
 * says; the Python and Go runners check the same things in the same order.
 */
import { readFileSync } from "node:fs";
import { isDeepStrictEqual, parseArgs } from "node:util";
import { status } from "@grpc/grpc-js";

import { composePrompt, countStatus, type ImportResult, MemoryClient, pb } from "../src/index.js";

/** Bounds each call of the scenario: generous, since CI machines are small and shared. */
const CALL_TIMEOUT_MS = 20_000;

interface EpisodeSpec {
  client_key: string;
  kind: string;
  summary: string;
  text: string;
  occurred_at: string;
  salience?: number;
}

/** tests/conformance/scenario.json (its "about" fields are for people). */
interface Scenario {
  student_prefix: string;
  subject_id: string;
  attempts: number;
  episodes: EpisodeSpec[];
  batch: {
    count: number;
    interrupted_after: number;
    without_key: number[];
    template: EpisodeSpec;
    rejected_reason_contains: string;
  };
  import: {
    subject_id: string;
    count: number;
    acknowledged_first: number;
    min_progress_replies: number;
    template: EpisodeSpec;
  };
  list: { page_size: number };
  block: {
    query: string;
    budget_tokens: number;
    now: string;
    time_zone: string;
    memory_keys: string[];
    text_contains: string[];
    text_lacks: string[];
  };
  answer: EpisodeSpec;
  bad_request: { episode: EpisodeSpec; code: string; message_contains: string };
  forget: { chains: number; list_code: string; unknown_student: string; unknown_code: string };
  wrong_token: { token: string; code: string };
  unreachable: { code: string; min_retry_seconds: number };
  prompt_cases: Array<{
    name: string;
    parts: { instructions: string; memory_block: string; legacy_assessment: string; context: string[] };
    expected: string;
  }>;
}

/** Counts checks and keeps every failure, so one run names all the mismatches. */
class Checks {
  passed = 0;
  readonly failures: string[] = [];

  expect(ok: boolean, what: string): void {
    if (ok) {
      this.passed++;
    } else {
      this.failures.push(what);
    }
  }

  equal(got: unknown, want: unknown, what: string): void {
    this.expect(isDeepStrictEqual(got, want), `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

function statusCode(name: string): number {
  const code = (status as unknown as Record<string, number | undefined>)[name];
  if (code === undefined) {
    throw new Error(`unknown status code ${name}`);
  }
  return code;
}

function episodeKind(name: string): pb.EpisodeKind {
  const kind = pb.episodeKindFromJSON(name);
  if (kind === pb.EpisodeKind.UNRECOGNIZED) {
    throw new Error(`unknown episode kind ${name}`);
  }
  return kind;
}

function newEpisode(spec: EpisodeSpec, studentId: string, subjectId: string): pb.NewEpisode {
  return pb.NewEpisode.fromPartial({
    studentId,
    subjectId,
    kind: episodeKind(spec.kind),
    summary: spec.summary,
    text: spec.text,
    clientKey: spec.client_key,
    occurredAt: new Date(spec.occurred_at),
    salience: spec.salience,
  });
}

/** The import template expanded: {i} is the item's 0-based index. */
function importItems(s: Scenario, studentId: string): pb.NewEpisode[] {
  return Array.from({ length: s.import.count }, (_, i) => {
    const t = s.import.template;
    const at = (text: string): string => text.replaceAll("{i}", String(i));
    const spec = { ...t, client_key: at(t.client_key), summary: at(t.summary), text: at(t.text) };
    return newEpisode(spec, studentId, s.import.subject_id);
  });
}

/** ImportEpisodes: progress per committed chunk, and a resumed import that stores only what the
 * first one did not. */
async function checkImport(client: MemoryClient, s: Scenario, student: string, checks: Checks): Promise<void> {
  const items = importItems(s, student);
  const first = s.import.acknowledged_first;
  const replies: pb.ImportEpisodesReply[] = [];
  const onProgress = (reply: pb.ImportEpisodesReply): void => {
    replies.push(reply);
  };
  const counts = (r: ImportResult): number[] => [
    countStatus(r, pb.IngestStatus.INGEST_STATUS_INSERTED),
    countStatus(r, pb.IngestStatus.INGEST_STATUS_DUPLICATE),
    countStatus(r, pb.IngestStatus.INGEST_STATUS_REJECTED),
  ];
  const acknowledged = (): number => replies.reduce((n, r) => n + r.items.length, 0);
  const done = await client.importEpisodes(items.slice(0, first), { onProgress });
  checks.equal(counts(done), [first, 0, 0], "first import");
  checks.equal(acknowledged(), first, "first import: items acknowledged");
  replies.length = 0;
  const resumed = await client.importEpisodes(items, { onProgress });
  checks.equal(counts(resumed), [items.length - first, first, 0], "resumed import: inserted, duplicate, rejected");
  checks.expect(replies.length >= s.import.min_progress_replies, `resumed import: ${replies.length} progress replies`);
  checks.equal(acknowledged(), items.length, "resumed import: acknowledged");
  const last = replies.at(-1);
  checks.equal(
    [last?.inserted, last?.duplicate, last?.rejected],
    [items.length - first, first, 0],
    "resumed import: totals of the last reply",
  );
  checks.equal(
    resumed.items.map((r) => r.index),
    items.map((_, i) => i),
    "resumed: indices",
  );
  for (const [i, result] of resumed.items.entries()) {
    if (i < first) {
      checks.equal(result.status, pb.IngestStatus.INGEST_STATUS_DUPLICATE, `resumed import item ${i}: status`);
      checks.equal(result.episodeId, done.items[i]?.episodeId, `resumed import item ${i}: id`);
    } else {
      checks.equal(result.status, pb.IngestStatus.INGEST_STATUS_INSERTED, `resumed import item ${i}: status`);
    }
  }
}

/** The batch template expanded: {i} is the item's 0-based index. */
function batchItems(s: Scenario, studentId: string): pb.NewEpisode[] {
  return Array.from({ length: s.batch.count }, (_, i) => {
    const fill = (text: string): string => text.replaceAll("{i}", String(i));
    const t = s.batch.template;
    const spec = { ...t, client_key: fill(t.client_key), summary: fill(t.summary), text: fill(t.text) };
    if (s.batch.without_key.includes(i)) {
      spec.client_key = "";
    }
    return newEpisode(spec, studentId, s.subject_id);
  });
}

/** The status code a call fails with, and its message; undefined when it succeeds. */
async function failure(call: () => Promise<unknown>): Promise<{ code?: number; details: string }> {
  try {
    await call();
    return { details: "" };
  } catch (error) {
    const { code, details } = error as { code?: number; details?: string };
    return { code, details: details ?? "" };
  }
}

async function run(s: Scenario, args: Record<string, string>, checks: Checks): Promise<void> {
  const student = s.student_prefix + args["run-id"];
  const subject = s.subject_id;
  const ids = new Map<string, number>();
  const client = new MemoryClient(args.target, { token: args.token, timeoutMs: CALL_TIMEOUT_MS });
  try {
    for (const [i, spec] of s.episodes.entries()) {
      const reply = await client.appendEpisode(newEpisode(spec, student, subject));
      ids.set(spec.client_key, reply.episode?.episodeId ?? 0);
      checks.equal(reply.episode?.seq, i + 1, `append ${spec.client_key}: seq`);
      checks.equal(reply.duplicate, false, `append ${spec.client_key}: duplicate`);
    }
    const first = s.episodes[0];
    const again = await client.appendEpisode(newEpisode(first, student, subject));
    checks.equal(again.duplicate, true, "append again with the same key: duplicate");
    checks.equal(again.episode?.episodeId, ids.get(first.client_key), "append again: id");

    const items = batchItems(s, student);
    const cut = s.batch.interrupted_after;
    const partial = await client.ingestEpisodes(items.slice(0, cut));
    checks.equal([partial.inserted, partial.duplicate, partial.rejected], [cut, 0, 0], "first send");
    const retried = await client.ingestEpisodes(items);
    const missing = s.batch.without_key.length;
    checks.equal(
      [retried.inserted, retried.duplicate, retried.rejected],
      [items.length - cut - missing, cut, missing],
      "retried batch: inserted, duplicate, rejected",
    );
    for (const [i, result] of retried.items.entries()) {
      checks.equal(result.index, i, `retried batch item ${i}: index`);
      if (s.batch.without_key.includes(i)) {
        checks.equal(result.status, pb.IngestStatus.INGEST_STATUS_REJECTED, `item ${i}: status`);
        checks.expect(
          result.reason.includes(s.batch.rejected_reason_contains),
          `item ${i}: reason ${JSON.stringify(result.reason)} names the missing key`,
        );
      } else if (i < cut) {
        checks.equal(result.status, pb.IngestStatus.INGEST_STATUS_DUPLICATE, `item ${i}: status`);
        checks.equal(result.episodeId, partial.items[i]?.episodeId, `item ${i}: id`);
      } else {
        checks.equal(result.status, pb.IngestStatus.INGEST_STATUS_INSERTED, `item ${i}: status`);
      }
    }

    await checkImport(client, s, student, checks);

    const listed: pb.Episode[] = [];
    for await (const episode of client.listEpisodes({ studentId: student, subjectId: subject, pageSize: s.list.page_size })) {
      listed.push(episode);
    }
    const stored = s.episodes.length + items.length - missing;
    checks.equal(
      listed.map((e) => e.seq).sort((a, b) => a - b),
      Array.from({ length: stored }, (_, i) => i + 1),
      "listed seqs",
    );
    const times = listed.map((e) => e.occurredAt?.getTime() ?? 0);
    checks.equal(times, [...times].sort((a, b) => a - b), "listed oldest first");
    const byKey = new Map(listed.map((e) => [e.clientKey, e.episodeId]));
    checks.equal(new Map([...ids.keys()].map((k) => [k, byKey.get(k)])), ids, "listed ids of the appended keys");

    const spec = s.block;
    const block = await client.buildBlock({
      studentId: student,
      subjectId: subject,
      query: spec.query,
      budgetTokens: spec.budget_tokens,
      now: new Date(spec.now),
      timeZone: spec.time_zone,
    });
    const memoryIds = block.memories.map((m) => m.episodeId);
    checks.equal(memoryIds, spec.memory_keys.map((k) => ids.get(k)), "block memory ids");
    for (const text of spec.text_contains) {
      checks.expect(block.text.includes(text), `block text holds ${JSON.stringify(text)}:\n${block.text}`);
    }
    for (const text of spec.text_lacks) {
      checks.expect(!block.text.includes(text), `block text lacks ${JSON.stringify(text)}:\n${block.text}`);
    }
    checks.expect(block.tokensUsed <= spec.budget_tokens, "block within its budget");
    checks.expect(block.blockId !== "", "block has an id");

    const answer = await client.appendEpisode(newEpisode(s.answer, student, subject));
    const annotation = await client.annotateAnswer({
      studentId: student,
      subjectId: subject,
      answerEpisodeId: answer.episode?.episodeId ?? 0,
      blockId: block.blockId,
      memoryIds,
    });
    checks.expect(annotation.annotationId > 0, "annotation saved with an id");

    const bad = s.bad_request;
    const rejected = await failure(() => client.appendEpisode(newEpisode(bad.episode, student, subject)));
    checks.equal(rejected.code, statusCode(bad.code), "bad request: code");
    checks.expect(rejected.details.includes(bad.message_contains), `bad request: message ${JSON.stringify(rejected.details)}`);

    const erased = await client.forgetStudent(student);
    checks.expect(!erased.alreadyErased, "forget: the first call erases");
    checks.equal(erased.erasure?.chains, s.forget.chains, "forget: chains erased");
    checks.expect((erased.erasure?.episodes ?? 0) > 0, "forget: episodes counted");
    const verified = await client.verifyChain(student, subject);
    checks.expect(verified.ok && verified.erased, "forget: the chain verifies, erased");
    const listedAfter = await failure(async () => {
      for await (const _ of client.listEpisodes({ studentId: student, subjectId: subject })) {
        break;
      }
    });
    checks.equal(listedAfter.code, statusCode(s.forget.list_code), "forget: list code");
    const erasedAgain = await client.forgetStudent(student);
    checks.expect(erasedAgain.alreadyErased, "forget: a second call changes nothing");
    const unknown = await failure(() => client.forgetStudent(s.forget.unknown_student));
    checks.equal(unknown.code, statusCode(s.forget.unknown_code), "forget: unknown student code");
  } finally {
    client.close();
  }

  const stranger = new MemoryClient(args.target, { token: s.wrong_token.token, timeoutMs: CALL_TIMEOUT_MS });
  try {
    const refused = await failure(async () => {
      for await (const _ of stranger.listEpisodes({ studentId: student, subjectId: subject })) {
        break;
      }
    });
    checks.equal(refused.code, statusCode(s.wrong_token.code), "wrong token: code");
  } finally {
    stranger.close();
  }

  await checkUnreachable(s, args, student, checks);

  for (const c of s.prompt_cases) {
    const prompt = composePrompt({
      instructions: c.parts.instructions,
      memoryBlock: c.parts.memory_block,
      legacyAssessment: c.parts.legacy_assessment,
      context: c.parts.context,
    });
    checks.equal(prompt, c.expected, `prompt: ${c.name}`);
  }
}

async function checkUnreachable(s: Scenario, args: Record<string, string>, student: string, checks: Checks): Promise<void> {
  const client = new MemoryClient(args.unreachable, { token: args.token, attempts: s.attempts });
  try {
    const want = statusCode(s.unreachable.code);
    const minRetryMs = s.unreachable.min_retry_seconds * 1000;
    const episode = newEpisode(s.episodes[0], student, s.subject_id);
    let started = performance.now();
    const keyed = await failure(() => client.appendEpisode(episode));
    const keyedMs = performance.now() - started;
    checks.equal(keyed.code, want, "unreachable keyed write: code");
    checks.expect(keyedMs >= minRetryMs, `keyed write retried (${keyedMs.toFixed(0)} ms)`);
    started = performance.now();
    const unkeyed = await failure(() => client.appendEpisode({ ...episode, clientKey: "" }));
    const unkeyedMs = performance.now() - started;
    checks.equal(unkeyed.code, want, "unreachable unkeyed write: code");
    checks.expect(unkeyedMs < minRetryMs, `unkeyed write not retried (${unkeyedMs.toFixed(0)} ms)`);
  } finally {
    client.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: "string" },
      target: { type: "string" },
      token: { type: "string" },
      "run-id": { type: "string" },
      unreachable: { type: "string" },
    },
  });
  const args: Record<string, string> = {};
  for (const name of ["scenario", "target", "token", "run-id", "unreachable"] as const) {
    const value = values[name];
    if (!value) {
      throw new Error(`--${name} is required`);
    }
    args[name] = value;
  }
  const scenario = JSON.parse(readFileSync(args.scenario, "utf8")) as Scenario;
  const checks = new Checks();
  await run(scenario, args, checks);
  for (const f of checks.failures) {
    console.error(`FAIL ${f}`);
  }
  console.log(`typescript client: ${checks.passed} passed, ${checks.failures.length} failed`);
  process.exitCode = checks.failures.length > 0 ? 1 : 0;
}

main().catch((error: unknown) => {
  console.error("FAIL the scenario stopped:", error);
  process.exitCode = 1;
});
