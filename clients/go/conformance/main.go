// Command conformance runs tests/conformance/scenario.json through the Go client wrapper:
//
//	go run ./conformance -scenario ../../tests/conformance/scenario.json \
//	    -target 127.0.0.1:PORT -token TOKEN -run-id go -unreachable 127.0.0.1:FREE_PORT
//
// It exits 1 and names every mismatch when the server or the client does not do what the
// scenario says; the Python and TypeScript runners check the same things in the same order.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"tutor-memory/clients/go/memoryv1"
	"tutor-memory/clients/go/tutormemory"
)

// callTimeout bounds each call of the scenario: generous, since CI machines are small and shared.
const callTimeout = 20 * time.Second

// checks counts checks and keeps every failure, so one run names all the mismatches.
type checks struct {
	passed   int
	failures []string
}

func (c *checks) expect(ok bool, what string) {
	if ok {
		c.passed++
	} else {
		c.failures = append(c.failures, what)
	}
}

func (c *checks) equal(got, want any, what string) {
	c.expect(reflect.DeepEqual(got, want), fmt.Sprintf("%s: got %v, want %v", what, got, want))
}

// checkForget erases the run's student and checks what follows (scenario.json, "forget").
func checkForget(ctx context.Context, client *tutormemory.Client, s *scenario, student string, c *checks) error {
	first, err := client.ForgetStudent(ctx, student, false)
	if err != nil {
		return err
	}
	c.expect(!first.GetAlreadyErased(), "forget: the first call erases")
	c.equal(first.GetErasure().GetChains(), s.Forget.Chains, "forget: chains erased")
	c.expect(first.GetErasure().GetEpisodes() > 0, "forget: episodes counted")
	verified, err := client.VerifyChain(ctx, student, s.SubjectID, nil)
	if err != nil {
		return err
	}
	c.expect(verified.GetOk() && verified.GetErased(), "forget: the chain verifies, erased")
	listed := codes.OK
	for _, err := range client.ListEpisodes(ctx, &memoryv1.ListEpisodesRequest{StudentId: student, SubjectId: s.SubjectID}) {
		listed = status.Code(err)
		break
	}
	c.equal(listed, codeOf(s.Forget.ListCode), "forget: list code")
	again, err := client.ForgetStudent(ctx, student, false)
	if err != nil {
		return err
	}
	c.expect(again.GetAlreadyErased(), "forget: a second call changes nothing")
	_, err = client.ForgetStudent(ctx, s.Forget.UnknownStudent, false)
	c.equal(status.Code(err), codeOf(s.Forget.UnknownCode), "forget: unknown student code")
	return nil
}

// codeOf parses a status code name as the scenario writes it ("INVALID_ARGUMENT").
func codeOf(name string) codes.Code {
	var code codes.Code
	if err := code.UnmarshalJSON([]byte(`"` + name + `"`)); err != nil {
		return codes.Unknown
	}
	return code
}

type flags struct{ scenario, target, token, runID, unreachable string }

func main() {
	var f flags
	flag.StringVar(&f.scenario, "scenario", "", "path of scenario.json")
	flag.StringVar(&f.target, "target", "", "the server under test")
	flag.StringVar(&f.token, "token", "", "a valid token of that server")
	flag.StringVar(&f.runID, "run-id", "", "appended to the student id, so runs do not share a chain")
	flag.StringVar(&f.unreachable, "unreachable", "", "an address where nothing listens")
	flag.Parse()
	s, err := loadScenario(f.scenario)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var c checks
	if err := run(context.Background(), s, f, &c); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL the scenario stopped:", err)
		os.Exit(1)
	}
	for _, failure := range c.failures {
		fmt.Fprintln(os.Stderr, "FAIL", failure)
	}
	fmt.Printf("go client: %d passed, %d failed\n", c.passed, len(c.failures))
	if len(c.failures) > 0 {
		os.Exit(1)
	}
}

