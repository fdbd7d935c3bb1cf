package reports

import "slices"

// Explanation says what an anomaly kind means, what usually causes it in real implementations
// and how a person confirms it by hand from the reproduction a failure prints. `retrysafe
// explain KIND` prints it and report.html embeds the explanation of every kind it shows.
type Explanation struct {
	// Kind is the kind explained.
	Kind Kind
	// Meaning says what the harness saw, in a sentence or two.
	Meaning string
	// Causes are what usually makes real implementations do it, most common first.
	Causes []string
	// Confirm says how to confirm it by hand with the failure's reproduction (its repro line,
	// keys, attempts and counts).
	Confirm string
}

// Explain returns the explanation of k; false when k has none.
func Explain(k Kind) (Explanation, bool) {
	i := slices.IndexFunc(explanations, func(e Explanation) bool { return e.Kind == k })
	if i < 0 {
		return Explanation{}, false
	}
	return explanations[i], true
}

// Explanations returns every explanation, in Kinds order (kinds without one left out).
func Explanations() []Explanation {
	var out []Explanation
	for _, k := range Kinds {
		if e, ok := Explain(k); ok {
			out = append(out, e)
		}
	}
	return out
}

// reproStep is the first step of most confirmations.
const reproStep = "Run the failure's repro line (it reruns this spec with the same seed and key prefix). "
