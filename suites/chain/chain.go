package chain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// chain: the client performs operations against the real API through a fault proxy, the API's
// events go through the broker (its link proxied) to the consumer (its link proxied), and one
// run puts a fault on every hop, seeded and on the timeline: the client's connection cut after
// the API processed an attempt, the API SIGKILLed between a commit and its publication, the
// API's broker link cut and healed, the consumer SIGKILLed before its ack. On webhooks the
// harness's receiver stands where the broker is: it observes each delivery and passes it on to
// the consumer, answering the API as the consumer answered (the API's retry is the redelivery).
//
// Every operation the client reported successful MUST have exactly one record and exactly one
// consumer effect; every operation it reported failed none or one, never two.
//
// Catches: the client's new-key-per-retry (two records: chain-duplicate-effect at the client),
// the API's dual-write (an event lost between the commit and the broker: chain-lost-effect at
// api→broker), the consumer's no-dedupe (the redelivery applied again: chain-duplicate-effect at
// the consumer).
func init() {
	p := &Property{
		Name: "chain",
		Must: `With the client's connection cut after the API processed an attempt, the API SIGKILLed between a commit
and its publication, the API's broker link cut and healed, and the consumer SIGKILLed before its ack, in one run,
every operation the client reported successful MUST have exactly one record at the API and exactly one effect
at the consumer, and every operation it reported failed none or one, never two.`,
		Catches: []string{"new-key-per-retry", "dual-write", "no-dedupe"},
		Needs: []string{"chain.client (clients[].command)", "chain.api (operations[].publishes, lifecycle, an observer; hooks.hold_publish: optional)",
			"chain.consumer (consumers[] on the events' transport with an effects observer, lifecycle)"},
		Labels: []string{"fault:process", "fault:network"},
		Covers: "the API's first operation that publishes, and its first event",
	}
	p.Specs = func(e *Env) []*Spec {
		c := e.Chain()
		def, pub := c.Chain.Published()
		text := fmt.Sprintf("client %s → %s → %s → consumer %s: a fault on every hop, then each reported operation took effect once",
			c.Client.Name, def.Name, pub.Name, c.Chain.EventConsumer().Name)
		sp := spec(p, text, func(s *S) check.Result { return s.chain() })
		switch {
		case def.Observer == nil:
			sp.Skip = fmt.Sprintf("operation %s declares no observer: the chain counts its records", def.Name)
		case pub.Within > e.Settings.MaxWait:
			sp.Skip = fmt.Sprintf("event %s may come %v after its operation's 2xx (publishes[].within), longer than --max-wait %v",
				pub.Name, pub.Within, e.Settings.MaxWait)
		default:
			sp.Skip = c.Consumer.RedeliverySkip(c.Chain.EventConsumer(), true)
		}
		return []*Spec{sp}
	}
	register(p)
}

// chain runs the client through every hop's fault and judges the joint history.
func (s *S) chain() check.Result {
	parts := s.Chain()
	def, pub := parts.Chain.Published()
	c := parts.Client
	start := time.Now()
	tap, err := newWiretap(s, parts.API.Target.Instances[0].URL, c.Operations[0], def.Name)
	if err != nil {
		return check.Unknownf("the wiretap in front of the API: %v", err)
	}
	defer tap.close()
	seq := s.Next()
	prefix := fmt.Sprintf("rs-%s-chain%d", s.Settings.RunID, seq)
	proxy, err := s.Faults.ProxyTo(fmt.Sprintf("client-%s-to-api-%d", c.Name, seq), tap.addr())
	if err != nil {
		return check.Unknownf("the fault proxy in front of the API: %v", err)
	}
	ops := make([]framework.ClientOp, chainOps)
	refs := make([]string, chainOps)
	for i := range ops {
		refs[i] = fmt.Sprintf("%s-%d", prefix, i+1)
		ops[i] = framework.ClientOp{Ref: refs[i], Params: maps.Clone(c.Ops.Params)}
	}
	h := &hops{s: s, parts: parts, tap: tap, proxy: proxy, pub: pub, plan: plan(s.Settings.Seed), refs: refs, start: start, hit: map[string]bool{}}
	tap.hook = h.hook
	s.Notef("the hops' faults, by the seed %d: %s", s.Settings.Seed, planWords(h.plan, refs))
	said, err := s.runClient(c, "http://"+proxy.Listen(), prefix, ops)
	resumed := h.finish()
	if err != nil {
		return check.Unknownf("client %s: %v", c.Name, err)
	}
	byRef := map[string][]history.Attempt{}
	for a := range s.History.After(0) {
		if !a.IsEvent() && a.Op == def.Name {
			byRef[a.Identity] = append(byRef[a.Identity], a)
		}
	}
	cops := make([]check.ChainOp, len(refs))
	for i, ref := range refs {
		cops[i] = check.ChainOp{Op: def.Name, Ref: ref, Reported: said[ref], Attempts: byRef[ref]}
		for _, a := range byRef[ref] {
			s.NoteKey(a.Key)
		}
	}
	r := check.Chain(s.settle(parts, def, pub, start, resumed, cops))
	if missed := h.missed(); len(missed) > 0 {
		r.Observef("the faults of %s met no attempt (their operations never reached the API)", strings.Join(missed, ", "))
	} else {
		r.Observef("a fault on every hop: %s", strings.Join(hopOrder, ", "))
	}
	return r
}

