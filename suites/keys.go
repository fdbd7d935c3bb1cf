package suites

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	"github.com/retrysafe/retrysafe/targets"
)

// keys: what counts as a key.
//
// The target MUST answer a missing key, an empty key and a key one character over its
// declared limit with the profile's status and leave no record; MUST accept a key at the
// limit and treat two keys at the limit that differ only in their last character as two
// operations; and MUST accept every declared key form (an RFC 8941 quoted string and the
// bare form name the same key).
//
// Catches: truncated-key (long keys silently cut, so keys with a common prefix collide).
func init() {
	register(&Property{
		Name: "keys",
		Must: `A missing key, an empty key and a key one character over the limit MUST get the profile's
status and leave no record; a key at the limit MUST work, and two keys at the limit that differ only in
their last character MUST be two operations; every declared key form MUST work, and the quoted and bare
forms of one key MUST be the same key.`,
		Catches: []string{"truncated-key"},
		Needs:   []string{"profile.missing_key_status", "profile.empty_key_status", "profile.max_key_length", "profile.key_forms"},
		specs:   keysSpecs,
	})
}

func keysSpecs(e *Env) {
	p := e.Target.Profile
	def := e.Target.Operations[0]
	if obs := e.observed(); len(obs) > 0 {
		def = obs[0]
	}
	if p.RequiresKey() {
		It(sprintf("%s: a request without a key gets %d and leaves no record", def.Name, p.MissingKeyStatus), func() {
			op := e.NewOp(def)
			expectStatus(e.ok(op.Do(Send{Key: targets.KeyMode{Omit: true}})), p.MissingKeyStatus, "missing key")
			e.expectRecords(op, 0)
		})
	}
	It(sprintf("%s: an empty key gets %d and leaves no record", def.Name, p.EmptyKeyStatus), func() {
		op := e.NewOp(def)
		empty := ""
		expectStatus(e.ok(op.Do(Send{Key: targets.KeyMode{Raw: &empty}})), p.EmptyKeyStatus, "empty key")
		e.expectRecords(op, 0)
	})
	if p.MaxKeyLength <= 0 {
		return
	}
	It(sprintf("%s: a key of %d characters gets %d and leaves no record", def.Name, p.MaxKeyLength+1, p.LongKeyStatus), func() {
		op := e.NewOp(def)
		long := op.WithKey(padKey(op.Key, p.MaxKeyLength+1, 'x'))
		expectStatus(e.ok(long.Do(Send{})), p.LongKeyStatus, "over-long key")
		e.expectRecords(op, 0)
	})
	It(sprintf("%s: two keys of %d characters that differ only in the last one are two operations", def.Name, p.MaxKeyLength), func() {
		op := e.NewOp(def)
		a := op.WithKey(padKey(op.Key, p.MaxKeyLength-1, 'x') + "a")
		b := op.WithKey(padKey(op.Key, p.MaxKeyLength-1, 'x') + "b")
		first := e.ok(a.Do(Send{Instance: 0}))
		expectSuccess(first, "first key at the limit")
		second := e.ok(b.Do(Send{Instance: 1}))
		expectSuccess(second, "second key at the limit, same body")
		e.expectRecords(op, 2)
		e.expectSame(first, e.ok(a.Do(Send{Instance: 2})), "the retry of the first key at the limit")
	})
	forms := def.KeyForms()
	for _, form := range forms {
		It(sprintf("%s: the %s key form is accepted and replayed", def.Name, form), func() {
			op := e.NewOp(def)
			first := e.ok(op.Do(Send{Instance: 0, Key: targets.KeyMode{Form: form}}))
			expectSuccess(first, string(form)+" key")
			e.expectSame(first, e.ok(op.Do(Send{Instance: 1, Key: targets.KeyMode{Form: form}})), "the retry with the %s key", form)
			e.expectRecords(op, 1)
		})
	}
	if len(forms) > 1 {
		It(sprintf("%s: the %s and %s forms of one key are the same key", def.Name, forms[0], forms[1]), func() {
			op := e.NewOp(def)
			first := e.ok(op.Do(Send{Instance: 0, Key: targets.KeyMode{Form: forms[0]}}))
			expectSuccess(first, string(forms[0])+" key")
			e.expectSame(first, e.ok(op.Do(Send{Instance: 1, Key: targets.KeyMode{Form: forms[1]}})),
				"the same key sent in the %s form", forms[1])
			e.expectRecords(op, 1)
		})
	}
}

// padKey pads (or cuts) a key to exactly n characters.
func padKey(key string, n int, pad byte) string {
	if len(key) >= n {
		return key[:n]
	}
	return key + "-" + strings.Repeat(string(pad), n-len(key)-1)
}
