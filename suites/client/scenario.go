package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// scenario is what one client property asks of the client and how the scripted API answers.
type scenario struct {
	// ops is how many operations with distinct business references the client is asked for.
	ops int
	// sameRef also asks for an operation with the first one's reference and other content
	// (the client's ops.same_ref), when the client declares how.
	sameRef bool
	// plans are the answers to each operation's attempts, by order of first arrival.
	plans []plan
	// restart kills the client (SIGKILL, its process group) when an attempt is held, and starts
	// it again with the same command, operations and state directory.
	restart bool
	// rerun starts the client again once it stopped on its own, with the same command,
	// operations and state directory ({{.Restart}} 1), and answers every attempt from then on as
	// a correct API does (uncertain-stays-pending).
	rerun bool
}

// inProcessGrace is how long a client driven in-process may take to return once its context
// is cancelled.
const inProcessGrace = 5 * time.Second

// play runs one scenario of client c and returns what the checkers judge: the attempts grouped
// into operations, how the client ended. skip is not empty when the scenario cannot run with
// this client (a restart of a client driven in-process that cannot be re-executed); a set-up
// that fails is an unknown result.
func (s *S) play(c *targets.Client, cfg *targets.ClientConfiguration, sc scenario) (run check.ClientRun, verdict *check.Result) {
	fail := func(format string, args ...any) (check.ClientRun, *check.Result) {
		r := check.Unknownf(format, args...)
		return run, &r
	}
	ip := s.InProcess
	if len(c.Command) > 0 {
		ip = nil
	}
	if sc.restart && ip != nil && ip.Exec == nil {
		r := check.Skipf("client %s is driven in-process and cannot be restarted: %s", c.Name, ip.NoExec)
		return run, &r
	}
	dir, err := framework.ScratchDir("retrysafe-client-")
	if err != nil {
		return fail("the scenario's directory: %v", err)
	}
	defer os.RemoveAll(dir)
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		return fail("the scenario's state directory: %v", err)
	}
	var ca *testCA
	if c.HTTPS {
		if ca, err = newTestCA(dir); err != nil {
			return fail("the scripted API's certificate: %v", err)
		}
	}
	a, err := newAPI(c, cfg.Retry, s.History, sc.plans, ca)
	if err != nil {
		return fail("the scripted API: %v", err)
	}
	defer a.close()

	cr, prefix, asked := s.clientRun(c, sc, a.url, state, ip != nil || c.UsesOpsFile())
	if ca != nil {
		cr.CAFile = ca.file
	}
	opsFile := filepath.Join(dir, "ops.json")
	data, _ := json.MarshalIndent(cr.Ops, "", "  ")
	if err := os.WriteFile(opsFile, data, 0o644); err != nil {
		return fail("the ops file: %v", err)
	}
	vars := targets.ClientVars{URL: a.url, CAFile: cr.CAFile, State: state, Ref: prefix, Ops: strconv.Itoa(len(cr.Ops)), OpsFile: opsFile, Restart: "0"}
	sameRef := sc.sameRef && len(asked) > sc.ops
	if err := configure(&cr, c, cfg, vars, sameRef); err != nil {
		return fail("client %s: %v", c.Name, err)
	}

	run = check.ClientRun{Client: c.Name, Wanted: len(asked), Asked: asked, Exit: -1}
	stalls := framework.WatchStalls()
	defer stalls.Stop()
	start := s.starter(c, cfg, ip, sc.restart)
	// startAgain starts the client's second life, told apart as a restart: {{.Restart}} is 1 in
	// its command and env, ClientRun.Restart true, and the API's attempts are of life 2.
	startAgain := func() (*life, error) {
		a.life.Store(2)
		v, r := vars, cr
		v.Restart, r.Restart = "1", true
		if err := configure(&r, c, cfg, v, sameRef); err != nil {
			return nil, err
		}
		return start(v, r)
	}
	life, err := start(vars, cr)
	if err != nil {
		return fail("start client %s: %v", c.Name, err)
	}
	deadline := time.NewTimer(c.Timeout)
	defer deadline.Stop()
	defer s.Waiting(fmt.Sprintf("client %s to finish its operations (clients[].timeout %s)", c.Name, framework.Seconds(c.Timeout)), time.Now().Add(c.Timeout))()
	heldOne := a.heldOne
	if !sc.restart {
		heldOne = nil
	}
	for done := false; !done; {
		select {
		case <-life.done:
			if !sc.rerun || run.FirstStart != nil {
				done = true
				break
			}
			run.FirstStart = &check.ClientEnd{Exit: life.exit(), Reported: life.reported()}
			a.normal.Store(true)
			s.Notef("client %s: stopped on its own (it exited %d, %s), then started again with the same command, operations and state directory, every attempt answered as a correct API answers%s",
				c.Name, run.FirstStart.Exit, reportedWords(run.FirstStart.Reported), life.output())
			if life, err = startAgain(); err != nil {
				return fail("start client %s again: %v", c.Name, err)
			}
		case <-a.overrun:
			s.kill(c, life, "it was still retrying past max_attempts + 2")
			run.Killed = fmt.Sprintf("it was still retrying after %d attempts of one operation (max_attempts %d + 2%s)", a.overrunN,
				cfg.Retry.MaxAttempts, resendsWords(cfg.Retry))
			done = true
		case <-deadline.C:
			s.kill(c, life, "the scenario's timeout passed")
			run.Killed = fmt.Sprintf("the scenario's timeout (clients[].timeout %v) passed", c.Timeout)
			done = true
		case <-heldOne:
			heldOne = nil
			s.kill(c, life, "an attempt was held: the restart scenario")
			s.Notef("client %s: SIGKILLed while its first attempt was held (processed, unanswered), then started again with the same command, operations and state directory", c.Name)
			if life, err = startAgain(); err != nil {
				return fail("restart client %s: %v", c.Name, err)
			}
		case <-s.Ctx().Done():
			life.kill()
			return fail("interrupted: %v", context.Cause(s.Ctx()))
		}
	}
	if run.Killed == "" {
		run.Exit = life.exit()
		run.Reported = life.reported()
	}
	if out := life.output(); out != "" {
		s.Notef("client %s's last output:%s", c.Name, out)
	}
	stalls.Stop()
	a.settle()
	run.Ops = s.group(c, a.history(), stalls.Within)
	s.drawTimeline(run.Ops)
	return run, nil
}

