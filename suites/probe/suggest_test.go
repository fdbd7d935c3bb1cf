package probe_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/probe"
	"github.com/retrysafe/retrysafe/targets"
)

// suggestHead is a target file up to its profile block.
const suggestHead = `# A target file.
name: shop
instances: ["${SHOP_URL:-http://127.0.0.1:9}"]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}"}'
`

// probed is a profile as the probe writes it: safe values, an unsafe one, a deviation, a field
// not probed.
var probed = &profile.Profile{Schema: profile.SchemaVersion, RunID: "abcd1234", Fields: []profile.Field{
	{Name: profile.FieldMismatchStatus, Value: "400", Deviation: "the draft says 422 for a reused key with another payload"},
	{Name: profile.FieldInFlight, Value: "500", Unsafe: "5xx to a race loser"},
	{Name: profile.FieldMissingKeyStatus, Value: "processed"},
	{Name: profile.FieldMaxKeyLength, Value: "none"},
	{Name: profile.FieldKeyForms, Value: "[bare]"},
	{Name: profile.FieldReplayHeader, Value: "none"},
	{Name: profile.FieldErrorPolicy, Value: profile.NotProbed},
	{Name: profile.FieldExpired, Value: profile.NotProbed},
	{Name: profile.FieldOperationScope, Value: "shared"},
}}

func TestSuggest(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // lines the suggestion holds
		gone      []string // text it no longer holds
	}{
		{"block in the middle", suggestHead + `# What the API promises.
profile:
  base: ietf
  in_flight: wait-replay        # the API waits
  error_policy: retry
  expired: reject
  expired_status: 410
  ignore: {json_paths: ["$.created"]}

# The retention, declared.
retention: 24h
`, []string{
			"# What the API promises.\nprofile:\n",
			"  mismatch_status: 400                # deviation: the draft says 422 for a reused key with another payload\n",
			"  # in_flight: 500  (left out: unsafe: 5xx to a race loser)\n",
			"  in_flight: wait-replay              # expected by the target file; observed unsafe\n  in_flight_status: 409\n",
			"  missing_key_status: processed\n", "  max_key_length: none\n", "  key_forms: [bare]\n", "  replay_header: \"\"\n",
			"  error_policy: retry                 # not probed: kept from the target file\n",
			"  expired: reject                     # not probed: kept from the target file\n  expired_status: 410\n",
			"  ignore:                           # kept from the target file\n    json_paths: [\"$.created\"]\n",
			"\n# The retention, declared.\nretention: 24h\n",
			"  operation_scope: shared\n",
			`instances: ["${SHOP_URL:-http://127.0.0.1:9}"]`,
		}, []string{"the API waits"}},
		{"no block", suggestHead, []string{"body: '{\"ref\": \"{{.Ref}}\"}'\n\nprofile:\n", "  base: ietf\n"}, nil},
		{"a base name, last, no final newline", suggestHead + "profile: stripe", []string{"  base: stripe\n", "  mismatch_status: 400 "},
			[]string{"profile: stripe"}},
	}
	env := func(string) (string, bool) { return "", false }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := targets.Parse("shop.yaml", []byte(tt.src), env)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			got, err := probe.Suggest([]byte(tt.src), tg, probed)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(got), w) {
					t.Errorf("suggestion lacks %q:\n%s", w, got)
				}
			}
			for _, g := range tt.gone {
				if strings.Contains(string(got), g) {
					t.Errorf("suggestion still holds %q:\n%s", g, got)
				}
			}
			back, err := targets.Parse("suggested.yaml", got, env)
			if err != nil {
				t.Fatalf("the suggestion does not load: %v\n%s", err, got)
			}
			defer back.Close()
			p := back.Profile
			if p.MismatchStatus.String() != "400" || !p.MissingKeyStatus.Processed || p.MaxKeyLength != 0 ||
				len(p.KeyForms) != 1 || p.KeyForms[0] != targets.KeyBare || p.ReplayHeader.Name != "" {
				t.Errorf("the suggestion loads as %+v", p)
			}
			if p.OperationScope != targets.ScopeShared {
				t.Errorf("the suggestion's operation scope is %s, want the probed shared", p.OperationScope)
			}
			if p.Base != tg.Profile.Base || p.InFlight != tg.Profile.InFlight || p.ErrorPolicy != tg.Profile.ErrorPolicy ||
				p.Expired != tg.Profile.Expired || !slices.Equal(p.Ignore.JSONPaths, tg.Profile.Ignore.JSONPaths) {
				t.Errorf("the suggestion lost what was not probed: %+v, file %+v", p, tg.Profile)
			}
		})
	}
}
