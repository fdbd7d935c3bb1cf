package targets

import (
	"slices"
	"strings"
	"testing"
)

func TestStatusSetContains(t *testing.T) {
	tests := []struct {
		name string
		set  StatusSet
		in   []int
		out  []int
	}{
		{"one code", Status(422), []int{422}, []int{400, 200, 0}},
		{"codes", StatusSet{Codes: []int{400, 409, 422}}, []int{400, 409, 422}, []int{404, 499}},
		{"a class", StatusSet{Classes: []int{4}}, []int{400, 409, 451, 499}, []int{399, 500, 200}},
		{"codes and classes", StatusSet{Codes: []int{503}, Classes: []int{4}}, []int{404, 503}, []int{500, 201}},
		{"processed holds no status: a 2xx is checked by the caller", Processed, nil, []int{200, 201, 204, 400}},
		{"empty", StatusSet{}, nil, []int{0, 200, 400}},
	}
	for _, tt := range tests {
		for _, s := range tt.in {
			if !tt.set.Contains(s) {
				t.Errorf("%s: %v does not contain %d", tt.name, tt.set, s)
			}
		}
		for _, s := range tt.out {
			if tt.set.Contains(s) {
				t.Errorf("%s: %v contains %d", tt.name, tt.set, s)
			}
		}
	}
}

func TestStatusSetText(t *testing.T) {
	tests := []struct {
		set        StatusSet
		str, words string
		first      int
		zero       bool
	}{
		{Status(422), "422", "422", 422, false},
		{StatusSet{Classes: []int{4}}, "4xx", "a 4xx", 400, false},
		{StatusSet{Codes: []int{400, 409, 422}}, "[400, 409, 422]", "one of 400, 409, 422", 400, false},
		{StatusSet{Codes: []int{400, 409}, Classes: []int{5}}, "[400, 409, 5xx]", "one of 400, 409, 5xx", 400, false},
		{StatusSet{Classes: []int{4, 5}}, "[4xx, 5xx]", "one of 4xx, 5xx", 400, false},
		{Processed, "processed", "the request to be processed (a 2xx)", 0, false},
		{StatusSet{}, "", "", 0, true}, // never written: a field not declared is not shown
	}
	for _, tt := range tests {
		if tt.zero {
			if tt.set.First() != 0 || !tt.set.IsZero() {
				t.Errorf("the empty set: First %d, IsZero %v; want 0, true", tt.set.First(), tt.set.IsZero())
			}
			continue
		}
		if got := tt.set.String(); got != tt.str {
			t.Errorf("String(%+v) = %q, want %q", tt.set, got, tt.str)
		}
		if got := tt.set.Words(); got != tt.words {
			t.Errorf("Words(%+v) = %q, want %q", tt.set, got, tt.words)
		}
		if got := tt.set.First(); got != tt.first {
			t.Errorf("First(%+v) = %d, want %d", tt.set, got, tt.first)
		}
		if got := tt.set.IsZero(); got != tt.zero {
			t.Errorf("IsZero(%+v) = %v, want %v", tt.set, got, tt.zero)
		}
	}
}

// parseProfile parses the minimal target with the given profile lines (indented under profile:).
func parseProfile(t *testing.T, lines ...string) Profile {
	t.Helper()
	tg, probs := parseString(minimal+"profile:\n  "+strings.Join(lines, "\n  ")+"\n", nil)
	if probs != nil {
		t.Fatalf("problems: %s", strings.Join(probs, "\n"))
	}
	return tg.Profile
}

