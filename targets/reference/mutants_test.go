package reference

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// mutantCase is the HTTP-level scenario that shows one mutant's bug. show runs it on a
// fresh harness and reports whether the bug was observed, with what it saw. The same
// scenario runs against the mutant (the bug must show) and against the correct API (it
// must not), so the test fails if either the mutant stops being broken or the scenario
// stops being able to tell.
type mutantCase struct {
	opts apiOpts // mutant is set by the test
	show func(t *testing.T, h *apiHarness) (bool, string)
}

// mutantRounds is how many bursts the concurrency scenarios send.
const mutantRounds = 3

func mutantCases() map[Mutant]mutantCase {
	cases := mutantCasesSync()
	maps.Copy(cases, asyncMutantCases())
	return cases
}

func mutantCasesSync() map[Mutant]mutantCase {
	burst := apiOpts{workDelay: 20 * time.Millisecond}
	down := apiOpts{downstream: true}
	hooked := apiOpts{hooks: true} // the fail hook, no downstream
	return map[Mutant]mutantCase{
		MutantRace:               {burst, showRace},
		MutantLoser500:           {burst, showLoser500},
		MutantNoFingerprint:      {apiOpts{}, showNoFingerprint},
		MutantRawFingerprint:     {apiOpts{}, showRawFingerprint},
		MutantPathBlind:          {apiOpts{}, showPathBlind},
		MutantUnscoped:           {apiOpts{}, showUnscoped},
		MutantReplayWithoutAuth:  {apiOpts{}, showReplayWithoutAuth},
		MutantReplayReexecutes:   {apiOpts{}, showReplayReexecutes},
		MutantLostWrite:          {apiOpts{}, showLostWrite},
		MutantShortRetention:     {apiOpts{}, showShortRetention},
		MutantNoExpiry:           {apiOpts{}, showNoExpiry},
		MutantEarlyTakeover:      {down, showEarlyTakeover},
		MutantNoErrorCache:       {down, showNoErrorCache},
		MutantTruncatedKey:       {apiOpts{}, showTruncatedKey},
		MutantBodyDedupe:         {apiOpts{}, showBodyDedupe},
		MutantFreshDownstreamKey: {down, showFreshDownstreamKey},
		MutantStuckLock:          {down, showStuckLock},
		MutantSplitWrite:         {down, showSplitWrite},

		MutantFingerprintIgnoresField: {apiOpts{}, showFingerprintIgnoresField},
		MutantForgetsEarly:            {apiOpts{}, showForgetsEarly},
		MutantStuckAfterError:         {hooked, showStuckAfterError},
		MutantErrorReplayDiffers:      {hooked, showErrorReplayDiffers},

		MutantPublishBeforeCommit: {apiOpts{events: true, hooks: true}, showPublishBeforeCommit},
		MutantReplayRepublishes:   {apiOpts{events: true}, showReplayRepublishes},
		MutantDualWrite:           {apiOpts{events: true}, showDualWrite},
		MutantRelayNewID:          {apiOpts{events: true}, showRelayNewID},
		MutantRelayMarksOnError:   {apiOpts{events: true}, showRelayMarksOnError},

		MutantErrorRecordAfterAnswer: {down, showErrorRecordAfterAnswer},
		MutantRawStoreKey:            {apiOpts{}, showRawStoreKey},
		// Issue 42.
		MutantRelayGivesUp: {apiOpts{events: true}, showRelayGivesUp},
	}
}

func showErrorRecordAfterAnswer(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-errlate", 1250, "EUR")
	h.down.setStatus(http.StatusInternalServerError)
	wantStatus(t, h.post(ordersPath, "alice", "errlate", body), http.StatusBadGateway)
	r := h.post(ordersPath, "alice", "errlate", body) // at once, once the error was answered
	return r.status == http.StatusConflict, fmt.Sprintf("the retry sent once the error was answered: %s", r)
}

func showRawStoreKey(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-rawkey", 1250, "EUR")
	first := h.post(ordersPath, "alice", "rawkey", body)
	wantNew(t, first)
	ns := h.post(ordersPath, "alice", "idempotency:rawkey", orderJSON("ref-rawkey-2", 1250, "EUR"))
	like := h.post(ordersPath, "alice", "rawkey%", body)
	return ns.status >= 500 || bytes.Equal(like.body, first.body),
		fmt.Sprintf("the key rawkey: %s; idempotency:rawkey after it: %s; rawkey%% with its body: %s", first, ns, like)
}

