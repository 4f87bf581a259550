package tutormemory

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"tutor-memory/clients/go/memoryv1"
)

// Options configure a Client. The zero value talks plaintext with no token, the defaults below.
type Options struct {
	// Token is the bearer token of the caller's tenant; empty in the server's development mode.
	Token string
	// Credentials secure the channel (TLS); nil means plaintext, for loopback only.
	Credentials credentials.TransportCredentials
	// Timeout bounds each attempt of a call whose context has no deadline; 0 means DefaultTimeout.
	Timeout time.Duration
	// Attempts is how many times a retryable call is tried; 0 means DefaultAttempts.
	Attempts int
	// DialOptions are passed to grpc.NewClient after the client's own.
	DialOptions []grpc.DialOption
}

// Client wraps the generated stub. It is safe for concurrent use.
type Client struct {
	conn   *grpc.ClientConn
	stub   memoryv1.MemoryClient
	policy retryPolicy
}

// New connects lazily to target ("host:port"); the first call opens the connection.
func New(target string, opts Options) (*Client, error) {
	creds := opts.Credentials
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	dial := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if opts.Token != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(bearerToken(opts.Token)))
	}
	conn, err := grpc.NewClient(target, append(dial, opts.DialOptions...)...)
	if err != nil {
		return nil, err
	}
	policy := retryPolicy{attempts: DefaultAttempts, firstBackoff: FirstBackoff, timeout: DefaultTimeout}
	if opts.Attempts > 0 {
		policy.attempts = opts.Attempts
	}
	if opts.Timeout > 0 {
		policy.timeout = opts.Timeout
	}
	return &Client{conn: conn, stub: memoryv1.NewMemoryClient(conn), policy: policy}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Stub is the generated client on the same connection, for the RPCs the wrapper does not cover.
// Its calls carry the token but are never retried.
func (c *Client) Stub() memoryv1.MemoryClient { return c.stub }

// AppendEpisode appends one episode; retried on UNAVAILABLE only when it carries a client_key.
func (c *Client) AppendEpisode(ctx context.Context, episode *memoryv1.NewEpisode) (*memoryv1.AppendEpisodeReply, error) {
	request := &memoryv1.AppendEpisodeRequest{Episode: episode}
	return do(ctx, c.policy, episode.GetClientKey() != "", func(ctx context.Context) (*memoryv1.AppendEpisodeReply, error) {
		return c.stub.AppendEpisode(ctx, request)
	})
}

// IngestEpisodes streams a batch (every item needs a client_key) in messages of ItemsPerMessage.
// A retry resends the whole batch: items the server already stored come back as duplicates, never
// twice.
func (c *Client) IngestEpisodes(ctx context.Context, episodes []*memoryv1.NewEpisode) (*memoryv1.IngestEpisodesReply, error) {
	messages := IngestMessages(episodes, ItemsPerMessage)
	return do(ctx, c.policy, true, func(ctx context.Context) (*memoryv1.IngestEpisodesReply, error) {
		stream, err := c.stub.IngestEpisodes(ctx)
		if err != nil {
			return nil, err
		}
		for _, message := range messages {
			// io.EOF means the server ended the call early: its status comes from CloseAndRecv.
			if err := stream.Send(message); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, err
			}
		}
		return stream.CloseAndRecv()
	})
}

// ListEpisodes yields every episode of the chain the request names, oldest first, page by page
// (the request's page_token is the starting point). Each page is retried on UNAVAILABLE; an error
// is yielded once, last.
func (c *Client) ListEpisodes(ctx context.Context, request *memoryv1.ListEpisodesRequest) iter.Seq2[*memoryv1.Episode, error] {
	return func(yield func(*memoryv1.Episode, error) bool) {
		page := proto.CloneOf(request)
		for {
			reply, err := do(ctx, c.policy, true, func(ctx context.Context) (*memoryv1.ListEpisodesReply, error) {
				return c.stub.ListEpisodes(ctx, page)
			})
			if err != nil {
				yield(nil, err)
				return
			}
			for _, episode := range reply.GetEpisodes() {
				if !yield(episode, nil) {
					return
				}
			}
			if reply.GetNextPageToken() == "" {
				return
			}
			page.PageToken = reply.GetNextPageToken()
		}
	}
}

// VerifyChain recomputes the chain's hashes; with a checkpoint it also says whether it holds.
func (c *Client) VerifyChain(ctx context.Context, studentID, subjectID string, checkpoint *memoryv1.SignedCheckpoint) (*memoryv1.VerifyChainReply, error) {
	request := &memoryv1.VerifyChainRequest{StudentId: studentID, SubjectId: subjectID, Checkpoint: checkpoint}
	return do(ctx, c.policy, true, func(ctx context.Context) (*memoryv1.VerifyChainReply, error) {
		return c.stub.VerifyChain(ctx, request)
	})
}

// Checkpoint returns the chain head signed by the server.
func (c *Client) Checkpoint(ctx context.Context, studentID, subjectID string) (*memoryv1.SignedCheckpoint, error) {
	request := &memoryv1.CheckpointRequest{StudentId: studentID, SubjectId: subjectID}
	reply, err := do(ctx, c.policy, true, func(ctx context.Context) (*memoryv1.CheckpointReply, error) {
		return c.stub.Checkpoint(ctx, request)
	})
	return reply.GetCheckpoint(), err
}

// ForgetStudent erases the student in every subject (the right to be forgotten). Retried: a
// second call changes nothing and says AlreadyErased.
func (c *Client) ForgetStudent(ctx context.Context, studentID string, allowPlaintextHistory bool) (*memoryv1.ForgetStudentReply, error) {
	request := &memoryv1.ForgetStudentRequest{StudentId: studentID, AllowPlaintextHistory: allowPlaintextHistory}
	return do(ctx, c.policy, true, func(ctx context.Context) (*memoryv1.ForgetStudentReply, error) {
		return c.stub.ForgetStudent(ctx, request)
	})
}

// BuildBlock returns the memory block for one chat turn. It only reads, so it is retried on
// UNAVAILABLE; give ctx a short deadline: a late block should be skipped, not awaited (SPEC R6.1).
func (c *Client) BuildBlock(ctx context.Context, request *memoryv1.BuildBlockRequest) (*memoryv1.BuildBlockReply, error) {
	return do(ctx, c.policy, true, func(ctx context.Context) (*memoryv1.BuildBlockReply, error) {
		return c.stub.BuildBlock(ctx, request)
	})
}

// AnnotateAnswer saves which block and memories were shown for the turn the answer closes. Never
// retried: each call writes an annotation row.
func (c *Client) AnnotateAnswer(ctx context.Context, request *memoryv1.AnnotateAnswerRequest) (*memoryv1.AnnotateAnswerReply, error) {
	return do(ctx, c.policy, false, func(ctx context.Context) (*memoryv1.AnnotateAnswerReply, error) {
		return c.stub.AnnotateAnswer(ctx, request)
	})
}
