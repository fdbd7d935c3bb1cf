package api

import (
	"fmt"
	"strings"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
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
// Hostile keys (keyshostile.go) MUST each get a rejection or a record and an answer of their own,
// never a 5xx nor another key's answer, and the API MUST keep answering; two callers' requests
// processed without a key (empty_key_status or missing_key_status: processed) MUST be two
// operations, each with its own answer.
//
// Catches: truncated-key (long keys silently cut, so keys with a common prefix collide),
// raw-store-key (the raw key names the store's entries: a crafted key names another of another
// type, and every command on it fails).
func init() {
	p := &Property{
		Name: "keys",
		Must: `A missing key, an empty key and a key one character over the limit MUST get the profile's
status and leave no record (never a 5xx); a key at the limit MUST work, and two keys at the limit that
differ only in their last character MUST be two operations; every declared key form MUST work, and the
quoted and bare forms of one key MUST be the same key. Hostile keys (':', '/', '*', '..', '%', a letter
outside ASCII, a control character, padding spaces, 8 KB, another key behind a tenant or namespace
separator, a command word) MUST each get a 4xx and leave no record, or get a record and an answer of
their own (never a 5xx, never another key's answer), and the API MUST still answer its health check and
a plain request afterwards; two callers' requests processed without a key MUST be two operations, each
with its own answer.`,
		Catches: []string{"truncated-key", "raw-store-key"},
		Needs:   []string{"profile.missing_key_status", "profile.empty_key_status", "profile.max_key_length", "profile.key_forms"},
		Covers:  "the first operation with an observer (keys are handled the same on every operation)",
	}
	p.Specs = func(e *Env) []*Spec { return keysSpecs(p, e) }
	register(p)
}

func keysSpecs(p *Property, e *Env) []*Spec {
	pr := e.Target.Profile
	def := e.FirstObserved()
	var out []*Spec
	rejected := func(text string, want targets.StatusSet, what string, send func(op *framework.Op) *framework.Op, mode targets.KeyMode) {
		out = append(out, spec(p, text, func(s *S) check.Result {
			op := s.NewOp(def)
			a := send(op).Do(framework.Send{Key: mode})
			return check.KeyRejected(a, op.Count(), want, what, s.Target.Profile)
		}))
	}
	same := func(op *framework.Op) *framework.Op { return op }
	if pr.RequiresKey() {
		rejected(fmt.Sprintf("%s: a request without a key gets %s and leaves no record", def.Name, pr.MissingKeyStatus),
			pr.MissingKeyStatus, "a request without a key", same, targets.KeyMode{Omit: true})
	}
	empty := ""
	rejected(fmt.Sprintf("%s: an empty key gets %s", def.Name, pr.EmptyKeyStatus), pr.EmptyKeyStatus, "an empty key", same,
		targets.KeyMode{Raw: &empty})
	// keyshostile.go: what a careless store mistakes for another key.
	if pr.EmptyKeyStatus.Processed {
		out = append(out, processedTwiceSpec(p, def, "an empty key", targets.KeyMode{Raw: &empty}))
	}
	if pr.MissingKeyStatus.Processed {
		out = append(out, processedTwiceSpec(p, def, "no key", targets.KeyMode{Omit: true}))
	}
	out = append(out, hostileSpec(p, def))
	if pr.MaxKeyLength > 0 {
		n := pr.MaxKeyLength
		rejected(fmt.Sprintf("%s: a key of %d characters gets %s and leaves no record", def.Name, n+1, pr.LongKeyStatus),
			pr.LongKeyStatus, fmt.Sprintf("a key of %d characters", n+1),
			func(op *framework.Op) *framework.Op { return op.WithKey(padKey(op.Key, n+1, 'x')) }, targets.KeyMode{})
		text := fmt.Sprintf("%s: two keys of %d characters that differ only in the last one are two operations", def.Name, n)
		if f := def.Key.Format; f.Fixed() {
			out = append(out, &Spec{Property: p, Text: text, Skip: fmt.Sprintf("key.format %s gives keys of a fixed shape: a key padded to the limit would not be one", f)})
		} else {
			out = append(out, spec(p, text, func(s *S) check.Result {
				op := s.NewOp(def)
				a := op.WithKey(padKey(op.Key, n-1, 'x') + "a")
				b := op.WithKey(padKey(op.Key, n-1, 'x') + "b")
				first := a.Do(framework.Send{Instance: 0})
				second := b.Do(framework.Send{Instance: 1})
				retry := a.Do(framework.Send{Instance: 2})
				return check.KeysAtLimit(first, second, retry, op.Count(), s.Target.Profile)
			}))
		}
	}
	forms := def.KeyForms()
	for _, form := range forms {
		out = append(out, spec(p, fmt.Sprintf("%s: the %s key form is accepted and replayed", def.Name, form), func(s *S) check.Result {
			op := s.NewOp(def)
			first := op.Do(framework.Send{Instance: 0, Key: targets.KeyMode{Form: form}})
			again := op.Do(framework.Send{Instance: 1, Key: targets.KeyMode{Form: form}})
			return check.KeyForm(first, again, op.Count(), form, s.Target.Profile)
		}))
	}
	if len(forms) > 1 {
		out = append(out, spec(p, fmt.Sprintf("%s: the %s and %s forms of one key are the same key", def.Name, forms[0], forms[1]),
			func(s *S) check.Result {
				op := s.NewOp(def)
				first := op.Do(framework.Send{Instance: 0, Key: targets.KeyMode{Form: forms[0]}})
				other := op.Do(framework.Send{Instance: 1, Key: targets.KeyMode{Form: forms[1]}})
				return check.KeyFormsSame(first, other, op.Count(), forms[0], forms[1], s.Target.Profile)
			}))
	}
	return out
}

// padKey pads (or cuts) a key to exactly n characters.
func padKey(key string, n int, pad byte) string {
	if len(key) >= n {
		return key[:n]
	}
	return key + "-" + strings.Repeat(string(pad), n-len(key)-1)
}
