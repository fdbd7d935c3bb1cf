package reference

import (
	"context"
	"slices"
	"testing"
	"time"
)

// The outbox's part of the store contract: an event is written with its record or not at all,
// pending until marked sent, oldest first, and pruned once sent and older than the cut-off.

// scEvent is the event of a record, created at its time.
func scEvent(id string, rec *Record) *OutboxEvent {
	return &OutboxEvent{ID: id, Type: EventOrderCreated, Tenant: rec.Tenant, RecordID: rec.ID, Ref: rec.Ref,
		Data: []byte(`{"id":"` + rec.ID + `"}`), Created: rec.Created}
}

// scPending returns the ids of the pending events, failing the test on an error.
func scPending(t *testing.T, s Store, n int) []string {
	t.Helper()
	evs, err := s.PendingEvents(context.Background(), n)
	if err != nil {
		t.Fatalf("PendingEvents: %v", err)
	}
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.ID)
	}
	return ids
}

func scWantPending(t *testing.T, s Store, want ...string) {
	t.Helper()
	if got := scPending(t, s, 100); !slices.Equal(got, want) {
		t.Fatalf("pending events %v, want %v", got, want)
	}
}

func scOutboxWithRecord(t *testing.T, s Store) {
	res := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	rec := scRecord("ord_1", "ref", scAt(time.Second))
	c := scCompletion("k", res.Token, scAt(time.Second), rec, `{"id":"ord_1"}`)
	c.Event = scEvent("evt_1", rec)
	scComplete(t, s, c, true)
	evs, err := s.PendingEvents(context.Background(), 10)
	if err != nil || len(evs) != 1 {
		t.Fatalf("PendingEvents = %v, %v", evs, err)
	}
	if e := evs[0]; e.ID != "evt_1" || e.Type != EventOrderCreated || e.Tenant != rec.Tenant || e.RecordID != "ord_1" ||
		e.Ref != "ref" || string(e.Data) != `{"id":"ord_1"}` || !e.Created.Equal(rec.Created) {
		t.Fatalf("event = %+v", e)
	}
	// A fenced completion writes neither its record nor its event; an error result none.
	fenced := scCompletion("k", res.Token, scAt(2*time.Second), scRecord("ord_2", "ref", scAt(0)), "x")
	fenced.Event = scEvent("evt_2", fenced.Record)
	scComplete(t, s, fenced, false)
	res = scClaim(t, s, scReq("e", "fp", scAt(0)), Claimed)
	failed := scCompletion("e", res.Token, scAt(time.Second), nil, `{"error":"downstream"}`)
	failed.Event = &OutboxEvent{ID: "evt_3", Created: scAt(time.Second)}
	failed.Response.Status = 502
	scComplete(t, s, failed, true)
	scWantPending(t, s, "evt_1")
}

func scOutboxMarkSent(t *testing.T, s Store) {
	ctx := context.Background()
	for i, id := range []string{"evt_b", "evt_a", "evt_c"} { // created in this order
		rec := scRecord("ord_"+id, "ref", scAt(time.Duration(i)*time.Second))
		if err := s.AddEvent(ctx, *scEvent(id, rec)); err != nil {
			t.Fatalf("AddEvent: %v", err)
		}
	}
	scWantPending(t, s, "evt_b", "evt_a", "evt_c")
	if got := scPending(t, s, 2); !slices.Equal(got, []string{"evt_b", "evt_a"}) {
		t.Fatalf("the first 2 pending: %v", got)
	}
	for _, id := range []string{"evt_a", "evt_a", "evt_none"} {
		if err := s.MarkEventSent(ctx, id, scAt(time.Minute)); err != nil {
			t.Fatalf("MarkEventSent(%s): %v", id, err)
		}
	}
	scWantPending(t, s, "evt_b", "evt_c")
}

func scOutboxSplitForceAdd(t *testing.T, s Store) {
	res := scClaim(t, s, scReq("k", "fp", scAt(0)), Claimed)
	split := scCompletion("k", res.Token, scAt(time.Second), scRecord("r1", "ref", scAt(time.Second)), "split")
	split.Split, split.Event = true, scEvent("evt_split", split.Record)
	scComplete(t, s, split, true)
	forced := scCompletion("f", 0, scAt(2*time.Second), scRecord("r2", "ref", scAt(2*time.Second)), "forced")
	forced.Force, forced.Event = true, scEvent("evt_force", forced.Record)
	scComplete(t, s, forced, true)
	scWantPending(t, s, "evt_split", "evt_force")
}

func scOutboxPrune(t *testing.T, s Store) {
	ctx := context.Background()
	for i, id := range []string{"evt_old_sent", "evt_old_pending", "evt_new_sent"} {
		rec := scRecord("ord_"+id, "ref", scAt(time.Duration(i)*time.Hour))
		if err := s.AddEvent(ctx, *scEvent(id, rec)); err != nil {
			t.Fatalf("AddEvent: %v", err)
		}
	}
	for _, id := range []string{"evt_old_sent", "evt_new_sent"} {
		if err := s.MarkEventSent(ctx, id, scAt(3*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Prune(ctx, scAt(90*time.Minute)); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	scWantPending(t, s, "evt_old_pending") // a pending event is never pruned
	// The pruned event is gone: marking it sent again does nothing, and it never comes back.
	if err := s.MarkEventSent(ctx, "evt_old_sent", scAt(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	scWantPending(t, s, "evt_old_pending")
}
