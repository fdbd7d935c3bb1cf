package reports

import (
	"strings"
	"testing"
)

// A passing spec's note of what it exercised (a fault step's lost confirms, a burst's overlap)
// is shown by summary.md and report.html as well as report.json; a spec without one is not.
func TestObservedShownForPassingSpecs(t *testing.T) {
	r := &Run{Complete: true, Properties: []Property{
		{Name: "event-under-broker-outage", Verdict: Pass, Specs: []Spec{
			{Text: "orders: events survive the broker's outage", Verdict: Pass,
				Observed: "lost confirm: 1 event taken while the answers were cut; outage: 3 of 3 operations acknowledged while the link was cut"},
			{Text: "orders: a spec that says nothing", Verdict: Pass},
		}},
	}}
	md := renderMarkdown(t, r)
	want := "- **event-under-broker-outage**: orders: events survive the broker's outage (pass): lost confirm: 1 event taken"
	if !strings.Contains(md, "### What the specs exercised") || !strings.Contains(md, want) {
		t.Errorf("summary.md lacks the observation %q:\n%s", want, md)
	}
	if strings.Contains(md, "a spec that says nothing (pass)") {
		t.Errorf("summary.md lists a spec that observed nothing:\n%s", md)
	}
	page := renderHTML(t, r, nil)
	if !strings.Contains(page, `<section id="observed">`) || !strings.Contains(page, "3 of 3 operations acknowledged while the link was cut") {
		t.Errorf("report.html lacks the observation:\n%s", page)
	}
	if none := renderMarkdown(t, &Run{Complete: true, Properties: []Property{{Name: "replay", Verdict: Pass}}}); strings.Contains(none, "exercised") {
		t.Errorf("summary.md has an observations section without observations:\n%s", none)
	}
}