func showPublishBeforeCommit(t *testing.T, h *apiHarness) (bool, string) {
	h.wantFailNext("")
	r := h.post(ordersPath, "alice", "pbc", orderJSON("ref-pbc", 1250, "EUR"))
	if _, err := h.relayEvents(); err != nil {
		t.Fatalf("relay: %v", err)
	}
	ids := h.events.idsFor("ref-pbc")
	return len(ids) > 0, fmt.Sprintf("a failed order (%s) published %d events", r, len(ids))
}

func showReplayRepublishes(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-repub", 1250, "EUR")
	wantNew(t, h.post(ordersPath, "alice", "repub", body))
	h.post(ordersPath, "alice", "repub", body)
	if _, err := h.relayEvents(); err != nil {
		t.Fatalf("relay: %v", err)
	}
	ids := h.events.idsFor("ref-repub")
	return len(slices.Compact(slices.Sorted(slices.Values(ids)))) > 1, fmt.Sprintf("an order and its replay published ids %v", ids)
}

// TestMutantsShowTheirBugs runs every mutant's scenario on every store in its Stores list
// (the bug must show) and on its Reported stores (the result is only logged: split-write
// on SQLite and Redis is reported, not required), and the same scenario on the correct API
// on those stores (the bug must not show). Stores run in parallel with each other.
func TestMutantsShowTheirBugs(t *testing.T) {
	cases := mutantCases()
	for _, info := range Mutants {
		if _, ok := cases[info.Name]; !ok {
			t.Errorf("mutant %s has no HTTP-level scenario", info.Name)
		}
	}
	for _, store := range AllStores {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			for _, info := range Mutants {
				c, ok := cases[info.Name]
				required, reported := info.AppliesTo(store), slices.Contains(info.Reported, store)
				if !ok || (!required && !reported) {
					continue
				}
				t.Run(string(info.Name), func(t *testing.T) {
					t.Run("mutant", func(t *testing.T) {
						o := c.opts
						o.mutant = info.Name
						bug, saw := c.show(t, newAPIHarness(t, store, o))
						t.Logf("saw: %s", saw)
						switch {
						case required && !bug:
							t.Errorf("mutant %s on %s does not show its bug (%s): %s", info.Name, store, info.Bug, saw)
						case !required:
							t.Logf("reported only on %s: bug shown=%v: %s", store, bug, saw)
						}
					})
					t.Run("correct", func(t *testing.T) {
						bug, saw := c.show(t, newAPIHarness(t, store, c.opts))
						t.Logf("saw: %s", saw)
						if bug {
							t.Errorf("the correct API on %s shows the %s bug: %s", store, info.Name, saw)
						}
					})
				})
			}
		})
	}
}

// burstRounds sends mutantRounds bursts of 16 same-key requests and returns every answer
// and the record count of each round.
func burstRounds(h *apiHarness) ([][]apiResp, []int) {
	h.t.Helper()
	var all [][]apiResp
	var counts []int
	for round := range mutantRounds {
		key, ref := fmt.Sprintf("mburst-%d", round), fmt.Sprintf("ref-mburst-%d", round)
		all = append(all, h.burst(16, func(int) *http.Request {
			return h.newPost(ordersPath, "alice", key, orderJSON(ref, 700, "EUR"))
		}))
		counts = append(counts, h.count("alice", ordersPath, ref))
	}
	return all, counts
}

func showRace(t *testing.T, h *apiHarness) (bool, string) {
	_, counts := burstRounds(h)
	return slices.Max(counts) > 1, fmt.Sprintf("records per round %v", counts)
}

func showLoser500(t *testing.T, h *apiHarness) (bool, string) {
	all, counts := burstRounds(h)
	statuses := map[int]int{}
	for _, resps := range all {
		for _, r := range resps {
			statuses[r.status]++
		}
	}
	return statuses[http.StatusInternalServerError] > 0, fmt.Sprintf("statuses %v, records per round %v", statuses, counts)
}

