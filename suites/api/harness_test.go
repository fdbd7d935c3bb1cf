package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// twoOps is a target file of the reference API's two operations, with its tenants and observers,
// at ${API_URL}; PROFILE is replaced by the profile's fields.
const twoOps = `
instances: ["${API_URL}"]
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}", "amount": 1000, "currency": "eur"}'
    observer: {http: {path: /v1/orders, query: "ref={{.Ref}}", jsonpath: $.count}}
  - name: refunds
    path: /v1/refunds
    body: '{"ref": "{{.Ref}}", "amount": 1000, "currency": "eur"}'
    observer: {http: {path: /v1/refunds, query: "ref={{.Ref}}", jsonpath: $.count}}
tenants:
  - {name: alice, headers: {Authorization: Bearer alice}}
  - {name: bob, headers: {Authorization: Bearer bob}}
profile:
  base: ietf
  replay_header: "Idempotent-Replayed: true"
PROFILE
`

// referenceAPI is the correct reference API on a memory store, with mutant m.
func referenceAPI(t *testing.T, m reference.Mutant) http.Handler {
	t.Helper()
	api, err := reference.NewAPI(reference.Config{Store: reference.NewMemoryStore(), Tenants: []string{"alice", "bob"}, Mutant: m,
		Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout, WorkDelay: reference.DefaultWorkDelay})
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// runAgainst serves h on 127.0.0.1, loads the target file doc (with ${API_URL} its URL and
// PROFILE replaced by profile), runs the specs the label filter selects and returns the report
// and the log of the run.
func runAgainst(t *testing.T, h http.Handler, doc, profile, filter string) (*reports.Run, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	doc = strings.Replace(doc, "PROFILE", profile, 1)
	target, err := targets.Parse("target.yaml", []byte(doc), func(k string) (string, bool) {
		if k == "API_URL" {
			return srv.URL, true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log lockedLog
	hs, err := framework.Open(ctx, target, framework.WithSettings(framework.Settings{Seed: 1}), framework.WithLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	res, err := hs.Run(ctx, framework.Selection{LabelFilter: filter})
	if err != nil {
		t.Fatal(err)
	}
	return res.Report, log.String()
}

// lockedLog is a log writer safe for concurrent use.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// specsOf returns the specs of a property in a report, by text.
func specsOf(r *reports.Run, property string) map[string]reports.Spec {
	out := map[string]reports.Spec{}
	for _, p := range r.Properties {
		if p.Name == property {
			for _, s := range p.Specs {
				out[s.Text] = s
			}
		}
	}
	return out
}

// kindsOf lists the anomaly kinds of a spec.
func kindsOf(s reports.Spec) []reports.Kind {
	var out []reports.Kind
	for _, a := range s.Anomalies {
		out = append(out, a.Kind)
	}
	return out
}
