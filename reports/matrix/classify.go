package matrix

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/retrysafe/retrysafe/reports"
)

// unsafeByProperty says what a failure of each property means when it is unsafe whatever the
// failing spec: these properties only check that work is done once and answers stay with their
// request.
var unsafeByProperty = map[string]string{
	"race":               "duplicate record or a 5xx to a race loser",
	"replay":             "duplicate record, or a success without a record",
	"tenancy":            "response served across tenants",
	"control":            "another request's response replayed",
	"load":               "duplicate record under load",
	"slow-first-attempt": "duplicate record, or a key stuck past its lock timeout",
}

// recordsRe finds Gomega's "Expected <int>: N to equal <int>: M" of a record count.
var recordsRe = regexp.MustCompile(`business records[^\n]*\n\s*Expected\s*<int>: (\d+)\s*to equal\s*<int>: (\d+)`)

// gotStatusRe finds the status line of the attempt after "expected status N, got:".
var gotStatusRe = regexp.MustCompile(`(?s)expected status \d+, got:.*?\n< (\d{3}) `)

// unsafeFailure says why a failed property is unsafe, or "" when the failure is a difference
// of status, header or policy. It reads the property's name and its failing specs' messages.
func unsafeFailure(p reports.Property) string {
	if p.Verdict != reports.Fail {
		return ""
	}
	for _, s := range p.Specs {
		if s.Verdict != reports.Fail {
			continue
		}
		if m := recordsRe.FindStringSubmatch(s.Failure); m != nil {
			got, _ := strconv.Atoi(m[1])
			want, _ := strconv.Atoi(m[2])
			if got > want {
				return "duplicate record: " + strconv.Itoa(got) + " records, " + strconv.Itoa(want) + " expected (" + s.Text + ")"
			}
		}
	}
	if why, ok := unsafeByProperty[p.Name]; ok {
		return why
	}
	if strings.HasPrefix(p.Name, "crash") {
		return "duplicate record, or a key stuck after a crash"
	}
	for _, s := range p.Specs {
		if s.Verdict != reports.Fail {
			continue
		}
		switch {
		case p.Name == "mismatch" && strings.Contains(s.Text, "independent"):
			return "response served across operations (" + s.Text + ")"
		case p.Name == "keys" && strings.Contains(s.Text, "two operations"):
			return "another request's response replayed: long keys collide (" + s.Text + ")"
		case p.Name == "mismatch" && gotSuccess(s.Failure):
			return "another request's response replayed: a different payload got a success (" + s.Text + ")"
		}
	}
	return ""
}

// gotSuccess reports whether a status expectation failed because the answer was a 2xx.
func gotSuccess(failure string) bool {
	m := gotStatusRe.FindStringSubmatch(failure)
	return m != nil && strings.HasPrefix(m[1], "2")
}
