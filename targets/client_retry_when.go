package targets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/theory/jsonpath"
)

// Policies conditioned on the answer's content. SDKs decide from more than a status: from an
// error code in their provider's body (retry a 429 only when its code is lock_timeout) and from
// a should-retry header (Stripe-Should-Retry, x-should-retry) that overrides the status both
// ways. A policy says so with conditional entries of retries and with should_retry_header, and
// Decide reads them off one answer.

// RetryWhen is a conditional entry of retry.retries ({status: 429, when: {jsonpath:
// $.error.code, equals: lock_timeout}}): its status is retried only when the answer's JSON body
// holds Equals at JSONPath; otherwise the status is neither retried nor never resent (as a
// status the policy does not list), unless an entry without a condition retries it.
type RetryWhen struct {
	Status   int
	JSONPath string
	Equals   string
	// At is the entry's position in retries: the scenarios plan the statuses a policy retries
	// in the order the file lists them.
	At int
}

// ShouldRetryHeader is a header of the API's answers that, present with one of its values,
// decides over everything else the policy says (retry.should_retry_header: {name:
// Stripe-Should-Retry, retry: "true", never: "false"}): with Retry the answer is retried, with
// Never it is never resent, over never and over the statuses retries lists. Absent, or with
// another value, it decides nothing. Values compare without case.
type ShouldRetryHeader struct {
	Name  string
	Retry string // "" when only Never is declared
	Never string // "" when only Retry is declared
}

// RetryDecision is what a policy says of one answer.
type RetryDecision int

// The decisions.
const (
	// DecideUndeclared: the policy says nothing of the answer: a retry of it is undeclared.
	DecideUndeclared RetryDecision = iota
	// DecideRetry: the client retries the answer.
	DecideRetry
	// DecideNever: the client never resends the answer with the same key.
	DecideNever
)

// Decide says what the policy does with an answer of this status, headers and body: the
// should-retry header, present with one of its values, decides; then never; then an entry of
// retries without a condition (the status, or the class 5xx for a status no conditional entry
// names); then a conditional entry whose condition the body meets. Any other answer is
// undeclared.
func (p RetryPolicy) Decide(status int, h http.Header, body []byte) RetryDecision {
	if d, _, ok := p.ShouldRetryHeader.Says(h); ok {
		return d
	}
	switch {
	case slices.Contains(p.Never, status):
		return DecideNever
	case p.RetriesStatus(status):
		return DecideRetry
	}
	for _, w := range p.RetriesWhen {
		if w.Status == status && w.Met(body) {
			return DecideRetry
		}
	}
	return DecideUndeclared
}

// Says is what the header says in h, if it says anything (ok): its decision, and the value
// that made it. A nil header (none declared) says nothing.
func (s *ShouldRetryHeader) Says(h http.Header) (d RetryDecision, value string, ok bool) {
	if s == nil || h == nil {
		return DecideUndeclared, "", false
	}
	vals, ok := h[http.CanonicalHeaderKey(s.Name)]
	if !ok || len(vals) == 0 {
		return DecideUndeclared, "", false
	}
	v := strings.TrimSpace(vals[0])
	switch {
	case s.Retry != "" && strings.EqualFold(v, s.Retry):
		return DecideRetry, v, true
	case s.Never != "" && strings.EqualFold(v, s.Never):
		return DecideNever, v, true
	}
	return DecideUndeclared, "", false
}

// Conditional reports whether a conditional entry of retries names this status.
func (p RetryPolicy) Conditional(status int) bool {
	return slices.ContainsFunc(p.RetriesWhen, func(w RetryWhen) bool { return w.Status == status })
}

// Met reports whether an answer's body meets the condition: its JSON holds Equals at JSONPath
// (a string compared as its text, any other value as JSON writes it).
func (w RetryWhen) Met(body []byte) bool {
	path, err := jsonpath.Parse(w.JSONPath)
	if err != nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return false
	}
	nodes := path.Select(doc)
	if len(nodes) == 0 {
		return false
	}
	b, err := json.Marshal(nodes[0])
	return err == nil && jsonText(b) == w.Equals
}

