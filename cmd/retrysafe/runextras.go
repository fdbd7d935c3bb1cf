package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/targets"
)

// maxTimelineRequests bounds the requests drawn on the HTML report's timeline.
const maxTimelineRequests = 20000

// htmlExtras gathers what report.html shows besides the verdicts: the load property's
// latency plot (embedded, so the file stays self-contained) and the timeline of injected
// faults against requests.
func htmlExtras(dir string, env *suites.Env) *reports.HTMLExtras {
	x := &reports.HTMLExtras{}
	if plot, err := os.ReadFile(filepath.Join(dir, "load-latency.html")); err == nil {
		x.LoadPlotHTML = `<iframe title="load latency" style="width:100%;height:460px;border:0" srcdoc="` +
			html.EscapeString(string(plot)) + `"></iframe>`
	}
	if env.Faults != nil {
		for _, ev := range env.Faults.Nemesis.Timeline() {
			x.Timeline = append(x.Timeline, reports.TimelineEvent{Time: ev.Time, Kind: reports.TimelineFault,
				Label: fmt.Sprintf("%s %s", ev.Action, ev.Fault)})
		}
	}
	if len(x.Timeline) == 0 {
		return x // no faults: a request lane alone says nothing
	}
	n := 0
	for a := range env.History.After(0) { // not All: a load run's history is long
		if n++; n > maxTimelineRequests {
			break
		}
		x.Timeline = append(x.Timeline, reports.TimelineEvent{Time: a.Start, Kind: reports.TimelineRequest,
			Label: fmt.Sprintf("#%d %s %s %d", a.Seq, a.Op, a.Outcome, a.Status)})
	}
	return x
}

// cleanUp runs the target file's cleanup request or query for this run's records.
func cleanUp(ctx context.Context, t *targets.Target, env *suites.Env, out io.Writer) {
	if t.Cleanup == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: t.TLSConfig()}}
	defer hc.CloseIdleConnections()
	if err := t.RunCleanup(ctx, hc, "rs-"+env.Settings.RunID); err != nil {
		fmt.Fprintf(out, "cleanup: %s\n", env.History.Redactor().String(err.Error()))
		return
	}
	fmt.Fprintln(out, "cleanup: done")
}
