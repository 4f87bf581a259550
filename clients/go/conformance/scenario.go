package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"tutor-memory/clients/go/memoryv1"
)

// scenario mirrors tests/conformance/scenario.json (its "about" fields are for people).
type scenario struct {
	StudentPrefix string        `json:"student_prefix"`
	SubjectID     string        `json:"subject_id"`
	Attempts      int           `json:"attempts"`
	Episodes      []episodeSpec `json:"episodes"`
	Batch         struct {
		Count                  int         `json:"count"`
		InterruptedAfter       int         `json:"interrupted_after"`
		WithoutKey             []int       `json:"without_key"`
		Template               episodeSpec `json:"template"`
		RejectedReasonContains string      `json:"rejected_reason_contains"`
	} `json:"batch"`
	Import struct {
		SubjectID          string      `json:"subject_id"`
		Count              int         `json:"count"`
		AcknowledgedFirst  int         `json:"acknowledged_first"`
		MinProgressReplies int         `json:"min_progress_replies"`
		Template           episodeSpec `json:"template"`
	} `json:"import"`
	List struct {
		PageSize uint32 `json:"page_size"`
	} `json:"list"`
	Block struct {
		Query        string   `json:"query"`
		BudgetTokens uint32   `json:"budget_tokens"`
		Now          string   `json:"now"`
		TimeZone     string   `json:"time_zone"`
		MemoryKeys   []string `json:"memory_keys"`
		TextContains []string `json:"text_contains"`
		TextLacks    []string `json:"text_lacks"`
	} `json:"block"`
	Answer     episodeSpec `json:"answer"`
	BadRequest struct {
		Episode         episodeSpec `json:"episode"`
		Code            string      `json:"code"`
		MessageContains string      `json:"message_contains"`
	} `json:"bad_request"`
	Forget struct {
		Chains         int64  `json:"chains"`
		ListCode       string `json:"list_code"`
		UnknownStudent string `json:"unknown_student"`
		UnknownCode    string `json:"unknown_code"`
	} `json:"forget"`
	WrongToken struct {
		Token string `json:"token"`
		Code  string `json:"code"`
	} `json:"wrong_token"`
	Unreachable struct {
		Code            string  `json:"code"`
		MinRetrySeconds float64 `json:"min_retry_seconds"`
	} `json:"unreachable"`
	PromptCases []struct {
		Name  string `json:"name"`
		Parts struct {
			Instructions     string   `json:"instructions"`
			MemoryBlock      string   `json:"memory_block"`
			LegacyAssessment string   `json:"legacy_assessment"`
			Context          []string `json:"context"`
		} `json:"parts"`
		Expected string `json:"expected"`
	} `json:"prompt_cases"`
}

type episodeSpec struct {
	ClientKey  string   `json:"client_key"`
	Kind       string   `json:"kind"`
	Summary    string   `json:"summary"`
	Text       string   `json:"text"`
	OccurredAt string   `json:"occurred_at"`
	Salience   *float64 `json:"salience"`
}

func loadScenario(path string) (*scenario, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s scenario
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

func timestamp(text string) (*timestamppb.Timestamp, error) {
	t, err := time.Parse(time.RFC3339, text)
	if err != nil {
		return nil, err
	}
	return timestamppb.New(t), nil
}

func (spec episodeSpec) newEpisode(studentID, subjectID string) (*memoryv1.NewEpisode, error) {
	kind, ok := memoryv1.EpisodeKind_value[spec.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown episode kind %q", spec.Kind)
	}
	occurred, err := timestamp(spec.OccurredAt)
	if err != nil {
		return nil, err
	}
	return &memoryv1.NewEpisode{
		StudentId: studentID, SubjectId: subjectID, Kind: memoryv1.EpisodeKind(kind),
		Summary: spec.Summary, Text: spec.Text, ClientKey: spec.ClientKey,
		OccurredAt: occurred, Salience: spec.Salience,
	}, nil
}

// importItems expands the import template: {i} is the item's 0-based index.
func (s *scenario) importItems(studentID string) ([]*memoryv1.NewEpisode, error) {
	return expand(s.Import.Template, s.Import.Count, nil, studentID, s.Import.SubjectID)
}

// batchItems expands the batch template: {i} is the item's 0-based index.
func (s *scenario) batchItems(studentID string) ([]*memoryv1.NewEpisode, error) {
	return expand(s.Batch.Template, s.Batch.Count, s.Batch.WithoutKey, studentID, s.SubjectID)
}

// expand makes count items of template, {i} replaced by the index; items listed in withoutKey
// lose their client_key.
func expand(template episodeSpec, count int, withoutKey []int, studentID, subjectID string) ([]*memoryv1.NewEpisode, error) {
	items := make([]*memoryv1.NewEpisode, 0, count)
	for i := range count {
		spec := template
		index := strconv.Itoa(i)
		spec.ClientKey = strings.ReplaceAll(spec.ClientKey, "{i}", index)
		spec.Summary = strings.ReplaceAll(spec.Summary, "{i}", index)
		spec.Text = strings.ReplaceAll(spec.Text, "{i}", index)
		if slices.Contains(withoutKey, i) {
			spec.ClientKey = ""
		}
		item, err := spec.newEpisode(studentID, subjectID)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}
