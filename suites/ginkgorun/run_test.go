package ginkgorun

import (
	"context"
	_ "github.com/retrysafe/retrysafe/suites" // every side's properties
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// harness opens a harness on the reference API (memory store) described by doc.
func harness(t *testing.T, doc []byte) *framework.Harness {
	t.Helper()
	api, err := reference.NewAPI(reference.Config{Store: reference.NewMemoryStore(), Tenants: []string{"alice", "bob"},
		Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	tg, err := targets.Parse("t.yaml", doc, func(k string) (string, bool) {
		return map[string]string{"RETRYSAFE_URL": srv.URL}[k], k == "RETRYSAFE_URL"
	})
	if err != nil {
		t.Fatal(err)
	}
	h, err := framework.Open(context.Background(), tg, framework.WithSettings(framework.Settings{Seed: 7, ReplayN: 3, RaceRounds: 2, RaceK: 4}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); tg.Close() })
	return h
}

// Ginkgo shuffles top-level containers by the seed; the driver keeps the registry's order.
func TestRunKeepsTheRegistryOrder(t *testing.T) {
	h := harness(t, examples.Reference)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	res, err := Run(context.Background(), h, Options{JUnitFile: junit,
		Selection: framework.Selection{LabelFilter: "property:control || property:keys || property:replay || property:race"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Report.Properties {
		got = append(got, p.Name)
		if p.Verdict != reports.Pass {
			t.Errorf("%s: %s (%s)", p.Name, p.Verdict, p.Reason)
		}
	}
	if want := "replay race keys control"; strings.Join(got, " ") != want {
		t.Errorf("properties ran in the order %v, want %s", got, want)
	}
	if _, err := os.Stat(junit); err != nil {
		t.Error(err)
	}
}

// An unknown verdict is a JUnit skip whose message starts with "unknown:", never a failure.
func TestRunUnknownIsAJUnitSkip(t *testing.T) {
	doc := strings.Replace(string(examples.Reference), "path: /v1/orders\n        query:", "path: /v1/nowhere\n        query:", 1)
	h := harness(t, []byte(doc))
	junit := filepath.Join(t.TempDir(), "junit.xml")
	res, err := Run(context.Background(), h, Options{JUnitFile: junit, Selection: framework.Selection{Focus: `^replay orders`}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Report.Properties) != 1 || res.Report.Properties[0].Verdict != reports.Unknown {
		t.Fatalf("properties %+v, want replay unknown (its observer answers 404)", res.Report.Properties)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(x), `<skipped message="unknown: `) || strings.Contains(string(x), "<failure") {
		t.Errorf("junit.xml does not report the unknown verdict as a skip starting with \"unknown:\":\n%s", x)
	}
}
