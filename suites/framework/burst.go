package framework

import (
	"net/http"
	"sync"

	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

// Burst sends k attempts of one operation (one key, one body) at once, spread round-robin
// over the declared instances, in the environment's race mode (Settings.RaceMode: last-byte
// synchronisation on raw connections for http:// targets, else the barrier). Every request
// asks for the server's arrival time (X-Retrysafe-Arrival; see ArrivalSpread). It goes
// straight to the instances, never through a fault proxy.
func (s *S) Burst(op *Op, k int) []history.Attempt {
	if s.raceMode() == RaceModeLastByte {
		return s.lastByteBurst(op, k)
	}
	return s.barrierBurst(op, k)
}

// barrierBurst is Burst in barrier mode. Requests are rendered and connections opened
// beforehand; the goroutines are parked on a barrier and released together by closing a
// channel.
func (s *S) barrierBurst(op *Op, k int) []history.Attempt {
	e := s.Env
	ctx, cancel := s.AttemptCtx(3)
	defer cancel()
	n := len(e.Target.Instances)
	for i := range e.Target.Instances {
		ins := &e.Target.Instances[i]
		// A failed warm-up is not fatal: the burst then dials, and records what happens.
		_ = e.Client.Warm(ctx, ins.URL.String(), WarmPath(e), (k+n-1)/n)
	}
	type prepared struct {
		req  *http.Request
		meta httpclient.Meta
	}
	reqs := make([]prepared, k)
	for i := range reqs {
		req, meta, err := op.Build(ctx, Send{Instance: i})
		if err != nil {
			return []history.Attempt{{Op: op.Def.Name, Key: op.Key, Outcome: history.Failed, Err: "build request: " + err.Error()}}
		}
		req.Header.Set(arrivalHeader, "1")
		reqs[i] = prepared{req, meta}
	}
	out := make([]history.Attempt, k)
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	for i := range reqs {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			out[i] = e.Client.Do(ctx, reqs[i].req, reqs[i].meta)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return out
}

// WarmPath is the path fetched to open connections before a burst: the readiness probe's
// path when the target declares one, else "/" (any answer, even a 404, opens a connection).
func WarmPath(e *Env) string {
	if l := e.Target.Lifecycle; l != nil && l.Ready != nil && l.Ready.Path != "" {
		return l.Ready.Path
	}
	return "/"
}