func TestParseStatusSets(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		get   func(Profile) StatusSet
		want  StatusSet
	}{
		{"a class", []string{"mismatch_status: 4xx"}, func(p Profile) StatusSet { return p.MismatchStatus }, StatusSet{Classes: []int{4}}},
		{"a class in capitals", []string{"mismatch_status: 4XX"}, func(p Profile) StatusSet { return p.MismatchStatus }, StatusSet{Classes: []int{4}}},
		{"one code", []string{"mismatch_status: 409"}, func(p Profile) StatusSet { return p.MismatchStatus }, Status(409)},
		{"a list", []string{"mismatch_status: [400, 409, 422]"}, func(p Profile) StatusSet { return p.MismatchStatus },
			StatusSet{Codes: []int{400, 409, 422}}},
		{"a block list", []string{"mismatch_status:", "  - 400", "  - 422"}, func(p Profile) StatusSet { return p.MismatchStatus },
			StatusSet{Codes: []int{400, 422}}},
		{"codes and classes, repeats dropped", []string{"mismatch_status: [409, 4xx, 409, 4xx]"}, func(p Profile) StatusSet { return p.MismatchStatus },
			StatusSet{Codes: []int{409}, Classes: []int{4}}},
		{"a quoted code", []string{`in_flight_status: "425"`}, func(p Profile) StatusSet { return p.InFlightStatus }, Status(425)},
		{"a missing key processed", []string{"missing_key_status: processed"}, func(p Profile) StatusSet { return p.MissingKeyStatus }, Processed},
		{"an empty key processed", []string{"empty_key_status: processed"}, func(p Profile) StatusSet { return p.EmptyKeyStatus }, Processed},
		{"a missing key rejected under stripe", []string{"base: stripe", "missing_key_status: 400"}, func(p Profile) StatusSet { return p.MissingKeyStatus },
			Status(400)},
		{"a long key", []string{"long_key_status: [400, 414]"}, func(p Profile) StatusSet { return p.LongKeyStatus }, StatusSet{Codes: []int{400, 414}}},
		{"an expired key", []string{"expired: reject", "expired_status: 410"}, func(p Profile) StatusSet { return p.ExpiredStatus }, Status(410)},
		{"the ietf default", nil, func(p Profile) StatusSet { return p.MismatchStatus }, Status(422)},
		{"the stripe default", []string{"base: stripe"}, func(p Profile) StatusSet { return p.MismatchStatus }, Status(400)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := tt.lines
			if lines == nil {
				lines = []string{"base: ietf"}
			}
			got := tt.get(parseProfile(t, lines...))
			if !slices.Equal(got.Codes, tt.want.Codes) || !slices.Equal(got.Classes, tt.want.Classes) || got.Processed != tt.want.Processed {
				t.Errorf("decoded %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseProcessedAndKeyLength(t *testing.T) {
	p := parseProfile(t, "missing_key_status: processed", "empty_key_status: processed", "max_key_length: none")
	if p.RequiresKey() || !p.EmptyKeyStatus.Processed || p.MaxKeyLength != 0 {
		t.Errorf("requires key %v, empty key %v, max key length %d; want false, processed, 0 (no maximum)",
			p.RequiresKey(), p.EmptyKeyStatus, p.MaxKeyLength)
	}
	if p := parseProfile(t, "max_key_length: 64"); p.MaxKeyLength != 64 {
		t.Errorf("max key length %d, want 64", p.MaxKeyLength)
	}
	if p := parseProfile(t, "base: ietf"); p.MaxKeyLength != 255 || !p.RequiresKey() {
		t.Errorf("ietf: max key length %d, requires key %v; want 255, true", p.MaxKeyLength, p.RequiresKey())
	}
}

func TestParseStatusSetProblems(t *testing.T) {
	const statusOrClass = "must be a status code from 100 to 599 or a class such as 4xx"
	tests := []struct {
		name  string
		lines []string
		want  []string // every problem, in order
	}{
		{"a code out of range", []string{"mismatch_status: 42"}, []string{`t.yaml:6: profile.mismatch_status: ` + statusOrClass + `, got "42"`}},
		{"a code above 599", []string{"mismatch_status: 600"}, []string{`t.yaml:6: profile.mismatch_status: ` + statusOrClass + `, got "600"`}},
		{"no such class", []string{"mismatch_status: 6xx"}, []string{`t.yaml:6: profile.mismatch_status: ` + statusOrClass + `, got "6xx"`}},
		{"a word", []string{"in_flight_status: conflict"}, []string{`t.yaml:6: profile.in_flight_status: ` + statusOrClass + `, got "conflict"`}},
		{"processed where a status is due", []string{"mismatch_status: processed"},
			[]string{`t.yaml:6: profile.mismatch_status: ` + statusOrClass + `, got "processed"`}},
		{"processed is offered where allowed", []string{"missing_key_status: 4x"},
			[]string{`t.yaml:6: profile.missing_key_status: ` + statusOrClass + `, or processed, got "4x"`}},
		{"a bad element of a list", []string{"mismatch_status: [400, 4xy]"},
			[]string{`t.yaml:6: profile.mismatch_status[1]: ` + statusOrClass + `, got "4xy"`}},
		{"processed listed with codes", []string{"empty_key_status: [processed, 400]"},
			[]string{"t.yaml:6: profile.empty_key_status: processed cannot be listed with status codes"}},
		{"an empty list", []string{"mismatch_status: []"}, []string{"t.yaml:6: profile.mismatch_status: must name at least one status"}},
		{"a max key length of zero", []string{"max_key_length: 0"}, []string{`t.yaml:6: profile.max_key_length: must be an integer from 1 to 1048576, or none (no maximum), got "0"`}},
		{"a max key length in words", []string{"max_key_length: unlimited"},
			[]string{`t.yaml:6: profile.max_key_length: must be an integer from 1 to 1048576, or none (no maximum), got "unlimited"`}},
		{"two problems, both reported", []string{"mismatch_status: 42", "long_key_status: 7xx"},
			[]string{`t.yaml:6: profile.mismatch_status: ` + statusOrClass + `, got "42"`,
				`t.yaml:7: profile.long_key_status: ` + statusOrClass + `, got "7xx"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, probs := parseString(minimal+"profile:\n  "+strings.Join(tt.lines, "\n  ")+"\n", nil)
			if !slices.Equal(probs, tt.want) {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(probs, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}
