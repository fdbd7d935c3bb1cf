package client

import (
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
)

// uncertainPlan processes the first attempt and closes its connection without an answer, and
// closes every later attempt's before processing: the client never learns whether the API acted.
var uncertainPlan = plan{drop, cut}

func init() {
	p := &Property{
		Name: "uncertain-stays-pending",
		Must: `When every attempt of an operation ended without an answer (the API processed the first and
closed its connection, and closed every later one's before processing, until the client stopped),
the client cannot know whether the API acted: it MUST report the operation pending, as it declares
(clients[].outcome.pending; uncertain-reported-as-failure when it reports it failed: the API holds
a record and a caller told it failed pays again; uncertain-reported-as-success when it reports it
done), and keep it. Started again with the same command and state directory ({{.Restart}} 1) and
answered normally, its first attempt MUST carry the pending operation's key and body
(key-lost-on-restart, body-changed-on-retry; abandoned-operation when it does not resend it), and
the operation MUST end with one record (duplicate-record); a client that declares persists_keys:
false is not started again. Connections closed only, no attempt held. A client that declares no
outcome.pending is skipped.`,
		Catches: []string{"pending-as-failure", "forgets-pending"},
		Needs: append(needs[:len(needs):len(needs)], "clients[].outcome.pending (exit_code, output)",
			"clients[].command reading {{.State}} (and {{.Restart}} where it matters)", "clients[].retry.max_attempts", "clients[].retry.persists_keys"),
		Covers: "each declared client",
		Applies: func(e *Env) string {
			for _, c := range e.Target.Clients {
				if c.Outcome.Pending.Declared() {
					return ""
				}
			}
			return "no client declares outcome.pending (how it reports an operation whose outcome it cannot know): what it reports of one cannot be told"
		},
	}
	p.Specs = func(e *Env) []*Spec {
		return clientSpecs(p, e, "reports an operation no attempt of which was answered pending, then resumes it with its key", func(s *S, c *targets.Client, cfg *targets.ClientConfiguration) check.Result {
			if !c.Outcome.Pending.Declared() {
				return check.Skipf("client %s declares no outcome.pending (how it reports an operation whose outcome it cannot know): what it reports of one cannot be told", c.Name)
			}
			run, r := s.play(c, cfg, scenario{ops: 1, plans: []plan{uncertainPlan}, rerun: cfg.Retry.PersistsKeys})
			if r != nil {
				return *r
			}
			return check.UncertainStaysPending(run, cfg.Retry)
		})
	}
	register(p)
}
