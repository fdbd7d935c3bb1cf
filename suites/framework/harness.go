package framework

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

// Harness owns one run against one target: the processes it starts (a target with a
// lifecycle), the embedded Toxiproxy, the downstream sink, the storage proxy, the guard rails
// of a remote target, the reachability check, the target file's clean-up and the history the
// report is made from. Open sets it all up, Run runs the selected specs (or a driver runs them
// one by one through RunSpec), Close tears everything down, whatever happened.
type Harness struct {
	target    *targets.Target
	ownTarget bool
	o         options
	procs     faults.Processes
	kit       *Faults
	env       *Env
	remote    []string
	limits    string // the load limits in force of a remote target
	started   time.Time
	closed    bool
}

// stopGrace is how long a stopped process may take to exit after SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// ErrRemote is returned by Open for a target on another machine without AllowRemote.
var ErrRemote = errors.New("remote target refused")

// ErrNotStarted wraps what kept Open from preparing the run (a process that did not start, a
// proxy or sink that could not listen, an unreachable target).
var ErrNotStarted = errors.New("the run could not start")

// OpenFile loads a target file and opens a harness on it; Close closes the target too.
func OpenFile(ctx context.Context, path string, opts ...Option) (*Harness, error) {
	t, err := targets.Load(path)
	if err != nil {
		return nil, err
	}
	h, err := Open(ctx, t, opts...)
	if err != nil {
		t.Close()
		return nil, err
	}
	h.ownTarget = true
	return h, nil
}

// Open prepares a run against t: it refuses a remote target without AllowRemote (and caps the
// settings of an allowed one), starts the sink, the storage proxy and the target's processes,
// and checks that every instance answers. Nothing is sent before the remote check.
func Open(ctx context.Context, t *targets.Target, opts ...Option) (*Harness, error) {
	h := &Harness{target: t, started: time.Now()}
	for _, opt := range opts {
		opt(&h.o)
	}
	h.remote = t.RemoteInstances()
	if len(h.remote) > 0 {
		if !h.o.allowRemote {
			if h.o.sink != nil {
				h.o.sink.Close()
			}
			return nil, remoteRefusal(h.remote)
		}
		h.limits = capRemote(&h.o.settings, h.remote, t.LoadLimits, h.o.logWriter())
	}
	if t.Chain != nil {
		return h.openChainHarness(ctx)
	}
	redactor := newRedactor(t)
	if h.o.processOutput != nil {
		h.procs.TeeTo(&redactingWriter{w: h.o.processOutput, r: redactor})
	}
	kit, err := setUpFaults(ctx, t, &h.procs, h.o.sink, eventsLabel(h.o.settings.RunID))
	if err != nil {
		h.procs.StopAll(stopGrace)
		return nil, fmt.Errorf("%w: %v", ErrNotStarted, err)
	}
	h.kit = kit
	if !h.o.noReachCheck {
		if err := checkReachable(ctx, t); err != nil {
			h.Close()
			return nil, fmt.Errorf("%w: %v", ErrNotStarted, err)
		}
	}
	h.env = newEnv(t, h.o.settings, redactor)
	h.env.waits = newWaitPrinter(h.o.log)
	h.env.Faults = kit
	h.env.Limits = cmp.Or(h.limits, LocalLimits)
	h.env.procs, h.env.InProcess = &h.procs, h.o.inProcess
	kit.events.attach(h.env.History)
	kit.Nemesis.Observe(func(ev faults.Event) {
		h.env.History.AddEvent(history.Event{At: ev.Time, Action: string(ev.Action), Kind: ev.Kind, Target: ev.Target,
			Fault: ev.Fault, Err: ev.Error})
	})
	if !h.o.noBaseline {
		err := h.baseline(ctx)
		if h.settleKeyForms(ctx) && err != nil {
			err = h.baseline(ctx) // in the form the API takes
		}
		if err != nil {
			h.Close()
			return nil, err
		}
	}
	return h, nil
}

// eventsLabel labels the names of what the harness makes on the brokers to observe the target's
// events: the run's id when it is fixed (a self-test's cell), so that a leftover is the run's.
func eventsLabel(runID string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, runID)
	if clean == "" {
		return "events"
	}
	return clean + "-events"
}

// Env is the environment the specs run in.
func (h *Harness) Env() *Env { return h.env }

// Target is the target under test.
func (h *Harness) Target() *targets.Target { return h.target }

