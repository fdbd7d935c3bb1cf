package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/reference"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Burst modes compared by the benchmarks: the race engine's two and a Vegeta burst.
const (
	modeLastByte = framework.RaceModeLastByte
	modeBarrier  = framework.RaceModeBarrier
	modeVegeta   = "vegeta"
)

var burstModes = []string{modeLastByte, modeBarrier, modeVegeta}

// burster fires same-key bursts at one server in any of the modes.
type burster struct {
	env     *framework.S
	closeFn func()
	hc      *http.Client // Vegeta's client, kept across attacks so that its connections stay warm
	k       int
}

func newBurster(s *server, k int) *burster {
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: k, MaxConnsPerHost: k}
	env, closeFn := s.session(framework.Settings{RaceK: k})
	return &burster{env: env, closeFn: closeFn, hc: &http.Client{Transport: tr}, k: k}
}

func (b *burster) close() {
	b.closeFn()
	b.hc.CloseIdleConnections()
}

// burst fires one burst of a fresh operation in a mode and returns the operation and the
// answers.
func (b *burster) burst(mode string) (*framework.Op, []history.Attempt, error) {
	op := b.env.NewOp(b.env.Target.Operations[0])
	if mode != modeVegeta {
		b.env.Settings.RaceMode = mode
		return op, b.env.Burst(op, b.k), nil
	}
	atts, err := b.vegetaBurst(op)
	return op, atts, err
}

