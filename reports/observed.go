package reports

// observation is what one spec exercised (Spec.Observed: how many requests of a burst were in
// flight at once, how many confirms a fault step lost, how many kills landed in its window),
// shown for every verdict: a pass rests on it as much as a failure does.
type observation struct {
	Property, Spec string
	Verdict        Verdict
	Text           string
}

// observations lists, in the properties' order, every spec that says what it exercised.
func observations(r *Run) []observation {
	var out []observation
	for _, p := range r.Properties {
		for _, s := range p.Specs {
			if s.Observed != "" {
				out = append(out, observation{Property: p.Name, Spec: s.Text, Verdict: normal(s.Verdict), Text: s.Observed})
			}
		}
	}
	return out
}
