package suites

import (
	"strings"

	"github.com/retrysafe/retrysafe/suites/check"
)

// Property is one conformance property: a MUST text, the mutants of the reference it exists to
// catch, and the specs it yields for a target. Its specs carry the labels property:NAME plus
// the property's own.
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
	// Covers says which declared operations its specs cover when not every one ("" = each
	// applicable operation); retrysafe list prints it.
	Covers string
	// applies says why the property does not apply to a target ("" = it applies).
	applies func(*Env) string
	// specs returns the property's specs for a target.
	specs func(*Env) []*Spec
}

// Spec is one check of a property against one target: a text and a body that drives the target
// (sends, counts, injects faults) and returns a checker's Result. A body forms no verdict of
// its own.
type Spec struct {
	// Property is the property the spec belongs to.
	Property *Property
	// Text says what the spec checks, without the property's name.
	Text string
	// Skip says why the spec does not apply to this target ("" = it runs).
	Skip string
	// Index is the spec's position in the run order.
	Index int

	body func(*S) check.Result
}

// FullText is the property's name and the spec's text.
func (sp *Spec) FullText() string { return sp.Property.Name + " " + sp.Text }

// Labels are the spec's labels: its property's.
func (sp *Spec) Labels() []string { return sp.Property.AllLabels() }

// spec returns a spec of property p.
func (p *Property) spec(text string, body func(*S) check.Result) *Spec {
	return &Spec{Property: p, Text: text, body: body}
}

// order is the run order of the properties: the registry keeps it whatever the files' init
// order is.
var order = []string{"replay", "race", "mismatch", "tenancy", "expiry", "keys", "control", "load",
	"dropped-response", "slow-first-attempt", "crash-after-claim", "crash-under-load", "error-replay"}

// properties is the registry, in run order.
var properties []*Property

// register adds a property (called from the init function of its file).
func register(p *Property) {
	properties = append(properties, p)
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

// NotApplicableText is the text of the one spec of a property that does not apply.
const NotApplicableText = "does not apply to this target"

// Specs returns every property's specs for the environment's target, in run order: a property
// that does not apply yields one skipped spec that says why.
func (e *Env) Specs() []*Spec {
	var out []*Spec
	for _, p := range properties {
		if reason := p.NotApplicable(e); reason != "" {
			out = append(out, &Spec{Property: p, Text: NotApplicableText, Skip: reason})
			continue
		}
		out = append(out, p.specs(e)...)
	}
	for i, sp := range out {
		sp.Index = i
	}
	return out
}