func run(ctx context.Context, s *scenario, f flags, c *checks) error {
	student := s.StudentPrefix + f.runID
	client, err := tutormemory.New(f.target, tutormemory.Options{Token: f.token, Timeout: callTimeout})
	if err != nil {
		return err
	}
	defer client.Close()

	ids, err := appendEpisodes(ctx, client, s, student, c)
	if err != nil {
		return err
	}
	if err := ingestBatch(ctx, client, s, student, c); err != nil {
		return err
	}
	if err := importBatch(ctx, client, s, student, c); err != nil {
		return err
	}
	if err := listEpisodes(ctx, client, s, student, ids, c); err != nil {
		return err
	}
	if err := blockAndAnnotate(ctx, client, s, student, ids, c); err != nil {
		return err
	}

	bad, err := s.BadRequest.Episode.newEpisode(student, s.SubjectID)
	if err != nil {
		return err
	}
	_, err = client.AppendEpisode(ctx, bad)
	c.equal(status.Code(err), codeOf(s.BadRequest.Code), "bad request: code")
	c.expect(strings.Contains(status.Convert(err).Message(), s.BadRequest.MessageContains),
		fmt.Sprintf("bad request: message %q", status.Convert(err).Message()))

	if err := checkForget(ctx, client, s, student, c); err != nil {
		return err
	}

	stranger, err := tutormemory.New(f.target, tutormemory.Options{Token: s.WrongToken.Token, Timeout: callTimeout})
	if err != nil {
		return err
	}
	defer stranger.Close()
	refused := codes.OK
	for _, err := range stranger.ListEpisodes(ctx, &memoryv1.ListEpisodesRequest{StudentId: student, SubjectId: s.SubjectID}) {
		refused = status.Code(err)
		break
	}
	c.equal(refused, codeOf(s.WrongToken.Code), "wrong token: code")

	if err := checkUnreachable(ctx, s, f, student, c); err != nil {
		return err
	}

	for _, tc := range s.PromptCases {
		got := tutormemory.ComposePrompt(tutormemory.PromptParts{
			Instructions: tc.Parts.Instructions, MemoryBlock: tc.Parts.MemoryBlock,
			LegacyAssessment: tc.Parts.LegacyAssessment, Context: tc.Parts.Context,
		})
		c.equal(got, tc.Expected, "prompt: "+tc.Name)
	}
	return nil
}

func appendEpisodes(ctx context.Context, client *tutormemory.Client, s *scenario, student string, c *checks) (map[string]int64, error) {
	ids := map[string]int64{}
	for i, spec := range s.Episodes {
		episode, err := spec.newEpisode(student, s.SubjectID)
		if err != nil {
			return nil, err
		}
		reply, err := client.AppendEpisode(ctx, episode)
		if err != nil {
			return nil, fmt.Errorf("append %s: %w", spec.ClientKey, err)
		}
		ids[spec.ClientKey] = reply.GetEpisode().GetEpisodeId()
		c.equal(reply.GetEpisode().GetSeq(), int64(i+1), "append "+spec.ClientKey+": seq")
		c.equal(reply.GetDuplicate(), false, "append "+spec.ClientKey+": duplicate")
	}
	first, err := s.Episodes[0].newEpisode(student, s.SubjectID)
	if err != nil {
		return nil, err
	}
	again, err := client.AppendEpisode(ctx, first)
	if err != nil {
		return nil, fmt.Errorf("append again: %w", err)
	}
	c.equal(again.GetDuplicate(), true, "append again with the same key: duplicate")
	c.equal(again.GetEpisode().GetEpisodeId(), ids[s.Episodes[0].ClientKey], "append again: id")
	return ids, nil
}

func ingestBatch(ctx context.Context, client *tutormemory.Client, s *scenario, student string, c *checks) error {
	items, err := s.batchItems(student)
	if err != nil {
		return err
	}
	cut := s.Batch.InterruptedAfter
	partial, err := client.IngestEpisodes(ctx, items[:cut])
	if err != nil {
		return fmt.Errorf("first send: %w", err)
	}
	c.equal([]uint32{partial.GetInserted(), partial.GetDuplicate(), partial.GetRejected()},
		[]uint32{uint32(cut), 0, 0}, "first send")
	retried, err := client.IngestEpisodes(ctx, items)
	if err != nil {
		return fmt.Errorf("retried batch: %w", err)
	}
	missing := len(s.Batch.WithoutKey)
	c.equal([]uint32{retried.GetInserted(), retried.GetDuplicate(), retried.GetRejected()},
		[]uint32{uint32(len(items) - cut - missing), uint32(cut), uint32(missing)},
		"retried batch: inserted, duplicate, rejected")
	for i, result := range retried.GetItems() {
		what := fmt.Sprintf("item %d", i)
		c.equal(result.GetIndex(), uint32(i), "retried batch "+what+": index")
		switch {
		case slices.Contains(s.Batch.WithoutKey, i):
			c.equal(result.GetStatus(), memoryv1.IngestStatus_INGEST_STATUS_REJECTED, what+": status")
			c.expect(strings.Contains(result.GetReason(), s.Batch.RejectedReasonContains),
				fmt.Sprintf("%s: reason %q names the missing key", what, result.GetReason()))
		case i < cut:
			c.equal(result.GetStatus(), memoryv1.IngestStatus_INGEST_STATUS_DUPLICATE, what+": status")
			c.equal(result.GetEpisodeId(), partial.GetItems()[i].GetEpisodeId(), what+": id")
		default:
			c.equal(result.GetStatus(), memoryv1.IngestStatus_INGEST_STATUS_INSERTED, what+": status")
		}
	}
	return nil
}

