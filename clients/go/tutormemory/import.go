package tutormemory

import (
	"context"
	"errors"
	"io"
	"sort"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"tutor-memory/clients/go/memoryv1"
)

// ImportResult is what an import stored: one result per item, Index being the item's position in
// the batch given to ImportEpisodes (not in the stream of a resumed attempt).
type ImportResult struct {
	Items []*memoryv1.IngestItemResult
	// Attempts is how many streams were opened: more than one when a broken stream was resumed.
	Attempts int
}

// Count is how many items ended in status.
func (r *ImportResult) Count(s memoryv1.IngestStatus) int {
	n := 0
	for _, item := range r.Items {
		if item.GetStatus() == s {
			n++
		}
	}
	return n
}

// ImportMessages groups an import into ImportEpisodes stream messages of perMessage items.
func ImportMessages(episodes []*memoryv1.NewEpisode, perMessage int) []*memoryv1.ImportEpisodesRequest {
	ingest := IngestMessages(episodes, perMessage)
	messages := make([]*memoryv1.ImportEpisodesRequest, len(ingest))
	for i, message := range ingest {
		messages[i] = &memoryv1.ImportEpisodesRequest{Episodes: message.GetEpisodes()}
	}
	return messages
}

// ImportEpisodes imports a batch of any size (every item needs a client_key) through the
// ImportEpisodes stream, calling onProgress (if not nil) with each acknowledged chunk. A stream
// that breaks with UNAVAILABLE is resumed with only the items no reply acknowledged. The stream
// has no deadline unless ctx has one: an import reports progress instead.
func (c *Client) ImportEpisodes(ctx context.Context, episodes []*memoryv1.NewEpisode, onProgress func(*memoryv1.ImportEpisodesReply)) (*ImportResult, error) {
	done := map[int]*memoryv1.IngestItemResult{}
	result := &ImportResult{}
	backoff := c.policy.firstBackoff
	for attempt := 1; ; attempt++ {
		todo := make([]int, 0, len(episodes)-len(done))
		for i := range episodes {
			if _, ok := done[i]; !ok {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 {
			break
		}
		result.Attempts = attempt
		err := c.importOnce(ctx, episodes, todo, done, onProgress)
		if err == nil {
			break
		}
		if attempt >= c.policy.attempts || status.Code(err) != codes.Unavailable {
			return nil, err
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, err
		case <-timer.C:
		}
		backoff *= 2
	}
	indices := make([]int, 0, len(done))
	for i := range done {
		indices = append(indices, i)
	}
	sort.Ints(indices)
	for _, i := range indices {
		result.Items = append(result.Items, done[i])
	}
	return result, nil
}

// importOnce streams the items at positions todo and records each acknowledged one in done under
// its position in the batch.
func (c *Client) importOnce(ctx context.Context, episodes []*memoryv1.NewEpisode, todo []int, done map[int]*memoryv1.IngestItemResult, onProgress func(*memoryv1.ImportEpisodesReply)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.stub.ImportEpisodes(ctx)
	if err != nil {
		return err
	}
	batch := make([]*memoryv1.NewEpisode, len(todo))
	for k, i := range todo {
		batch[k] = episodes[i]
	}
	sent := make(chan error, 1)
	go func() {
		for _, message := range ImportMessages(batch, ItemsPerMessage) {
			// io.EOF means the server ended the call early: its status comes from Recv.
			if err := stream.Send(message); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				sent <- err
				return
			}
		}
		sent <- stream.CloseSend()
	}()
	for {
		reply, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return <-sent
		}
		if err != nil {
			return err
		}
		for _, item := range reply.GetItems() {
			original := proto.CloneOf(item)
			// The stream counts from its own start: back to the batch's positions.
			original.Index = uint32(todo[item.GetIndex()])
			done[todo[item.GetIndex()]] = original
		}
		if onProgress != nil {
			onProgress(reply)
		}
	}
}
