package framework

import (
	"fmt"
	"html"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/faults"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
)

// Result is what a run produced: the report tree, the files the specs handed over (such as
// the load plot, by file name) and the parts of report.html that report.json does not hold.
type Result struct {
	Report    *reports.Run
	Artefacts map[string][]byte
	HTML      *reports.HTMLExtras
}

// Result turns the outcomes of the specs that ran (in run order) into the run's Result.
// incomplete says why the run stopped before every selected spec ran ("" = it did not).
func (h *Harness) Result(outcomes []*Outcome, incomplete string) *Result {
	e := h.env
	run := &reports.Run{
		Schema:     reports.SchemaVersion,
		RunID:      e.Settings.RunID,
		Started:    h.started,
		Finished:   time.Now(),
		Seed:       e.Settings.Seed,
		Key:        e.Settings.KeyPrefix,
		Complete:   incomplete == "",
		Incomplete: incomplete,
		Target:     targetInfo(e),
	}
	res := &Result{Report: run, Artefacts: map[string][]byte{}}
	var clients []reports.ClientTimeline
	byName := map[string]*reports.Property{}
	var names []string
	for _, o := range outcomes {
		p := o.Spec.Property
		rp := byName[p.Name]
		if rp == nil {
			rp = &reports.Property{Name: p.Name, Must: p.MustText(), Catches: p.Catches, Labels: p.AllLabels()}
			byName[p.Name] = rp
			names = append(names, p.Name)
		}
		rp.Specs = append(rp.Specs, reportSpec(o))
		rp.Duration += o.Duration
		if len(o.Figures) > 0 {
			if rp.Figures == nil {
				rp.Figures = map[string]string{}
			}
			maps.Copy(rp.Figures, o.Figures)
		}
		maps.Copy(res.Artefacts, o.Artefacts)
		clients = append(clients, o.Clients...)
	}
	for _, name := range names {
		rp := byName[name]
		foldVerdict(rp)
		run.Properties = append(run.Properties, *rp)
	}
	run.Causes = reports.FindCauses(run)
	for _, ev := range e.History.Events() {
		run.Faults = append(run.Faults, reports.FaultEvent{At: ev.At, Action: ev.Action, Kind: ev.Kind, Target: ev.Target,
			Fault: ev.Fault, Error: ev.Err})
	}
	res.HTML = h.htmlExtras(res.Artefacts[LoadPlotFile])
	res.HTML.ClientTimelines = clients
	return res
}

// reportSpec is one outcome in the report.
func reportSpec(o *Outcome) reports.Spec {
	s := reports.Spec{Text: o.Spec.Text, Verdict: o.Verdict(), Duration: o.Duration, Evidence: o.Evidence,
		Observed: strings.Join(o.Result.Observed, "; ")}
	if s.Verdict != reports.Pass {
		s.Failure = o.Message()
	}
	if s.Verdict == reports.Fail {
		s.Anomalies = o.Result.Anomalies
	}
	return s
}

// foldVerdict sets a property's verdict from its specs: fail > unknown > pass; skipped
// when every spec skipped (the property does not apply), with the reason.
func foldVerdict(p *reports.Property) {
	vs := make([]reports.Verdict, len(p.Specs))
	allSkipped := true
	for i, s := range p.Specs {
		vs[i] = s.Verdict
		if s.Verdict != reports.Skipped {
			allSkipped = false
		}
	}
	if allSkipped && len(p.Specs) > 0 {
		p.Verdict, p.Reason = reports.Skipped, p.Specs[0].Failure
		return
	}
	p.Verdict = reports.Combine(vs...)
	if p.Verdict == reports.Unknown {
		for _, s := range p.Specs {
			if s.Verdict == reports.Unknown {
				p.Reason = firstLine(s.Failure)
				break
			}
		}
	}
}

// maxTimelineRequests bounds the requests drawn on the HTML report's timeline.
const maxTimelineRequests = 20000