func showNoFingerprint(t *testing.T, h *apiHarness) (bool, string) {
	first := h.post(ordersPath, "alice", "nofp", orderJSON("ref-nofp", 1250, "EUR"))
	wantNew(t, first)
	r := h.post(ordersPath, "alice", "nofp", orderJSON("ref-nofp", 9999, "EUR"))
	return r.status == http.StatusCreated && bytes.Equal(r.body, first.body), "variant body: " + r.String()
}

func showRawFingerprint(t *testing.T, h *apiHarness) (bool, string) {
	wantNew(t, h.post(ordersPath, "alice", "rawfp", `{"ref":"ref-raw","amount":1250,"currency":"EUR"}`))
	r := h.post(ordersPath, "alice", "rawfp", `{"currency":"EUR", "amount":1250, "ref":"ref-raw"}`)
	return r.status == http.StatusUnprocessableEntity, "reordered body: " + r.String()
}

func showPathBlind(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-blind", 1250, "EUR")
	first := h.post(ordersPath, "alice", "blind", body)
	wantNew(t, first)
	r := h.post(refundsPath, "alice", "blind", body)
	return bytes.Equal(r.body, first.body) || bytes.Contains(r.body, []byte("ord_")), "refund with the order's key: " + r.String()
}

func showUnscoped(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-unscoped", 1250, "EUR")
	a := wantNew(t, h.post(ordersPath, "alice", "unscoped", body))
	r := h.post(ordersPath, "bob", "unscoped", body)
	return bytes.Contains(r.body, []byte(a.ID)), "bob with alice's key: " + r.String()
}

func showReplayWithoutAuth(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-noauth", 1250, "EUR")
	a := wantNew(t, h.post(ordersPath, "alice", "noauth", body))
	var saw []string
	leaked := false
	for _, tenant := range []string{"", "mallory"} {
		r := h.post(ordersPath, tenant, "noauth", body)
		leaked = leaked || r.status == http.StatusCreated || bytes.Contains(r.body, []byte(a.ID))
		saw = append(saw, fmt.Sprintf("token %q: %s", tenant, r))
	}
	return leaked, strings.Join(saw, "; ")
}

func showReplayReexecutes(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-reexec", 1250, "EUR")
	first := h.post(ordersPath, "alice", "reexec", body)
	wantNew(t, first)
	r := h.post(ordersPath, "alice", "reexec", body)
	wantReplay(t, r, first) // the answer looks perfect either way
	n := h.count("alice", ordersPath, "ref-reexec")
	return n > 1, fmt.Sprintf("%d records after one replay", n)
}

func showLostWrite(t *testing.T, h *apiHarness) (bool, string) {
	r := h.post(ordersPath, "alice", "lost", orderJSON("ref-lost", 1250, "EUR"))
	n := h.count("alice", ordersPath, "ref-lost")
	return r.status == http.StatusCreated && n == 0, fmt.Sprintf("answer %s, %d records", r, n)
}

func showShortRetention(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-short", 1250, "EUR")
	first := h.post(ordersPath, "alice", "short", body)
	wantNew(t, first)
	h.clock.Advance(apiRetention/10 + time.Second) // well within the declared retention
	r := h.post(ordersPath, "alice", "short", body)
	return !r.replayed() || !bytes.Equal(r.body, first.body), "retry after a tenth of the retention: " + r.String()
}

func showNoExpiry(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-forever", 1250, "EUR")
	first := h.post(ordersPath, "alice", "forever", body)
	wantNew(t, first)
	h.clock.Advance(2 * apiRetention)
	r := h.post(ordersPath, "alice", "forever", body)
	return r.replayed() || bytes.Equal(r.body, first.body), "retry after twice the retention: " + r.String()
}

// holdFirstAttempt starts attempt 1 of key and leaves it hanging at the downstream call.
func holdFirstAttempt(t *testing.T, h *apiHarness, key, ref string) <-chan apiResp {
	h.down.holdNext(1)
	ch := h.postAsync(ordersPath, "alice", key, orderJSON(ref, 1250, "EUR"))
	h.down.waitHeld(t)
	return ch
}

func showEarlyTakeover(t *testing.T, h *apiHarness) (bool, string) {
	stale := holdFirstAttempt(t, h, "early", "ref-early")
	h.clock.Advance(apiLockTimeout/10 + time.Second) // well within the lock timeout
	r := h.post(ordersPath, "alice", "early", orderJSON("ref-early", 1250, "EUR"))
	h.down.releaseAll()
	h.await(stale)
	return r.status != http.StatusConflict, "retry at a tenth of the lock timeout: " + r.String()
}

