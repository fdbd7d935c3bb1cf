package probe

import (
	"context"
	"github.com/retrysafe/retrysafe/reports/profile"
	"strconv"
	"strings"

	"github.com/retrysafe/retrysafe/targets"
)

// keyFields probes what counts as a key: a missing, an empty and an over-long key, the longest
// key accepted (searched), how much of a long key is significant (searched), and the key forms.
func (p *prober) keyFields(ctx context.Context) []profile.Field {
	out := []profile.Field{
		p.statusOf(ctx, profile.FieldMissingKeyStatus, targets.KeyMode{Omit: true}),
		p.statusOf(ctx, profile.FieldEmptyKeyStatus, targets.KeyMode{Raw: new(string)}),
		p.keyForms(ctx),
	}
	maxF, longF := p.keyLength(ctx)
	out = append(out, maxF, longF)
	if maxF.Probed() {
		n, _ := strconv.Atoi(maxF.Value)
		out = append(out, p.significant(ctx, n))
	} else {
		out = append(out, p.field(profile.FieldSignificantKeyLength, p.def).notProbed("the longest key accepted is not known"))
	}
	return out
}

// statusOf sends one new request with an unusual key: its status, or "processed" when a missing
// key is answered 2xx (no idempotency without a key).
func (p *prober) statusOf(ctx context.Context, name string, key targets.KeyMode) profile.Field {
	fd := p.field(name, p.def)
	o := p.newOp(p.def, p.tenant)
	a, ok := fd.do(ctx, o, sendOpts{key: key})
	if !ok {
		return fd.f
	}
	n, counted := fd.count(ctx, o)
	if success(a) {
		if key.Omit {
			fd.note("a request without a key is processed without idempotency")
			return fd.done("processed")
		}
		fd.note("an empty key was accepted")
	} else if counted && n > 0 {
		fd.note("the rejected request left %d record(s)", n)
	}
	return fd.done(strconv.Itoa(a.Status))
}

// keyForms sends one new key in the quoted form, then the same key bare.
func (p *prober) keyForms(ctx context.Context) profile.Field {
	fd := p.field(profile.FieldKeyForms, p.def)
	if p.def.Key.In != targets.KeyInHeader {
		return fd.notProbed("the key is sent in the %s, where it has one form", p.def.Key.In)
	}
	o := p.newOp(p.def, p.tenant)
	q, ok := fd.do(ctx, o, sendOpts{key: targets.KeyMode{Form: targets.KeyQuoted}})
	if !ok {
		return fd.f
	}
	b, ok := fd.do(ctx, o, sendOpts{key: targets.KeyMode{Form: targets.KeyBare}})
	if !ok {
		return fd.f
	}
	var forms []string
	if success(q) {
		forms = append(forms, string(targets.KeyQuoted))
	}
	if success(b) {
		forms = append(forms, string(targets.KeyBare))
	}
	switch {
	case len(forms) == 0:
		return fd.notProbed("neither form was accepted (%d, %d)", q.Status, b.Status)
	case len(forms) == 2 && sameAnswer(q, b, p.t.Profile.Ignore):
		fd.note("the quoted and bare forms name the same key")
	case len(forms) == 2:
		fd.note("the quoted and bare forms of one key are two different keys")
	}
	fd.count(ctx, o)
	return fd.done("[" + strings.Join(forms, ", ") + "]")
}

// keyLength searches the longest key accepted (2xx), between the baseline key's length and
// Options.KeySearchLimit, by bisection; the status of a key one character longer is
// long_key_status.
func (p *prober) keyLength(ctx context.Context) (profile.Field, profile.Field) {
	mf := p.field(profile.FieldMaxKeyLength, p.def)
	lf := p.field(profile.FieldLongKeyStatus, p.def)
	limit := p.opts.KeySearchLimit
	var rejected *op
	try := func(n int) (accepted bool, status int, ok bool) {
		o := p.newOp(p.def, p.tenant)
		o.key = exactKey(o.key, n)
		a, ok := mf.do(ctx, o, sendOpts{})
		if ok && !success(a) {
			rejected = &o
			lf.f.Evidence = []profile.Exchange{mf.f.Evidence[len(mf.f.Evidence)-1]}
		}
		return success(a), a.Status, ok
	}
	lo := len(p.newOp(p.def, p.tenant).key)
	accepted, hiStatus, ok := try(limit)
	switch {
	case !ok:
		return mf.f, lf.notProbed("the search got no answer")
	case accepted:
		mf.note("every key up to the search limit of %d characters was accepted", limit)
		return mf.done(strconv.Itoa(limit)), lf.notProbed("no key up to %d characters was rejected", limit)
	}
	hi := limit
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		accepted, status, ok := try(mid)
		if !ok {
			return mf.f, lf.notProbed("the search got no answer")
		}
		if accepted {
			lo = mid
		} else {
			hi, hiStatus = mid, status
		}
	}
	mf.note("searched by bisection between the baseline key and %d characters", limit)
	lf.note("a key of %d characters", hi)
	if rejected != nil {
		if n, counted := lf.count(ctx, *rejected); counted && n > 0 {
			lf.unsafe("duplicate record: the rejected over-long key left %d record(s)", n)
		}
	}
	return mf.done(strconv.Itoa(lo)), lf.done(strconv.Itoa(hiStatus))
}

// significant finds how many characters of a key the target tells apart: two keys of the same
// length that differ only in their last character, with the same body and ref, must be two
// operations. Searched by bisection when keys of maxLen characters collide.
func (p *prober) significant(ctx context.Context, maxLen int) profile.Field {
	fd := p.field(profile.FieldSignificantKeyLength, p.def)
	failed := false
	distinct := func(n int) bool {
		o := p.newOp(p.def, p.tenant)
		a, b := o, o
		a.key = exactKey(o.key, n-1) + "a"
		b.key = exactKey(o.key, n-1) + "b"
		ra, ok := fd.do(ctx, a, sendOpts{})
		if !ok || !success(ra) {
			failed = true
			return false
		}
		rb, ok := fd.do(ctx, b, sendOpts{})
		if !ok {
			failed = true
			return false
		}
		records, counted := fd.count(ctx, o)
		if counted && records >= 2 {
			return true
		}
		return !success(rb) || !sameAnswer(ra, rb, p.t.Profile.Ignore)
	}
	if distinct(maxLen) {
		fd.note("two keys of %d characters that differ only in the last one are two operations", maxLen)
		return fd.done(strconv.Itoa(maxLen))
	}
	if failed {
		return fd.notProbed("a request with a key of %d characters was not answered 2xx", maxLen)
	}
	lo, hi := len(p.newOp(p.def, p.tenant).key)+1, maxLen
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		d := distinct(mid)
		if failed {
			return fd.notProbed("a request of the search was not answered 2xx")
		}
		if d {
			lo = mid
		} else {
			hi = mid
		}
	}
	fd.unsafe("another request's response replayed: two keys of %d characters that differ only in the last one got one answer (keys are cut to %d characters)", hi, lo)
	return fd.done(strconv.Itoa(lo))
}

// exactKey pads (with x) or cuts key to exactly n characters.
func exactKey(key string, n int) string {
	if len(key) >= n {
		return key[:n]
	}
	return key + "-" + strings.Repeat("x", n-len(key)-1)
}
