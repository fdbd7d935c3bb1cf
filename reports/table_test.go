package reports

import (
	"strings"
	"sync"
	"testing"
)

// renderTable renders r with WriteTable.
func renderTable(r *Run) string {
	var b strings.Builder
	WriteTable(&b, r)
	return b.String()
}

func TestTableRows(t *testing.T) {
	got := renderTable(sampleRun())
	want := "" +
		"PROPERTY  VERDICT  SPECS           TIME  REASON\n" +
		"replay    pass     2 pass          1.2s\n" +
		"race      FAIL     1 fail, 1 pass  8.1s  leaves exactly one record per round [duplicate-record]\n" +
		"mismatch  unknown  1 unknown       3.0s  2 attempts timed out\n" +
		"expiry    skipped  -               -     retention 24h exceeds --max-wait 30s\n" +
		"\n" +
		"FAIL: 1 of 4 properties violated (1 fail, 1 unknown, 1 pass, 1 skipped)\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("table:\n%s\nwant it to start with:\n%s", got, want)
	}
}

func TestTableAlignment(t *testing.T) {
	r := sampleRun()
	r.Properties[0].Name = "réplay-ünïcode"
	r.Properties[3].Reason = "line one\nline two\ttabbed \x1b[31mred"
	lines := strings.Split(renderTable(r), "\n")[:5]
	col := strings.Index(lines[0], "VERDICT")
	for _, line := range lines {
		runes := []rune(line)
		if len(runes) < col+2 || runes[col-1] != ' ' || runes[col-2] != ' ' || runes[col] == ' ' {
			t.Errorf("VERDICT column does not start at rune %d in %q", col, line)
		}
	}
	tests := []struct{ name, line, want string }{
		{"unicode name", lines[1], "réplay-ünïcode  pass"},
		{"escaped reason", lines[4], `line one\nline two\ttabbed \x1b[31mred`},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.line, tt.want) {
			t.Errorf("%s: %q lacks %q", tt.name, tt.line, tt.want)
		}
	}
	if got, want := lines[1], "réplay-ünïcode  pass     2 pass          1.2s"; got != want {
		t.Errorf("row = %q, want %q (padding counted in runes)", got, want)
	}
}

// TestTableFailureEvidence is a golden check of one failure's evidence.
func TestTableFailureEvidence(t *testing.T) {
	got := renderTable(sampleRun())
	want := `
FAILURES

1) race: leaves exactly one record per round
   found: duplicate-record=1
   round 3: expected 1 record, found 2
   message:
     two requests with key k-fixed were both processed
   counts:
     records(orders, alice)  2
     rounds                  20
   differing paths:
     $.id
     $.created_at
   attempts (3 of 4; all in report.json):
     #1 op=create
     > POST /orders
     < 201 Created
     #2 op=create
     < 201 Created
     #3 op=create
     < 201 Created
   repro:
     retrysafe run --target targets/examples/reference.yaml --focus 'race' --seed 42 --key k-fixed

UNKNOWN

1) mismatch: rejects a variant body
   timeout after 1s
`
	_, tail, ok := strings.Cut(got, "tool retrysafe dev, time 12.3s\n")
	if !ok || tail != want {
		t.Errorf("failures:\n%s\nwant:\n%s", got, want)
	}
}

func TestTableEscapesEvidence(t *testing.T) {
	r := sampleRun()
	ev := r.Properties[1].Specs[1].Evidence
	ev.Attempts = []string{"< 200 OK\r\n<\r\n< \x1b]0;owned\x07body"}
	ev.Counts = map[string]int{"records(a\nb)": 1}
	got := renderTable(r)
	for _, want := range []string{
		"     < 200 OK\n     <\n     < \\x1b]0;owned\\x07body\n",
		"     records(a\\nb)  1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\x07\r") {
		t.Errorf("table passes control characters through:\n%q", got)
	}
}

func TestProgress(t *testing.T) {
	tests := []struct {
		name  string
		total int
		prop  Property
		want  string
	}{
		{"pass", 7, sampleRun().Properties[0], "[1/7] replay ... pass (1.2s)\n"},
		{"fail", 7, sampleRun().Properties[1], "[1/7] race ... FAIL (8.1s): leaves exactly one record per round [duplicate-record]\n"},
		{"unknown", 7, sampleRun().Properties[2], "[1/7] mismatch ... unknown (3.0s): 2 attempts timed out\n"},
		{"skipped", 7, sampleRun().Properties[3], "[1/7] expiry ... skipped: retention 24h exceeds --max-wait 30s\n"},
		{"no total", 0, sampleRun().Properties[0], "[1] replay ... pass (1.2s)\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		p := Progress(&b)
		p.SetTotal(tt.total)
		p.Done(&tt.prop)
		if got := b.String(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestProgressConcurrent(t *testing.T) {
	var b strings.Builder
	p := Progress(&b)
	p.SetTotal(20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { p.Done(&Property{Name: "race", Verdict: Pass}) })
	}
	wg.Wait()
	got := b.String()
	for _, want := range []string{"[1/20] race", "[20/20] race"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 20 {
		t.Errorf("progress has %d lines, want 20", n)
	}
	var nilPrinter *ProgressPrinter
	nilPrinter.SetTotal(1)
	nilPrinter.Done(&Property{Name: "x"}) // must not panic
}
