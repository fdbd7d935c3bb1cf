package api

import (
	"fmt"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// The keys property's specs about keys a careless store mistakes for something else: hostile
// keys, and the requests an API processes without a key (keys.go registers them).

// hostileSpec sends a plain request with a fresh key K, then every hostile key
// (targets.HostileKeys: each fresh, or K behind a separator, sent with K's body), then asks
// whether the API still answers its health check and a plain request.
func hostileSpec(p *Property, def *targets.Operation) *Spec {
	text := fmt.Sprintf("%s: hostile keys (':', '/', '*', '..', '%%', a letter outside ASCII, a control character, padding spaces, "+
		"8 KB, another key behind a tenant or namespace, a command word) are refused or keys of their own, and the API keeps answering", def.Name)
	return spec(p, text, func(s *S) check.Result {
		bare := framework.Send{Instance: 0, Key: targets.KeyMode{Form: targets.KeyBare}}
		other := s.NewOp(def)
		h := check.HostileKeys{Other: other.Do(bare)}
		if !framework.Succeeded(h.Other) {
			return check.Hostile(h, s.Target.Profile)
		}
		tenant := ""
		if other.Tenant != nil {
			tenant = other.Tenant.Name
		}
		fresh := func() string { return s.KeyFor(def, s.Next()) }
		for _, k := range targets.HostileKeys(fresh, other.Key, tenant) {
			if s.Ctx().Err() != nil {
				break
			}
			a, op, sent := s.sendHostile(def, other, k, bare)
			if !sent {
				continue
			}
			hs := check.HostileSend{What: k.What, Of: k.Of, Attempt: a}
			if a.Outcome != history.OK && s.Alive(0) != "" {
				h.Keys = append(h.Keys, hs)
				break // it died (or hangs): the keys after it would only wait
			}
			if !k.Of {
				hs.Records = op.Count()
			}
			h.Keys = append(h.Keys, hs)
		}
		h.OtherRecord = other.Count()
		h.Alive = s.Alive(0)
		h.Plain = s.NewOp(def).Do(framework.Send{Instance: 0})
		return check.Hostile(h, s.Target.Profile)
	})
}

// sendHostile sends one hostile key: built on other (its body) or with a fresh operation's; a
// control character in a header through the harness's raw writer, which needs plain http.
func (s *S) sendHostile(def *targets.Operation, other *framework.Op, k targets.HostileKey, send framework.Send) (history.Attempt, *framework.Op, bool) {
	op := other.WithKey(k.Key)
	if !k.Of {
		op = s.NewOp(def).WithKey(k.Key)
	}
	if !k.Raw || def.Key.In != targets.KeyInHeader {
		return op.Do(send), op, true
	}
	if s.Instance(send.Instance).URL.Scheme != "http" {
		s.Notef("%s was not sent: the harness writes it itself, over plain http only", k.What)
		return history.Attempt{}, op, false
	}
	return op.DoRaw(send), op, true
}

// processedTwiceSpec sends two callers' requests that the profile processes without idempotency
// (an empty or missing key), with different bodies: two operations, each its own answer.
func processedTwiceSpec(p *Property, def *targets.Operation, what string, mode targets.KeyMode) *Spec {
	return spec(p, fmt.Sprintf("%s: two callers' requests with %s and different bodies are two operations, each with its own answer", def.Name, what),
		func(s *S) check.Result {
			a, b := s.NewOp(def), s.NewOp(def)
			first := a.Do(framework.Send{Instance: 0, Key: mode})
			second := b.Do(framework.Send{Instance: 1, Key: mode})
			return check.ProcessedTwice(first, second, a.Count(), b.Count(), what, s.Target.Profile)
		})
}
