package reference

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// apiBehaviour is one HTTP-level behaviour of the correct API, run on every store.
type apiBehaviour struct {
	name string
	opts apiOpts
	run  func(t *testing.T, h *apiHarness)
}

// apiBehaviours is the shared table (this file and api_scope_test.go).
func apiBehaviours() []apiBehaviour {
	return append([]apiBehaviour{
		{"Create201", apiOpts{}, abCreate},
		{"ReplayByteIdentical", apiOpts{}, abReplay},
		{"QuotedAndBareKeysAreOneKey", apiOpts{}, abKeyForms},
		{"UUIDStartingWithDigitIsBareKey", apiOpts{}, abUUIDKey},
		{"Mismatch422", apiOpts{}, abMismatch},
		{"ReorderedJSONReplays", apiOpts{}, abReordered},
		{"InFlight409", apiOpts{downstream: true}, abInFlight},
		{"Validation400NotStored", apiOpts{}, abValidation},
		{"KeyLength", apiOpts{}, abKeyLength},
		{"SameKeyBurst", apiOpts{workDelay: 2 * time.Millisecond}, abBurst},
	}, apiScopeBehaviours()...)
}

// TestAPIBehaviours runs the behaviour table on every store, each behaviour on a fresh
// store. The stores run in parallel with each other.
func TestAPIBehaviours(t *testing.T) {
	for _, store := range AllStores {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			for _, b := range apiBehaviours() {
				t.Run(b.name, func(t *testing.T) {
					b.run(t, newAPIHarness(t, store, b.opts))
				})
			}
		})
	}
}

func abCreate(t *testing.T, h *apiHarness) {
	for _, c := range []struct{ path, object, prefix string }{
		{ordersPath, "order", "ord_"}, {refundsPath, "refund", "rfd_"},
	} {
		r := h.post(c.path, "alice", "create-"+c.object, orderJSON("ref-create", 1250, "EUR"))
		o := wantNew(t, r)
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q, want application/json", ct)
		}
		if !strings.HasPrefix(o.ID, c.prefix) || len(o.ID) < len(c.prefix)+16 || o.Object != c.object ||
			o.Ref != "ref-create" || o.Amount != 1250 || o.Currency != "EUR" {
			t.Fatalf("POST %s = %s, want a %s with a %s… id and the request's fields", c.path, r.body, c.object, c.prefix)
		}
		l := h.list("alice", c.path, "ref-create")
		if l.Count != 1 || l.Items[0] != o {
			t.Fatalf("GET %s?ref=ref-create = %+v, want exactly the created %+v", c.path, l, o)
		}
	}
	// A client cannot mark its own request as a replay (BRIEF failure mode 17).
	req := h.newPost(ordersPath, "alice", "spoofed", orderJSON("ref-spoof", 1, "EUR"))
	req.Header.Set("Idempotent-Replayed", "true")
	wantNew(t, h.do(req))
	h.wantCount("alice", ordersPath, "ref-spoof", 1)
	health, err := http.NewRequest(http.MethodGet, h.url+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := h.do(health); r.status != http.StatusOK {
		t.Fatalf("GET /healthz = %s", r)
	}
}

func abReplay(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-replay", 1250, "EUR")
	first := h.post(ordersPath, "alice", "replay-1", body)
	wantNew(t, first)
	for range 3 {
		r := h.post(ordersPath, "alice", "replay-1", body)
		wantReplay(t, r, first)
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("replay Content-Type %q", ct)
		}
	}
	h.wantCount("alice", ordersPath, "ref-replay", 1)
}

func abKeyForms(t *testing.T, h *apiHarness) {
	for i, forms := range [][2]string{
		{`"form-1"`, `form-1`},         // quoted first
		{`form-2`, `"form-2"`},         // bare first
		{`"sp ace"`, `sp ace`},         // a bare key may hold a space
		{`"q\"uo\\te"`, `q"uo\te`},     // RFC 8941 escapes
		{`"form-3"`, `  "form-3"  `},   // surrounding white space
		{`123456`, `"123456"`},         // a bare number is a key, not an sf-integer
		{`Zm9vYmFy==`, `"Zm9vYmFy=="`}, // bare base64
		{`"a:b;c=d"`, `a:b;c=d`},       // separators inside a string
		{`tok/with/slash`, `"tok/with/slash"`},
	} {
		ref := fmt.Sprintf("ref-form-%d", i)
		body := orderJSON(ref, 100, "EUR")
		first := h.post(ordersPath, "alice", forms[0], body)
		wantNew(t, first)
		wantReplay(t, h.post(ordersPath, "alice", forms[1], body), first)
		h.wantCount("alice", ordersPath, ref, 1)
	}
}

