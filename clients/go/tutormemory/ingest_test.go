package tutormemory

import (
	"fmt"
	"testing"

	"tutor-memory/clients/go/memoryv1"
)

func TestABatchIsGroupedIntoMessagesInOrder(t *testing.T) {
	batch := make([]*memoryv1.NewEpisode, 250)
	for i := range batch {
		batch[i] = &memoryv1.NewEpisode{ClientKey: fmt.Sprint(i)}
	}
	messages := IngestMessages(batch, ItemsPerMessage)
	sizes := []int{}
	next := 0
	for _, m := range messages {
		sizes = append(sizes, len(m.GetEpisodes()))
		for _, e := range m.GetEpisodes() {
			if e.GetClientKey() != fmt.Sprint(next) {
				t.Fatalf("item %s where %d was expected", e.GetClientKey(), next)
			}
			next++
		}
	}
	if fmt.Sprint(sizes) != "[100 100 50]" {
		t.Fatalf("message sizes %v; want [100 100 50]", sizes)
	}
}

func TestAnEmptyBatchIsNoMessage(t *testing.T) {
	if got := IngestMessages(nil, ItemsPerMessage); len(got) != 0 {
		t.Fatalf("%d messages for an empty batch", len(got))
	}
}
