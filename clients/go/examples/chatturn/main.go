// Command chatturn runs one chat turn with Tutor Memory, as a chat service does it:
//
//	go run ./examples/chatturn -target localhost:50051 -student ada -subject biology \
//	    -question "What did we say about osmosis?" \
//	    -answer "In July we saw that osmosis moves water toward more solute." \
//	    -legacy-assessment "ASSESSMENT HISTORY: No quiz attempts recorded."
//
// 1. append the student's question; 2. BuildBlock; 3. compose the prompt (SPEC R6.6); 4. the chat
// model answers (here -answer stands in for it); 5. append the answer; 6. AnnotateAnswer with the
// memories the prompt showed. Prints the prompt, then the ids the turn wrote.
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"log"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"tutor-memory/clients/go/memoryv1"
	"tutor-memory/clients/go/tutormemory"
)

const (
	// budgetTokens is how many tokens the memory block may use in the prompt.
	budgetTokens = 1500
	// blockTimeout is how long to wait for the block: past the server's own cap (2.5 s), a late
	// block is skipped so that a slow memory never holds up the answer (SPEC R6.1).
	blockTimeout = 3 * time.Second
	// summaryChars is the server's limit on an episode's summary (in characters), which must also
	// be one line.
	summaryChars = 500
)

type turnFlags struct {
	target, token, student, subject, question, answer, instructions, legacy, turnID string
}

func parseFlags() turnFlags {
	var f turnFlags
	flag.StringVar(&f.target, "target", "localhost:50051", "server address")
	flag.StringVar(&f.token, "token", "", "bearer token (none in development mode)")
	flag.StringVar(&f.student, "student", "", "student id (required)")
	flag.StringVar(&f.subject, "subject", "", "subject id (required)")
	flag.StringVar(&f.question, "question", "", "the student's message (required)")
	flag.StringVar(&f.answer, "answer", "", "stands in for the chat model's reply (required)")
	flag.StringVar(&f.instructions, "instructions", "", "system instructions")
	flag.StringVar(&f.legacy, "legacy-assessment", "", "the chat service's own assessment section")
	flag.StringVar(&f.turnID, "turn-id", "", "idempotency key of the turn (default: random)")
	flag.Parse()
	if f.student == "" || f.subject == "" || f.question == "" || f.answer == "" {
		log.Fatal("-student, -subject, -question and -answer are required")
	}
	if f.turnID == "" {
		f.turnID = rand.Text()
	}
	return f
}

// oneLine is text on one line, cut to summaryChars characters.
func oneLine(text string) string {
	line := []rune(strings.Join(strings.Fields(text), " "))
	return string(line[:min(len(line), summaryChars)])
}

func episode(f turnFlags, kind memoryv1.EpisodeKind, text, key string) *memoryv1.NewEpisode {
	return &memoryv1.NewEpisode{
		StudentId: f.student, SubjectId: f.subject, Kind: kind,
		Summary: oneLine(text), Text: text, ClientKey: key,
	}
}

// buildBlock returns the turn's block, or an empty one when it is late or the server is away.
func buildBlock(ctx context.Context, memory *tutormemory.Client, f turnFlags) (*memoryv1.BuildBlockReply, error) {
	ctx, cancel := context.WithTimeout(ctx, blockTimeout)
	defer cancel()
	block, err := memory.BuildBlock(ctx, &memoryv1.BuildBlockRequest{
		StudentId: f.student, SubjectId: f.subject, Query: f.question, BudgetTokens: budgetTokens,
	})
	switch status.Code(err) {
	case codes.OK:
		return block, nil
	case codes.DeadlineExceeded, codes.Unavailable:
		return &memoryv1.BuildBlockReply{}, nil
	default:
		return nil, err
	}
}

func run(ctx context.Context, f turnFlags) error {
	memory, err := tutormemory.New(f.target, tutormemory.Options{Token: f.token})
	if err != nil {
		return err
	}
	defer memory.Close()
	// Keys make the turn safe to retry: the same turn id never writes twice.
	question, err := memory.AppendEpisode(ctx, episode(f, memoryv1.EpisodeKind_EPISODE_KIND_QUESTION, f.question, f.turnID+"-question"))
	if err != nil {
		return err
	}
	block, err := buildBlock(ctx, memory, f)
	if err != nil {
		return err
	}
	fmt.Println(tutormemory.ComposePrompt(tutormemory.PromptParts{
		Instructions: f.instructions, MemoryBlock: block.GetText(),
		LegacyAssessment: f.legacy, Context: []string{f.question},
	}))
	answerText := f.answer // a real chat service sends the prompt to its model here
	answer, err := memory.AppendEpisode(ctx, episode(f, memoryv1.EpisodeKind_EPISODE_KIND_ANSWER, answerText, f.turnID+"-answer"))
	if err != nil {
		return err
	}
	memoryIDs := make([]int64, 0, len(block.GetMemories()))
	for _, m := range block.GetMemories() {
		memoryIDs = append(memoryIDs, m.GetEpisodeId())
	}
	var annotationID int64
	if block.GetBlockId() != "" {
		annotation, err := memory.AnnotateAnswer(ctx, &memoryv1.AnnotateAnswerRequest{
			StudentId: f.student, SubjectId: f.subject, AnswerEpisodeId: answer.GetEpisode().GetEpisodeId(),
			BlockId: block.GetBlockId(), MemoryIds: memoryIDs,
		})
		if err != nil {
			return err
		}
		annotationID = annotation.GetAnnotationId()
	}
	fmt.Printf("\nquestion=%d answer=%d block=%s memories=%v annotation=%d\n",
		question.GetEpisode().GetEpisodeId(), answer.GetEpisode().GetEpisodeId(), block.GetBlockId(), memoryIDs, annotationID)
	return nil
}

func main() {
	if err := run(context.Background(), parseFlags()); err != nil {
		log.Fatal(err)
	}
}