func abUUIDKey(t *testing.T, h *apiHarness) {
	const uuid = "8e03978e-40d5-43e8-bc93-6894a57f9324"
	body := orderJSON("ref-uuid", 100, "EUR")
	first := h.post(ordersPath, "alice", uuid, body)
	wantNew(t, first)
	wantReplay(t, h.post(ordersPath, "alice", uuid, body), first)
	wantReplay(t, h.post(ordersPath, "alice", `"`+uuid+`"`, body), first)
	// Another UUID that starts with a digit is another key.
	wantNew(t, h.post(ordersPath, "alice", "9e03978e-40d5-43e8-bc93-6894a57f9324", body))
	h.wantCount("alice", ordersPath, "ref-uuid", 2)
}

func abMismatch(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-mm", 1250, "EUR")
	first := h.post(ordersPath, "alice", "mm-1", body)
	wantNew(t, first)
	for _, c := range []struct{ path, body string }{
		{ordersPath, orderJSON("ref-mm", 9999, "EUR")},
		{ordersPath, orderJSON("ref-mm", 1250, "USD")},
		{ordersPath, orderJSON("ref-mm-other", 1250, "EUR")},
		{ordersPath, `{"ref":"ref-mm","amount":1250,"currency":"EUR","note":"x"}`},
		{ordersPath + "?dry=1", body}, // the query is part of the fingerprint
	} {
		r := h.post(c.path, "alice", "mm-1", c.body)
		wantStatus(t, r, http.StatusUnprocessableEntity)
		if bytes.Contains(r.body, []byte("ord_")) {
			t.Fatalf("422 answer leaks the stored order: %s", r)
		}
	}
	wantReplay(t, h.post(ordersPath, "alice", "mm-1", body), first) // 422s are not stored
	h.wantCount("alice", ordersPath, "ref-mm", 1)
	h.wantCount("alice", ordersPath, "ref-mm-other", 0)
}

func abReordered(t *testing.T, h *apiHarness) {
	first := h.post(ordersPath, "alice", "order-1", `{"ref":"ref-ord","amount":1250,"currency":"EUR"}`)
	wantNew(t, first)
	for _, body := range []string{
		`{"currency":"EUR","amount":1250,"ref":"ref-ord"}`,
		"{\n  \"amount\" : 1250 ,\n\t\"ref\": \"ref-ord\",\"currency\":\"EUR\"\n}\n",
		`{"ref":"ref-\u006frd","amount":1250,"currency":"EUR"}`, // the same string, escaped
	} {
		wantReplay(t, h.post(ordersPath, "alice", "order-1", body), first)
	}
	h.wantCount("alice", ordersPath, "ref-ord", 1)
}

func abInFlight(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-flight", 1250, "EUR")
	h.down.holdNext(1)
	pending := h.postAsync(ordersPath, "alice", "flight-1", body)
	h.down.waitHeld(t)
	for range 2 {
		r := h.post(ordersPath, "alice", "flight-1", body)
		wantStatus(t, r, http.StatusConflict)
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 0 {
			t.Fatalf("409 has Retry-After %q, want delay-seconds", r.header.Get("Retry-After"))
		}
	}
	// A different payload under an in-flight key is still a mismatch.
	wantStatus(t, h.post(ordersPath, "alice", "flight-1", orderJSON("ref-flight", 1, "EUR")), http.StatusUnprocessableEntity)
	h.wantCount("alice", ordersPath, "ref-flight", 0)
	h.down.releaseAll()
	first := h.await(pending)
	wantNew(t, first)
	wantReplay(t, h.post(ordersPath, "alice", "flight-1", body), first)
	h.wantCount("alice", ordersPath, "ref-flight", 1)
	if calls := h.down.calls(); len(calls) != 1 {
		t.Fatalf("downstream got %d calls, want 1", len(calls))
	}
}

