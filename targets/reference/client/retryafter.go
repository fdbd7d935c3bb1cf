package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxRetryAfter caps the wait a Retry-After may impose on the client.
const MaxRetryAfter = 24 * time.Hour

// honoursRetryAfter reports whether the client waits for a Retry-After on this status:
// 429 Too Many Requests, 503 Service Unavailable and 409 Conflict (an operation still in
// progress on the API).
func honoursRetryAfter(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusConflict:
		return true
	}
	return false
}

// ParseRetryAfter reads a Retry-After value (RFC 9110, section 10.2.3): delta-seconds or
// an HTTP-date, and returns how long after now it asks to wait (zero for a date in the
// past, at most MaxRetryAfter). ok is false when the value is absent or unreadable, in
// which case it asks for nothing.
func ParseRetryAfter(value string, now time.Time) (wait time.Duration, ok bool) {
	v := strings.TrimSpace(value)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true // only an overflow fails on digits
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(at.Sub(now), 0), MaxRetryAfter), true
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
