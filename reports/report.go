// Package reports holds the result of one `retrysafe run` and renders it:
// report.json (a versioned schema, see docs/report-schema.md), summary.md (a
// CI job summary) and the terminal table with the evidence of each failure.
//
// The suites fill a Run; this package depends on no other retrysafe package.
// JUnit XML is not written here: Ginkgo's own reporter produces junit.xml.
package reports

import "time"

// SchemaVersion names the schema of report.json. Additive changes (new
// optional fields) keep v1; a change that removes, renames or retypes a field,
// or adds a verdict value, needs v2.
const SchemaVersion = "retrysafe.report/v1"

// Verdict is the outcome of a spec, a property or a whole run.
type Verdict string

// The four verdicts. Unknown means the harness could not decide (an attempt
// timed out or lost its response); it is never counted as a pass or a fail.
const (
	Pass    Verdict = "pass"
	Fail    Verdict = "fail"
	Unknown Verdict = "unknown"
	Skipped Verdict = "skipped"
)

// verdictOrder is the order in which reports list verdicts: worst first.
var verdictOrder = []Verdict{Fail, Unknown, Pass, Skipped}

// Valid reports whether v is one of the four verdicts.
func (v Verdict) Valid() bool {
	switch v {
	case Pass, Fail, Unknown, Skipped:
		return true
	}
	return false
}

// Combine folds verdicts into one: fail if any is fail, else unknown if any
// is unknown (or is not a valid verdict, such as ""), else pass. Skipped
// verdicts are ignored, so no verdicts at all, or only skipped ones, give pass.
func Combine(vs ...Verdict) Verdict {
	out := Pass
	for _, v := range vs {
		switch {
		case v == Fail:
			return Fail
		case v == Pass || v == Skipped:
		default:
			out = Unknown
		}
	}
	return out
}

// Run is the result of one `retrysafe run`: what was tested, how, and each
// property's verdict with its evidence. It is what report.json holds.
type Run struct {
	// Schema is SchemaVersion; WriteJSON fills it when empty.
	Schema string `json:"schema"`
	// RunID identifies this run, e.g. in CI artifact names.
	RunID string `json:"run_id"`
	// Tool names the program and its version, e.g. "retrysafe dev".
	Tool string `json:"tool"`
	// Target is the API under test.
	Target TargetInfo `json:"target"`
	// Started and Finished bound the run.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Seed is the random seed of the run (Ginkgo's --seed).
	Seed int64 `json:"seed"`
	// Key is the idempotency key fixed by --key, if any.
	Key string `json:"key,omitempty"`
	// Complete is true when every selected property ran to a verdict.
	Complete bool `json:"complete"`
	// Incomplete says why the run is not complete: "interrupted",
	// "deadline", ...; empty when Complete.
	Incomplete string `json:"incomplete,omitempty"`
	// Properties are the selected properties, in the order they ran.
	Properties []Property `json:"properties"`
	// Faults are the nemesis's injects and heals, in the order they took effect.
	Faults []FaultEvent `json:"faults,omitempty"`
	// Causes are the failures that the anomalies of two or more properties share (FindCauses):
	// the reports name each once, before the table.
	Causes []Cause `json:"causes,omitempty"`
	// ExitCode is the process exit code of the run (0, 1, 2 or 3).
	ExitCode int `json:"exit_code"`
}

// TargetInfo describes the API under test.
type TargetInfo struct {
	// Name is the target's name from its target file.
	Name string `json:"name"`
	// File is the target file's path; empty for the built-in reference API.
	File string `json:"file,omitempty"`
	// Instances are the base URLs of the instances tested.
	Instances []string `json:"instances,omitempty"`
	// Profile is the idempotency profile as flat key/value pairs
	// (e.g. "mismatch_status": "422", "retention": "24h").
	Profile map[string]string `json:"profile,omitempty"`
	// Deviations say how what the target declares differs from the source articles' rules
	// (a client's retry policy, e.g. "client sdk does not retry a 409"): each is checked as
	// declared, and listed here.
	Deviations []string `json:"deviations,omitempty"`
}

