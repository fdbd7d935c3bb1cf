// Package probe infers the idempotency behaviour of a target from a small, bounded set of
// non-destructive requests, and notices when that behaviour changes.
//
// Run opens one harness on the target (framework.Open: the downstream sink, the target's
// processes, the guard rails of a remote target, the clean-up), sends every request through the
// harness's operations (framework.Op.Do: built, sent exactly once, redacted and recorded in the
// run's history) and counts business records through the operation's observer (Op.Count).
// Every inferred field of the resulting Profile carries the attempts it came from and the
// counts. A field the probe cannot establish reliably (the answer while in flight when nothing
// lets the harness hold a request, expiry) is NotProbed, never guessed. Under the ietf base a
// value that contradicts a SHOULD of the IETF draft carries a Deviation. Suggest turns a profile
// into a target file whose expectations are the probed ones.
package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Defaults of Options.
const (
	DefaultAttemptTimeout = 10 * time.Second
	DefaultMaxAttempts    = 150
	DefaultKeySearchLimit = 4096
	DefaultHoldWindow     = time.Second
	DefaultMaxFields      = 16
)

// ErrUnreachable means no request reached the target.
var ErrUnreachable = errors.New("target unreachable")

// ErrBaseline means the target did not accept the first, ordinary request, so no behaviour can
// be inferred from the others.
var ErrBaseline = errors.New("the baseline request did not succeed")

// Options bound and shape a probe. The zero value takes the defaults.
type Options struct {
	// AttemptTimeout bounds one request (default DefaultAttemptTimeout).
	AttemptTimeout time.Duration
	// MaxAttempts bounds the number of requests (default DefaultMaxAttempts); fields not reached
	// within it are NotProbed.
	MaxAttempts int
	// KeySearchLimit is the longest key the key-length search tries (default 4096).
	KeySearchLimit int
	// HoldWindow is how long a retry sent while the first attempt is held may stay unanswered
	// before the target is judged to wait (default 1s); the slow hook holds the first attempt
	// twice as long.
	HoldWindow time.Duration
	// MaxFields bounds the body fields (and query parameters) changed one by one for
	// mismatch_status (default DefaultMaxFields).
	MaxFields int
	// MinInterval is the least time between two requests: 0 = none for a local target and
	// DefaultRemoteInterval for a remote one; negative = none.
	MinInterval time.Duration
	// RunID names the run; every {{.Ref}} starts with "rs-" + RunID (default: random).
	RunID string
	// KeyPrefix is the prefix the target's key.format makes every key from (default
	// "rs-" + RunID): the same prefix sends the same keys again (`retrysafe probe --key`).
	KeyPrefix string
	// AllowRemote lets the probe send to a target that is not on this machine.
	AllowRemote bool
	// Log receives the harness's notices (the clean-up); nil = nowhere.
	Log io.Writer
	// Tool names the program in the profile.
	Tool string
}

func (o *Options) defaults(t *targets.Target) {
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.KeySearchLimit <= 0 {
		o.KeySearchLimit = DefaultKeySearchLimit
	}
	if o.HoldWindow <= 0 {
		o.HoldWindow = DefaultHoldWindow
	}
	if o.MaxFields <= 0 {
		o.MaxFields = DefaultMaxFields
	}
	switch {
	case o.MinInterval == 0 && len(t.RemoteInstances()) > 0:
		o.MinInterval = DefaultRemoteInterval
	case o.MinInterval < 0:
		o.MinInterval = 0
	}
	if o.RunID == "" {
		o.RunID = fmt.Sprintf("%08x", rand.Uint32())
	}
}

// prober holds the state of one probe.
type prober struct {
	t    *targets.Target
	opts Options
	s    *framework.S       // the probe's session on the harness
	def  *targets.Operation // the operation most fields are probed on
	rtt  time.Duration      // the baseline request's round trip
	pace pacer
}

