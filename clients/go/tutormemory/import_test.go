package tutormemory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"tutor-memory/clients/go/memoryv1"
)

// breakingServer acknowledges the first message of its first ImportEpisodes stream, then breaks
// that stream with UNAVAILABLE; later streams are acknowledged whole. It records the client keys
// each stream carried.
type breakingServer struct {
	memoryv1.UnimplementedMemoryServer
	streams [][]string
}

func (s *breakingServer) ImportEpisodes(stream grpc.BidiStreamingServer[memoryv1.ImportEpisodesRequest, memoryv1.ImportEpisodesReply]) error {
	first := len(s.streams) == 0
	s.streams = append(s.streams, nil)
	this := len(s.streams) - 1
	index := uint32(0)
	for {
		message, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		reply := &memoryv1.ImportEpisodesReply{}
		for _, episode := range message.GetEpisodes() {
			s.streams[this] = append(s.streams[this], episode.GetClientKey())
			reply.Items = append(reply.Items, &memoryv1.IngestItemResult{
				Index: index, ClientKey: episode.GetClientKey(),
				Status: memoryv1.IngestStatus_INGEST_STATUS_INSERTED, EpisodeId: int64(1000 + len(s.streams[this])),
			})
			index++
		}
		if err := stream.Send(reply); err != nil {
			return err
		}
		if first {
			return status.Error(codes.Unavailable, "injected: the connection went away")
		}
	}
}

func TestABrokenImportResendsOnlyWhatWasNotAcknowledged(t *testing.T) {
	listener := bufconn.Listen(1 << 20)
	server := grpc.NewServer()
	fake := &breakingServer{}
	memoryv1.RegisterMemoryServer(server, fake)
	go func() { _ = server.Serve(listener) }()
	defer server.Stop()
	dial := func(context.Context, string) (net.Conn, error) { return listener.Dial() }
	client, err := New("passthrough:///bufconn", Options{
		Credentials: insecure.NewCredentials(),
		DialOptions: []grpc.DialOption{grpc.WithContextDialer(dial)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	client.policy = fastPolicy

	batch := make([]*memoryv1.NewEpisode, 250)
	for i := range batch {
		batch[i] = &memoryv1.NewEpisode{ClientKey: fmt.Sprintf("k%d", i)}
	}
	progress := 0
	result, err := client.ImportEpisodes(context.Background(), batch, func(*memoryv1.ImportEpisodesReply) { progress++ })
	if err != nil {
		t.Fatal(err)
	}
	if result.Attempts != 2 || len(fake.streams) != 2 {
		t.Fatalf("attempts %d, streams %d; want 2 and 2", result.Attempts, len(fake.streams))
	}
	if len(fake.streams[1]) != len(batch)-ItemsPerMessage || fake.streams[1][0] != fmt.Sprintf("k%d", ItemsPerMessage) {
		t.Fatalf("the resumed stream carried %d items from %q; want the %d unacknowledged from k%d",
			len(fake.streams[1]), fake.streams[1][0], len(batch)-ItemsPerMessage, ItemsPerMessage)
	}
	if len(result.Items) != len(batch) || progress < 2 {
		t.Fatalf("%d results after %d progress calls; want %d after at least 2", len(result.Items), progress, len(batch))
	}
	for i, item := range result.Items {
		if item.GetIndex() != uint32(i) || item.GetClientKey() != fmt.Sprintf("k%d", i) {
			t.Fatalf("result %d: index %d, key %q; want the batch's position and key", i, item.GetIndex(), item.GetClientKey())
		}
	}
}
