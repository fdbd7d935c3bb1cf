package framework

// This file is the load generator: Vegeta paces the hits, the harness's client sends them
// (recorded in the history), a load plan chooses each (loadplan.go), and the load checker judges
// the history and the record counts. The load property (load.go) and the bench drive it.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Defaults of the load property: a few seconds, for a CI runner with 2 cores.
const (
	DefaultLoadRate          = 200
	DefaultLoadDuration      = 3 * time.Second
	DefaultLoadRetryFraction = 0.3
	DefaultLoadWorkers       = 32
)

const (
	loadCountWorkers = 8 // concurrent observer requests after the attack
	// LoadPlotFile names the load property's latency plot among the run's artefacts.
	LoadPlotFile = "load-latency.html"
)

// LoadRun is one load run: what was sent and what the checker found in the history.
type LoadRun struct {
	// Rate and Duration are the attack's settings (Rate 0 = as fast as the workers go).
	Rate     int
	Duration time.Duration
	// Hits are Vegeta's hits by kind: fresh operations, concurrent duplicates (each adds a
	// twin attempt) and sequential retries; Twins are the cross-shard twins sent with them (the
	// previous shard's operations, at the same instant).
	Fresh, Pairs, Retries, Twins int
	// PairsTogether is how many concurrent duplicates had both attempts in flight at once:
	// those raced.
	PairsTogether int
	// Limits are the load limits in force, in words.
	Limits string
	// Planned is how many hits the plan has for the attack (0: an unlimited rate).
	Planned int64
	// Attack is the wall time from the first hit to the last answer.
	Attack time.Duration
	// Counting and Checking are the times spent counting records and checking the history.
	Counting, Checking time.Duration
	// Uncounted is the number of operations whose records could not be counted, and
	// CountErrors the observer's first few errors.
	Uncounted   int
	CountErrors []string
	// Result is the checker's verdict material.
	Result *check.LoadResult
	// Plot is the latency plot (nil = none); PlotErr why it could not be rendered.
	Plot    []byte
	PlotErr error
	// Err is set when the load could not be generated as planned.
	Err error

	plan *loadPlan
	from int64 // the attack's attempts have a greater Seq
}

// Load drives the target for d at rate hits per second (0: as fast as Settings.LoadWorkers
// concurrent hits go) with Vegeta, every attempt sent and recorded by the harness's client
// (compactly: see history.Compact), then counts the records of every operation, checks the
// history with check.Load and renders the latency plot.
func (s *S) Load(rate int, d time.Duration) *LoadRun {
	run := s.LoadAttack(rate, d)
	s.FinishLoad(run)
	return run
}

// LoadAttack is the first half of Load: the attack alone, every attempt recorded.
func (s *S) LoadAttack(rate int, d time.Duration) *LoadRun {
	run := &LoadRun{Rate: rate, Duration: d, plan: newLoadPlan(s, s.Settings.LoadRetryFraction)}
	run.plan.plan.Rate = rate
	run.Limits = s.Limits
	run.Planned = run.plan.plan.Rounds(d)
	run.from = s.attack(run, run.plan)
	run.Fresh, run.Pairs, run.Retries, run.Twins = run.plan.hits()
	run.PairsTogether = int(run.plan.together.Load())
	if s.Settings.Shard == nil { // the plan's sequence numbers are the run's: skip past them
		s.seq.Add(run.plan.rounds())
	}
	return run
}

// FinishLoad is the second half of Load: it counts the records of every operation of the
// attack, checks its history and renders the plot.
func (s *S) FinishLoad(run *LoadRun) {
	started := time.Now()
	s.Settle()
	counts, errs, failed := s.countLoad(run.plan.operations())
	run.Counting, run.CountErrors, run.Uncounted = time.Since(started), errs, failed

	started = time.Now()
	run.Result = check.Load(s.History.AttemptsAfter(run.from), counts, s.Target.Profile, s.Target.Retention)
	run.Checking = time.Since(started)
	run.Plot, run.PlotErr = loadPlot(s.History.AttemptsAfter(run.from), s.Target.Profile)
}