// drawTimeline hands the scenario's operations and their attempts to report.html.
func (s *S) drawTimeline(ops []check.ClientOp) {
	lanes := make([]reports.ClientLane, len(ops))
	for i, op := range ops {
		lanes[i].Label = op.Name()
		for n, a := range op.Attempts {
			lanes[i].Attempts = append(lanes[i].Attempts, reports.ClientMark{Start: a.Start, Answered: a.Answered, Answer: a.Answer,
				Key: a.Key, Restarted: n > 0 && a.Life > op.Attempts[n-1].Life})
		}
	}
	s.ClientTimeline(lanes)
}

// kill ends one life of the client: a process is SIGKILLed (its process group), a fault event
// of the run's history; a function's context is cancelled.
func (s *S) kill(c *targets.Client, l *life, why string) {
	at := time.Now()
	l.kill()
	if l.process {
		s.History.AddEvent(history.Event{At: at, Action: string(faults.ActionInject), Kind: "kill", Target: "client " + c.Name,
			Fault: "SIGKILL of client " + c.Name + "'s process group: " + why})
	}
}

// clientRun makes the operations a scenario asks for: ops references PREFIX-1..PREFIX-N with
// the client's parameters and, asked for and declared in a way the client can be told (same_ref
// env values, or entries it reads: {{.OpsFile}}, or a client driven in-process), one more: PREFIX-1
// with the same_ref parameters over the client's. Every operation asked for is an entry of the
// ops file and counted by {{.Ops}}; asked are their identities as the client's first operation
// declares it (targets.ClientOperation.ExpectedIdentity); prefix is the scenario's {{.Ref}}.
// The same_ref env values are rendered by play, over the scenario's values.
func (s *S) clientRun(c *targets.Client, sc scenario, url, state string, entries bool) (cr framework.ClientRun, prefix string, asked []string) {
	prefix = fmt.Sprintf("rs-%s-c%d", s.Settings.RunID, s.Next())
	cr = framework.ClientRun{BaseURL: url, StateDir: state, Env: map[string]string{}}
	for i := 1; i <= sc.ops; i++ {
		cr.Ops = append(cr.Ops, framework.ClientOp{Ref: fmt.Sprintf("%s-%d", prefix, i), Params: maps.Clone(c.Ops.Params)})
	}
	if sr := c.Ops.SameRef; sc.sameRef && sr != nil {
		if len(sr.Env) > 0 || entries {
			params := maps.Clone(c.Ops.Params)
			if sr.Params != nil && params == nil {
				params = map[string]any{}
			}
			maps.Copy(params, sr.Params)
			cr.Ops = append(cr.Ops, framework.ClientOp{Ref: cr.Ops[0].Ref, Params: params})
		} else {
			s.Notef("client %s declares ops.same_ref.params but reads no {{.OpsFile}} and declares no same_ref.env: it cannot be asked for the operation with the first one's reference", c.Name)
		}
	}
	for _, op := range cr.Ops {
		asked = append(asked, c.Operations[0].ExpectedIdentity(op.Ref, op.Params))
	}
	return cr, prefix, asked
}

