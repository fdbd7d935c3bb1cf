package suites

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/suites/history"
	"github.com/retrysafe/retrysafe/targets"
)

// loadProfile is the IETF profile: in-flight retries get 409.
func loadProfile(t *testing.T) targets.Profile {
	t.Helper()
	p, ok := targets.Profiles("ietf")
	if !ok {
		t.Fatal("no ietf profile")
	}
	return p
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// answer is a hand-written attempt: key, status, body, start and duration in milliseconds.
func answer(seq int64, key string, status int, body string, startMs, durMs int) history.Attempt {
	start := t0.Add(time.Duration(startMs) * time.Millisecond)
	return history.Attempt{
		Seq: seq, Key: key, Op: "orders", Status: status, RespBody: []byte(body),
		BodyHash: sha256.Sum256([]byte(body)), Outcome: history.OK,
		Start: start, End: start.Add(time.Duration(durMs) * time.Millisecond),
	}
}

func lost(seq int64, key string) history.Attempt {
	return history.Attempt{Seq: seq, Key: key, Outcome: history.Unknown, Err: "timeout", Start: t0, End: t0}
}

func kinds(as []LoadAnomaly) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Kind+" "+a.Key)
	}
	return out
}

func TestCheckLoad(t *testing.T) {
	p := loadProfile(t)
	tests := []struct {
		name     string
		attempts []history.Attempt
		counts   map[string]int
		want     []string // anomalies as "kind key", sorted by kind then key
	}{
		{
			name: "fresh, replayed and in-flight operations, each with one record",
			attempts: []history.Attempt{
				answer(1, "a", 201, `{"id":"1"}`, 0, 4),
				answer(2, "b", 201, `{"id":"2"}`, 1, 4),
				answer(3, "b", 409, `{"title":"Conflict"}`, 1, 1),
				answer(4, "a", 201, `{"id":"1"}`, 10, 1),
			},
			counts: map[string]int{"a": 1, "b": 1},
		},
		{
			name: "two records for one operation (concurrent duplicates both executed)",
			attempts: []history.Attempt{
				answer(1, "a", 201, `{"id":"1"}`, 0, 4),
				answer(2, "a", 201, `{"id":"2"}`, 0, 4),
			},
			counts: map[string]int{"a": 2},
			want:   []string{"duplicate a", "replay-differs a"},
		},
		{
			name:     "a 2xx without a record",
			attempts: []history.Attempt{answer(1, "a", 201, `{"id":"1"}`, 0, 4)},
			counts:   map[string]int{"a": 0},
			want:     []string{"no-record a"},
		},
		{
			name: "a replay whose body differs only in white space and key order is equal",
			attempts: []history.Attempt{
				answer(1, "a", 201, `{"id":"1","amount":5}`, 0, 4),
				answer(2, "a", 201, `{ "amount": 5, "id": "1" }`, 5, 1),
			},
			counts: map[string]int{"a": 1},
		},
		{
			name: "a replay with another status",
			attempts: []history.Attempt{
				answer(1, "a", 201, `{"id":"1"}`, 0, 4),
				answer(2, "a", 200, `{"id":"1"}`, 5, 1),
			},
			counts: map[string]int{"a": 1},
			want:   []string{"replay-differs a"},
		},
		{
			name: "5xx, the mismatch status and a 400 are never expected; 429 is tolerated",
			attempts: []history.Attempt{
				answer(1, "a", 503, `{}`, 0, 1),
				answer(2, "b", 422, `{}`, 0, 1),
				answer(3, "c", 400, `{}`, 0, 1),
				answer(4, "d", 429, `{}`, 0, 1),
			},
			counts: map[string]int{"a": 0, "b": 0, "c": 0, "d": 0},
			want:   []string{"5xx a", "unexpected-status b", "unexpected-status c"},
		},
		{
			name: "unknown attempts are not held against the target, but two records are",
			attempts: []history.Attempt{
				lost(1, "a"),
				lost(2, "b"),
				answer(3, "c", 201, `{"id":"3"}`, 0, 1),
				lost(4, "c"),
			},
			counts: map[string]int{"a": 1, "b": 2, "c": 1},
			want:   []string{"duplicate b"},
		},
		{
			name:     "an operation that was not counted is not checked for records",
			attempts: []history.Attempt{answer(1, "a", 201, `{"id":"1"}`, 0, 1)},
			counts:   map[string]int{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := CheckLoad(slices.Values(tt.attempts), tt.counts, p)
			if got := kinds(res.Anomalies); !slices.Equal(got, tt.want) {
				t.Errorf("anomalies = %q, want %q\n%s", got, tt.want, anomalyLines(res.Anomalies))
			}
		})
	}
}

