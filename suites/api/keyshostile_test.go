package api

import (
	"context"
	"crypto/rand"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/targets/reference"
)

const hostileText = "orders: hostile keys (':', '/', '*', '..', '%', a letter outside ASCII, a control character, padding spaces, " +
	"8 KB, another key behind a tenant or namespace, a command word) are refused or keys of their own, and the API keeps answering"

// TestHostileKeysPassTheReference: the reference's keys are opaque hashes of their scope, so
// every hostile key is refused (the 8 KB one, the control character) or a key of its own.
func TestHostileKeysPassTheReference(t *testing.T) {
	run, _ := runAgainst(t, referenceAPI(t, reference.MutantNone), twoOps, "", "property:keys")
	s, ok := specsOf(run, "keys")[hostileText]
	if !ok || s.Verdict != reports.Pass {
		t.Fatalf("hostile keys: %+v (found %v), want pass", s, ok)
	}
	if run.Properties[0].Verdict != reports.Pass {
		t.Errorf("keys: %s: %+v", run.Properties[0].Verdict, run.Properties[0].Specs)
	}
}

// diesOn wraps an API that dies on a key that names another of its entries: from then on every
// connection is closed without an answer, as a crashed process's would be refused.
func diesOn(marker string, next http.Handler) http.Handler {
	var dead atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Idempotency-Key"), marker) {
			dead.Store(true)
		}
		if dead.Load() {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TestHostileKeyCrashesTheTarget: a target that dies on a hostile key fails keys with
// target-crashed, naming that key.
func TestHostileKeyCrashesTheTarget(t *testing.T) {
	run, _ := runAgainst(t, diesOn("idempotency:", referenceAPI(t, reference.MutantNone)), twoOps, "", "property:keys")
	s := specsOf(run, "keys")[hostileText]
	if s.Verdict != reports.Fail || !slices.Contains(kindsOf(s), reports.KindTargetCrashed) {
		t.Fatalf("hostile keys: %s %v, want target-crashed:\n%s", s.Verdict, kindsOf(s), s.Failure)
	}
	if kindsOf(s)[0] != reports.KindTargetCrashed {
		t.Errorf("the evidence does not lead with the crash: %v", kindsOf(s))
	}
	const says = "the API stopped answering at another key of the run behind a namespace (idempotency:KEY), key \"idempotency:"
	if !strings.Contains(s.Failure, says) {
		t.Errorf("failure %q does not say %q", s.Failure, says)
	}
}

// TestRawStoreKey: the raw-store-key mutant answers 5xx to the key idempotency:K on Redis (K's
// cached answer is a string, its claim a hash) and replays K's answer to K% on SQLite (its answers
// looked up by pattern): keys fails with that, and the correct API passes on both.
func TestRawStoreKey(t *testing.T) {
	ctx := context.Background()
	stores := map[string]func(t *testing.T) reference.Store{
		"redis": func(t *testing.T) reference.Store {
			st, err := reference.OpenRedis(ctx, "", "retrysafe-test-rawkey-"+rand.Text()[:8]+":")
			if err != nil {
				t.Skipf("no Redis: %v", err)
			}
			t.Cleanup(func() { st.Purge(ctx) })
			return st
		},
		"sqlite": func(t *testing.T) reference.Store {
			st, err := reference.OpenSQLite(ctx, filepath.Join(t.TempDir(), "keys.db"))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
	}
	want := map[string]struct {
		kinds []reports.Kind
		says  string
	}{
		"redis":  {[]reports.Kind{reports.KindServerError}, "another key of the run behind a namespace (idempotency:KEY) got 503"},
		"sqlite": {[]reports.Kind{reports.KindMissingRecord, reports.KindForeignResponse}, "another key of the run as a LIKE pattern (KEY%) got the answer stored for the key of attempt #"},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			for _, m := range []reference.Mutant{reference.MutantRawStoreKey, reference.MutantNone} {
				store := open(t)
				t.Cleanup(func() { store.Close() })
				api, err := reference.NewAPI(reference.Config{Store: store, Tenants: []string{"alice", "bob"}, Mutant: m,
					Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout})
				if err != nil {
					t.Fatal(err)
				}
				run, _ := runAgainst(t, api, twoOps, "", "property:keys")
				s := specsOf(run, "keys")[hostileText]
				if m == reference.MutantNone {
					if s.Verdict != reports.Pass {
						t.Errorf("the correct API: %s %s", s.Verdict, s.Failure)
					}
					continue
				}
				if w := want[name]; s.Verdict != reports.Fail || !slices.Equal(kindsOf(s), w.kinds) || !strings.Contains(s.Failure, w.says) {
					t.Errorf("raw-store-key: %s %v, want %v saying %q:\n%s", s.Verdict, kindsOf(s), w.kinds, w.says, s.Failure)
				}
			}
		})
	}
}

// emptyKeyAs wraps an API that processes a request with an empty key under the key key(): a
// fresh one each time (correct), or one for all (every empty-key request stored under one record).
func emptyKeyAs(key func() string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, ok := r.Header["Idempotency-Key"]; ok && len(v) == 1 && v[0] == "" {
			r.Header.Set("Idempotency-Key", key())
		}
		next.ServeHTTP(w, r)
	})
}

// TestEmptyKeyTwoCallers: under empty_key_status: processed, two callers' empty keys with other
// bodies are two operations; an API that stores them under one record (and has no fingerprint)
// hands the second caller the first one's order.
func TestEmptyKeyTwoCallers(t *testing.T) {
	const text = "orders: two callers' requests with an empty key and different bodies are two operations, each with its own answer"
	fresh := emptyKeyAs(rand.Text, referenceAPI(t, reference.MutantNone))
	run, _ := runAgainst(t, fresh, twoOps, "  empty_key_status: processed\n", "property:keys")
	if s, ok := specsOf(run, "keys")[text]; !ok || s.Verdict != reports.Pass {
		t.Errorf("fresh empty keys: %+v (found %v), want pass", s, ok)
	}
	one := emptyKeyAs(func() string { return "the-empty-key" }, referenceAPI(t, reference.MutantNoFingerprint))
	run, _ = runAgainst(t, one, twoOps, "  empty_key_status: processed\n", "property:keys")
	if s := specsOf(run, "keys")[text]; s.Verdict != reports.Fail || !slices.Contains(kindsOf(s), reports.KindForeignResponse) {
		t.Errorf("one record for every empty key: %s %v, want a foreign-response:\n%s", s.Verdict, kindsOf(s), s.Failure)
	}
}
