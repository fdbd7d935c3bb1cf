package client

import (
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		value string
		wait  time.Duration
		ok    bool
	}{
		{"1", time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"0", 0, true},
		{"99999999999999999999", MaxRetryAfter, true},
		{"Wed, 02 Jan 2030 03:04:07 GMT", 2 * time.Second, true},     // IMF-fixdate
		{"Wednesday, 02-Jan-30 03:04:08 GMT", 3 * time.Second, true}, // RFC 850
		{"Wed Jan  2 03:04:09 2030", 4 * time.Second, true},          // asctime
		{"Wed, 02 Jan 2030 03:00:00 GMT", 0, true},                   // in the past
		{"Sat, 02 Jan 2100 00:00:00 GMT", MaxRetryAfter, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"2030-01-02T03:04:07Z", 0, false}, // not an HTTP-date
	} {
		wait, ok := ParseRetryAfter(tc.value, now)
		if wait != tc.wait || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tc.value, wait, ok, tc.wait, tc.ok)
		}
	}
}

func TestRetryAfterIsHonouredOn409And429And503Only(t *testing.T) {
	for status, want := range map[int]bool{409: true, 429: true, 503: true, 500: false, 502: false, 504: false, 422: false} {
		if got := honoursRetryAfter(status); got != want {
			t.Errorf("honoursRetryAfter(%d) = %v, want %v", status, got, want)
		}
	}
}
