package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites"
	"github.com/retrysafe/retrysafe/targets"
)

// thingsAPI is a small synchronous API with idempotency keys whose records change right after
// their creation (a "created" thing is "confirmed" as soon as its answer is stored), for
// profile.replay_returns: current and in_flight: status-resource.
type thingsAPI struct {
	// replay is what a replay returns: "current" (the thing as it is now) or "stored" (the first
	// answer's bytes).
	replay string
	// inFlight answers a duplicate while the first runs: "409", or "status-resource" (202 with the
	// Location of the operation in progress); twice makes the latter execute it again too (a bug).
	inFlight string
	twice    bool
	work     time.Duration

	mu     sync.Mutex
	keys   map[string]*thingKey
	things map[string]*thing
}

type thingKey struct {
	done  bool
	id    string
	first []byte
}

type thing struct {
	ID     string `json:"id"`
	Ref    string `json:"ref"`
	Status string `json:"status"`
}

func newThingsAPI(t *testing.T, replay, inFlight string, twice bool) string {
	api := &thingsAPI{replay: replay, inFlight: inFlight, twice: twice, work: 30 * time.Millisecond,
		keys: map[string]*thingKey{}, things: map[string]*thing{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/things", api.create)
	mux.HandleFunc("GET /v1/things", api.count)
	mux.HandleFunc("GET /v1/things/{id}", api.get)
	mux.HandleFunc("GET /v1/ops/{id}", api.op)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func opID(key string) string { h := sha256.Sum256([]byte(key)); return hex.EncodeToString(h[:8]) }

func (a *thingsAPI) create(w http.ResponseWriter, r *http.Request) {
	var in struct{ Ref string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	a.mu.Lock()
	k, seen := a.keys[key]
	switch {
	case seen && k.done && a.replay == "current":
		body, _ := json.Marshal(a.things[k.id])
		a.mu.Unlock()
		writeJSON(w, http.StatusOK, body)
		return
	case seen && k.done:
		body := k.first
		a.mu.Unlock()
		writeJSON(w, http.StatusCreated, body)
		return
	case seen && a.inFlight == "409":
		a.mu.Unlock()
		w.WriteHeader(http.StatusConflict)
		return
	case seen:
		a.mu.Unlock()
		if a.twice {
			a.newThing(in.Ref)
		}
		w.Header().Set("Location", "/v1/ops/"+opID(key))
		writeJSON(w, http.StatusAccepted, []byte(`{"status":"running"}`))
		return
	}
	k = &thingKey{}
	a.keys[key] = k
	a.mu.Unlock()
	time.Sleep(a.work)
	th := a.newThing(in.Ref)
	a.mu.Lock()
	body, _ := json.Marshal(th)
	k.done, k.id, k.first = true, th.ID, body
	th.Status = "confirmed" // the record changes once its answer is stored
	a.mu.Unlock()
	writeJSON(w, http.StatusCreated, body)
}

func (a *thingsAPI) newThing(ref string) *thing {
	a.mu.Lock()
	defer a.mu.Unlock()
	th := &thing{ID: fmt.Sprintf("t%d", len(a.things)+1), Ref: ref, Status: "created"}
	a.things[th.ID] = th
	return th
}

func (a *thingsAPI) count(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	n := 0
	for _, th := range a.things {
		if th.Ref == r.URL.Query().Get("ref") {
			n++
		}
	}
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, []byte(fmt.Sprintf(`{"count":%d}`, n)))
}

func (a *thingsAPI) get(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	th, ok := a.things[r.PathValue("id")]
	var body []byte
	if ok {
		body, _ = json.Marshal(th)
	}
	a.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (a *thingsAPI) op(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key, k := range a.keys {
		if opID(key) == r.PathValue("id") {
			state := "running"
			if k.done {
				state = "succeeded"
			}
			writeJSON(w, http.StatusOK, []byte(`{"status":"`+state+`"}`))
			return
		}
	}
	http.NotFound(w, r)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// thingsTarget describes the things API at url; profile holds the profile's extra lines.
func thingsTarget(t *testing.T, url, profile string) *targets.Target {
	t.Helper()
	doc := `name: things
instances: ["` + url + `"]
operations:
  - name: things
    path: /v1/things
    body: '{"ref": "{{.Ref}}"}'
    observer: {http: {path: /v1/things, query: "ref={{.Ref}}", jsonpath: $.count}}
    resource: {path: "/v1/things/{{.ID}}", id: $.id}
    async:
      reference: {header: Location}
      state: {jsonpath: $.status, done: [succeeded]}
      poll: 20ms
      settle: 5s
tenants:
  - name: alice
    headers: {Authorization: Bearer alice}
profile:
  base: ietf
` + profile
	tg, err := targets.Parse("things.yaml", []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// verdicts are a run's verdicts by property, with the anomaly kinds of its failing specs.
func verdicts(run *reports.Run) map[string]string {
	out := map[string]string{}
	for _, p := range run.Properties {
		v := string(p.Verdict)
		for _, sp := range p.Specs {
			if len(sp.Anomalies) > 0 {
				v += " " + string(sp.Anomalies[0].Kind)
			}
		}
		out[p.Name] = v
	}
	return out
}

// replay_returns: current passes an API whose replay shows the record as it is now, and fails one
// that replays the stored first answer after the record changed (which original passes).
func TestReplayReturnsCurrent(t *testing.T) {
	settings := suites.Settings{ReplayN: 3, RaceK: 6, RaceRounds: 2}
	for _, c := range []struct {
		name, replay, profile string
		want                  map[string]string
	}{
		{"current API, replay_returns current", "current", "  replay_returns: current\n",
			map[string]string{"replay": "pass", "race": "pass"}},
		{"stored API, replay_returns current", "stored", "  replay_returns: current\n",
			map[string]string{"replay": "fail replay-differs", "race": "fail replay-differs"}},
		{"stored API, replay_returns original", "stored", "",
			map[string]string{"replay": "pass", "race": "pass"}},
		{"current API, replay_returns original", "current", "",
			map[string]string{"replay": "fail replay-differs", "race": "fail replay-differs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := newThingsAPI(t, c.replay, "409", false)
			run := runSelected(t, thingsTarget(t, url, c.profile), "property:replay || property:race", settings)
			if got := verdicts(run); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("verdicts %v, want %v", got, c.want)
				for _, p := range run.Properties {
					for _, sp := range p.Specs {
						t.Logf("%s %s: %s", p.Name, sp.Text, sp.Failure)
					}
				}
			}
		})
	}
}

// in_flight: status-resource passes a synchronous API whose in-flight duplicates get 202 and the
// reference of the operation in progress, and fails one that executes them as well.
func TestInFlightStatusResource(t *testing.T) {
	settings := suites.Settings{RaceK: 6, RaceRounds: 3}
	for _, c := range []struct {
		name  string
		twice bool
		want  string
	}{
		{"a 202 naming the operation in progress", false, "pass"},
		{"a 202, and a second execution", true, "fail duplicate-record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := newThingsAPI(t, "stored", "status-resource", c.twice)
			run := runSelected(t, thingsTarget(t, url, "  in_flight: status-resource\n"), "property:race", settings)
			got := verdicts(run)["race"]
			if got != c.want {
				t.Errorf("race: %s, want %s", got, c.want)
			}
			for _, p := range run.Properties {
				for _, sp := range p.Specs {
					t.Logf("%s %s: %s [%s]", p.Name, sp.Text, sp.Failure, sp.Observed)
					if c.want == "pass" && !strings.Contains(sp.Observed, "asynchronous operations settled") {
						t.Errorf("no in-flight 202 was followed: %q", sp.Observed)
					}
				}
			}
		})
	}
}