func abValidation(t *testing.T, h *apiHarness) {
	good := orderJSON("ref-val", 500, "EUR")
	for _, c := range []struct{ name, key, body string }{
		{"missing key", noKey, good},
		{"empty header", "", good},
		{"white space header", "   ", good},
		{"empty quoted", `""`, good},
		{"unterminated quote", `"val-open`, good},
		{"non-ASCII in quotes", `"clé"`, good},
		{"trailing garbage after quotes", `"val-x" y`, good},
		{"bad JSON", "val-1", `{"ref":"ref-val",`},
		{"not an object", "val-2", `["ref-val",500,"EUR"]`},
		{"missing amount", "val-3", `{"ref":"ref-val","currency":"EUR"}`},
		{"missing ref", "val-4", `{"amount":500,"currency":"EUR"}`},
		{"amount is a string", "val-5", `{"ref":"ref-val","amount":"500","currency":"EUR"}`},
		{"amount is fractional", "val-6", `{"ref":"ref-val","amount":5.5,"currency":"EUR"}`},
		{"empty currency", "val-7", `{"ref":"ref-val","amount":500,"currency":""}`},
		{"trailing data", "val-8", good + `{}`},
		{"empty body", "val-9", ``},
	} {
		r := h.post(ordersPath, "alice", c.key, c.body)
		if r.status != http.StatusBadRequest {
			t.Fatalf("%s: %s, want 400", c.name, r)
		}
		wantStatus(t, r, http.StatusBadRequest)
	}
	h.wantCount("alice", ordersPath, "ref-val", 0)
	// Nothing was stored: the corrected retry with the same key executes (not 422, not a replay).
	for i := 1; i <= 9; i++ {
		wantNew(t, h.post(ordersPath, "alice", fmt.Sprintf("val-%d", i), good))
	}
	h.wantCount("alice", ordersPath, "ref-val", 9)
}

func abKeyLength(t *testing.T, h *apiHarness) {
	body := orderJSON("ref-len", 1, "EUR")
	for _, key := range []string{
		strings.Repeat("k", MaxKeyLength+1),
		`"` + strings.Repeat("q", MaxKeyLength+1) + `"`,
		strings.Repeat("é", MaxKeyLength+1),
		strings.Repeat("k", 4096),
	} {
		wantStatus(t, h.post(ordersPath, "alice", key, body), http.StatusBadRequest)
	}
	h.wantCount("alice", ordersPath, "ref-len", 0)
	// 255 characters are accepted, counted after unquoting and in characters, not bytes.
	long := strings.Repeat("k", MaxKeyLength)
	first := h.post(ordersPath, "alice", long, body)
	wantNew(t, first)
	wantReplay(t, h.post(ordersPath, "alice", `"`+long+`"`, body), first)
	wantNew(t, h.post(ordersPath, "alice", `"`+strings.Repeat("q", MaxKeyLength)+`"`, body))
	wantNew(t, h.post(ordersPath, "alice", strings.Repeat("é", MaxKeyLength), body))
	// Keys that differ only in their last of 255 characters are different keys.
	wantNew(t, h.post(ordersPath, "alice", long[:MaxKeyLength-1]+"x", body))
	h.wantCount("alice", ordersPath, "ref-len", 4)
}

// abBurst: 16 same-key requests at once, several rounds: exactly one record, every answer
// 201 (the execution or its replay) or 409, never 5xx.
func abBurst(t *testing.T, h *apiHarness) {
	for round := range 5 {
		key, ref := fmt.Sprintf("burst-%d", round), fmt.Sprintf("ref-burst-%d", round)
		resps := h.burst(16, func(int) *http.Request {
			return h.newPost(ordersPath, "alice", key, orderJSON(ref, 700, "EUR"))
		})
		var created []apiResp
		executed := 0
		for _, r := range resps {
			switch r.status {
			case http.StatusCreated:
				created = append(created, r)
				if !r.replayed() {
					executed++
				}
			case http.StatusConflict:
				wantStatus(t, r, http.StatusConflict)
			default:
				t.Fatalf("round %d: answer %s, want 201 or 409", round, r)
			}
		}
		if executed != 1 {
			t.Fatalf("round %d: %d answers are first executions, want 1", round, executed)
		}
		for _, r := range created {
			if !bytes.Equal(r.body, created[0].body) {
				t.Fatalf("round %d: two different 201 bodies: %s and %s", round, created[0].body, r.body)
			}
		}
		h.wantCount("alice", ordersPath, ref, 1)
	}
}
