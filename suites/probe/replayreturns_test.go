package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports/profile"
	"github.com/retrysafe/retrysafe/suites/probe"
	"github.com/retrysafe/retrysafe/targets"
)

// replayingAPI answers a new key 201 with its record ({"id", "ref", "status": "created",
// "operation"}), and the record becomes "confirmed" at once; a replay answers as mode says:
// "original" (the first answer), "current" (the record now) or "reference" (200 with the
// operation's reference alone).
func replayingAPI(t *testing.T, mode string) string {
	var mu sync.Mutex
	firsts, records := map[string][]byte{}, map[string]map[string]any{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/things", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Ref string }
		json.NewDecoder(r.Body).Decode(&in)
		key := r.Header.Get("Idempotency-Key")
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if first, ok := firsts[key]; ok {
			var rec map[string]any
			json.Unmarshal(first, &rec)
			switch mode {
			case "current":
				body, _ := json.Marshal(records[rec["id"].(string)])
				w.Write(body)
			case "reference":
				fmt.Fprintf(w, `{"operation": %q}`, rec["operation"])
			default:
				w.WriteHeader(http.StatusCreated)
				w.Write(first)
			}
			return
		}
		id := fmt.Sprintf("t%d", len(records)+1)
		rec := map[string]any{"id": id, "ref": in.Ref, "status": "created", "operation": "/v1/ops/" + id}
		first, _ := json.Marshal(rec)
		firsts[key], records[id] = first, rec
		rec["status"] = "confirmed"
		w.WriteHeader(http.StatusCreated)
		w.Write(first)
	})
	mux.HandleFunc("GET /v1/things/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, _ := json.Marshal(records[r.PathValue("id")])
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	mux.HandleFunc("GET /v1/ops/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status": "succeeded"}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// The probe reports what a replay returns: the first answer, the resource as it is now, or the
// operation's reference.
func TestProbeReplayReturns(t *testing.T) {
	for _, mode := range []string{"original", "current", "reference"} {
		t.Run(mode, func(t *testing.T) {
			doc := `instances: ["` + replayingAPI(t, mode) + `"]
operations:
  - name: things
    path: /v1/things
    body: '{"ref": "{{.Ref}}"}'
    resource: {path: "/v1/things/{{.ID}}", id: $.id}
    async:
      reference: {jsonpath: $.operation}
      state: {jsonpath: $.status, done: [succeeded]}
`
			tg, err := targets.Parse("things.yaml", []byte(doc), func(string) (string, bool) { return "", false })
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			prof, err := probe.Run(ctx, tg, probe.Options{MaxAttempts: 20})
			if err != nil {
				t.Fatal(err)
			}
			f := prof.Field(profile.FieldReplayReturns)
			if f == nil || f.Value != mode || len(f.Evidence) != 2 {
				t.Fatalf("replay_returns %+v, want %s with the two answers as evidence", f, mode)
			}
			t.Logf("%s: %s", f.Value, f.Note)
		})
	}
}