// configure gives a scenario's run the configuration it runs the client in: its name, its
// policy, and the environment (the client's env, the configuration's merged over it, and the
// same_ref env values when the scenario asks for the operation with the first one's reference),
// rendered over the scenario's values.
func configure(cr *framework.ClientRun, c *targets.Client, cfg *targets.ClientConfiguration, vars targets.ClientVars, sameRef bool) error {
	cr.Configuration, cr.Policy = cfg.Name, cfg.Retry
	env, err := c.RenderEnv(vars, cfg)
	if err != nil {
		return err
	}
	if sameRef {
		more, err := c.Ops.SameRef.RenderEnv(vars)
		if err != nil {
			return err
		}
		maps.Copy(env, more)
	}
	cr.Env = env
	return nil
}

// resendsWords says how many transport re-sends the overrun allows besides max_attempts + 2, or "".
func resendsWords(p targets.RetryPolicy) string {
	if p.TransportResends == 0 {
		return ""
	}
	return fmt.Sprintf(" + %d transport re-sends", p.TransportResends)
}

// life is one start of the client under test: a process, or a function in a goroutine.
type life struct {
	process  bool // a process (its kills are fault events)
	done     <-chan struct{}
	kill     func()
	exit     func() int
	reported func() targets.Reported
	output   func() string
}

// starter returns what starts the client once more with a start's values and run: its command
// as a process (or, driven in-process, the function; the re-executed test binary when the
// scenario restarts it).
func (s *S) starter(c *targets.Client, cfg *targets.ClientConfiguration, ip *framework.InProcessClient, restart bool) func(targets.ClientVars,
	framework.ClientRun) (*life, error) {
	if ip != nil && !restart {
		return func(_ targets.ClientVars, cr framework.ClientRun) (*life, error) { return s.inProcess(ip, cr), nil }
	}
	return func(vars targets.ClientVars, cr framework.ClientRun) (*life, error) {
		var argv, env []string
		var err error
		if ip != nil {
			argv, env, err = ip.Exec(cr)
		} else {
			argv, _, err = c.Render(vars, cfg)
			for _, k := range slices.Sorted(maps.Keys(cr.Env)) {
				env = append(env, k+"="+cr.Env[k])
			}
		}
		if err != nil {
			return nil, err
		}
		outcome := c.Outcome
		if ip != nil {
			outcome = targets.ExitCodes
		}
		lines := &reportLines{patterns: outcome.Patterns()}
		p, err := s.Processes().StartReading("client "+c.Name, argv, env, c.Dir, lines.add)
		if err != nil {
			return nil, err
		}
		return processLife(p, outcome, lines), nil
	}
}

// processLife is a start of the client as a process, its report read as f declares (the exit
// codes of targets.ExitCodes for a re-executed RunClientT); lines are the lines of its output
// that f's patterns match.
func processLife(p *faults.Process, f targets.ClientOutcome, lines *reportLines) *life {
	return &life{
		process:  true,
		done:     p.Done(),
		kill:     func() { _ = p.Signal(syscall.SIGKILL); <-p.Done() },
		exit:     p.ExitCode,
		reported: func() targets.Reported { return f.Of(p.ExitCode(), lines.all()) },
		output:   p.Output,
	}
}

// inProcess starts a run of a client driven in-process.
func (s *S) inProcess(ip *framework.InProcessClient, cr framework.ClientRun) *life {
	ctx, cancel := context.WithCancel(s.Ctx())
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("it panicked: %v", r)
			}
		}()
		err = ip.Run(ctx, cr)
	}()
	l := &life{done: done, output: func() string {
		select {
		case <-done:
		default:
			return ""
		}
		if err != nil {
			return "\n  " + err.Error()
		}
		return ""
	}}
	l.kill = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(inProcessGrace):
			s.Notef("the client's function did not return within %v of its context's end", inProcessGrace)
		}
	}
	l.reported = func() targets.Reported {
		switch {
		case err == nil:
			return targets.ReportedOK
		case errors.Is(err, framework.ErrPending):
			return targets.ReportedPending
		case errors.Is(err, context.Canceled):
			return targets.ReportedNone
		}
		return targets.ReportedFailed
	}
	l.exit = func() int {
		switch l.reported() {
		case targets.ReportedOK:
			return *targets.ExitCodes.OK.ExitCode
		case targets.ReportedPending:
			return *targets.ExitCodes.Pending.ExitCode
		}
		return *targets.ExitCodes.Failed.ExitCode
	}
	return l
}

// group turns a scenario's attempts into the client's logical operations (check.GroupClientOps,
// stalled saying how long the harness saw itself stalled between two instants); attempts for no
// declared operation are noted (they got 404).
func (s *S) group(c *targets.Client, attempts []history.Attempt, stalled func(from, to time.Time) time.Duration) []check.ClientOp {
	unknown := 0
	for _, a := range attempts {
		s.NoteKey(a.Key)
		if a.Answer == check.AnswerUnknownPath {
			unknown++
		}
	}
	if unknown > 0 {
		s.Notef("client %s sent %d requests for no declared operation (answered 404): check clients[].operations[].method and path", c.Name, unknown)
	}
	return check.GroupClientOps(c, attempts, stalled)
}