func showNoErrorCache(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-errcache", 1250, "EUR")
	h.down.setStatus(http.StatusInternalServerError)
	first := h.post(ordersPath, "alice", "errcache", body)
	wantStatus(t, first, http.StatusBadGateway)
	r := h.post(ordersPath, "alice", "errcache", body)
	calls := h.down.calls()
	return len(calls) > 1, fmt.Sprintf("retry %s; downstream calls %d", r, len(calls))
}

func showTruncatedKey(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-trunc", 1250, "EUR")
	prefix := strings.Repeat("p", 64)
	first := h.post(ordersPath, "alice", prefix+"-first", body)
	wantNew(t, first)
	r := h.post(ordersPath, "alice", prefix+"-second", body)
	n := h.count("alice", ordersPath, "ref-trunc")
	return r.replayed() || bytes.Equal(r.body, first.body) || n != 2,
		fmt.Sprintf("second 70-char key: %s; %d records", r, n)
}

func showBodyDedupe(t *testing.T, h *apiHarness) (bool, string) {
	body := orderJSON("ref-dedupe", 1250, "EUR")
	first := h.post(ordersPath, "alice", "dedupe-1", body)
	wantNew(t, first)
	r := h.post(ordersPath, "alice", "dedupe-2", body)
	n := h.count("alice", ordersPath, "ref-dedupe")
	return r.replayed() || bytes.Equal(r.body, first.body) || n != 2,
		fmt.Sprintf("new key, same body: %s; %d records", r, n)
}

// takeOver holds attempt 1 downstream, lets the clock pass the lock timeout, sends the
// retry that takes over, then releases attempt 1. It returns the retry's and attempt 1's
// answers.
func takeOver(t *testing.T, h *apiHarness, key, ref string) (retry, stale apiResp) {
	ch := holdFirstAttempt(t, h, key, ref)
	h.clock.Advance(apiLockTimeout + time.Second)
	retry = h.post(ordersPath, "alice", key, orderJSON(ref, 1250, "EUR"))
	h.down.releaseAll()
	return retry, h.await(ch)
}

func showFreshDownstreamKey(t *testing.T, h *apiHarness) (bool, string) {
	retry, _ := takeOver(t, h, "fresh", "ref-fresh")
	wantNew(t, retry)
	calls := h.down.calls()
	if len(calls) != 2 {
		t.Fatalf("downstream got %d calls %q, want 2 (attempt 1 and the takeover)", len(calls), calls)
	}
	return calls[0] != calls[1], fmt.Sprintf("downstream keys %q", calls)
}

func showStuckLock(t *testing.T, h *apiHarness) (bool, string) {
	stale := holdFirstAttempt(t, h, "stuck", "ref-stuck")
	h.clock.Advance(10 * apiLockTimeout) // attempt 1 is long dead
	r := h.post(ordersPath, "alice", "stuck", orderJSON("ref-stuck", 1250, "EUR"))
	h.down.releaseAll()
	h.await(stale)
	return r.status == http.StatusConflict, "retry after ten lock timeouts: " + r.String()
}

// showSplitWrite shows the two transactions by fencing between them: attempt 1, held
// downstream past the lock timeout, commits its record in a first transaction and only
// then finds, in the second, that its key was taken over, so a second record remains; the
// correct API's single transaction writes nothing for a fenced attempt. Required on
// PostgreSQL; on SQLite and Redis (whose split also writes the record first) the result is
// only reported, as the issue's table says; memory is not in the mutant's table.
func showSplitWrite(t *testing.T, h *apiHarness) (bool, string) {
	retry, stale := takeOver(t, h, "split", "ref-split")
	wantNew(t, retry)
	wantStatus(t, stale, http.StatusConflict) // both APIs report the stale attempt as superseded
	n := h.count("alice", ordersPath, "ref-split")
	return n > 1, fmt.Sprintf("%d records after a takeover and a fenced completion", n)
}

