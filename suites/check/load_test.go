package check

import (
	"crypto/sha256"
	"fmt"
	"github.com/retrysafe/retrysafe/reports"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
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

func kinds(as []reports.Anomaly) []string {
	var out []string
	for _, a := range as {
		out = append(out, string(a.Kind)+" "+a.Key)
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
			want:   []string{"duplicate-record a", "replay-differs a"},
		},
		{
			name:     "a 2xx without a record",
			attempts: []history.Attempt{answer(1, "a", 201, `{"id":"1"}`, 0, 4)},
			counts:   map[string]int{"a": 0},
			want:     []string{"missing-record a"},
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
			want:   []string{"wrong-status b", "wrong-status c", "server-error a"},
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
			want:   []string{"duplicate-record b"},
		},
		{
			name: "retried past the key's retention (1 s): a second execution is the contract's",
			attempts: []history.Attempt{
				answer(1, "a", 201, `{"id":"1"}`, 0, 4),
				answer(2, "a", 201, `{"id":"2"}`, 1000, 4),
			},
			counts: map[string]int{"a": 2},
		},
		{
			name: "retried just within the key's retention: two records are a duplicate",
			attempts: []history.Attempt{
				answer(1, "a", 201, `{"id":"1"}`, 0, 4),
				answer(2, "a", 201, `{"id":"2"}`, 990, 4),
			},
			counts: map[string]int{"a": 2},
			want:   []string{"duplicate-record a", "replay-differs a"},
		},
		{
			name: "a retry that started within the key's retention but ended past it may have found the key expired",
			attempts: []history.Attempt{
				answer(1, "a", 201, `{"id":"1"}`, 0, 4),
				answer(2, "a", 201, `{"id":"2"}`, 990, 20),
			},
			counts: map[string]int{"a": 2},
		},
		{
			name:     "an operation that was not counted is not checked for records",
			attempts: []history.Attempt{answer(1, "a", 201, `{"id":"1"}`, 0, 1)},
			counts:   map[string]int{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Load(slices.Values(tt.attempts), tt.counts, p, time.Second)
			if got := kinds(res.Anomalies); !slices.Equal(got, tt.want) {
				t.Errorf("anomalies = %q, want %q\n%s", got, tt.want, fmt.Sprint(res.Anomalies))
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
	res := Load(slices.Values(atts), counts, loadProfile(t), 0)
	if len(res.Anomalies) > 0 {
		t.Fatalf("anomalies: %s", fmt.Sprint(res.Anomalies))
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

func TestLoadJudge(t *testing.T) {
	p := loadProfile(t)
	never := history.Attempt{Seq: 9, Key: "z", Outcome: history.Failed, Err: "dial tcp: connection refused", Start: t0, End: t0}
	tests := []struct {
		name      string
		attempts  []history.Attempt
		counts    map[string]int
		uncounted int
		verdict   reports.Verdict
		want      []string
		says      string
	}{
		{
			name:     "every operation once",
			attempts: []history.Attempt{answer(1, "a", 201, `{"id":"1"}`, 0, 4), answer(2, "a", 201, `{"id":"1"}`, 5, 1)},
			counts:   map[string]int{"a": 1}, verdict: reports.Pass,
		},
		{
			name:     "an attempt never sent is neither an answer nor unknown",
			attempts: []history.Attempt{answer(1, "a", 201, `{"id":"1"}`, 0, 4), never},
			counts:   map[string]int{"a": 1}, verdict: reports.Pass,
		},
		{
			name:     "some records could not be counted",
			attempts: []history.Attempt{answer(1, "a", 201, `{"id":"1"}`, 0, 4)},
			counts:   map[string]int{"a": 1}, uncounted: 3, verdict: reports.Unknown,
			says: "the records of 3 operations could not be counted, e.g. connection refused",
		},
		{
			name: "more than a tenth of the attempts got no answer",
			attempts: []history.Attempt{answer(1, "a", 201, `{"id":"1"}`, 0, 4), lost(2, "b"), lost(3, "c"),
				answer(4, "d", 201, `{"id":"4"}`, 0, 4)},
			counts: map[string]int{"a": 1, "d": 1}, verdict: reports.Unknown,
			says: "2 of 4 attempts got no answer",
		},
		{
			name:     "no operation succeeded",
			attempts: []history.Attempt{answer(1, "a", 409, `{}`, 0, 1), answer(2, "b", 429, `{}`, 0, 1)},
			counts:   map[string]int{"a": 0, "b": 0}, verdict: reports.Fail,
			want: []string{"wrong-status "}, says: "no operation succeeded under load (statuses 409=1 429=1)",
		},
		{
			name:     "no answer at all is unknown, not a failure",
			attempts: []history.Attempt{lost(1, "a")},
			verdict:  reports.Unknown, says: "1 of 1 attempts got no answer",
		},
		{
			name:     "the anomalies of the load",
			attempts: []history.Attempt{answer(1, "a", 201, `{"id":"1"}`, 0, 4), answer(2, "a", 500, `{}`, 1, 1)},
			counts:   map[string]int{"a": 2}, verdict: reports.Fail,
			want: []string{"duplicate-record a", "server-error a"}, says: "an attempt under load got 500",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Load(slices.Values(tt.attempts), tt.counts, p, 0).Judge(tt.uncounted, "connection refused")
			if got := kinds(res.Anomalies); !slices.Equal(got, tt.want) {
				t.Errorf("anomalies = %q, want %q", got, tt.want)
			}
			if got := res.Verdict(); got != tt.verdict {
				t.Errorf("verdict = %s, want %s\n%s", got, tt.verdict, res.Message())
			}
			if !strings.Contains(res.Message(), tt.says) {
				t.Errorf("message does not say %q:\n%s", tt.says, res.Message())
			}
		})
	}
}

func TestLoadSummaries(t *testing.T) {
	res := Load(slices.Values([]history.Attempt{
		answer(1, "a", 201, `{"id":"1"}`, 0, 4), answer(2, "a", 201, `{"id":"2"}`, 5, 1), answer(3, "b", 503, `{}`, 5, 1),
		answer(4, "a", 201, `{"id":"3"}`, 6, 1),
	}), map[string]int{"a": 2}, loadProfile(t), 0)
	if got, want := res.AnomalyCounts(), "duplicate-record=1, replay-differs=2, server-error=1"; got != want {
		t.Errorf("AnomalyCounts = %q, want %q", got, want)
	}
	var seqs []string
	for _, a := range res.Anomalies {
		seqs = append(seqs, fmt.Sprint(a.Kind, a.Seqs))
	}
	if want := []string{"duplicate-record[1 4]", "replay-differs[1 2]", "replay-differs[1 4]", "server-error[3]"}; !slices.Equal(seqs, want) {
		t.Errorf("anomalies in order = %q, want %q", seqs, want)
	}
	if got := (&LoadResult{Attempts: 3}).Throughput(); got != 0 {
		t.Errorf("throughput of a history without a span = %v, want 0", got)
	}
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{0, 1}, {50, 5}, {90, 9}, {99, 10}, {100, 10}} {
		if got := Percentile(ds, tt.p); got != tt.want {
			t.Errorf("Percentile(1..10, %v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile of nothing = %v, want 0", got)
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
		if res := Load(slices.Values(atts), counts, p, 0); len(res.Anomalies) > 0 {
			b.Fatal(fmt.Sprint(res.Anomalies))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(atts)), "ns/attempt")
}
