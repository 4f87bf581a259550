/**
 * Where the memory block goes in a chat prompt (SPEC R6.6). A model reads the first
 * authoritative statement about a student's record and stops there, so the memory block must come
 * before any legacy assessment section, and a legacy section that only says "no quiz attempts
 * recorded" must go when a memory block exists. The Python and Go clients implement the same rule;
 * tests/conformance/scenario.json pins all three to the same cases.
 */
import legacyAssessment from "./legacy_assessment.json";

/** The blank line between the prompt's parts. */
const PART_SEPARATOR = "\n\n";
/** What decorates a heading or a rule line ("## Assessment", "=====", "**Quizzes**") rather than
 * saying anything, at either end of a line. */
const DECORATION = /^[#*=\-_>]+|[#*=\-_>]+$/g;
/** What ends a line, the same in all three clients. */
const LINE_BREAK = /\r\n?|\n/;

/** The pieces of one turn's prompt, as the chat service has them. */
export interface PromptParts {
  /** The system instructions; always first. */
  instructions: string;
  /** BuildBlockReply.text: empty when the block was dropped or not asked for. */
  memoryBlock: string;
  /** The chat service's own assessment section (quiz history), if it still has one. */
  legacyAssessment?: string;
  /** Everything else, in order: material excerpts, the conversation, the question. */
  context?: readonly string[];
}

function normalise(text: string): string {
  return text.toLowerCase().split(/\s+/).filter(Boolean).join(" ").replace(/[.!]+$/, "").trim();
}

const EMPTY_PHRASES: ReadonlySet<string> = new Set(
  legacyAssessment.empty_assessment_phrases.map(normalise),
);

function undecorated(text: string): string {
  return text.trim().replace(DECORATION, "").trim();
}

/** True when every line of the section is a heading or a known "no quiz attempts" phrase, and at
 * least one line is such a phrase. */
export function isEmptyAssessment(section: string): boolean {
  let saidEmpty = false;
  for (const raw of section.split(LINE_BREAK)) {
    const line = undecorated(raw);
    if (line === "" || line.endsWith(":")) {
      continue;
    }
    // "Quiz history: No quiz attempts recorded." carries its heading on the same line.
    const content = undecorated(line.slice(line.lastIndexOf(":") + 1));
    if (!EMPTY_PHRASES.has(normalise(content))) {
      return false;
    }
    saidEmpty = true;
  }
  return saidEmpty;
}

/** Joins the parts: instructions, memory block, legacy assessment (unless R6.6 drops it), then
 * the context. Blank parts are left out. */
export function composePrompt(parts: PromptParts): string {
  let legacy = parts.legacyAssessment ?? "";
  if (parts.memoryBlock.trim() !== "" && isEmptyAssessment(legacy)) {
    legacy = "";
  }
  return [parts.instructions, parts.memoryBlock, legacy, ...(parts.context ?? [])]
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .join(PART_SEPARATOR);
}