// htmlExtras gathers what report.html shows besides the verdicts: the load property's latency
// plot (embedded, so the file stays self-contained) and the timeline of every fault event
// against the requests.
func (h *Harness) htmlExtras(plot []byte) *reports.HTMLExtras {
	x := &reports.HTMLExtras{}
	if len(plot) > 0 {
		x.LoadPlotHTML = `<iframe title="load latency" style="width:100%;height:460px;border:0" srcdoc="` +
			html.EscapeString(string(plot)) + `"></iframe>`
	}
	hist := h.env.History
	for _, ev := range hist.Events() {
		label := fmt.Sprintf("%s %s (%s)", ev.Action, ev.Kind, ev.Target)
		if ev.Err != "" {
			label += ": failed: " + ev.Err
		}
		x.Timeline = append(x.Timeline, reports.TimelineEvent{Time: ev.At, Kind: reports.TimelineFault, Label: label,
			Injected: ev.Action == string(faults.ActionInject)})
	}
	if len(x.Timeline) == 0 {
		return x // no faults: a request lane alone says nothing
	}
	n := 0
	for a := range hist.After(0) { // not All: a load run's history is long
		if n++; n > maxTimelineRequests {
			break
		}
		label := fmt.Sprintf("#%d %s %s %d", a.Seq, a.Op, a.Outcome, a.Status)
		if a.IsEvent() {
			label = fmt.Sprintf("#%d %s: event %s observed", a.Seq, a.Op, a.Key)
		}
		x.Timeline = append(x.Timeline, reports.TimelineEvent{Time: a.Start, Kind: reports.TimelineRequest, Label: label})
	}
	return x
}

// targetInfo describes the target for the report (no secrets: URLs and profile only).
func targetInfo(e *Env) reports.TargetInfo {
	t := e.Target
	info := reports.TargetInfo{Name: t.Name, File: t.Path, Profile: profileMap(t.Profile)}
	for _, in := range t.Instances {
		info.Instances = append(info.Instances, e.History.Redactor().URL(in.URL.String()))
	}
	info.Deviations = append(info.Deviations, e.deviations...)
	for _, c := range t.Clients {
		for _, d := range c.Deviations() {
			info.Deviations = append(info.Deviations, "client "+c.Name+" "+d)
		}
	}
	return info
}

// profileMap renders the expectation profile as the target file's field names.
func profileMap(p targets.Profile) map[string]string {
	forms := make([]string, len(p.KeyForms))
	for i, f := range p.KeyForms {
		forms[i] = string(f)
	}
	m := map[string]string{
		"base":               p.Base,
		"mismatch_status":    p.MismatchStatus.String(),
		"in_flight":          string(p.InFlight),
		"in_flight_status":   p.InFlightStatus.String(),
		"missing_key_status": p.MissingKeyStatus.String(),
		"empty_key_status":   p.EmptyKeyStatus.String(),
		"long_key_status":    p.LongKeyStatus.String(),
		"max_key_length":     strconv.Itoa(p.MaxKeyLength),
		"key_forms":          strings.Join(forms, ","),
		"error_policy":       string(p.ErrorPolicy),
		"expired":            string(p.Expired),
		"replay_returns":     string(p.ReplayReturns),
	}
	if p.MaxKeyLength == 0 {
		m["max_key_length"] = "none"
	}
	if p.ReplayHeader.Name != "" {
		m["replay_header"] = strings.TrimSuffix(p.ReplayHeader.Name+": "+p.ReplayHeader.Value, ": ")
	}
	if p.Expired == targets.ExpiredReject {
		m["expired_status"] = p.ExpiredStatus.String()
	}
	if m["operation_scope"] = string(p.OperationScope); p.OperationScope == targets.ScopeShared {
		m["operation_reuse_status"] = p.OperationReuseStatus.String()
	}
	return m
}

// firstLine returns the first line of s, trimmed.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
