package selftest

import (
	"fmt"
	"slices"
	"strings"
)

// Difference is one result that two self-tests do not share.
type Difference struct {
	// What names the cell or the correct run: "race postgres (race)", "(correct) redis expiry".
	What string
	// A and B are its results in the first and the second self-test ("absent" when it has none).
	A, B string
	// Required says the difference counts: a required cell or a correct run (a reported-only
	// cell may differ).
	Required bool
}

// Compare compares two self-tests cell by cell and correct run by correct run (a correct run's
// result is pass, fail or skipped; a cell's killed, survived, pending or n-a), in a's order,
// then what only b has.
func Compare(a, b *Result) []Difference {
	var out []Difference
	type entry struct {
		what     string
		result   string
		required bool
	}
	index := func(r *Result) ([]string, map[string]entry) {
		var keys []string
		m := map[string]entry{}
		add := func(e entry) {
			if _, dup := m[e.what]; !dup {
				keys = append(keys, e.what)
			}
			m[e.what] = e
		}
		for _, c := range r.Correct {
			add(entry{correctName(c), c.Result, true})
		}
		for _, c := range r.Cells {
			add(entry{cellName(c), c.Result, c.Required})
		}
		return keys, m
	}
	ka, ma := index(a)
	kb, mb := index(b)
	for _, k := range ka {
		ea, eb := ma[k], mb[k]
		if _, ok := mb[k]; !ok {
			out = append(out, Difference{What: k, A: ea.result, B: "absent", Required: ea.required})
			continue
		}
		if ea.result != eb.result {
			out = append(out, Difference{What: k, A: ea.result, B: eb.result, Required: ea.required || eb.required})
		}
	}
	for _, k := range kb {
		if _, ok := ma[k]; !ok {
			out = append(out, Difference{What: k, A: "absent", B: mb[k].result, Required: mb[k].required})
		}
	}
	return out
}

// Required keeps the differences that count.
func Required(ds []Difference) []Difference {
	return slices.DeleteFunc(slices.Clone(ds), func(d Difference) bool { return !d.Required })
}

// correctName names a correct run's result.
func correctName(c Correct) string {
	parts := []string{"(correct"}
	for _, p := range []string{c.Side, c.Transport, c.Shape} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ") + ") " + c.Store + " " + c.Property
}

// cellName names a cell.
func cellName(c Cell) string {
	parts := []string{c.Mutant}
	if c.Side != "" {
		parts = append([]string{c.Side}, parts...)
	}
	for _, p := range []string{c.Transport, c.Shape} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return fmt.Sprintf("%s %s (%s)", strings.Join(parts, " "), c.Store, c.Property)
}
