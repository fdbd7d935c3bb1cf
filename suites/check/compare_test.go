package check

import (
	"net/http"
	"slices"
	"testing"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
)

func profileIgnoring(t *testing.T, yamlIgnore string) targets.Profile {
	t.Helper()
	doc := "instances: [http://127.0.0.1:1]\noperations:\n  - {name: o, path: /o, body: '{}'}\nprofile:\n  base: ietf\n" + yamlIgnore
	tg, err := targets.Parse("t.yaml", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return tg.Profile
}

func TestCompareBodies(t *testing.T) {
	p := profileIgnoring(t, "  ignore:\n    json_paths: [$.created, '$.items[*].ts']\n")
	tests := []struct {
		name string
		a, b string
		want []string
	}{
		{"equal", `{"id":"1","n":2}`, `{"n":2, "id":"1"}`, nil},
		{"value", `{"id":"1"}`, `{"id":"2"}`, []string{"$['id']"}},
		{"missing member", `{"id":"1","x":1}`, `{"id":"1"}`, []string{"$['x']"}},
		{"ignored path", `{"id":"1","created":1}`, `{"id":"1","created":2}`, nil},
		{"ignored wildcard", `{"items":[{"ts":1,"v":1}]}`, `{"items":[{"ts":2,"v":1}]}`, nil},
		{"array element", `{"items":[{"ts":1,"v":1}]}`, `{"items":[{"ts":1,"v":2}]}`, []string{"$['items'][0]['v']"}},
		{"array length", `[1,2]`, `[1]`, []string{"$[1]"}},
		{"type", `{"a":{}}`, `{"a":[]}`, []string{"$['a']"}},
		{"numbers keep text", `{"a":1.0}`, `{"a":1}`, []string{"$['a']"}},
		{"not json equal", `abc`, `abc`, nil},
		{"not json differs", `abc`, `abd`, []string{"body"}},
		{"json vs not", `{}`, `x`, []string{"body"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CompareBodies([]byte(tt.a), []byte(tt.b), p.Ignore)
			if !slices.Equal(got, tt.want) {
				t.Errorf("CompareBodies(%s, %s) = %q, want %q", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestCompareStatusAndHeaders(t *testing.T) {
	p := profileIgnoring(t, "")
	a := history.Attempt{Status: 201, RespHeader: http.Header{"Date": {"x"}, "Location": {"/1"}}, RespBody: []byte(`{}`)}
	b := history.Attempt{Status: 201, RespHeader: http.Header{"Date": {"y"}, "Location": {"/1"},
		"Idempotent-Replayed": {"true"}, "Content-Length": {"2"}}, RespBody: []byte(`{}`)}
	if got := Compare(a, b, p); got != nil {
		t.Errorf("volatile and replay headers must not differ, got %q", got)
	}
	b.RespHeader.Set("Location", "/2")
	b.Status = 200
	want := []string{"status (201 != 200)", "header Location"}
	if got := Compare(a, b, p); !slices.Equal(got, want) {
		t.Errorf("Compare = %q, want %q", got, want)
	}
}