// Property is one conformance property (replay, race, ...) and its result.
type Property struct {
	// Name is the property's name, as in the label property:NAME.
	Name string `json:"name"`
	// Must states what the target MUST do.
	Must string `json:"must,omitempty"`
	// Catches names the reference mutants this property exists to catch.
	Catches []string `json:"catches,omitempty"`
	// Labels are the property's Ginkgo labels (KEY:VALUE).
	Labels []string `json:"labels,omitempty"`
	// Verdict is the property's verdict, normally Combine of its specs.
	Verdict Verdict `json:"verdict"`
	// Reason says why the property was skipped or is unknown.
	Reason string `json:"reason,omitempty"`
	// Specs are the property's specs, in the order they ran.
	Specs []Spec `json:"specs,omitempty"`
	// Duration is the wall time spent on the property
	// (JSON: duration_seconds, a number of seconds).
	Duration time.Duration `json:"-"`
	// Figures are optional key figures, e.g. "arrival_spread_p50": "1.2ms".
	Figures map[string]string `json:"figures,omitempty"`
}

// Spec is one Ginkgo spec of a property.
type Spec struct {
	// Text is the spec's full text, without the property name.
	Text string `json:"text"`
	// Verdict is the spec's verdict.
	Verdict Verdict `json:"verdict"`
	// Failure is the failure (or unknown, or skip) message.
	Failure string `json:"failure,omitempty"`
	// Observed says what a verdict that rests on chance rests on (how many requests or
	// deliveries of a burst were in flight at once), for a pass too.
	Observed string `json:"observed,omitempty"`
	// Location is where the failure was detected, as file:line (JUnit keeps Ginkgo's; the
	// harness no longer fills it: it is retrysafe's source, not the API's).
	Location string `json:"location,omitempty"`
	// Anomalies are what the spec's checker found, each with its kind; empty unless it failed.
	Anomalies []Anomaly `json:"anomalies,omitempty"`
	// Duration is the spec's run time (JSON: duration_seconds).
	Duration time.Duration `json:"-"`
	// Evidence supports a fail or unknown verdict; nil otherwise.
	Evidence *Evidence `json:"evidence,omitempty"`
}

// Evidence is what a person needs to believe and reproduce a failure.
type Evidence struct {
	// Message summarises what was observed.
	Message string `json:"message,omitempty"`
	// Attempts are formatted, already redacted request/response transcripts.
	Attempts []string `json:"attempts,omitempty"`
	// Counts are observed counts, e.g. "records(orders, alice)": 2.
	Counts map[string]int `json:"counts,omitempty"`
	// DiffPaths are the JSON paths where compared responses differ.
	DiffPaths []string `json:"diff_paths,omitempty"`
	// Repro is one command line that reproduces the failure.
	Repro string `json:"repro,omitempty"`
}

// Counts returns how many properties have each verdict. A property whose
// verdict is not valid counts as Unknown.
func (r *Run) Counts() map[Verdict]int {
	out := make(map[Verdict]int)
	for _, p := range r.Properties {
		out[normal(p.Verdict)]++
	}
	return out
}

// Verdict is the run's verdict: Combine of its properties' verdicts, except
// that an incomplete run with no failure is Unknown, never Pass.
func (r *Run) Verdict() Verdict {
	vs := make([]Verdict, len(r.Properties))
	for i, p := range r.Properties {
		vs[i] = p.Verdict
	}
	v := Combine(vs...)
	if v == Pass && !r.Complete {
		return Unknown
	}
	return v
}

// Counts returns how many of the property's specs have each verdict. A spec
// whose verdict is not valid counts as Unknown.
func (p *Property) Counts() map[Verdict]int {
	out := make(map[Verdict]int)
	for _, s := range p.Specs {
		out[normal(s.Verdict)]++
	}
	return out
}

// normal maps an invalid verdict to Unknown.
func normal(v Verdict) Verdict {
	if v.Valid() {
		return v
	}
	return Unknown
}
