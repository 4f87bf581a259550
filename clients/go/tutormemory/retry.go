package tutormemory

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	// DefaultTimeout is how long one attempt of a call may take when its context has no deadline.
	DefaultTimeout = 30 * time.Second
	// DefaultAttempts is how many times a retryable call is tried.
	DefaultAttempts = 4
	// FirstBackoff is the wait before the first retry; each later wait doubles.
	FirstBackoff = 200 * time.Millisecond
)

// retryPolicy decides how a call is repeated. Only UNAVAILABLE (the server was not reached or went
// away) is retried, and only for calls that cannot duplicate anything.
type retryPolicy struct {
	attempts     int
	firstBackoff time.Duration
	// timeout bounds each attempt when the caller's context has no deadline of its own.
	timeout time.Duration
}

// do runs call until it succeeds, fails with a code other than UNAVAILABLE, runs out of attempts,
// or ctx ends. retry false means a single attempt.
func do[T any](ctx context.Context, p retryPolicy, retry bool, call func(context.Context) (T, error)) (T, error) {
	backoff := p.firstBackoff
	for attempt := 1; ; attempt++ {
		reply, err := attemptOnce(ctx, p.timeout, call)
		if err == nil || !retry || attempt >= p.attempts || status.Code(err) != codes.Unavailable {
			return reply, err
		}
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			timer.Stop()
			return reply, err
		case <-timer.C:
		}
		backoff *= 2
	}
}

func attemptOnce[T any](ctx context.Context, timeout time.Duration, call func(context.Context) (T, error)) (T, error) {
	if _, has := ctx.Deadline(); has {
		return call(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return call(ctx)
}
