package consumer

import (
	"context"
	"testing"
)

// The correct consumer deduplicates on the business operation where an event names one, on
// the event id otherwise, on every store: two messages of one operation apply it once; one
// message of several applies each once, its redelivery none, and a later message naming one of
// them nothing; the downstream is called once per operation, keyed by it.
func TestOperationsAppliedOncePerOperation(t *testing.T) {
	for _, store := range AllStores {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, newBackend(t, store), rigOpts{})
			steps := []struct {
				body   []byte
				status string
			}{
				{opEvent("evt_a", "obj_1", 1, "pay_1"), "processed"},
				{opEvent("evt_b", "obj_1", 1, "pay_1"), "duplicate"}, // another message, the same operation
				{opEvent("evt_c", "obj_2", 1, "item_1", "item_2", "item_3"), "processed"},
				{opEvent("evt_c", "obj_2", 1, "item_1", "item_2", "item_3"), "duplicate"}, // its redelivery
				{opEvent("evt_d", "obj_2", 2, "item_2"), "duplicate"},                     // one of them again
				{event("evt_e", "obj_3", 1), "processed"},                                 // no operation: its id
				{event("evt_e", "obj_3", 1), "duplicate"},
			}
			for i, s := range steps {
				if a := r.deliver(s.body); a.status != 200 || a.str("status") != s.status {
					t.Fatalf("step %d: %d %s, want 200 %s (%s)", i, a.status, a.str("status"), s.status, s.body)
				}
			}
			for op, want := range map[string]int{"pay_1": 1, "item_1": 1, "item_2": 1, "item_3": 1, "evt_e": 1} {
				if n := r.opEffects(op); n != want {
					t.Errorf("operation %s took effect %d times, want %d", op, n, want)
				}
			}
			if n, m := r.effects("evt_a"), r.effects("evt_b"); n != 1 || m != 0 {
				t.Errorf("effects of the two messages of pay_1 = %d, %d; want 1, 0", n, m)
			}
			keys := map[string]int{}
			for _, c := range r.sink.Calls() {
				keys[c.Key]++
			}
			if keys["op:pay_1"] != 1 || keys["op:item_2"] != 1 || keys["evt_e"] != 1 {
				t.Errorf("downstream keys = %v, want each operation's once (op:NAME) and the event id of one that names none", keys)
			}
		})
	}
}

// The operation may travel in a header (Config.OperationHeader) instead of the body; a list in
// the body is never overridden by it.
func TestOperationFromAHeader(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	c, err := New(Config{Store: store, WorkDelay: -1, OperationHeader: "X-Operation"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []Delivery{
		{ID: "msg_1", Body: event("evt_1", "obj_1", 1), Operation: "pay_h"},
		{ID: "msg_2", Body: event("evt_2", "obj_1", 1), Operation: "pay_h"},
		{ID: "msg_3", Body: opEvent("evt_3", "obj_2", 1, "item_1", "item_2"), Operation: "pay_h"},
	} {
		if o := c.Deliver(ctx, d); !o.Ack() {
			t.Fatalf("Deliver(%s) = %+v", d.ID, o)
		}
	}
	for op, want := range map[string]int{"pay_h": 1, "item_1": 1, "item_2": 1} {
		if list, _ := store.Effects(ctx, EffectFilter{Operation: op}); len(list) != want {
			t.Errorf("effects of %s = %+v, want %d", op, list, want)
		}
	}
	if o := c.Deliver(ctx, Delivery{ID: "msg_4", Body: []byte(`{"object":"o","version":1,"data":{"operations":[1]}}`)}); o.Kind != Rejected {
		t.Errorf("an operations list of numbers = %+v, want rejected", o)
	}
}