// Apply returns an error answer's JSON body with the condition met (the member at JSONPath set
// to Equals, objects made on the way, a value that is not one replaced; Equals written as the
// boolean or number it reads as where the member was one, so that a client that reads a typed
// member can read it, as a string otherwise) or not met (the member removed). A body that is
// not a JSON object becomes one holding only the member when met, and is left as it is when
// not.
func (w RetryWhen) Apply(body []byte, met bool) []byte {
	segs, err := fieldSegments(w.JSONPath)
	if err != nil {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if dec.Decode(&doc) != nil || doc == nil {
		if !met {
			return body
		}
		doc = map[string]any{}
	}
	m := doc
	for _, s := range segs[:len(segs)-1] {
		next, ok := m[s.name].(map[string]any)
		if !ok {
			if !met {
				return body
			}
			next = map[string]any{}
			m[s.name] = next
		}
		m = next
	}
	last := segs[len(segs)-1].name
	if met {
		m[last] = w.valueFor(m[last])
	} else {
		delete(m, last)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// valueFor is what Apply writes in place of old: Equals as the boolean or number it reads as
// where old is one of those, Equals as a string otherwise.
func (w RetryWhen) valueFor(old any) any {
	switch old.(type) {
	case bool, json.Number:
		dec := json.NewDecoder(strings.NewReader(w.Equals))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil && !dec.More() {
			switch v.(type) {
			case bool, json.Number:
				return v
			}
		}
	}
	return w.Equals
}

// retryEntry is one entry of retries in the file's order: a condition without one (reset,
// timeout, 5xx, a status) or a conditional entry.
type retryEntry struct {
	cond string
	when *RetryWhen
}

// entries are the entries of retries in the order the file lists them (a policy built by hand
// whose conditional entries' positions collide has them after the others).
func (p RetryPolicy) entries() []retryEntry {
	out := make([]retryEntry, 0, len(p.Retries)+len(p.RetriesWhen))
	placed := make([]bool, len(p.RetriesWhen))
	next := 0
	for i := 0; i < len(p.Retries)+len(p.RetriesWhen); i++ {
		if w := slices.IndexFunc(p.RetriesWhen, func(w RetryWhen) bool { return w.At == i }); w >= 0 && !placed[w] {
			placed[w] = true
			out = append(out, retryEntry{when: &p.RetriesWhen[w]})
			continue
		}
		if next < len(p.Retries) {
			out = append(out, retryEntry{cond: p.Retries[next]})
			next++
		}
	}
	for i := range p.RetriesWhen {
		if !placed[i] {
			out = append(out, retryEntry{when: &p.RetriesWhen[i]})
		}
	}
	return out
}

// PlannedStatuses are the statuses the policy retries that a scenario can answer with, in the
// order the file lists them: each status listed, each conditional entry's status (answered
// with its condition met), and for the class 5xx the first of 503, 502, 500 and 504 it retries
// without a condition.
func (p RetryPolicy) PlannedStatuses() []int {
	var out []int
	for _, e := range p.entries() {
		st := 0
		switch {
		case e.when != nil:
			st = e.when.Status
		case e.cond == "5xx":
			if i := slices.IndexFunc([]int{503, 502, 500, 504}, p.RetriesStatus); i >= 0 {
				st = []int{503, 502, 500, 504}[i]
			}
		default:
			st, _ = strconv.Atoi(e.cond)
		}
		if st > 0 && !slices.Contains(out, st) && (p.RetriesStatus(st) || p.Conditional(st)) {
			out = append(out, st)
		}
	}
	return out
}

// retriesEntries decodes retry.retries: reset, timeout, 5xx, status codes, and conditional
// entries {status: 429, when: {jsonpath: $.error.code, equals: lock_timeout}}.
func (d *decoder) retriesEntries(ro *object, p *RetryPolicy) {
	nodes, ok := d.list(ro, "retries")
	if !ok {
		return
	}
	p.Retries, p.RetriesWhen = nil, nil
	for i, n := range nodes {
		switch d.resolve(n).(type) {
		case *ast.MappingNode, *ast.MappingValueNode:
			if w, ok := d.retryWhen(n, fmt.Sprintf("%s[%d]", ro.at("retries"), i), ro.sub("retries")+"[]"); ok {
				w.At = i
				p.RetriesWhen = append(p.RetriesWhen, w)
			}
			continue
		}
		r, ok := d.scalar(n, fmt.Sprintf("%s[%d]", ro.at("retries"), i))
		if !ok {
			continue
		}
		r = strings.TrimSpace(r)
		if n, err := strconv.Atoi(r); r != "reset" && r != "timeout" && r != "5xx" && (err != nil || n < 400 || n > 599) {
			d.ps.add(ro.lineOf("retries"), ro.at("retries"),
				"must list reset, timeout, 5xx or status codes 400-599 (or {status: 429, when: {jsonpath: $.error.code, equals: lock_timeout}}), got %q", r)
			continue
		}
		p.Retries = append(p.Retries, r)
	}
}

// retryWhen decodes a conditional entry of retries.
func (d *decoder) retryWhen(n ast.Node, path, schema string) (RetryWhen, bool) {
	var w RetryWhen
	eo, ok := d.object(n, path, schema)
	if !ok {
		return w, false
	}
	st, okS := d.integer(eo, "status", 400, 599)
	if !eo.has("status") {
		d.ps.add(eo.line, eo.at("status"), "missing required field (the status the condition makes retried, e.g. 429)")
	}
	if !eo.has("when") {
		d.ps.add(eo.line, eo.at("when"), "missing required field ({jsonpath: $.error.code, equals: lock_timeout}: when the status is retried)")
		return w, false
	}
	wo, ok := d.child(eo, "when")
	if !ok {
		return w, false
	}
	jp, okP := d.required(wo, "jsonpath", " (the member of the answer's JSON body, e.g. $.error.code)")
	eq, okE := d.required(wo, "equals", " (the value that makes the status retried, e.g. lock_timeout)")
	if okP {
		jp = strings.TrimSpace(jp)
		segs, err := fieldSegments(jp)
		switch {
		case err != nil:
			d.ps.add(wo.lineOf("jsonpath"), wo.at("jsonpath"), "%v", err)
			okP = false
		case slices.ContainsFunc(segs, func(s fieldSeg) bool { return s.isIdx }):
			d.ps.add(wo.lineOf("jsonpath"), wo.at("jsonpath"), "%q: name a member by names only (e.g. $.error.code), no array index", jp)
			okP = false
		}
	}
	if !okS || !okP || !okE {
		return w, false
	}
	return RetryWhen{Status: st, JSONPath: jp, Equals: strings.TrimSpace(eq)}, true
}

// shouldRetryHeader decodes retry.should_retry_header: {name, retry, never}.
func (d *decoder) shouldRetryHeader(ro *object, p *RetryPolicy) {
	if !ro.has("should_retry_header") {
		return
	}
	so, ok := d.child(ro, "should_retry_header")
	if !ok {
		return
	}
	name, okN := d.required(so, "name", " (the header, e.g. Stripe-Should-Retry)")
	name = strings.TrimSpace(name)
	if okN && !validHeaderName(name) {
		d.ps.add(so.lineOf("name"), so.at("name"), "%q is not a valid header name", name)
		okN = false
	}
	retry, _ := d.str(so, "retry")
	never, _ := d.str(so, "never")
	retry, never = strings.TrimSpace(retry), strings.TrimSpace(never)
	switch {
	case retry == "" && never == "":
		d.ps.add(so.line, ro.at("should_retry_header"), `declare retry, never or both: the header's values that decide (retry: "true", never: "false")`)
		return
	case strings.EqualFold(retry, never):
		d.ps.add(so.lineOf("never"), so.at("never"), "%q is also the retry value", never)
		return
	}
	if okN {
		p.ShouldRetryHeader = &ShouldRetryHeader{Name: name, Retry: retry, Never: never}
	}
}
