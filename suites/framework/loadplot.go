package framework

import (
	"bytes"
	"iter"
	"sort"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	"github.com/tsenart/vegeta/v12/lib/plot"
)

// Series of the latency plot.
const (
	seriesFirst    = "first execution"
	seriesReplay   = "replay"
	seriesInFlight = "in flight"
	seriesOther    = "other answer"
	seriesNone     = "no answer"
)

// loadPlot renders the latency of every attempt over time as one self-contained HTML file
// (Vegeta's plot), one series per kind of answer: first executions, replays, in-flight
// answers, other answers, and attempts without an answer.
func loadPlot(attempts iter.Seq[history.Attempt], p targets.Profile) ([]byte, error) {
	var results []vegeta.Result
	var labels []string
	succeeded := map[string]bool{}
	for a := range attempts {
		label := seriesOther
		switch {
		case a.Outcome != history.OK:
			label = seriesNone
		case a.Status >= 200 && a.Status < 300 && succeeded[a.Key]:
			label = seriesReplay
		case a.Status >= 200 && a.Status < 300:
			label, succeeded[a.Key] = seriesFirst, true
		case p.AcceptsInFlightStatus(a.Status):
			label = seriesInFlight
		}
		labels = append(labels, label)
		results = append(results, vegeta.Result{
			Attack: "retrysafe-load", Code: uint16(a.Status), Timestamp: a.Start, Latency: a.Duration(),
			Error: a.Err, Method: a.Method, URL: a.URL,
		})
	}
	// Vegeta's plot wants its results in the order of their sequence numbers, from 0, by time.
	order := make([]int, len(results))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return results[order[i]].Timestamp.Before(results[order[j]].Timestamp) })
	byOrder := make([]string, len(order))
	for seq, i := range order {
		results[i].Seq = uint64(seq)
		byOrder[seq] = labels[i]
	}
	pl := plot.New(plot.Title("retrysafe load: latency of every attempt"), plot.Downsample(4000),
		plot.Label(func(r *vegeta.Result) string { return byOrder[r.Seq] }))
	for _, i := range order {
		if err := pl.Add(&results[i]); err != nil {
			return nil, err
		}
	}
	pl.Close()
	var b bytes.Buffer
	if _, err := pl.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