// planWords says which operation each hop's fault acts on.
func planWords(plan map[int]string, refs []string) string {
	var parts []string
	for _, i := range slices.Sorted(maps.Keys(plan)) {
		parts = append(parts, fmt.Sprintf("%s on %s", plan[i], refs[i]))
	}
	return strings.Join(parts, ", ")
}

// runClient starts the client once with the operations, waits for its end (its clients[].timeout
// at most) and returns what it reported of each operation: exit 0 reports each successful; a
// failure it reports (clients[].failure: an exit code, or an output line naming the ref) fails
// that operation, and, where output lines report failures, the others succeeded; a client killed
// or ending otherwise reported nothing.
func (s *S) runClient(c *targets.Client, url, prefix string, ops []framework.ClientOp) (map[string]check.ChainReport, error) {
	dir, err := os.MkdirTemp("", "retrysafe-chain-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	state, opsFile := filepath.Join(dir, "state"), filepath.Join(dir, "ops.json")
	data, _ := json.MarshalIndent(ops, "", "  ")
	if err := errors.Join(os.Mkdir(state, 0o755), os.WriteFile(opsFile, data, 0o644)); err != nil {
		return nil, err
	}
	vars := targets.ClientVars{URL: url, State: state, Ref: prefix, Ops: strconv.Itoa(len(ops)), OpsFile: opsFile}
	argv, _, err := c.Render(vars, c.Own())
	if err != nil {
		return nil, err
	}
	envMap, err := c.RenderEnv(vars, c.Own())
	if err != nil {
		return nil, err
	}
	var env []string
	for _, k := range slices.Sorted(maps.Keys(envMap)) {
		env = append(env, k+"="+envMap[k])
	}
	out := &lines{}
	s.Processes().TeeTo(out)
	p, err := s.Processes().StartIn("client "+c.Name, argv, env, c.Dir)
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(c.Timeout)
	defer timer.Stop()
	select {
	case <-p.Done():
	case <-timer.C:
		p.Kill()
		s.Notef("client %s: SIGKILLed at its clients[].timeout %v", c.Name, c.Timeout)
		return map[string]check.ChainReport{}, nil
	case <-s.Ctx().Done():
		p.Kill()
		return nil, fmt.Errorf("interrupted")
	}
	s.Notef("client %s exited %d; its last output:%s", c.Name, p.ExitCode(), p.Output())
	return reported(c.Outcome.Failed, p.ExitCode(), out.all(), ops), nil
}

// reported reads what a client that exited with code reported of each operation.
func reported(f targets.ClientReport, code int, output []string, ops []framework.ClientOp) map[string]check.ChainReport {
	out := map[string]check.ChainReport{}
	if code < 0 || code != 0 && f.ExitCode != nil && code != *f.ExitCode {
		return out // killed, or ended otherwise than it reports a failure: it reported nothing
	}
	for _, op := range ops {
		switch {
		case code == 0:
			out[op.Ref] = check.ChainSucceeded
		case f.Output != nil:
			out[op.Ref] = check.ChainSucceeded
			for _, l := range output {
				if f.Output.MatchString(l) && namesRef(l, op.Ref) {
					out[op.Ref] = check.ChainFailed
				}
			}
		case f.ExitCode != nil && code == *f.ExitCode && len(ops) == 1:
			out[op.Ref] = check.ChainFailed
		}
	}
	return out
}

// namesRef reports whether a line names ref as a word (not as the prefix of a longer ref).
func namesRef(line, ref string) bool {
	return regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(ref) + `($|[^\w-])`).MatchString(line)
}

// lines keeps every line the client's processes print (their own output keeps the last few).
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// all returns the lines, without the process name the tee puts before each.
func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if _, text, ok := strings.Cut(line, " | "); ok {
			out = append(out, text)
		}
	}
	return out
}
