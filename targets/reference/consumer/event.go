package consumer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Event is the JSON body of a delivery, as the harness sends it to the reference consumer:
// {"id":"evt_…","type":"object.updated","object":"obj_…","version":3,"created":"RFC 3339",
// "data":{…}}. The id, the object and the version are required; the id identifies the
// event across redeliveries, and the version orders the object's states. An event may name
// the business operation it applies (data.operation, or the header Config.OperationHeader
// names) or the several it applies (data.operations, a list of strings): the consumer then
// deduplicates on each operation, not on the event id.
type Event struct {
	ID      string          `json:"id"`
	Type    string          `json:"type,omitempty"`
	Object  string          `json:"object"`
	Version int64           `json:"version"`
	Created time.Time       `json:"created,omitzero"`
	Data    json.RawMessage `json:"data,omitempty"`

	delay       time.Duration // the slow hook's delay for this handling
	fail        string        // the delivery's FailHeader ("" = none)
	redelivered bool          // the transport flagged the delivery as a redelivery
	ops         []string      // the operations the event names (none: it names none)
	op          string        // the operation one handling applies: one of ops, or the event id
	opKey       string        // the dedupe key of op ("" when the event names no operation)
}

// eventData is what the consumer reads of an event's data: the operations it names.
type eventData struct {
	Operation  string   `json:"operation"`
	Operations []string `json:"operations"`
}

// Delivery is one delivery of an event, whatever carried it.
type Delivery struct {
	// ID is the event id given by the transport (a queue's message-id); "" = the body's id.
	ID string
	// Body is the raw message body: an Event.
	Body []byte
	// Delay is the extra time the slow hook asked this handling to take (Config.Hooks).
	Delay time.Duration
	// Fail is the delivery's FailHeader (Config.Hooks): its handling fails at that point unless
	// Redelivered.
	Fail string
	// Redelivered says the transport flagged the delivery as a redelivery (a queue's flag; a
	// webhook has none).
	Redelivered bool
	// Operation is the operation the delivery's header names (Config.OperationHeader); "" = the
	// body's data.operation, if any.
	Operation string
}

// parseEvent validates a delivery's body and returns its event, whose ID is the delivery's
// id when it has one.
func parseEvent(d Delivery) (Event, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(d.Body, &raw); err != nil || raw == nil {
		return Event{}, errors.New("body is not a JSON object")
	}
	var ev Event
	if err := json.Unmarshal(d.Body, &ev); err != nil {
		return Event{}, fmt.Errorf("body is not an event: %v", err)
	}
	if d.ID != "" {
		ev.ID = d.ID
	}
	for _, f := range []struct {
		name  string
		empty bool
	}{{"id", ev.ID == ""}, {"object", ev.Object == ""}} {
		if f.empty {
			return Event{}, fmt.Errorf("field %q must be a non-empty string", f.name)
		}
	}
	if _, ok := raw["version"]; !ok || ev.Version < 0 {
		return Event{}, errors.New(`field "version" must be a non-negative integer`)
	}
	ops, err := operationsOf(ev.Data, d.Operation)
	if err != nil {
		return Event{}, err
	}
	ev.ops = ops
	return ev, nil
}

// operationsOf returns the operations an event names: data.operations when it lists any, else
// the header's operation or data.operation; none when it names none.
func operationsOf(data json.RawMessage, header string) ([]string, error) {
	var od eventData
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) && json.Unmarshal(data, &od) != nil {
		return nil, errors.New(`field "data": "operation" must be a string and "operations" a list of strings`)
	}
	ops := slices.DeleteFunc(slices.Clone(od.Operations), func(s string) bool { return s == "" })
	switch {
	case len(ops) > 0:
		return slices.Compact(ops), nil
	case header != "":
		return []string{header}, nil
	case od.Operation != "":
		return []string{od.Operation}, nil
	}
	return nil, nil
}

// payloadKey is the payload-dedupe mutant's dedupe key: a hash of the body without its id
// (keys re-encoded in sorted order), so two events that differ only by id collide.
func payloadKey(body []byte) string {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(body, &raw) // parseEvent accepted it
	delete(raw, "id")
	canon, _ := json.Marshal(raw)
	sum := sha256.Sum256(canon)
	return "payload:" + hex.EncodeToString(sum[:])
}