// Close ends whatever still runs, runs the target file's clean-up, heals every fault, stops
// every process the harness started, then the sink, the proxies and the broker topologies it
// created, and closes the target when the harness loaded it. It is safe to call more than once.
func (h *Harness) Close() error {
	if h.closed {
		return nil
	}
	h.closed = true
	var errs []error
	if h.env != nil {
		h.env.Close()
		if !h.o.noCleanup {
			errs = append(errs, h.cleanUp())
		}
	}
	// The target's processes stop (SIGTERM, then SIGKILL after the grace) with every fault
	// healed and before the proxies, the sink and the brokers' topologies go: a graceful
	// shutdown still reaches its broker through {{.Broker}}, its downstream and its store.
	errs = append(errs, h.kit.healAll())
	h.procs.StopAll(stopGrace)
	errs = append(errs, h.kit.Close())
	if h.env != nil {
		errs = append(errs, h.env.chain.close())
	}
	if h.ownTarget {
		errs = append(errs, h.target.Close())
	}
	return errors.Join(errs...)
}

// cleanUp runs the target file's clean-up request or query for this run's records.
func (h *Harness) cleanUp() error {
	t := h.target
	if t.Cleanup == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: t.TLSConfig()}}
	defer hc.CloseIdleConnections()
	if err := t.RunCleanup(ctx, hc, "rs-"+h.env.Settings.RunID); err != nil {
		err = errors.New("cleanup: " + h.env.History.Redactor().String(err.Error()))
		fmt.Fprintln(h.o.logWriter(), err)
		return err
	}
	fmt.Fprintln(h.o.logWriter(), "cleanup: done")
	return nil
}

// checkReachable makes sure every instance answers HTTP before any property runs.
func checkReachable(ctx context.Context, t *targets.Target) error {
	hc := t.ObserverClient(5*time.Second, 0)
	defer hc.CloseIdleConnections()
	for _, in := range t.Instances {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, in.URL.String(), nil)
		resp, err := hc.Do(req)
		cancel()
		if err != nil {
			return fmt.Errorf("target %s is unreachable: %v", in.URL.Redacted(), err)
		}
		resp.Body.Close()
	}
	return nil
}

// options are what the Option values set.
type options struct {
	settings      Settings
	allowRemote   bool
	log           io.Writer
	progress      io.Writer
	sink          *faults.Sink
	noCleanup     bool
	noReachCheck  bool
	noBaseline    bool
	processOutput io.Writer
	selection     Selection
	inProcess     *InProcessClient
}

// Option configures a Harness (and RunT).
type Option func(*options)

// WithSettings sets the run's knobs (zero fields take the defaults).
func WithSettings(s Settings) Option { return func(o *options) { o.settings = s } }

// AllowRemote lets the harness test a target that is not on this machine (a host other than
// localhost, 127.0.0.0/8 or ::1), with modest settings and hard caps.
func AllowRemote(allow bool) Option { return func(o *options) { o.allowRemote = allow } }

// WithLog sends the harness's notices (remote caps, clean-up) to w (default: nowhere).
func WithLog(w io.Writer) Option { return func(o *options) { o.log = w } }

// WithProcessOutput copies every line the target's processes print to w, after the
// process's name, redacted like the run's history (default: the harness keeps only each
// process's last lines, for errors).
func WithProcessOutput(w io.Writer) Option { return func(o *options) { o.processOutput = w } }

// WithProgress makes Run (and RunT) print one line per finished spec to w.
func WithProgress(w io.Writer) Option { return func(o *options) { o.progress = w } }

// WithSink makes the harness use (and close) a downstream sink the caller started, for a target
// the caller runs itself with the sink's URL.
func WithSink(s *faults.Sink) Option { return func(o *options) { o.sink = s } }

// WithoutCleanup skips the target file's clean-up at Close.
func WithoutCleanup() Option { return func(o *options) { o.noCleanup = true } }

// WithoutReachabilityCheck skips the check that every instance answers before the run.
func WithoutReachabilityCheck() Option { return func(o *options) { o.noReachCheck = true } }

// WithoutBaseline skips the plain request per operation that Open sends to make sure the target
// accepts requests at all.
func WithoutBaseline() Option { return func(o *options) { o.noBaseline = true } }

// Select sets the specs RunT runs: a label filter (Ginkgo's syntax, e.g. "property:race ||
// !fault:process") and a regular expression over spec texts.
func Select(labelFilter, focus string) Option {
	return func(o *options) { o.selection = Selection{LabelFilter: labelFilter, Focus: focus} }
}

// log returns the writer of notices.
func (o *options) logWriter() io.Writer {
	if o.log == nil {
		return io.Discard
	}
	return o.log
}
