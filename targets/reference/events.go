package reference

import (
	"context"
	"encoding/json"
)

// How the API's handlers publish: a new order's event goes into the outbox with the order (in
// one transaction, Completion.Event) and the relay publishes it after the commit. The mutants of
// this file publish otherwise.

// eventOf is the event a completion writes with its record: an order.created for a new order
// when the API publishes events, with the order as its answer shows it; nil otherwise (and for
// the mutants that publish before or after the commit, which write none).
func (a *API) eventOf(rec *Record, resp Response) *OutboxEvent {
	if a.relay == nil || rec == nil || rec.Kind != "orders" || a.cfg.Mutant == MutantPublishBeforeCommit || a.cfg.Mutant == MutantDualWrite {
		return nil
	}
	e := newEvent(*rec, resp.Body)
	return &e
}

// wakeRelay makes the relay look for the event a commit just wrote.
func (a *API) wakeRelay(committed bool) {
	if a.relay != nil && committed {
		a.relay.wake()
	}
}

// publishNow is the publish-before-commit mutant: the order's event is published straight to
// the broker, before the work is done and committed, not through the outbox. When the work then
// fails, the event is about an order that does not exist; when the publication fails (its
// confirm lost, the broker away) the order fails, and its retry publishes again under a new id.
func (a *API) publishNow(ctx context.Context, at attempt) error {
	data, _ := json.Marshal(orderBody{at.recordID, at.op.object, at.order.Ref, at.order.Amount, at.order.Currency})
	rec := Record{ID: at.recordID, Tenant: at.tenant, Kind: at.op.kind, Ref: at.order.Ref, Created: a.cfg.Now()}
	e := newEvent(rec, data)
	if err := a.relay.publish(ctx, e); err != nil {
		a.cfg.Logger.Printf("publish-before-commit: %v", err)
		return err
	}
	return nil
}

// publishAfterCommit is the dual-write mutant: once the order is committed, its event is
// published from the request, outside any transaction, with no outbox row to fall back on. A
// failed publication is logged and the order answered all the same; a crash before the
// publication loses the event.
func (a *API) publishAfterCommit(ctx context.Context, rec *Record, resp Response) {
	if a.cfg.Mutant != MutantDualWrite || a.relay == nil || rec == nil || rec.Kind != "orders" {
		return
	}
	if err := a.relay.publish(ctx, newEvent(*rec, resp.Body)); err != nil {
		a.cfg.Logger.Printf("dual-write: %v", err)
	}
}

// republish is the replay-republishes mutant: a replay of a created order writes the order's
// event to the outbox again, under a new id.
func (a *API) republish(ctx context.Context, at attempt, resp Response) {
	var body orderBody
	if at.op.kind != "orders" || json.Unmarshal(resp.Body, &body) != nil {
		return
	}
	rec := Record{ID: body.ID, Tenant: at.tenant, Kind: at.op.kind, Ref: body.Ref, Created: a.cfg.Now()}
	if err := a.cfg.Store.AddEvent(ctx, newEvent(rec, resp.Body)); err != nil {
		a.cfg.Logger.Printf("replay-republishes: %v", err)
		return
	}
	a.relay.wake()
}
