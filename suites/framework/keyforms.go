package framework

import (
	"context"
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// settleKeyForms asks the API, after the baseline and before any property, whether the quoted
// (RFC 8941) and the bare form of one key are one key, when the target file declares no key form
// (targets.Target.KeyFormsToAsk): the default, both forms as one key, is a claim about someone
// else's API. One new key of the first header-keyed operation (one with an observer first) is
// sent quoted, then bare, and judged as the probe judges it (check.JudgeKeyForms). When they are
// one key nothing changes; otherwise every key of the run is sent in the form that works (bare,
// the raw header value, when the forms are distinct keys) and the run's deviations say so:
// reported, never failed. It reports whether it changed the forms: a baseline refused in the
// quoted form is then sent again in the form that works. When nothing can be told (neither form
// accepted, no answer), nothing changes.
func (h *Harness) settleKeyForms(ctx context.Context) bool {
	t := h.target
	if !t.KeyFormsToAsk() {
		return false
	}
	def := headerKeyed(h.env.Observed())
	if def == nil {
		if def = headerKeyed(t.Operations); def == nil {
			return false
		}
	}
	op := h.env.Session(ctx).NewOp(def)
	q := op.Do(Send{Instance: 0, Key: targets.KeyMode{Form: targets.KeyQuoted}})
	b := op.Do(Send{Instance: 0, Key: targets.KeyMode{Form: targets.KeyBare}})
	c := op.CountQuiet()
	found := check.JudgeKeyForms(q, b, c.N, c.Taken && c.Err == "", t.Profile.Ignore)
	if found.Forms == nil || found.OneKey() {
		return false
	}
	t.UseKeyForms(found.Forms)
	dev := fmt.Sprintf("%s: every key sent %s (%s; attempts #%d, #%d)", found.Deviation, found.Forms[0], found.Note, q.Seq, b.Seq)
	h.env.deviations = append(h.env.deviations, dev)
	fmt.Fprintf(h.o.logWriter(), "key forms: %s\n", dev)
	return true
}

// headerKeyed returns the first of ops whose key travels in a header, or nil.
func headerKeyed(ops []*targets.Operation) *targets.Operation {
	for _, op := range ops {
		if op.Key.In == targets.KeyInHeader {
			return op
		}
	}
	return nil
}
