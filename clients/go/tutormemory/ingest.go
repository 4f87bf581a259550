package tutormemory

import "tutor-memory/clients/go/memoryv1"

// ItemsPerMessage is how many items one IngestEpisodes stream message carries: the server reads
// each message separately, so many items per message cost far less than one each, while 100 items
// of the largest allowed text (64 KiB) stay well under the server's 16 MiB message limit.
const ItemsPerMessage = 100

// IngestMessages groups a batch into stream messages of perMessage items (the last may be short).
func IngestMessages(episodes []*memoryv1.NewEpisode, perMessage int) []*memoryv1.IngestEpisodesRequest {
	if perMessage < 1 {
		perMessage = ItemsPerMessage
	}
	messages := make([]*memoryv1.IngestEpisodesRequest, 0, (len(episodes)+perMessage-1)/perMessage)
	for start := 0; start < len(episodes); start += perMessage {
		end := min(start+perMessage, len(episodes))
		messages = append(messages, &memoryv1.IngestEpisodesRequest{Episodes: episodes[start:end]})
	}
	return messages
}