// vegetaBurst fires k copies of the operation's request with Vegeta at an unlimited rate,
// one worker each, on connections a warm-up attack opened.
func (b *burster) vegetaBurst(op *framework.Op) ([]history.Attempt, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _, err := op.Build(ctx, framework.Send{Instance: 0})
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Header.Set(reference.ArrivalHeader, "1")
	base := *req.URL
	warm := vegeta.Target{Method: http.MethodGet, URL: (&url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/healthz"}).String()}
	b.attack(warm)
	results := b.attack(vegeta.Target{Method: req.Method, URL: req.URL.String(), Body: body, Header: req.Header})
	atts := make([]history.Attempt, len(results))
	for i, r := range results {
		atts[i] = history.Attempt{Key: op.Key, Status: int(r.Code), RespHeader: r.Headers, Outcome: history.OK}
		if r.Code == 0 {
			atts[i].Outcome, atts[i].Err = history.Unknown, r.Error
		}
	}
	return atts, nil
}

// attack sends k hits of one target at once (Vegeta's unlimited rate, k workers).
func (b *burster) attack(t vegeta.Target) []*vegeta.Result {
	k := uint64(b.k)
	atk := vegeta.NewAttacker(vegeta.Client(b.hc), vegeta.Workers(k), vegeta.MaxWorkers(k))
	var out []*vegeta.Result
	for r := range atk.Attack(vegeta.NewStaticTargeter(t), burstPacer(k), 0, "burst") {
		out = append(out, r)
	}
	return out
}

// burstPacer lets n hits go at once, then stops the attack. (vegeta.PacerFunc lacks the
// Rate method of vegeta.Pacer.)
type burstPacer uint64

var _ vegeta.Pacer = burstPacer(0)

// Pace implements vegeta.Pacer.
func (n burstPacer) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	return 0, hits >= uint64(n)
}

// Rate implements vegeta.Pacer: unlimited, reported as 0.
func (burstPacer) Rate(time.Duration) float64 { return 0 }

// spreadStats are the arrival spreads of one mode.
type spreadStats struct {
	spreads []time.Duration
	missing int // bursts without arrival times
}

func (s *spreadStats) add(atts []history.Attempt) {
	if d, err := framework.ArrivalSpread(atts); err == nil {
		s.spreads = append(s.spreads, d)
	} else {
		s.missing++
	}
}

func (s *spreadStats) p(q float64) time.Duration {
	sorted := slices.Clone(s.spreads)
	slices.Sort(sorted)
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// spreadBench is benchmark 1: the arrival spread of a same-key burst per mode, the modes
// interleaved round by round.
func spreadBench(ctx context.Context, o *Options) error {
	s, err := startServer(ctx, "memory", reference.MutantNone, reference.DefaultWorkDelay, o.PostgresDSN)
	if err != nil {
		return err
	}
	defer s.close()
	b := newBurster(s, o.BurstSize)
	defer b.close()
	stats := map[string]*spreadStats{}
	for _, m := range burstModes {
		stats[m] = &spreadStats{}
	}
	for range o.SpreadRounds {
		for _, m := range burstModes {
			if err := ctx.Err(); err != nil {
				return err
			}
			_, atts, err := b.burst(m)
			if err != nil {
				return fmt.Errorf("%s burst: %w", m, err)
			}
			stats[m].add(atts)
		}
	}
	w := o.Out
	fmt.Fprintf(w, "1. Arrival spread of a %d-request same-key burst (reference API in-process, memory store, work delay %s;\n"+
		"   server-side body-read times, %d rounds per mode, modes interleaved)\n", o.BurstSize, reference.DefaultWorkDelay, o.SpreadRounds)
	fmt.Fprintf(w, "   %-9s %10s %10s   %s\n", "mode", "p50", "p90", "p50 and p90 relative to last-byte")
	base := stats[modeLastByte]
	for _, m := range burstModes {
		st := stats[m]
		fmt.Fprintf(w, "   %-9s %10s %10s   %s  %s", m, ms(st.p(50)), ms(st.p(90)), ratio(st.p(50), base.p(50)), ratio(st.p(90), base.p(90)))
		if st.missing > 0 {
			fmt.Fprintf(w, "   (%d bursts without arrival times)", st.missing)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	return nil
}

// raceBench is benchmark 2: the share of rounds in which the race mutant, without any
// artificial delay, leaves a duplicate, per mode and store.
func raceBench(ctx context.Context, o *Options) error {
	w := o.Out
	fmt.Fprintf(w, "2. Race detection: rounds in which the race mutant (work delay 0) leaves a duplicate record,\n"+
		"   %d-request bursts, %d rounds per mode and store, modes interleaved\n", o.BurstSize, o.RaceRounds)
	fmt.Fprintf(w, "   %-9s", "store")
	for _, m := range burstModes {
		fmt.Fprintf(w, " %14s", m)
	}
	fmt.Fprintln(w)
	best := map[string]float64{}
	for _, store := range []string{"sqlite", "postgres"} {
		got, err := raceRounds(ctx, o, store)
		if err != nil {
			fmt.Fprintf(w, "   %-9s unavailable: %v\n", store, err)
			continue
		}
		fmt.Fprintf(w, "   %-9s", store)
		for _, m := range burstModes {
			frac := float64(got[m]) / float64(o.RaceRounds)
			fmt.Fprintf(w, " %5d/%-3d %3.0f%%", got[m], o.RaceRounds, 100*frac)
			best[store] = max(best[store], frac)
		}
		fmt.Fprintln(w)
	}
	for _, store := range []string{"sqlite", "postgres"} {
		if f, ok := best[store]; ok {
			fmt.Fprintf(w, "   goal >= 90%% per round with the best mode on %s: %s (%.0f%%)\n", store, verdict(f >= 0.9), 100*f)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// raceRounds counts, per mode, the rounds with more than one record.
func raceRounds(ctx context.Context, o *Options, store string) (map[string]int, error) {
	s, err := startServer(ctx, store, reference.MutantRace, 0, o.PostgresDSN)
	if err != nil {
		return nil, err
	}
	defer s.close()
	b := newBurster(s, o.BurstSize)
	defer b.close()
	dups := map[string]int{}
	for range o.RaceRounds {
		for _, m := range burstModes {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			op, _, err := b.burst(m)
			if err != nil {
				return nil, fmt.Errorf("%s burst: %w", m, err)
			}
			c := op.Count()
			if c.Err != "" {
				return nil, fmt.Errorf("count: %s", c.Err)
			}
			if c.N > 1 {
				dups[m]++
			}
		}
	}
	return dups, nil
}
