package probe

import (
	"strconv"
	"strings"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// keyFields probes what counts as a key: a missing, an empty and an over-long key, the longest
// key accepted (searched), how much of a long key is significant (searched), and the key forms.
// A key format of a fixed shape (uuid, ulid, a template) skips both searches: a key padded to a
// length would not be one.
func (p *prober) keyFields() []profile.Field {
	out := []profile.Field{
		p.statusOf(profile.FieldMissingKeyStatus, "a request without a key", targets.KeyMode{Omit: true}),
		p.statusOf(profile.FieldEmptyKeyStatus, "an empty key", targets.KeyMode{Raw: new(string)}),
		p.keyForms(),
	}
	if f := p.def.Key.Format; f.Fixed() {
		why := "key.format " + f.String() + " gives keys of a fixed shape: the key-length search is skipped (a key padded to a length would not be one)"
		return append(out, p.field(profile.FieldMaxKeyLength, p.def).notProbed("%s", why),
			p.field(profile.FieldLongKeyStatus, p.def).notProbed("%s", why),
			p.field(profile.FieldSignificantKeyLength, p.def).notProbed("%s", why))
	}
	maxF, longF := p.keyLength()
	out = append(out, maxF, longF)
	switch {
	case maxF.Value == "none":
		out = append(out, p.significant(p.opts.KeySearchLimit))
	case maxF.Probed():
		n, _ := strconv.Atoi(maxF.Value)
		out = append(out, p.significant(n))
	default:
		out = append(out, p.field(profile.FieldSignificantKeyLength, p.def).notProbed("the longest key accepted is not known"))
	}
	return out
}

// statusOf sends one new request with an unusual key (what, in words): its status, or
// "processed" when it is answered 2xx (no idempotency for it). A 5xx is unsafe: a server error
// for a client's malformed key.
func (p *prober) statusOf(name, what string, key targets.KeyMode) profile.Field {
	fd := p.field(name, p.def)
	o := p.s.NewOp(p.def)
	a, ok := fd.do(o, framework.Send{Key: key})
	if !ok {
		return fd.f
	}
	n, counted := fd.count(o)
	switch {
	case success(a):
		fd.note("%s is processed without idempotency", what)
		return fd.done(targets.Processed.String())
	case a.Status >= 500:
		fd.unsafe("server error: %s got %d", what, a.Status)
	}
	if counted && n > 0 {
		fd.note("the rejected request left %d record(s)", n)
	}
	return fd.done(statusText(a.Status))
}

// keyForms sends one new key in the quoted form, then the same key bare, and judges them as a run
// that declares no key form does (check.JudgeKeyForms): the value lists both only when the
// evidence shows they are one key; otherwise only the form that works, with a note.
func (p *prober) keyForms() profile.Field {
	fd := p.field(profile.FieldKeyForms, p.def)
	if p.def.Key.In != targets.KeyInHeader {
		return fd.notProbed("the key is sent in the %s, where it has one form", p.def.Key.In)
	}
	o := p.s.NewOp(p.def)
	q, ok := fd.do(o, framework.Send{Key: targets.KeyMode{Form: targets.KeyQuoted}})
	if !ok {
		return fd.f
	}
	b, ok := fd.do(o, framework.Send{Key: targets.KeyMode{Form: targets.KeyBare}})
	if !ok {
		return fd.f
	}
	n, counted := fd.count(o)
	found := check.JudgeKeyForms(q, b, n, counted, p.t.Profile.Ignore)
	if found.Forms == nil {
		return fd.notProbed("%s", found.Note)
	}
	fd.note("%s", found.Note)
	forms := make([]string, len(found.Forms))
	for i, f := range found.Forms {
		forms[i] = string(f)
	}
	return fd.done("[" + strings.Join(forms, ", ") + "]")
}

// keyLength searches the longest key accepted (2xx), between the baseline key's length and
// Options.KeySearchLimit, by bisection; the status of a key one character longer is
// long_key_status. Every key up to the limit accepted: max_key_length is none.
func (p *prober) keyLength() (profile.Field, profile.Field) {
	mf := p.field(profile.FieldMaxKeyLength, p.def)
	lf := p.field(profile.FieldLongKeyStatus, p.def)
	limit := p.opts.KeySearchLimit
	var rejected *framework.Op
	var rejectedAt history.Attempt
	try := func(n int) (accepted bool, status int, ok bool) {
		o := p.s.NewOp(p.def)
		o = o.WithKey(exactKey(o.Key, n))
		a, ok := mf.do(o, framework.Send{})
		if ok && !success(a) {
			rejected, rejectedAt = o, a
			lf.f.Evidence = []profile.Exchange{mf.f.Evidence[len(mf.f.Evidence)-1]}
		}
		return success(a), a.Status, ok
	}
	lo := len(p.s.NewOp(p.def).Key)
	accepted, hiStatus, ok := try(limit)
	switch {
	case !ok:
		return mf.f, lf.notProbed("the search got no answer")
	case accepted:
		mf.note("every key up to the search limit of %d characters was accepted: no maximum found", limit)
		return mf.done("none"), lf.notProbed("no key up to %d characters was rejected", limit)
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
	if hiStatus >= 500 {
		lf.unsafe("server error: a key of %d characters got %d", hi, hiStatus)
	}
	if rejected != nil {
		if n, counted := lf.count(rejected); counted && n > 0 && rejectedAt.Status < 500 {
			lf.unsafe("duplicate record: the rejected over-long key left %d record(s)", n)
		}
	}
	return mf.done(strconv.Itoa(lo)), lf.done(statusText(hiStatus))
}

// significant finds how many characters of a key the target tells apart: two keys of the same
// length that differ only in their last character, with the same body and ref, must be two
// operations. Searched by bisection when keys of maxLen characters collide.
func (p *prober) significant(maxLen int) profile.Field {
	fd := p.field(profile.FieldSignificantKeyLength, p.def)
	failed := false
	distinct := func(n int) bool {
		o := p.s.NewOp(p.def)
		a := o.WithKey(exactKey(o.Key, n-1) + "a")
		b := o.WithKey(exactKey(o.Key, n-1) + "b")
		ra, ok := fd.do(a, framework.Send{})
		if !ok || !success(ra) {
			failed = true
			return false
		}
		rb, ok := fd.do(b, framework.Send{})
		if !ok {
			failed = true
			return false
		}
		records, counted := fd.count(o)
		if counted && records >= 2 {
			return true
		}
		return !success(rb) || !p.same(ra, rb)
	}
	if distinct(maxLen) {
		fd.note("two keys of %d characters that differ only in the last one are two operations", maxLen)
		return fd.done(strconv.Itoa(maxLen))
	}
	if failed {
		return fd.notProbed("a request with a key of %d characters was not answered 2xx", maxLen)
	}
	lo, hi := len(p.s.NewOp(p.def).Key)+1, maxLen
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
