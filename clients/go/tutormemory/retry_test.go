package tutormemory

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fastPolicy retries quickly so the tests measure behaviour, not sleeps.
var fastPolicy = retryPolicy{attempts: 3, firstBackoff: time.Millisecond, timeout: time.Second}

// failing returns a call that fails with each code in turn, then succeeds, counting its calls.
func failing(calls *int, codesInTurn ...codes.Code) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		*calls++
		if *calls <= len(codesInTurn) {
			return "", status.Error(codesInTurn[*calls-1], "injected")
		}
		return "ok", nil
	}
}

func TestUnavailableIsRetriedUntilTheCallSucceeds(t *testing.T) {
	calls := 0
	reply, err := do(context.Background(), fastPolicy, true, failing(&calls, codes.Unavailable, codes.Unavailable))
	if err != nil || reply != "ok" || calls != 3 {
		t.Fatalf("got %q, %v after %d calls; want ok after 3", reply, err, calls)
	}
}

func TestRetriesStopAfterTheLastAttempt(t *testing.T) {
	calls := 0
	_, err := do(context.Background(), fastPolicy, true, failing(&calls, codes.Unavailable, codes.Unavailable, codes.Unavailable, codes.Unavailable))
	if status.Code(err) != codes.Unavailable || calls != fastPolicy.attempts {
		t.Fatalf("got %v after %d calls; want UNAVAILABLE after %d", err, calls, fastPolicy.attempts)
	}
}

func TestOtherCodesAreNeverRetried(t *testing.T) {
	for _, code := range []codes.Code{codes.Unauthenticated, codes.InvalidArgument, codes.DeadlineExceeded, codes.Internal} {
		calls := 0
		_, err := do(context.Background(), fastPolicy, true, failing(&calls, code))
		if status.Code(err) != code || calls != 1 {
			t.Errorf("%v: got %v after %d calls; want it after 1", code, err, calls)
		}
	}
}

func TestACallThatMayDuplicateIsTriedOnce(t *testing.T) {
	calls := 0
	_, err := do(context.Background(), fastPolicy, false, failing(&calls, codes.Unavailable))
	if status.Code(err) != codes.Unavailable || calls != 1 {
		t.Fatalf("got %v after %d calls; want UNAVAILABLE after 1", err, calls)
	}
}

func TestEachAttemptGetsTheDefaultDeadlineWhenTheContextHasNone(t *testing.T) {
	var remaining time.Duration
	_, _ = do(context.Background(), fastPolicy, false, func(ctx context.Context) (string, error) {
		deadline, ok := ctx.Deadline()
		if !ok {
			t.Fatal("the attempt has no deadline")
		}
		remaining = time.Until(deadline)
		return "", nil
	})
	if remaining <= 0 || remaining > fastPolicy.timeout {
		t.Fatalf("deadline %v away; want within %v", remaining, fastPolicy.timeout)
	}
}

func TestTheCallersDeadlineIsKept(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	want, _ := ctx.Deadline()
	_, _ = do(ctx, fastPolicy, false, func(ctx context.Context) (string, error) {
		if got, _ := ctx.Deadline(); !got.Equal(want) {
			t.Errorf("deadline %v; want the caller's %v", got, want)
		}
		return "", nil
	})
}

func TestACancelledContextStopsTheBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	slow := retryPolicy{attempts: 5, firstBackoff: time.Hour, timeout: time.Second}
	calls := 0
	cancel()
	_, err := do(ctx, slow, true, failing(&calls, codes.Unavailable, codes.Unavailable))
	if status.Code(err) != codes.Unavailable || calls != 1 {
		t.Fatalf("got %v after %d calls; want the first UNAVAILABLE at once", err, calls)
	}
}
