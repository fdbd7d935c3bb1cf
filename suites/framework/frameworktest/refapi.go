// Package frameworktest holds what the tests of the framework and of the sides share: the
// reference API served in-process behind a harness.
package frameworktest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/examples"
	"github.com/retrysafe/retrysafe/targets/reference"
)

// RefEnv serves the reference API (memory store, mutant m) in-process on n instances, each with
// its own store, opens a harness on reference.yaml pointed at them, and returns a session of it;
// everything is closed when the test ends. It fails the test when an instance receives one of
// the harness's internal headers (Vegeta's, the load plan's).
func RefEnv(t testing.TB, m reference.Mutant, n int, s framework.Settings) *framework.S {
	t.Helper()
	var urls []string
	var internal atomic.Value // the first harness-internal header a server received
	t.Cleanup(func() {
		if name := internal.Load(); name != nil {
			t.Errorf("the target received the harness-internal header %s", name)
		}
	})
	for range n {
		api, err := reference.NewAPI(reference.Config{
			Store: reference.NewMemoryStore(), Tenants: []string{"alice", "bob"}, Mutant: m,
			Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout,
			WorkDelay: reference.DefaultWorkDelay,
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for name := range r.Header {
				if strings.HasPrefix(name, "X-Vegeta") || name == framework.LoadItemHeader {
					internal.CompareAndSwap(nil, name)
				}
			}
			api.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	vars := map[string]string{"RETRYSAFE_URL": strings.Join(urls, ",")}
	target, err := targets.Parse("reference.yaml", examples.Reference, func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	target.SharedStore = n == 1
	t.Cleanup(func() { target.Close() })
	if s.Seed == 0 {
		s.Seed = 1
	}
	h, err := framework.Open(context.Background(), target, framework.WithSettings(s))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h.Env().Session(context.Background())
}
