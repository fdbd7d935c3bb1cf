package httpclient

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

// plan429 decides whether attempt a, the sent-th re-send of its request, is
// a 429 to wait for and send again. It returns the wait, a note for the
// attempt saying what was decided, and whether to re-send.
func (c *Client) plan429(ctx context.Context, a history.Attempt, sent int) (time.Duration, string, bool) {
	if a.Status != http.StatusTooManyRequests || a.Outcome != history.OK {
		return 0, "", false
	}
	if sent >= c.opts.Max429Retries {
		return 0, fmt.Sprintf("429: not re-sent, the limit of %d re-sends is reached", c.opts.Max429Retries), false
	}
	raw := a.RespHeader.Get("Retry-After")
	asked, ok := RetryAfter(raw, a.End)
	if !ok {
		return 0, fmt.Sprintf("429: not re-sent, no usable Retry-After (%q)", raw), false
	}
	wait, capped := asked, ""
	if wait > c.opts.Max429Wait {
		wait, capped = c.opts.Max429Wait, fmt.Sprintf(", capped from %s", asked)
	}
	if deadline, has := ctx.Deadline(); has && time.Until(deadline) < wait {
		return 0, fmt.Sprintf("429: not re-sent, waiting %s would pass the deadline", wait), false
	}
	return wait, fmt.Sprintf("429: waiting %s (Retry-After: %s%s) before re-send %d/%d",
		wait, raw, capped, sent+1, c.opts.Max429Retries), true
}

// maxRetryAfterSeconds keeps a huge Retry-After from overflowing a Duration.
const maxRetryAfterSeconds = 1 << 30

// RetryAfter parses a Retry-After header value, either delay-seconds or an
// HTTP date (relative to now), into a non-negative wait. ok is false when
// the value is empty or neither form.
func RetryAfter(value string, now time.Time) (wait time.Duration, ok bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(value, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, maxRetryAfterSeconds)) * time.Second, true
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}

// sleep waits d or until ctx is done, and reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
