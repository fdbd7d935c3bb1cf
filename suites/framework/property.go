package framework

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// Property is one conformance property: a MUST text, the mutants of the reference it exists to
// catch, and the specs it yields for a target. Its specs carry the labels property:NAME plus
// the property's own.
type Property struct {
	// Name is the property's name and its label's value.
	Name string
	// Side is what the property checks: SideAPI, SideConsumer, SideClient or SideChain (its
	// side package sets it); its specs carry the label side:SIDE.
	Side string
	// Must states what the target MUST do.
	Must string
	// Catches names the mutants of the reference API it exists to catch.
	Catches []string
	// Needs lists the target-file fields it needs.
	Needs []string
	// Labels are extra labels (KEY:VALUE) besides property:NAME.
	Labels []string
	// SpecLabels are the labels some of its specs add, depending on the path the target allows
	// (fault:downstream where it declares a sink, say), besides those named after the target
	// (consumer:TRANSPORT, events:TRANSPORT, client:NAME, config:NAME); retrysafe list
	// --label-filter reads them. In a test binary Env.Specs refuses a spec label not declared.
	SpecLabels []string
	// Covers says which declared operations its specs cover when not every one ("" = each
	// applicable operation); retrysafe list prints it.
	Covers string
	// Transports are the consumer transports a consumer property checks (webhook, amqp,
	// nats); empty for an API property.
	Transports []targets.Transport
	// Applies says why the property does not apply to a target ("" = it applies).
	Applies func(*Env) string
	// Specs returns the property's specs for a target.
	Specs func(*Env) []*Spec
}

// The sides a property checks.
const (
	// SideAPI: an idempotent API (the target file's operations).
	SideAPI = "api"
	// SideConsumer: an event consumer (the target file's consumers).
	SideConsumer = "consumer"
	// SideClient: a client of an idempotent API (the target file's clients); the harness plays
	// the API.
	SideClient = "client"
	// SideChain: a client, an API, its broker and a consumer end to end (a chain target file).
	SideChain = "chain"
)

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
	// Extra are labels of this spec besides its property's (consumer:webhook, say).
	Extra []string

	body func(*S) check.Result
}

// FullText is the property's name and the spec's text.
func (sp *Spec) FullText() string { return sp.Property.Name + " " + sp.Text }

// Labels are the spec's labels: its property's, then its own.
func (sp *Spec) Labels() []string { return append(sp.Property.AllLabels(), sp.Extra...) }

// Spec returns a spec of property p.
func (p *Property) Spec(text string, body func(*S) check.Result) *Spec {
	return &Spec{Property: p, Text: text, body: body}
}

// order is the run order of the properties: the registry keeps it whatever the files' init
// order is.
var order = []string{"replay", "race", "mismatch", "tenancy", "expiry", "keys", "control", "load",
	"dropped-response", "slow-first-attempt", "crash-after-claim", "crash-under-load", "error-replay",
	"event-per-record", "event-not-before-commit", "event-after-crash", "event-under-broker-outage",
	"redelivery", "distinct-events", "concurrent-redelivery", "lost-ack", "failed-then-redelivered",
	"out-of-order", "event-crash-after-claim", "crash-before-ack", "crash-after-ack", "crash-under-delivery", "late-redelivery",
	"signature", "delivery-load",
	"same-operation-new-message", "one-message-many-operations", // one business operation, many messages
	"retries-transient", "same-key-on-retry", "new-key-per-operation", "no-retry-on-rejection", "retry-after", "backoff",
	"bounded", "restart-reuses-key", "key-present",
	"uncertain-stays-pending", // issue 40 (clients)
	"chain"}

// properties is the registry, in run order.
var properties []*Property

