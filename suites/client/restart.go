package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

func init() {
	p := &Property{
		Name: "restart-reuses-key",
		Must: `A client SIGKILLed while its operation's first attempt was processed and held unanswered,
then started again with the same command, operations and state directory, MUST send that
operation again first with the held key and body (a client that abandons it is
abandoned-operation; one whose held attempt, or whose attempt after the restart, carries no key
is missing-key), unless it declares persists_keys: false.`,
		Catches: []string{"key-in-memory", "restart-without-key"},
		Needs:   append(needs[:len(needs):len(needs)], "clients[].command reading {{.State}}", "clients[].retry.persists_keys"),
		Labels:  []string{"fault:process"},
		Covers:  "each declared client",
		Applies: func(e *Env) string {
			for _, c := range e.Target.Clients {
				if c.Retry.PersistsKeys {
					return ""
				}
			}
			return "no client declares persists_keys: true (its keys live in memory: a deviation from the source articles' rules)"
		},
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "resumes a pending operation with its key after a SIGKILL and a restart", func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
			if !c.Retry.PersistsKeys {
				return check.Skipf("client %s declares persists_keys: false", c.Name)
			}
			run, r := s.play(c, cfg, scenario{ops: 1, plans: []plan{{held, success}}, restart: true})
			if r != nil {
				return *r
			}
			return check.RestartReusesKey(run, cfg.Retry)
		})
	}
	register(p)
}
