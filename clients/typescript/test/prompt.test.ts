import assert from "node:assert/strict";
import { test } from "node:test";

import { composePrompt, isEmptyAssessment } from "../src/prompt.js";

// The shared cases of tests/conformance/scenario.json run in the conformance program; these pin
// the rule's edges in TypeScript alone.

test("the memory block comes before a legacy section with results", () => {
  assert.equal(
    composePrompt({ instructions: "", memoryBlock: "MEMORY", legacyAssessment: "QUIZZES:\nQuiz 1: 3/5" }),
    "MEMORY\n\nQUIZZES:\nQuiz 1: 3/5",
  );
});

test("an empty legacy section is dropped only when a memory block exists", () => {
  const legacy = "ASSESSMENT:\r\n- No quiz attempts recorded.";
  assert.equal(
    composePrompt({ instructions: "", memoryBlock: "MEMORY", legacyAssessment: legacy, context: ["Q"] }),
    "MEMORY\n\nQ",
  );
  assert.match(
    composePrompt({ instructions: "", memoryBlock: "", legacyAssessment: legacy, context: ["Q"] }),
    /No quiz attempts recorded\./,
  );
});

test("an empty assessment needs the phrase and nothing else", () => {
  const cases: Array<[string, boolean]> = [
    ["No quiz attempts recorded", true],
    ["**Quizzes:** no quiz attempts recorded yet!", true],
    ["", false],
    ["ASSESSMENT:", false],
    ["No quiz attempts recorded. Prefers short ones", false],
    ["No quiz attempts recorded\nQuiz 2: 1/4", false],
  ];
  for (const [section, want] of cases) {
    assert.equal(isEmptyAssessment(section), want, section);
  }
});