// Register adds a property (called from the init function of its file, through its side's
// package, which sets its Side).
func Register(p *Property) {
	if !slices.Contains([]string{SideAPI, SideConsumer, SideClient, SideChain}, p.Side) {
		panic(fmt.Sprintf("framework.Register: property %s has no side (api, consumer, client or chain)", p.Name))
	}
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

// AllLabels returns property:NAME and side:SIDE followed by the extra labels.
func (p *Property) AllLabels() []string {
	return append([]string{"property:" + p.Name, "side:" + p.Side}, p.Labels...)
}

// NotApplicable says why the property does not apply to the environment's target, or "".
func (p *Property) NotApplicable(e *Env) string {
	if p.Applies == nil {
		return ""
	}
	return p.Applies(e)
}

// MustText is the property's MUST statement on one line.
func (p *Property) MustText() string { return strings.Join(strings.Fields(p.Must), " ") }

// NotApplicableText is the text of the one spec of a property that does not apply.
const NotApplicableText = "does not apply to this target"

// Specs returns every property's specs for the environment's target, in run order: a property
// that does not apply yields one skipped spec that says why. The properties of a side the target
// file does not describe (an API's on a file that describes only consumers or clients, a consumer
// transport's the file does not declare, a client's on a file without clients) yield none.
func (e *Env) Specs() []*Spec {
	var out []*Spec
	for _, p := range properties {
		if p.targetSkip(e) != "" {
			continue // a property of a side the file does not describe: not run, not reported
		}
		if reason := p.NotApplicable(e); reason != "" {
			out = append(out, &Spec{Property: p, Text: NotApplicableText, Skip: reason})
			continue
		}
		out = append(out, p.Specs(e)...)
	}
	settleSkip := e.SettleSkip()
	for i, sp := range out {
		sp.Index = i
		if settleSkip != "" && sp.Skip == "" && sp.Property.Side == SideAPI {
			sp.Skip = settleSkip
		}
		for _, l := range sp.Extra {
			// A programming error that would only make list --label-filter incomplete: the
			// sides' tests, which build every property's specs, catch it; a run goes on.
			if !sp.Property.mayAdd(l) && testing.Testing() {
				panic(fmt.Sprintf("property %s: spec %q adds the label %s, which its SpecLabels do not declare", sp.Property.Name, sp.Text, l))
			}
		}
	}
	return out
}

// mayAdd reports whether a spec of p may carry label l besides p's own labels.
func (p *Property) mayAdd(l string) bool {
	key, value, _ := strings.Cut(l, ":")
	switch {
	case key == "consumer":
		return slices.Contains(p.Transports, targets.Transport(value))
	case key == EventsLabel:
		return slices.Contains(p.Labels, EventsLabel)
	case key == "client" || key == "config": // named after the file's clients and configurations
		return p.Side == SideClient
	}
	return slices.Contains(p.SpecLabels, l)
}

// LabelSets are the label sets p's specs may carry, for a label filter without a target: its own
// labels with each consumer transport it checks (or each events transport), each alone and with
// each of its SpecLabels.
func (p *Property) LabelSets() [][]string {
	base := p.AllLabels()
	var variants []string
	switch {
	case p.IsConsumer():
		for _, t := range p.Transports {
			variants = append(variants, "consumer:"+string(t))
		}
	case slices.Contains(p.Labels, EventsLabel):
		for _, t := range []targets.Transport{targets.TransportAMQP, targets.TransportNATS, targets.TransportWebhook} {
			variants = append(variants, EventsLabel+":"+string(t))
		}
	}
	if len(variants) == 0 {
		variants = []string{""}
	}
	var sets [][]string
	for _, v := range variants {
		for _, extra := range append([]string{""}, p.SpecLabels...) {
			set := slices.Clone(base)
			for _, l := range []string{v, extra} {
				if l != "" {
					set = append(set, l)
				}
			}
			sets = append(sets, set)
		}
	}
	return sets
}

// IsConsumer reports whether the property checks consumers.
func (p *Property) IsConsumer() bool { return p.Side == SideConsumer }

// TransportList names the property's consumer transports, e.g. "webhook, amqp".
func (p *Property) TransportList() string {
	names := make([]string, len(p.Transports))
	for i, t := range p.Transports {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// targetSkip says why the property's side is not in the target file: an API property on a
// file without operations, a consumer property without a consumer on its transports, a client
// property without clients.
func (p *Property) targetSkip(e *Env) string {
	switch p.Side {
	case SideConsumer:
		if len(e.Consumers(p.Transports...)) == 0 {
			return "the target declares no consumer on " + p.TransportList()
		}
	case SideClient:
		if len(e.Target.Clients) == 0 {
			return "the target declares no clients"
		}
	case SideChain:
		if e.Target.Chain == nil {
			return "the target is not a chain"
		}
	default:
		if len(e.Target.Operations) == 0 {
			return "the target declares no operations (it describes consumers or clients only)"
		}
		if slices.Contains(p.Labels, EventsLabel) && len(e.Target.Publishing()) == 0 {
			return "no operation declares the events it publishes"
		}
	}
	return ""
}

// EventsLabel marks the API properties that check the events an API publishes (an operation's
// publishes block): a target whose operations declare none leaves them out.
const EventsLabel = "events"

// Consumers returns the target's consumers on any of the transports.
func (e *Env) Consumers(ts ...targets.Transport) []*targets.Consumer {
	var out []*targets.Consumer
	for _, c := range e.Target.Consumers {
		if slices.Contains(ts, c.Transport) {
			out = append(out, c)
		}
	}
	return out
}

// ConsumerSpecs returns one spec per consumer the property checks, each labelled consumer:TRANSPORT.
func (p *Property) ConsumerSpecs(e *Env, spec func(c *targets.Consumer) *Spec) []*Spec {
	return p.ConsumerSpecsEach(e, func(c *targets.Consumer) []*Spec { return []*Spec{spec(c)} })
}

// ConsumerSpecsEach is ConsumerSpecs for a property with several specs per consumer (one per
// failure point of its hook, say).
func (p *Property) ConsumerSpecsEach(e *Env, specs func(c *targets.Consumer) []*Spec) []*Spec {
	var out []*Spec
	for _, c := range e.Consumers(p.Transports...) {
		for _, sp := range specs(c) {
			sp.Extra = append(sp.Extra, "consumer:"+string(c.Transport))
			out = append(out, sp)
		}
	}
	return out
}