// attack runs the Vegeta attack and returns the Seq after which its attempts are recorded.
func (s *S) attack(run *LoadRun, plan *loadPlan) (from int64) {
	e := s
	stop := e.History.Compact(LoadCompactOptions(e.Target.Profile))
	defer stop()
	if e.async != nil { // no fresh read per answer under load (replay_returns: current)
		e.async.noReads.Store(true)
		defer e.async.noReads.Store(false)
	}
	from = int64(e.History.Len())
	hc := &http.Client{
		Transport:     &loadTransport{s: s, plan: plan},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	targeter := plan.targeter()
	var targetErr error
	var once sync.Once
	tr := func(t *vegeta.Target) error {
		err := targeter(t)
		if err != nil {
			once.Do(func() { targetErr = err })
		}
		return err
	}
	var pacer vegeta.Pacer = vegeta.Rate{Freq: run.Rate, Per: time.Second}
	d := run.Duration
	if run.Planned > 0 {
		pacer, d = planPacer{ConstantPacer: vegeta.ConstantPacer{Freq: run.Rate, Per: time.Second}, hits: uint64(run.Planned)}, planBound(d)
	}
	run.Attack = s.VegetaAttack(hc, tr, pacer, d, "retrysafe-load")
	run.Err = targetErr
	return from
}

// planPacer paces a plan's hits at a constant rate and stops once all of them went out. Vegeta
// stops an attack of a set duration at its end, and drops what a stalled process (a loaded
// machine) had not sent by then: a plan's hits are owed, so the late ones go out at once instead.
type planPacer struct {
	vegeta.ConstantPacer
	hits uint64
}

// Pace implements vegeta.Pacer.
func (p planPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= p.hits {
		return 0, true
	}
	return p.ConstantPacer.Pace(elapsed, hits)
}

var _ vegeta.Pacer = planPacer{}

// planBound bounds an attack of a plan meant to take d: twice d and ten seconds more, after
// which the hits still owed are dropped (the run then says it sent fewer than planned).
func planBound(d time.Duration) time.Duration { return 2*d + 10*time.Second }

// VegetaAttack runs a Vegeta attack through hc paced by pacer for at most d (0: until the pacer
// stops it), with Settings.LoadWorkers workers, stopped when the spec ends, and returns its wall
// time.
func (s *S) VegetaAttack(hc *http.Client, tr vegeta.Targeter, pacer vegeta.Pacer, d time.Duration, name string) time.Duration {
	w := uint64(s.Settings.LoadWorkers)
	atk := vegeta.NewAttacker(vegeta.Client(hc), vegeta.Workers(w), vegeta.MaxWorkers(w))
	defer context.AfterFunc(s.ctx, func() { atk.Stop() })()
	started := time.Now()
	for range atk.Attack(tr, pacer, d, name) {
	}
	return time.Since(started)
}

// LoadCompactOptions is how the load property records its history: compactly, except the
// answers that are neither a 2xx nor the profile's in-flight status, kept whole as evidence.
func LoadCompactOptions(profile targets.Profile) history.CompactOptions {
	return history.CompactOptions{Full: func(a history.Attempt) bool {
		return (a.Status < 200 || a.Status > 299) && !profile.AcceptsInFlightStatus(a.Status)
	}}
}

// loadTransport is the RoundTripper Vegeta sends through: each hit goes out by the
// harness's client (recorded, never re-sent behind the harness's back), and a concurrent
// duplicate's twin goes out at the same moment.
type loadTransport struct {
	s    *S
	plan *loadPlan
}

// RoundTrip implements http.RoundTripper. Vegeta's request only names the plan item; the
// item's own request (rendered by the targeter) is what the harness's client sends.
func (t *loadTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	it := t.plan.table.Take(req.Header.Get(LoadItemHeader))
	if it == nil {
		return nil, errors.New("retrysafe load: a hit without a plan item")
	}
	ctx := t.s.ctx // Client.DoBody bounds every attempt by the attempt timeout
	var twin sync.WaitGroup
	var other history.Attempt
	if it.twin != nil {
		twin.Go(func() { other = t.s.Client.DoBody(ctx, it.twin, it.twinBody, it.twinMeta) })
	}
	if it.cross != nil {
		twin.Go(func() { t.s.Client.DoBody(ctx, it.cross, it.crossBody, it.crossMeta) })
	}
	a := t.s.Client.DoBody(ctx, it.req, it.body, it.meta)
	twin.Wait()
	if it.twin != nil && check.InFlightTogether([]history.Attempt{a, other}) == 2 {
		t.plan.together.Add(1)
	}
	if a.Outcome != history.OK {
		return nil, errors.New(a.Err)
	}
	return HitResponse(req, a.Status, a.RespHeader, a.RespBody), nil
}

// countLoad counts the records of every operation that has an observer, a few at a time,
// and returns the counts, the first few errors and the number of operations not counted.
func (s *S) countLoad(ops []*Op) (map[string]int, []string, int) {
	var (
		mu     sync.Mutex
		counts = make(map[string]int, len(ops))
		errs   []string
		failed int
		wg     sync.WaitGroup
		jobs   = make(chan *Op)
	)
	for range loadCountWorkers {
		wg.Go(func() {
			for op := range jobs {
				ctx, cancel := s.AttemptCtx(2)
				n, err := op.countCtx(ctx)
				cancel()
				mu.Lock()
				switch {
				case err == nil:
					counts[op.Key] = n
				case len(errs) < 5:
					errs = append(errs, err.Error())
					fallthrough
				default:
					failed++
				}
				mu.Unlock()
			}
		})
	}
	for _, op := range ops {
		if c := s.settledCount(check.Count{}, op.Def, op.metaTenant(), op.Key); op.Def.Observer != nil && !c.Unsettled && !c.Failed {
			jobs <- op // an operation not settled, or failed, is not judged by its records
		}
	}
	close(jobs)
	wg.Wait()
	return counts, errs, failed
}

// Raced judges what the load's concurrent duplicates rest on: it says how many of them had both
// attempts in flight at once, and makes a result without a violation unknown when the plan sent
// duplicates and none raced.
func (r *LoadRun) Raced(res *check.Result) {
	if r.Pairs == 0 {
		return
	}
	res.Observef("%d of %d concurrent duplicates had both attempts in flight together", r.PairsTogether, r.Pairs)
	if r.PairsTogether == 0 && len(res.Anomalies) == 0 {
		res.Unknown = append(res.Unknown, fmt.Sprintf("none of the %d concurrent duplicates had both attempts in flight at once: they did not race", r.Pairs))
	}
}

// Attempts returns the number of attempts the attack sent: every hit, the twin of every
// concurrent pair and every cross-shard twin.
func (r *LoadRun) Attempts() int { return r.Fresh + 2*r.Pairs + r.Retries + r.Twins }

// Hits returns the number of Vegeta hits the attack sent.
func (r *LoadRun) Hits() int { return r.Fresh + r.Pairs + r.Retries }

// Operations returns the operations the attack started or repeated, in the order they were first
// sent.
func (r *LoadRun) Operations() []*Op { return r.plan.operations() }

// From is the history position after which the attack's attempts are recorded.
func (r *LoadRun) From() int64 { return r.from }

// Figures are the load property's key figures.
func (r *LoadRun) Figures() map[string]string {
	res := r.Result
	rate := "unlimited"
	if r.Rate > 0 {
		rate = fmt.Sprintf("%d hits/s", r.Rate)
	}
	f := map[string]string{
		"rate":                  fmt.Sprintf("%s for %s", rate, r.Duration),
		"hits":                  strconv.Itoa(r.Fresh + r.Pairs + r.Retries),
		"hit_rate":              fmt.Sprintf("%.1f hits/s", float64(r.Fresh+r.Pairs+r.Retries)/r.Attack.Seconds()),
		"concurrent_duplicates": strconv.Itoa(r.Pairs),
		"duplicates_together":   strconv.Itoa(r.PairsTogether),
		"sequential_retries":    strconv.Itoa(r.Retries),
		"attempts":              strconv.Itoa(res.Attempts),
		"operations":            strconv.Itoa(res.Ops),
		"throughput":            fmt.Sprintf("%.1f attempts/s", res.Throughput()),
		"statuses":              res.StatusCounts(),
		"unknown":               strconv.Itoa(res.Unknown),
		"count_time":            Millis(r.Counting),
		"check_time":            Millis(r.Checking),
	}
	latencyFigures(f, res)
	if r.Limits != "" {
		f["limits"] = r.Limits
	}
	if r.Twins > 0 {
		f["cross_shard_twins"] = strconv.Itoa(r.Twins)
	}
	if r.Plot != nil {
		f["plot"] = LoadPlotFile
	} else if r.PlotErr != nil {
		f["plot"] = "not written: " + r.PlotErr.Error()
	}
	return f
}

// latencyFigures adds the percentiles of a checked load's first answers and replays to f.
func latencyFigures(f map[string]string, res *check.LoadResult) {
	for _, l := range []struct {
		name string
		lat  check.Latencies
	}{{"latency_first", res.First}, {"latency_replay", res.Replay}} {
		if l.lat.N > 0 {
			f[l.name+"_p50"], f[l.name+"_p90"], f[l.name+"_p99"] = Millis(l.lat.P50), Millis(l.lat.P90), Millis(l.lat.P99)
		}
	}
}
