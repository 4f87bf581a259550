package tutormemory

import (
	"strings"
	"testing"
)

// The shared cases of tests/conformance/scenario.json run in the conformance program; these pin
// the rule's edges in Go alone.

func TestTheMemoryBlockComesBeforeALegacySectionWithResults(t *testing.T) {
	got := ComposePrompt(PromptParts{MemoryBlock: "MEMORY", LegacyAssessment: "QUIZZES:\nQuiz 1: 3/5"})
	if got != "MEMORY\n\nQUIZZES:\nQuiz 1: 3/5" {
		t.Fatalf("got %q", got)
	}
}

func TestAnEmptyLegacySectionIsDroppedOnlyWhenAMemoryBlockExists(t *testing.T) {
	legacy := "ASSESSMENT:\r\n- No quiz attempts recorded."
	with := ComposePrompt(PromptParts{MemoryBlock: "MEMORY", LegacyAssessment: legacy, Context: []string{"Q"}})
	if with != "MEMORY\n\nQ" {
		t.Fatalf("with a block: %q", with)
	}
	without := ComposePrompt(PromptParts{LegacyAssessment: legacy, Context: []string{"Q"}})
	if !strings.Contains(without, "No quiz attempts recorded.") {
		t.Fatalf("without a block the legacy section went: %q", without)
	}
}

func TestEmptyAssessmentNeedsThePhraseAndNothingElse(t *testing.T) {
	cases := map[string]bool{
		"No quiz attempts recorded":                   true,
		"**Quizzes:** no quiz attempts recorded yet!": true,
		"":            false,
		"ASSESSMENT:": false,
		"No quiz attempts recorded. Prefers short ones": false,
		"No quiz attempts recorded\nQuiz 2: 1/4":        false,
	}
	for section, want := range cases {
		if got := IsEmptyAssessment(section); got != want {
			t.Errorf("IsEmptyAssessment(%q) = %v; want %v", section, got, want)
		}
	}
}
