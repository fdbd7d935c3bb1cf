package consumer

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/webhook"
)

// signature: forged deliveries of fresh events (unsigned, signed with another secret, signed
// with a timestamp outside the declared tolerance in the past and in the future, and a validly
// signed delivery whose body was changed after signing), each followed by the correctly signed
// delivery of the same event; and one correctly signed delivery.
//
// The consumer MUST reject each forgery with a 4xx and leave no effect, and MUST then accept the
// correctly signed delivery of the same event (a rejected forgery must not use up its id); it
// MUST accept a correctly signed delivery with a 2xx and apply it once. A scheme without a
// timestamp (GitHub's) has no stale- or future-timestamp case; a consumer with signing none has
// nothing to check.
//
// Catches: no-signature-check (every forgery is accepted), stale-timestamp-accepted (a
// captured delivery replays for ever), future-timestamp-accepted (a delivery prepared in
// advance is accepted).
func init() {
	p := &Property{
		Name: "signature",
		Must: `Unsigned, wrongly signed, stale (timestamp outside the tolerance), future (timestamp beyond the
tolerance ahead: a replay prepared in advance) and tampered (body changed after signing) deliveries MUST
each be rejected with a 4xx and leave no effect, and MUST NOT keep the correctly signed delivery of the
same event from taking effect; a correctly signed delivery MUST be accepted (2xx) and take effect once.`,
		Catches:    []string{"no-signature-check", "stale-timestamp-accepted", "future-timestamp-accepted"},
		Needs:      []string{"consumers[].signing", "consumers[].effects"},
		Transports: []targets.Transport{targets.TransportWebhook},
	}
	p.Specs = func(e *Env) []*Spec {
		var out []*Spec
		for _, c := range e.Consumers(p.Transports...) {
			out = append(out, signatureSpecs(p, c)...)
		}
		for _, sp := range out {
			sp.Extra = append(sp.Extra, "consumer:"+string(targets.TransportWebhook))
		}
		return out
	}
	register(p)
}

// forgeries are the forged deliveries the signature property sends.
var forgeries = []struct {
	sig  Signature
	what string
}{
	{SignNone, "an unsigned delivery"},
	{SignWrong, "a delivery signed with another secret"},
	{SignStale, "a delivery signed with a timestamp outside the tolerance"},
	{SignTampered, "a validly signed delivery whose body was changed after signing"},
	{SignFuture, "a delivery signed with a timestamp beyond the tolerance in the future"},
}

// signatureSpecs are one consumer's specs: one per forgery, then the valid delivery.
func signatureSpecs(p *Property, c *targets.Consumer) []*Spec {
	signer, err := webhook.New(c.Signing)
	switch {
	case err != nil:
		return []*Spec{{Property: p, Text: c.Name + ": " + framework.NotApplicableText, Skip: "its signing cannot be set up: " + err.Error()}}
	case !signer.Signs():
		return []*Spec{{Property: p, Text: c.Name + ": " + framework.NotApplicableText, Skip: "the consumer declares signing none: there is no signature to check"}}
	}
	var out []*Spec
	for _, f := range forgeries {
		text := fmt.Sprintf("%s: %s is rejected and takes no effect", c.Name, f.what)
		if (f.sig == SignStale || f.sig == SignFuture) && !signer.HasTimestamp() {
			out = append(out, &Spec{Property: p, Text: text,
				Skip: fmt.Sprintf("the %s scheme signs no timestamp: a captured delivery cannot be told from a fresh one", signer.Scheme())})
			continue
		}
		out = append(out, spec(p, text, func(s *S) check.Result {
			ev := s.NewEvent(c)
			fg := check.Forgery{What: f.what, Delivery: ev.Deliver(Delivery{Instance: 0, Signature: f.sig})}
			fg.Effects = ev.Effects()
			fg.Valid = ev.Deliver(Delivery{Instance: 1})
			fg.ValidEffects = ev.Effects()
			return check.SignatureForged(fg)
		}))
	}
	out = append(out, spec(p, c.Name+": a correctly signed delivery is accepted and takes effect once", func(s *S) check.Result {
		ev := s.NewEvent(c)
		a := ev.Deliver(Delivery{Instance: 0})
		return check.SignatureValid(a, ev.Effects())
	}))
	return out
}
