package suites

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// Property is one conformance property: a Ginkgo Describe labelled property:NAME.
type Property struct {
	// Name is the property's name and its label's value.
	Name string
	// Must states what the target MUST do.
	Must string
	// Catches names the mutants of the reference API it exists to catch.
	Catches []string
	// Needs lists the target-file fields it needs.
	Needs []string
	// Labels are extra labels (KEY:VALUE) besides property:NAME.
	Labels []string
	// applies says why the property does not apply to a target ("" = it applies).
	applies func(*Env) string
	// specs registers the property's specs (inside its Describe).
	specs func(*Env)
}

// properties is the registry, in the order in which they run and are listed.
var properties []*Property

// register adds a property (called from the init function of its file).
func register(p *Property) {
	properties = append(properties, p)
	order := []string{"replay", "race", "mismatch", "tenancy", "expiry", "keys", "control", "load",
		"dropped-response", "slow-first-attempt", "crash-after-claim", "crash-under-load", "error-replay"}
	rank := func(name string) int {
		for i, n := range order {
			if n == name {
				return i
			}
		}
		return len(order)
	}
	for i := len(properties) - 1; i > 0 && rank(properties[i].Name) < rank(properties[i-1].Name); i-- {
		properties[i], properties[i-1] = properties[i-1], properties[i]
	}
}

// Properties returns every property in run order.
func Properties() []*Property { return append([]*Property(nil), properties...) }

// AllLabels returns property:NAME followed by the extra labels.
func (p *Property) AllLabels() []string {
	return append([]string{"property:" + p.Name}, p.Labels...)
}

// NotApplicable says why the property does not apply to the environment's target, or "".
func (p *Property) NotApplicable(e *Env) string {
	if p.applies == nil {
		return ""
	}
	return p.applies(e)
}

// MustText is the property's MUST statement on one line.
func (p *Property) MustText() string { return strings.Join(strings.Fields(p.Must), " ") }

// suiteText is the text of the one top-level container; with a single top-level container
// Ginkgo keeps the properties in their registered order.
const suiteText = "retrysafe"

// registerSpecs registers every property's Describe for one run.
func registerSpecs(e *Env) {
	Describe(suiteText, func() { registerProperties(e) })
}

func registerProperties(e *Env) {
	for _, p := range properties {
		p := p
		Describe(p.Name, Label(p.AllLabels()...), func() {
			if reason := p.NotApplicable(e); reason != "" {
				It("does not apply to this target", func() { Skip(reason) })
				return
			}
			BeforeEach(func() { e.beginEvidence() })
			AfterEach(func() {
				if CurrentSpecReport().Failed() {
					AddReportEntry(evidenceEntry, e.evidenceSnapshot(), ReportEntryVisibilityNever)
				}
			})
			p.specs(e)
		})
	}
}

// Report entry names used between specs and the run.
const (
	evidenceEntry = "retrysafe-evidence"
	unknownEntry  = "retrysafe-unknown"
)

// unknown ends the running spec without a verdict: the target's behaviour could not be
// established (a timeout, a lost response). It is not a violation.
func (e *Env) unknown(format string, args ...any) {
	e.halt()
	reason := sprintf(format, args...)
	AddReportEntry(unknownEntry, reason, ReportEntryVisibilityNever)
	AddReportEntry(evidenceEntry, e.evidenceSnapshot(), ReportEntryVisibilityNever)
	Skip("unknown: " + reason)
}
