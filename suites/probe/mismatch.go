package probe

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// mismatch probes mismatch_status: the same key with another payload, sent as the operation's
// variant_body (when declared) and with each field of the body and query changed on its own (at
// most Options.MaxFields). Its value is the status, or the statuses, the other payloads got; a
// payload answered with the first payload's replay, or executed, is unsafe, whichever field it
// changed.
func (p *prober) mismatch() profile.Field {
	def := p.def
	fd := p.field(profile.FieldMismatchStatus, def)
	o := p.s.NewOp(def)
	variants, why := p.fieldVariants(o)
	if !def.HasVariant() && len(variants) == 0 {
		return fd.notProbed("the operation declares no variant_body and %s", why)
	}
	first, ok := fd.doFirst(o)
	if !ok {
		return fd.f
	}
	var m mismatchTally
	if def.HasVariant() {
		a, sent := p.send(o, framework.Send{Variant: true})
		if !fd.took(a, sent, "variant body") {
			return fd.f
		}
		m.add(p, first, a, "the variant payload (variant_body)")
	}
	for _, v := range variants {
		a, sent := p.sendVariant(o, v)
		if !fd.took(a, sent, "field "+v.Field+" changed") {
			return fd.f
		}
		m.add(p, first, a, "the payload with "+v.Field+" changed")
	}
	if why != "" {
		fd.note("%s", why)
	} else {
		fd.note("%d field(s) changed one by one", len(variants))
	}
	n, counted := fd.count(o)
	switch {
	case len(m.replayed) > 0:
		fd.unsafe("another request's response replayed: %s got the first payload's answer", names(m.replayed))
	case len(m.executed) > 0 && counted && n > 1:
		fd.unsafe("duplicate record: %s was executed under the same key (%d records)", names(m.executed), n)
	case len(m.executed) > 0:
		fd.unsafe("%s was executed under the same key", names(m.executed))
	}
	if len(m.statuses) == 0 {
		return fd.done(statusText(m.accepted))
	}
	return fd.done(targets.StatusSet{Codes: m.statuses}.String())
}

// mismatchTally sorts the answers to other payloads under one key.
type mismatchTally struct {
	statuses []int    // the distinct statuses of the rejections, in the order seen
	replayed []string // the payloads answered with the first payload's answer
	executed []string // the payloads answered with another success
	accepted int      // the status of the first payload accepted
}

// add judges the answer a to another payload, described as what.
func (m *mismatchTally) add(p *prober, first, a history.Attempt, what string) {
	switch {
	case !success(a):
		if !slices.Contains(m.statuses, a.Status) {
			m.statuses = append(m.statuses, a.Status)
		}
		return
	case p.same(first, a):
		m.replayed = append(m.replayed, what)
	default:
		m.executed = append(m.executed, what)
	}
	if m.accepted == 0 {
		m.accepted = a.Status
	}
}

// fieldVariants renders o's request and returns its fields changed one by one, or why there
// are none (or why not all were tried).
func (p *prober) fieldVariants(o *framework.Op) ([]targets.FieldVariant, string) {
	req, _, err := o.Build(p.s.Ctx(), framework.Send{})
	if err != nil {
		return nil, fmt.Sprintf("its request cannot be rendered: %v", err)
	}
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	vs, more, err := o.Def.FieldVariants(body, req.URL.RawQuery, p.opts.MaxFields)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("its body is not JSON or a form the probe can change field by field: %v", err)
	case len(vs) == 0:
		return nil, "its request has no field to change"
	case more:
		return vs, fmt.Sprintf("the first %d fields were changed one by one; the others were not tried", len(vs))
	}
	return vs, ""
}

// names lists what, at most three, for a sentence.
func names(what []string) string {
	if len(what) > 3 {
		return strings.Join(what[:3], ", ") + fmt.Sprintf(" and %d more", len(what)-3)
	}
	return strings.Join(what, ", ")
}