// issueMutants are the eighteen mutants of issue 2, in its order, then the four of the shaped
// reference API, with the stores where each must be caught and where it is only reported.
var issueMutants = []struct {
	name     string
	stores   []string
	reported []string
}{
	{"race", AllStores, nil},
	{"loser-500", AllStores, nil},
	{"no-fingerprint", AllStores, nil},
	{"raw-fingerprint", AllStores, nil},
	{"path-blind", AllStores, nil},
	{"unscoped", AllStores, nil},
	{"replay-without-auth", AllStores, nil},
	{"replay-reexecutes", AllStores, nil},
	{"lost-write", AllStores, nil},
	{"short-retention", AllStores, nil},
	{"no-expiry", AllStores, nil},
	{"early-takeover", AllStores, nil},
	{"no-error-cache", AllStores, nil},
	{"truncated-key", AllStores, nil},
	{"body-dedupe", AllStores, nil},
	{"fresh-downstream-key", []string{"sqlite", "postgres", "redis"}, nil},
	{"stuck-lock", []string{"sqlite", "postgres", "redis"}, nil},
	{"split-write", []string{"postgres"}, []string{"sqlite", "redis"}},
	{"fingerprint-ignores-field", AllStores, nil},
	{"forgets-early", AllStores, nil},
	{"stuck-after-error", AllStores, nil},
	{"error-replay-differs", AllStores, nil},
	{"publish-before-commit", []string{"sqlite", "postgres"}, nil},
	{"replay-republishes", []string{"sqlite", "postgres"}, nil},
	{"dual-write", []string{"sqlite", "postgres"}, nil},
	{"relay-new-id", []string{"sqlite", "postgres"}, nil},
	{"relay-marks-on-error", []string{"sqlite", "postgres"}, nil},
	{"error-record-after-answer", AllStores, nil},
	{"raw-store-key", []string{"sqlite", "postgres", "redis"}, nil},
	// Issue 42.
	{"relay-gives-up", []string{"sqlite", "postgres"}, nil},
	// issue 39: the asynchronous mode's.
	{"async-retry-new-job", []string{"sqlite", "postgres"}, nil},
	{"async-new-reference", []string{"sqlite", "postgres"}, nil},
	{"async-lost-on-crash", []string{"sqlite", "postgres"}, nil},
}

func TestMutantsTable(t *testing.T) {
	if len(Mutants) != len(issueMutants) {
		t.Fatalf("Mutants has %d entries, want the %d of the issues", len(Mutants), len(issueMutants))
	}
	for i, want := range issueMutants {
		got := Mutants[i]
		if string(got.Name) != want.name {
			t.Fatalf("Mutants[%d] = %q, want %q (the issue's order)", i, got.Name, want.name)
		}
		if !slices.Equal(got.Stores, want.stores) || !slices.Equal(got.Reported, want.reported) {
			t.Errorf("%s: stores %v reported %v, want %v and %v", got.Name, got.Stores, got.Reported, want.stores, want.reported)
		}
		if got.Bug == "" || got.CaughtBy == "" {
			t.Errorf("%s: empty bug or caught-by: %+v", got.Name, got)
		}
		if info, ok := got.Name.Info(); !ok || info.Name != got.Name {
			t.Errorf("%s.Info() = %+v, %v", got.Name, info, ok)
		}
		for _, s := range AllStores {
			if got.AppliesTo(s) != slices.Contains(want.stores, s) {
				t.Errorf("%s.AppliesTo(%s) = %v", got.Name, s, got.AppliesTo(s))
			}
		}
	}
	if _, ok := MutantNone.Info(); ok {
		t.Error(`Mutant("").Info() found a row`)
	}
}

func TestParseMutant(t *testing.T) {
	for _, want := range issueMutants {
		m, err := ParseMutant(want.name)
		if err != nil || string(m) != want.name {
			t.Errorf("ParseMutant(%q) = %q, %v", want.name, m, err)
		}
	}
	for _, name := range []string{"", "none"} {
		if m, err := ParseMutant(name); err != nil || m != MutantNone {
			t.Errorf("ParseMutant(%q) = %q, %v; want the correct API", name, m, err)
		}
	}
	for _, name := range []string{"Race", "race ", " race", "loser_500", "split", "unknown", "None", "mutant"} {
		m, err := ParseMutant(name)
		if err == nil {
			t.Errorf("ParseMutant(%q) = %q, want an error", name, m)
			continue
		}
		if !strings.Contains(err.Error(), "split-write") || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("ParseMutant(%q) error %q should name the input and list the known mutants", name, err)
		}
	}
}
