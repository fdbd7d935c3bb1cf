package targets

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fiveXXWarning is the message of the warning for a 5xx declared for a malformed key.
const fiveXXWarning = "declares a 5xx for a client's malformed key: retrysafe reports any 5xx there as a server-error anomaly all the same (the draft asks for 400)"

// warningsOf returns warnings as "LINE: field: message", without the file name.
func warningsOf(ws []Problem) []string {
	var out []string
	for _, w := range ws {
		out = append(out, strings.TrimPrefix(w.String(), w.File+":"))
	}
	return out
}

func TestWarningsFor5xxOnMalformedKeys(t *testing.T) {
	cases := []struct {
		name, profile string
		want          []string // "LINE: field: message" of every warning, in order
	}{
		{"missing key 500", "profile: {missing_key_status: 500}\n", []string{"5: profile.missing_key_status: " + fiveXXWarning}},
		{"empty key 5xx", "profile: {empty_key_status: 5xx}\n", []string{"5: profile.empty_key_status: " + fiveXXWarning}},
		{"long key in a list", "profile: {long_key_status: [400, 503]}\n", []string{"5: profile.long_key_status: " + fiveXXWarning}},
		{"long key class in a list", "profile: {long_key_status: [4xx, 5xx]}\n", []string{"5: profile.long_key_status: " + fiveXXWarning}},
		{"all three, on their lines", "profile:\n  missing_key_status: 503\n  empty_key_status: 500\n  long_key_status: 5xx\n", []string{
			"6: profile.missing_key_status: " + fiveXXWarning,
			"7: profile.empty_key_status: " + fiveXXWarning,
			"8: profile.long_key_status: " + fiveXXWarning}},
		{"over a stripe base", "profile: {base: stripe, missing_key_status: 599}\n", []string{"5: profile.missing_key_status: " + fiveXXWarning}},
		{"4xx codes", "profile: {missing_key_status: 400, empty_key_status: 422, long_key_status: [400, 413]}\n", nil},
		{"4xx classes", "profile: {missing_key_status: 4xx, empty_key_status: 4xx, long_key_status: 4xx}\n", nil},
		{"processed", "profile: {missing_key_status: processed, empty_key_status: processed}\n", nil},
		{"499", "profile: {missing_key_status: 499}\n", nil},
		{"a 5xx elsewhere in the profile", "profile: {mismatch_status: 500, in_flight: 503, expired: reject, expired_status: 500}\n", nil},
		{"ietf", "profile: ietf\n", nil},
		{"stripe", "profile: stripe\n", nil},
		{"stripe base", "profile: {base: stripe}\n", nil},
		{"no profile", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg, probs := parseString(minimal+c.profile, nil)
			if probs != nil {
				t.Fatalf("a warning is not a problem: %v", probs)
			}
			if got := warningsOf(tg.Warnings); !slices.Equal(got, c.want) {
				t.Errorf("warnings\n got: %q\nwant: %q", got, c.want)
			}
		})
	}
}

func TestValidateReturnsWarnings(t *testing.T) {
	cases := []struct {
		name, profile string
		problems      int
		warnings      []string
	}{
		{"valid with a warning", "profile: {missing_key_status: 500}\n", 0, []string{"5: profile.missing_key_status: " + fiveXXWarning}},
		{"valid without warnings", "profile: {missing_key_status: 400}\n", 0, nil},
		{"invalid: problems alone", "profile: {missing_key_status: 500, max_key_length: zero}\n", 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "target.yaml")
			if err := os.WriteFile(path, []byte(minimal+c.profile), 0o600); err != nil {
				t.Fatal(err)
			}
			probs, warns := Validate(path)
			if len(probs) != c.problems {
				t.Errorf("problems = %v, want %d", probs, c.problems)
			}
			if got := warningsOf(warns); !slices.Equal(got, c.warnings) {
				t.Errorf("warnings\n got: %q\nwant: %q", got, c.warnings)
			}
			for _, w := range warns {
				if w.File != path {
					t.Errorf("warning names file %q, want %q", w.File, path)
				}
			}
		})
	}
}
