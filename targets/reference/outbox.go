package reference

import (
	"context"
	"encoding/json"
	"time"
)

// The reference API's events: a transactional outbox. When the API publishes events
// (Config.Events), the record of an order and its order.created event are written in one
// transaction (Completion.Event), on every store: the row in the record's SQL transaction, the
// hash in the record's Redis script, beside the record under the memory store's lock. A relay
// (relay.go) publishes pending events, at least once, under their stable id, and marks each
// sent only once the broker confirmed it.

// OutboxEvent is one event in the outbox.
type OutboxEvent struct {
	// ID is the event's id, drawn once when the record is written: every publication of the
	// event carries it, so consumers can deduplicate on it.
	ID string
	// Type is the event's type (EventOrderCreated).
	Type string
	// Tenant, RecordID and Ref say whose record it is about.
	Tenant, RecordID, Ref string
	// Data is the record as the API's answer shows it (JSON).
	Data []byte
	// Created is when the event was written.
	Created time.Time
}

// EventOrderCreated is the type of the event a new order publishes.
const EventOrderCreated = "order.created"

// Outbox is what a store keeps of the API's events besides the records (Completion.Event
// writes an event with its record).
type Outbox interface {
	// AddEvent writes an event outside any record (the replay-republishes mutant).
	AddEvent(ctx context.Context, e OutboxEvent) error
	// PendingEvents returns at most n events not marked sent, oldest first.
	PendingEvents(ctx context.Context, n int) ([]OutboxEvent, error)
	// MarkEventSent marks an event sent; marking one that is gone or already sent does nothing.
	MarkEventSent(ctx context.Context, id string, at time.Time) error
}

// envelope is an event as it is published: the outbox row, and sent_at, the time of this
// publication (it differs between two publications of one event; targets declare it in
// publishes[].ignore). Object (the record's id) and version (an order.created is its record's
// first version) are what an event consumer orders an entity's events by: the reference
// consumer reads them, so that the reference API's events reach it as they are (a chain).
type envelope struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Object  string          `json:"object"`
	Version int64           `json:"version"`
	Created string          `json:"created"`
	SentAt  string          `json:"sent_at"`
	Tenant  string          `json:"tenant"`
	Data    json.RawMessage `json:"data"`
}

// Payload renders the event as it is published at sentAt.
func (e OutboxEvent) Payload(sentAt time.Time) []byte {
	b, _ := json.Marshal(envelope{ID: e.ID, Type: e.Type, Object: e.RecordID, Version: 1, Created: e.Created.UTC().Format(time.RFC3339Nano),
		SentAt: sentAt.UTC().Format(time.RFC3339Nano), Tenant: e.Tenant, Data: e.Data})
	return b
}

// newEvent is the order.created event of a record whose answer's body is data, with a fresh id.
func newEvent(rec Record, data []byte) OutboxEvent {
	return OutboxEvent{ID: "evt_" + randomHex(12), Type: EventOrderCreated, Tenant: rec.Tenant, RecordID: rec.ID,
		Ref: rec.Ref, Data: data, Created: rec.Created}
}