// Run probes the target and returns its behaviour profile. It opens a harness on t
// (framework.Open, without its baseline: the probe's first request is its own) and closes it. It
// returns ErrUnreachable (wrapped) when the first request could not reach the target and
// ErrBaseline when the target refused it; framework.ErrRemote for a remote target without
// AllowRemote and framework.ErrNotStarted when the harness could not start (a sink address taken,
// a process that did not start); otherwise a profile, in which fields that could not be
// established are NotProbed.
func Run(ctx context.Context, t *targets.Target, opts Options) (*profile.Profile, error) {
	opts.defaults(t)
	// The burst, rounds, replays and load rate are the run's, which the probe does not use: set,
	// they keep the harness from announcing modest remote defaults for them.
	settings := framework.Settings{RunID: opts.RunID, KeyPrefix: opts.KeyPrefix, AttemptTimeout: opts.AttemptTimeout,
		RaceK: 1, RaceRounds: 1, ReplayN: 1, LoadRate: 1}
	h, err := framework.Open(ctx, t, framework.WithSettings(settings), framework.AllowRemote(opts.AllowRemote), framework.WithLog(opts.Log),
		framework.WithoutBaseline(), framework.WithoutReachabilityCheck())
	if err != nil {
		return nil, err
	}
	defer h.Close()
	env := h.Env()
	p := &prober{t: t, opts: opts, s: env.Session(ctx), def: t.Operations[0], pace: pacer{every: opts.MinInterval}}
	for _, op := range t.Operations {
		if op.Observer != nil {
			p.def = op
			break
		}
	}
	prof := &profile.Profile{Schema: profile.SchemaVersion, Tool: opts.Tool, RunID: env.Settings.RunID,
		KeyPrefix: env.Settings.KeyPrefix, Base: t.Profile.Base, Started: time.Now(),
		Target: profile.TargetInfo{Name: t.Name, File: t.Path}}
	for _, in := range t.Instances {
		prof.Target.Instances = append(prof.Target.Instances, env.History.Redactor().URL(in.URL.String()))
	}
	base := p.s.NewOp(p.def)
	first, err := p.baseline(ctx, base)
	if err != nil {
		return nil, err
	}
	prof.Fields = append(prof.Fields, p.replayFields(base, first)...)
	prof.Fields = append(prof.Fields, p.reordered(), p.mismatch())
	prof.Fields = append(prof.Fields, p.inFlight(), p.errorPolicy())
	prof.Fields = append(prof.Fields, p.keyFields()...)
	prof.Fields = append(prof.Fields, p.scopeFields()...)
	prof.Fields = append(prof.Fields, profile.Field{Name: profile.FieldExpired, Value: profile.NotProbed,
		Note: "waiting out the key retention is beyond a probe; run `retrysafe run --label-filter property:expiry`"})
	prof.Fields = ordered(prof.Fields)
	if t.Profile.Base == "ietf" {
		markDeviations(prof.Fields)
	} else {
		clearDeviations(prof.Fields)
	}
	prof.Attempts = env.History.Attempts()
	prof.Finished = time.Now()
	return prof, nil
}

// baseline sends the probe's first, ordinary request: ErrUnreachable when it reached nothing,
// ErrBaseline when the target did not accept it.
func (p *prober) baseline(ctx context.Context, base *framework.Op) (history.Attempt, error) {
	first, ok := p.send(base, framework.Send{})
	switch {
	case !ok:
		return first, fmt.Errorf("%w: the attempt budget is 0", ErrUnreachable)
	case ctx.Err() != nil:
		return first, fmt.Errorf("%w: %v", ErrUnreachable, context.Cause(ctx))
	case first.Outcome == history.Failed:
		return first, fmt.Errorf("%w: %s: %s", ErrUnreachable, first.URL, first.Err)
	case first.Outcome == history.Unknown:
		return first, fmt.Errorf("%w: %s %s got no answer: %s", ErrUnreachable, first.Method, first.URL, first.Err)
	case !success(first):
		return first, fmt.Errorf("%w: %s %s answered %d: %s", ErrBaseline, first.Method, first.URL, first.Status, snippet(first.RespBody))
	}
	p.rtt = first.End.Sub(first.Start)
	return first, nil
}

// ordered sorts fields into FieldOrder.
func ordered(fields []profile.Field) []profile.Field {
	out := make([]profile.Field, 0, len(fields))
	for _, name := range profile.FieldOrder {
		for _, f := range fields {
			if f.Name == name {
				out = append(out, f)
			}
		}
	}
	return out
}

// success reports whether an attempt got a 2xx answer.
func success(a history.Attempt) bool {
	return a.Outcome == history.OK && a.Status >= 200 && a.Status < 300
}