// importBatch: ImportEpisodes reports progress per committed chunk, and a resumed import stores
// only what the first one did not.
func importBatch(ctx context.Context, client *tutormemory.Client, s *scenario, student string, c *checks) error {
	items, err := s.importItems(student)
	if err != nil {
		return err
	}
	first := s.Import.AcknowledgedFirst
	var replies []*memoryv1.ImportEpisodesReply
	progress := func(reply *memoryv1.ImportEpisodesReply) { replies = append(replies, reply) }
	acknowledged := func() int {
		n := 0
		for _, reply := range replies {
			n += len(reply.GetItems())
		}
		return n
	}
	done, err := client.ImportEpisodes(ctx, items[:first], progress)
	if err != nil {
		return fmt.Errorf("first import: %w", err)
	}
	counts := func(r *tutormemory.ImportResult) []int {
		return []int{
			r.Count(memoryv1.IngestStatus_INGEST_STATUS_INSERTED),
			r.Count(memoryv1.IngestStatus_INGEST_STATUS_DUPLICATE),
			r.Count(memoryv1.IngestStatus_INGEST_STATUS_REJECTED),
		}
	}
	c.equal(counts(done), []int{first, 0, 0}, "first import")
	c.equal(acknowledged(), first, "first import: items acknowledged")
	replies = nil
	resumed, err := client.ImportEpisodes(ctx, items, progress)
	if err != nil {
		return fmt.Errorf("resumed import: %w", err)
	}
	c.equal(counts(resumed), []int{len(items) - first, first, 0}, "resumed import: inserted, duplicate, rejected")
	c.expect(len(replies) >= s.Import.MinProgressReplies, fmt.Sprintf("resumed import: %d progress replies", len(replies)))
	c.equal(acknowledged(), len(items), "resumed import: acknowledged")
	last := &memoryv1.ImportEpisodesReply{}
	if len(replies) > 0 {
		last = replies[len(replies)-1]
	}
	c.equal([]uint32{last.GetInserted(), last.GetDuplicate(), last.GetRejected()},
		[]uint32{uint32(len(items) - first), uint32(first), 0}, "resumed import: totals of the last reply")
	indices := make([]uint32, len(resumed.Items))
	want := make([]uint32, len(items))
	for i, result := range resumed.Items {
		indices[i] = result.GetIndex()
	}
	for i := range want {
		want[i] = uint32(i)
	}
	c.equal(indices, want, "resumed: indices")
	for i, result := range resumed.Items {
		what := fmt.Sprintf("resumed import item %d", i)
		if i < first {
			c.equal(result.GetStatus(), memoryv1.IngestStatus_INGEST_STATUS_DUPLICATE, what+": status")
			c.equal(result.GetEpisodeId(), done.Items[i].GetEpisodeId(), what+": id")
		} else {
			c.equal(result.GetStatus(), memoryv1.IngestStatus_INGEST_STATUS_INSERTED, what+": status")
		}
	}
	return nil
}

