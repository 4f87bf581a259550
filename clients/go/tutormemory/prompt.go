package tutormemory

import (
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
)

// Where the memory block goes in a chat prompt (SPEC R6.6). A model reads the first authoritative
// statement about a student's record and stops there, so the memory block must come before any
// legacy assessment section, and a legacy section that only says "no quiz attempts recorded" must
// go when a memory block exists. The Python and TypeScript clients implement the same rule;
// tests/conformance/scenario.json pins all three to the same cases.

// partSeparator is the blank line between the prompt's parts.
const partSeparator = "\n\n"

// decoration holds the characters that decorate a heading or a rule line ("## Assessment",
// "=====", "**Quizzes**") rather than say anything.
const decoration = "#*=-_>"

// legacyAssessmentJSON is a byte-identical copy of the Python client's data file.
//
//go:embed legacy_assessment.json
var legacyAssessmentJSON []byte

var emptyPhrases = sync.OnceValue(func() map[string]bool {
	var data struct {
		Phrases []string `json:"empty_assessment_phrases"`
	}
	if err := json.Unmarshal(legacyAssessmentJSON, &data); err != nil {
		panic("tutormemory: legacy_assessment.json is not valid: " + err.Error())
	}
	phrases := make(map[string]bool, len(data.Phrases))
	for _, p := range data.Phrases {
		phrases[normalise(p)] = true
	}
	return phrases
})

// PromptParts are the pieces of one turn's prompt, as the chat service has them.
type PromptParts struct {
	// Instructions are the system instructions; always first.
	Instructions string
	// MemoryBlock is BuildBlockReply.Text: empty when the block was dropped or not asked for.
	MemoryBlock string
	// LegacyAssessment is the chat service's own assessment section (quiz history), if any.
	LegacyAssessment string
	// Context is everything else, in order: material excerpts, the conversation, the question.
	Context []string
}

func normalise(text string) string {
	joined := strings.Join(strings.Fields(strings.ToLower(text)), " ")
	return strings.TrimSpace(strings.TrimRight(joined, ".!"))
}

// IsEmptyAssessment reports whether every line of the section is a heading or a known "no quiz
// attempts" phrase, and at least one line is such a phrase.
func IsEmptyAssessment(section string) bool {
	phrases := emptyPhrases()
	saidEmpty := false
	lines := strings.FieldsFunc(section, func(r rune) bool { return r == '\n' || r == '\r' })
	for _, raw := range lines {
		line := strings.TrimSpace(strings.Trim(strings.TrimSpace(raw), decoration))
		if line == "" || strings.HasSuffix(line, ":") {
			continue
		}
		// "Quiz history: No quiz attempts recorded." carries its heading on the same line.
		content := line[strings.LastIndex(line, ":")+1:]
		content = strings.Trim(strings.TrimSpace(content), decoration)
		if !phrases[normalise(content)] {
			return false
		}
		saidEmpty = true
	}
	return saidEmpty
}

// ComposePrompt joins the parts: instructions, memory block, legacy assessment (unless R6.6 drops
// it), then the context. Blank parts are left out.
func ComposePrompt(parts PromptParts) string {
	legacy := parts.LegacyAssessment
	if strings.TrimSpace(parts.MemoryBlock) != "" && IsEmptyAssessment(legacy) {
		legacy = ""
	}
	ordered := append([]string{parts.Instructions, parts.MemoryBlock, legacy}, parts.Context...)
	kept := make([]string, 0, len(ordered))
	for _, part := range ordered {
		if trimmed := strings.TrimSpace(part); trimmed != "" {
			kept = append(kept, trimmed)
		}
	}
	return strings.Join(kept, partSeparator)
}
