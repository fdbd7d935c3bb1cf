package reference

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// showRelayGivesUp: an order committed while the broker is away, the relay failing for longer
// than giveUpAfter, then the broker back: the relay-gives-up mutant abandoned the event.
func showRelayGivesUp(t *testing.T, h *apiHarness) (bool, string) {
	wantNew(t, h.post(ordersPath, "alice", "gu", orderJSON("ref-gu", 1250, "EUR")))
	h.events.fail(true)
	for range 3 { // failed publications over more than giveUpAfter
		_, _ = h.relayEvents()
		h.clock.Advance(giveUpAfter / 2)
	}
	_, _ = h.relayEvents()
	h.events.fail(false)
	if _, err := h.relayEvents(); err != nil {
		t.Fatalf("relay: %v", err)
	}
	ids := h.events.idsFor("ref-gu")
	return len(ids) == 0, fmt.Sprintf("an order whose publications failed for %v, then the broker back: %v published", 2*giveUpAfter, ids)
}

// The relay-gives-up mutant keeps trying an event that fails for less than giveUpAfter, and
// publishes it once the broker is back.
func TestRelayGivesUpOnlyAfterItsDelay(t *testing.T) {
	h := newAPIHarness(t, "memory", apiOpts{events: true, mutant: MutantRelayGivesUp})
	wantNew(t, h.post(ordersPath, "alice", "gu-short", orderJSON("ref-gu-short", 1250, "EUR")))
	h.events.fail(true)
	_, _ = h.relayEvents()
	h.clock.Advance(giveUpAfter - time.Millisecond)
	if _, err := h.relayEvents(); err == nil {
		t.Fatal("a publication to a broker away succeeded")
	}
	h.events.fail(false)
	if _, err := h.relayEvents(); err != nil {
		t.Fatalf("relay: %v", err)
	}
	if ids := h.events.idsFor("ref-gu-short"); len(ids) != 1 {
		t.Errorf("an event that failed for less than %v: published %v, want once", giveUpAfter, ids)
	}
}

// The publish-before-commit mutant fails an order whose publication failed (nothing is done, the
// key is released) although the broker took the event, and its retry publishes again under a
// new id: the second id of event-under-broker-outage's lost confirm.
func TestPublishBeforeCommitFailsWithItsPublication(t *testing.T) {
	h := newAPIHarness(t, "memory", apiOpts{events: true, mutant: MutantPublishBeforeCommit})
	h.events.loseConfirms(true)
	first := h.post(ordersPath, "alice", "pbc-lost", orderJSON("ref-pbc-lost", 1250, "EUR"))
	wantStatus(t, first, http.StatusServiceUnavailable)
	h.events.loseConfirms(false)
	wantNew(t, h.post(ordersPath, "alice", "pbc-lost", orderJSON("ref-pbc-lost", 1250, "EUR")))
	if ids := h.events.idsFor("ref-pbc-lost"); len(ids) != 2 || ids[0] == ids[1] {
		t.Errorf("a lost confirm, then the retry: ids %v, want two", ids)
	}
	if n := h.count("alice", ordersPath, "ref-pbc-lost"); n != 1 {
		t.Errorf("%d orders, want 1", n)
	}
}
