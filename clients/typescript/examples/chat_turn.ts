/**
 * One chat turn with Tutor Memory, as a chat service does it:
 *
 *   node dist/examples/chat_turn.js --target localhost:50051 --student ada --subject biology \
 *       --question "What did we say about osmosis?" \
 *       --answer "In July we saw that osmosis moves water toward more solute." \
 *       --legacy-assessment "ASSESSMENT HISTORY: No quiz attempts recorded."
 *
 * 1. append the student's question; 2. BuildBlock; 3. compose the prompt (SPEC R6.6); 4. the
 * chat model answers (here --answer stands in for it); 5. append the answer; 6. AnnotateAnswer
 * with the memories the prompt showed. Prints the prompt, then the ids the turn wrote.
 */
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { status } from "@grpc/grpc-js";

import { composePrompt, MemoryClient, pb } from "../src/index.js";

/** Tokens the memory block may use in the prompt. */
const BUDGET_TOKENS = 1500;
/** How long to wait for the block: past the server's own cap (2.5 s), a late block is skipped so
 * that a slow memory never holds up the answer (SPEC R6.1). */
const BLOCK_TIMEOUT_MS = 3000;
/** The server's limit on an episode's summary (in characters), which must also be one line. */
const SUMMARY_CHARS = 500;

const { values: args } = parseArgs({
  options: {
    target: { type: "string", default: "localhost:50051" },
    token: { type: "string" },
    student: { type: "string" },
    subject: { type: "string" },
    question: { type: "string" },
    answer: { type: "string" },
    instructions: { type: "string", default: "" },
    "legacy-assessment": { type: "string", default: "" },
    "turn-id": { type: "string" },
  },
});

function required(name: string, value: string | undefined): string {
  if (!value) {
    throw new Error(`--${name} is required`);
  }
  return value;
}

const student = required("student", args.student);
const subject = required("subject", args.subject);
const question = required("question", args.question);
const answerText = required("answer", args.answer); // stands in for the chat model's reply
// Keys make the turn safe to retry: the same turn id never writes twice.
const turn = args["turn-id"] ?? randomUUID();

function episode(kind: pb.EpisodeKind, text: string, clientKey: string): pb.NewEpisode {
  const summary = Array.from(text.split(/\s+/).filter(Boolean).join(" ")).slice(0, SUMMARY_CHARS).join("");
  return pb.NewEpisode.fromPartial({ studentId: student, subjectId: subject, kind, summary, text, clientKey });
}

/** The turn's block, or an empty one when it is late or the server is away. */
async function buildBlock(memory: MemoryClient): Promise<pb.BuildBlockReply> {
  try {
    return await memory.buildBlock(
      { studentId: student, subjectId: subject, query: question, budgetTokens: BUDGET_TOKENS },
      { timeoutMs: BLOCK_TIMEOUT_MS },
    );
  } catch (error) {
    const code = (error as { code?: number }).code;
    if (code === status.DEADLINE_EXCEEDED || code === status.UNAVAILABLE) {
      return pb.BuildBlockReply.fromPartial({});
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const memory = new MemoryClient(args.target, { token: args.token });
  try {
    const asked = await memory.appendEpisode(episode(pb.EpisodeKind.EPISODE_KIND_QUESTION, question, `${turn}-question`));
    const block = await buildBlock(memory);
    const prompt = composePrompt({
      instructions: args.instructions,
      memoryBlock: block.text,
      legacyAssessment: args["legacy-assessment"],
      context: [question],
    });
    console.log(prompt);
    // A real chat service sends `prompt` to its model here.
    const answered = await memory.appendEpisode(episode(pb.EpisodeKind.EPISODE_KIND_ANSWER, answerText, `${turn}-answer`));
    const memoryIds = block.memories.map((m) => m.episodeId);
    let annotationId = 0;
    if (block.blockId) {
      const annotation = await memory.annotateAnswer({
        studentId: student,
        subjectId: subject,
        answerEpisodeId: answered.episode?.episodeId ?? 0,
        blockId: block.blockId,
        memoryIds,
      });
      annotationId = annotation.annotationId;
    }
    console.log(
      `\nquestion=${asked.episode?.episodeId} answer=${answered.episode?.episodeId} ` +
        `block=${block.blockId} memories=${JSON.stringify(memoryIds)} annotation=${annotationId}`,
    );
  } finally {
    memory.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