func TestCheckLoadFigures(t *testing.T) {
	var atts []history.Attempt
	seq := int64(0)
	add := func(a history.Attempt) {
		seq++
		a.Seq = seq
		atts = append(atts, a)
	}
	counts := map[string]int{}
	for i := range 100 {
		key := fmt.Sprint("k", i)
		counts[key] = 1
		add(answer(0, key, 201, key, i*10, 10+i%10)) // first executions: 10..19 ms
		add(answer(0, key, 201, key, i*10+5, 1))     // replays: 1 ms
	}
	add(lost(0, "k0"))
	res := CheckLoad(slices.Values(atts), counts, loadProfile(t))
	if len(res.Anomalies) > 0 {
		t.Fatalf("anomalies: %s", anomalyLines(res.Anomalies))
	}
	if got, want := [4]int{res.Attempts, res.Ops, res.Unknown, res.Statuses[201]}, [4]int{201, 100, 1, 200}; got != want {
		t.Errorf("attempts, ops, unknown, 201s = %v, want %v", got, want)
	}
	if res.First.N != 100 || res.First.P50 != 14*time.Millisecond || res.First.P99 != 19*time.Millisecond {
		t.Errorf("first executions = %+v, want 100 with p50 14ms, p99 19ms", res.First)
	}
	if res.Replay.N != 100 || res.Replay.P90 != time.Millisecond {
		t.Errorf("replays = %+v, want 100 at 1ms", res.Replay)
	}
	// 201 attempts from 0 to 990+19 ms.
	if got, want := res.Throughput(), 201/1.009; got < want-0.01 || got > want+0.01 {
		t.Errorf("throughput = %.3f/s, want %.3f/s", got, want)
	}
	if got, want := res.StatusCounts(), "201=200"; got != want {
		t.Errorf("StatusCounts = %q, want %q", got, want)
	}
}

func TestAnomalyLinesBounded(t *testing.T) {
	as := make([]LoadAnomaly, maxShownAnomalies+5)
	for i := range as {
		as[i] = LoadAnomaly{Kind: Anomaly5xx, Key: fmt.Sprint("k", i), Detail: "status 500"}
	}
	got := anomalyLines(as)
	if n := strings.Count(got, "\n") + 1; n != maxShownAnomalies+1 {
		t.Errorf("%d lines, want %d:\n%s", n, maxShownAnomalies+1, got)
	}
	if !strings.HasSuffix(got, "... and 5 more") {
		t.Errorf("last line of %q is not the rest's count", got)
	}
}

// BenchmarkCheckLoad checks a load-shaped history: per operation one 201, one in four
// replayed.
func BenchmarkCheckLoad(b *testing.B) {
	p, _ := targets.Profiles("ietf")
	var atts []history.Attempt
	counts := map[string]int{}
	for i := range 100_000 {
		op := i - i/4
		key := fmt.Sprint("rs-0123abcd-", op)
		body := fmt.Sprintf(`{"id":"ord_%024x","ref":%q}`, op, key)
		counts[key] = 1
		atts = append(atts, answer(int64(i+1), key, 201, body, i, 3))
	}
	b.ReportAllocs()
	for b.Loop() {
		if res := CheckLoad(slices.Values(atts), counts, p); len(res.Anomalies) > 0 {
			b.Fatal(anomalyLines(res.Anomalies))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(atts)), "ns/attempt")
}
