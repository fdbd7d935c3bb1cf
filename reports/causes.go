package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SortWorstFirst orders a spec's anomalies so that its evidence leads with the worst: the unsafe
// kinds (Kind.Unsafe) first, then the others, each in Kinds order; anomalies of one kind keep the
// order they were found in. A kind outside Kinds comes last.
func SortWorstFirst(as []Anomaly) {
	slices.SortStableFunc(as, func(a, b Anomaly) int { return cmp.Compare(worstRank(a.Kind), worstRank(b.Kind)) })
}

// worstRank is a kind's place in SortWorstFirst's order.
func worstRank(k Kind) int {
	i := slices.Index(Kinds, k)
	if i < 0 {
		i = len(Kinds)
	}
	if !k.Unsafe() {
		i += len(Kinds) + 1
	}
	return i
}

// Cause is a failure that the anomalies of two or more properties share: the same kind, the same
// What and the same statuses of their first and last attempt ("every replay of a completed key
// answered 502"). A report names it once, before the table, so that one root cause does not
// read as several red properties.
type Cause struct {
	// Kind, What and Statuses are what the anomalies share (Statuses: the first and the last
	// attempt's, 0 for one without an answer).
	Kind     Kind   `json:"kind"`
	What     string `json:"what,omitempty"`
	Statuses []int  `json:"statuses"`
	// Properties are the properties whose failing specs found such an anomaly, in run order.
	Properties []string `json:"properties"`
	// Anomalies counts the anomalies of the cause.
	Anomalies int `json:"anomalies"`
	// Example is the message of the first such anomaly.
	Example string `json:"example"`
}

// FindCauses groups the anomalies of the run's failing specs by kind, What and the statuses of
// their first and last attempt, and returns the groups found in two or more properties, in the
// order their first anomaly was found. Anomalies without statuses are never grouped: nothing
// shows that they share a cause.
func FindCauses(r *Run) []Cause {
	type causeKey struct {
		kind        Kind
		what        string
		first, last int
	}
	var out []Cause
	index := map[causeKey]int{}
	for _, p := range r.Properties {
		for _, s := range p.Specs {
			if s.Verdict != Fail {
				continue
			}
			for _, a := range s.Anomalies {
				if len(a.Statuses) != 2 {
					continue
				}
				id := causeKey{a.Kind, a.What, a.Statuses[0], a.Statuses[1]}
				i, ok := index[id]
				if !ok {
					i = len(out)
					index[id] = i
					out = append(out, Cause{Kind: a.Kind, What: a.What, Statuses: slices.Clone(a.Statuses), Example: a.Message})
				}
				c := &out[i]
				c.Anomalies++
				if !slices.Contains(c.Properties, p.Name) {
					c.Properties = append(c.Properties, p.Name)
				}
			}
		}
	}
	return slices.DeleteFunc(out, func(c Cause) bool { return len(c.Properties) < 2 })
}

// Sentence says the cause in one line: "3 properties fail with one cause: replay-differs in the
// status, the first attempt answered 201 and the last answered 502 (replay, race, load); e.g. ...".
func (c Cause) Sentence() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d properties fail with one cause: %s", len(c.Properties), c.Kind)
	if c.What != "" {
		b.WriteString(" in the " + c.What)
	}
	if len(c.Statuses) == 2 {
		fmt.Fprintf(&b, ", the first attempt %s and the last %s", statusWords(c.Statuses[0]), statusWords(c.Statuses[1]))
	}
	fmt.Fprintf(&b, " (%s", strings.Join(c.Properties, ", "))
	if c.Anomalies > len(c.Properties) {
		fmt.Fprintf(&b, "; %d anomalies", c.Anomalies)
	}
	b.WriteString(")")
	if c.Example != "" {
		b.WriteString("; e.g. " + c.Example)
	}
	return b.String()
}

// statusWords says what an attempt got: "answered 502", or "got no answer".
func statusWords(status int) string {
	if status == 0 {
		return "got no answer"
	}
	return "answered " + strconv.Itoa(status)
}
