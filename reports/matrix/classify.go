package matrix

import (
	"strings"

	"github.com/retrysafe/retrysafe/reports"
)

// unsafeFailure says why a failed property is unsafe, from the anomaly kinds of its failing
// specs alone (reports.Kind.Unsafe): "" when no failing spec found an unsafe kind, so the
// failure is a difference of status, header or policy. noKinds reports a failing spec without
// any anomaly (a report written before reports carried kinds): its failure shows as a
// difference, with a note.
func unsafeFailure(p reports.Property) (unsafe string, noKinds bool) {
	if p.Verdict != reports.Fail {
		return "", false
	}
	for _, s := range p.Specs {
		if s.Verdict != reports.Fail {
			continue
		}
		if len(s.Anomalies) == 0 {
			noKinds = true
		}
		for _, a := range s.Anomalies {
			if a.Kind.Unsafe() {
				return string(a.Kind) + ": " + a.Message + " (" + s.Text + ")", noKinds
			}
		}
	}
	return "", noKinds
}

// failingSpecs names the failing specs of a property, with the kinds each found.
func failingSpecs(p reports.Property) string {
	var names []string
	for _, s := range p.Specs {
		if s.Verdict != reports.Fail {
			continue
		}
		name := s.Text
		if k := reports.KindCounts(s.Anomalies); k != "" {
			name += " [" + k + "]"
		}
		names = append(names, name)
	}
	return strings.Join(names, "; ")
}

// noKindsNote explains a failure shown as a difference because its report carries no kinds.
const noKindsNote = "this report carries no anomaly kinds (written by an older retrysafe): its failures show as differing, never as unsafe"
