package suites

import (
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets"
)

// buildRun turns Ginkgo's report into retrysafe's report tree: one entry per property that
// the run selected, its verdict folded from its specs.
func buildRun(e *Env, gr types.Report, started time.Time) *reports.Run {
	run := &reports.Run{
		Schema:   reports.SchemaVersion,
		RunID:    e.Settings.RunID,
		Started:  started,
		Finished: time.Now(),
		Seed:     e.Settings.Seed,
		Key:      e.Settings.KeyPrefix,
		Complete: true,
		Target:   targetInfo(e),
	}
	byName := map[string]*reports.Property{}
	for _, sr := range gr.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		name := propertyOf(sr.Labels())
		if name == "" || notSelected(sr) {
			continue
		}
		p := byName[name]
		if p == nil {
			p = newReportProperty(name)
			byName[name] = p
		}
		p.Specs = append(p.Specs, reportSpec(name, sr))
		p.Duration += sr.RunTime
		addFigures(p, sr)
		if sr.State.Is(types.SpecStateInterrupted | types.SpecStateAborted | types.SpecStateTimedout) {
			run.Complete = false
			run.Incomplete = "interrupted: " + firstLine(sr.Failure.Message)
			if sr.State.Is(types.SpecStateTimedout) {
				run.Incomplete = "deadline: " + firstLine(sr.Failure.Message)
			}
		}
	}
	// An interrupt or the deadline between two specs leaves no interrupted spec behind, only
	// skipped ones that look unselected; Ginkgo names the reason on the suite.
	for _, why := range gr.SpecialSuiteFailureReasons {
		if strings.Contains(why, "Interrupted") || strings.Contains(why, "Timeout") {
			run.Complete = false
			if run.Incomplete == "" {
				run.Incomplete = why
			}
		}
	}
	for _, p := range properties {
		if rp := byName[p.Name]; rp != nil {
			foldVerdict(rp)
			run.Properties = append(run.Properties, *rp)
		}
	}
	if !run.Complete && run.Incomplete == "" {
		run.Incomplete = "interrupted"
	}
	return run
}

// notSelected reports a spec that the label filter or focus left out (skipped without a
// message, as opposed to a spec that skipped itself with a reason).
func notSelected(sr types.SpecReport) bool {
	return sr.State.Is(types.SpecStateSkipped) && sr.Failure.Message == ""
}

func propertyOf(labels []string) string {
	for _, l := range labels {
		if name, ok := strings.CutPrefix(l, "property:"); ok {
			return name
		}
	}
	return ""
}

func newReportProperty(name string) *reports.Property {
	rp := &reports.Property{Name: name}
	for _, p := range properties {
		if p.Name == name {
			rp.Must, rp.Catches, rp.Labels = p.MustText(), p.Catches, p.AllLabels()
		}
	}
	return rp
}

func reportSpec(property string, sr types.SpecReport) reports.Spec {
	s := reports.Spec{
		Text:     strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(sr.FullText(), suiteText+" "), property)),
		Verdict:  specVerdict(sr),
		Duration: sr.RunTime,
	}
	if s.Verdict != reports.Pass {
		s.Failure = strings.TrimPrefix(strings.TrimSpace(sr.Failure.Message), "unknown: ")
		if s.Verdict == reports.Fail {
			s.Location = sr.Failure.Location.String()
		}
	}
	for _, en := range sr.ReportEntries {
		if en.Name != evidenceEntry {
			continue
		}
		if ev, ok := en.Value.GetRawValue().(reports.Evidence); ok {
			s.Evidence = &ev
		}
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

// targetInfo describes the target for the report (no secrets: URLs and profile only).
func targetInfo(e *Env) reports.TargetInfo {
	t := e.Target
	info := reports.TargetInfo{Name: t.Name, File: t.Path, Profile: profileMap(t.Profile)}
	for _, in := range t.Instances {
		info.Instances = append(info.Instances, e.History.Redactor().URL(in.URL.String()))
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
		"mismatch_status":    strconv.Itoa(p.MismatchStatus),
		"in_flight":          string(p.InFlight),
		"in_flight_status":   strconv.Itoa(p.InFlightStatus),
		"missing_key_status": strconv.Itoa(p.MissingKeyStatus),
		"empty_key_status":   strconv.Itoa(p.EmptyKeyStatus),
		"long_key_status":    strconv.Itoa(p.LongKeyStatus),
		"max_key_length":     strconv.Itoa(p.MaxKeyLength),
		"key_forms":          strings.Join(forms, ","),
		"error_policy":       string(p.ErrorPolicy),
		"expired":            string(p.Expired),
	}
	if p.MissingKeyStatus == targets.MissingKeyProcessed {
		m["missing_key_status"] = "processed"
	}
	if p.ReplayHeader.Name != "" {
		m["replay_header"] = strings.TrimSuffix(p.ReplayHeader.Name+": "+p.ReplayHeader.Value, ": ")
	}
	if p.Expired == targets.ExpiredReject {
		m["expired_status"] = strconv.Itoa(p.ExpiredStatus)
	}
	return m
}

// addFigures merges the key figures a spec published (see publishFigures) into its property.
func addFigures(p *reports.Property, sr types.SpecReport) {
	for _, en := range sr.ReportEntries {
		if en.Name != figuresEntry {
			continue
		}
		if f, ok := en.Value.GetRawValue().(map[string]string); ok {
			if p.Figures == nil {
				p.Figures = map[string]string{}
			}
			maps.Copy(p.Figures, f)
		}
	}
}