func listEpisodes(ctx context.Context, client *tutormemory.Client, s *scenario, student string, ids map[string]int64, c *checks) error {
	request := &memoryv1.ListEpisodesRequest{StudentId: student, SubjectId: s.SubjectID, PageSize: s.List.PageSize}
	var seqs, times []int64
	byKey := map[string]int64{}
	for episode, err := range client.ListEpisodes(ctx, request) {
		if err != nil {
			return fmt.Errorf("list: %w", err)
		}
		seqs = append(seqs, episode.GetSeq())
		times = append(times, episode.GetOccurredAt().AsTime().UnixNano())
		byKey[episode.GetClientKey()] = episode.GetEpisodeId()
	}
	stored := len(s.Episodes) + s.Batch.Count - len(s.Batch.WithoutKey)
	want := make([]int64, stored)
	for i := range want {
		want[i] = int64(i + 1)
	}
	c.equal(slices.Sorted(slices.Values(seqs)), want, "listed seqs")
	c.expect(slices.IsSorted(times), "listed oldest first")
	listed := map[string]int64{}
	for key := range ids {
		listed[key] = byKey[key]
	}
	c.equal(listed, ids, "listed ids of the appended keys")
	return nil
}

func blockAndAnnotate(ctx context.Context, client *tutormemory.Client, s *scenario, student string, ids map[string]int64, c *checks) error {
	now, err := timestamp(s.Block.Now)
	if err != nil {
		return err
	}
	block, err := client.BuildBlock(ctx, &memoryv1.BuildBlockRequest{
		StudentId: student, SubjectId: s.SubjectID, Query: s.Block.Query,
		BudgetTokens: s.Block.BudgetTokens, Now: now, TimeZone: s.Block.TimeZone,
	})
	if err != nil {
		return fmt.Errorf("build block: %w", err)
	}
	got := []int64{}
	for _, m := range block.GetMemories() {
		got = append(got, m.GetEpisodeId())
	}
	want := []int64{}
	for _, key := range s.Block.MemoryKeys {
		want = append(want, ids[key])
	}
	c.equal(got, want, "block memory ids")
	for _, text := range s.Block.TextContains {
		c.expect(strings.Contains(block.GetText(), text), fmt.Sprintf("block text holds %q:\n%s", text, block.GetText()))
	}
	for _, text := range s.Block.TextLacks {
		c.expect(!strings.Contains(block.GetText(), text), fmt.Sprintf("block text lacks %q:\n%s", text, block.GetText()))
	}
	c.expect(block.GetTokensUsed() <= s.Block.BudgetTokens, "block within its budget")
	c.expect(block.GetBlockId() != "", "block has an id")

	answerEpisode, err := s.Answer.newEpisode(student, s.SubjectID)
	if err != nil {
		return err
	}
	answer, err := client.AppendEpisode(ctx, answerEpisode)
	if err != nil {
		return fmt.Errorf("append answer: %w", err)
	}
	annotation, err := client.AnnotateAnswer(ctx, &memoryv1.AnnotateAnswerRequest{
		StudentId: student, SubjectId: s.SubjectID, AnswerEpisodeId: answer.GetEpisode().GetEpisodeId(),
		BlockId: block.GetBlockId(), MemoryIds: got,
	})
	if err != nil {
		return fmt.Errorf("annotate: %w", err)
	}
	c.expect(annotation.GetAnnotationId() > 0, "annotation saved with an id")
	return nil
}

func checkUnreachable(ctx context.Context, s *scenario, f flags, student string, c *checks) error {
	client, err := tutormemory.New(f.unreachable, tutormemory.Options{Token: f.token, Attempts: s.Attempts})
	if err != nil {
		return err
	}
	defer client.Close()
	episode, err := s.Episodes[0].newEpisode(student, s.SubjectID)
	if err != nil {
		return err
	}
	want := codeOf(s.Unreachable.Code)
	minRetry := time.Duration(s.Unreachable.MinRetrySeconds * float64(time.Second))
	started := time.Now()
	_, err = client.AppendEpisode(ctx, episode)
	keyed := time.Since(started)
	c.equal(status.Code(err), want, "unreachable keyed write: code")
	c.expect(keyed >= minRetry, fmt.Sprintf("keyed write retried (%v)", keyed))
	episode.ClientKey = ""
	started = time.Now()
	_, err = client.AppendEpisode(ctx, episode)
	unkeyed := time.Since(started)
	c.equal(status.Code(err), want, "unreachable unkeyed write: code")
	c.expect(unkeyed < minRetry, fmt.Sprintf("unkeyed write not retried (%v)", unkeyed))
	return nil
}
