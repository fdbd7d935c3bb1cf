package consumer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/suites/check"
	"github.com/retrysafe/retrysafe/suites/framework"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/broker"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/retrysafe/retrysafe/targets/httpclient"
)

// Event is one event a consumer property delivers: its id, the object it is about and the
// object's version, fixed at creation, so every delivery of it carries the same bytes. Every
// delivery goes into the run's history as an attempt of the consumer (Op), keyed by the event id.
type Event struct {
	s *S
	// C is the consumer it is delivered to.
	C *targets.Consumer
	// ID, Object and Version say which event it is; Time is its creation time.
	ID, Object string
	Version    int
	Time       time.Time
	// Ref is the run's ref of the event (in {{.Ref}}).
	Ref string
	// Operation is the business operation the event applies ({{.Operation}}: a new one per
	// event, unless made by SameOperation); "" when it names several.
	Operation string
	// Operations are every operation it applies ({{.Operations}}): its one, or the several
	// made by ManyOperations.
	Operations []string
}

// NewEvent returns a fresh event (a new id) about a fresh object, at version 1.
func (s *S) NewEvent(c *targets.Consumer) *Event {
	ev := s.newEvent(c)
	s.NoteKey(ev.ID)
	return ev
}

// newEvent is NewEvent without a note in the spec's evidence (for loads of hundreds).
func (s *S) newEvent(c *targets.Consumer) *Event {
	n := s.Next()
	ev := &Event{s: s, C: c, ID: eventID(s.Env, n), Ref: s.Ref(n), Object: fmt.Sprintf("obj_%s_%04d", s.Settings.RunID, n),
		Version: 1, Time: time.Now().UTC()}
	ev.setOperation(operationID(s.Env, n))
	return ev
}

// eventID is the run's n-th event id, from the run's key prefix (--key reproduces them).
func eventID(e *Env, n int64) string { return fmt.Sprintf("evt_%s_%04d", e.Settings.KeyPrefix, n) }

// operationID is the run's n-th business operation, from the run's key prefix.
func operationID(e *Env, n int64) string { return fmt.Sprintf("op_%s_%04d", e.Settings.KeyPrefix, n) }

// setOperation makes op the one operation the event applies.
func (ev *Event) setOperation(op string) { ev.Operation, ev.Operations = op, []string{op} }

// Next returns the object's next event: a new id (and a new operation), the version after ev's.
func (ev *Event) Next() *Event {
	n := ev.s.Next()
	next := *ev
	next.ID, next.Version, next.Time = eventID(ev.s.Env, n), ev.Version+1, ev.Time.Add(time.Second)
	next.setOperation(operationID(ev.s.Env, n))
	ev.s.NoteKey(next.ID)
	return &next
}

// Twin returns an event with another id and otherwise the same content (object, version, time):
// two events, not one delivered twice. Where events name their business operation, the twin
// names its own (two events are two operations; SameOperation makes two messages of one).
func (ev *Event) Twin() *Event {
	n := ev.s.Next()
	twin := *ev
	twin.ID = eventID(ev.s.Env, n)
	twin.setOperation(operationID(ev.s.Env, n))
	ev.s.NoteKey(twin.ID)
	return &twin
}

// SameOperation returns another message of ev's business operation: another event id and
// otherwise the same content (the operation, object, version, time), as a relay that lost its
// state publishes it again, or a person replays it under a new id.
func (ev *Event) SameOperation() *Event {
	again := *ev
	again.ID = eventID(ev.s.Env, ev.s.Next())
	ev.s.NoteKey(again.ID)
	return &again
}

// ManyOperations returns a fresh event naming k new business operations ({{.Operations}};
// {{.Operation}} is "").
func (s *S) ManyOperations(c *targets.Consumer, k int) *Event {
	ev := s.NewEvent(c)
	ev.Operation, ev.Operations = "", make([]string, k)
	for i := range k {
		ev.Operations[i] = operationID(s.Env, s.Next())
	}
	return ev
}

// NamingAgain returns a fresh event (a new id, the object's next version) naming op, one of
// the operations ev named.
func (ev *Event) NamingAgain(op string) *Event {
	next := ev.Next()
	next.setOperation(op)
	return next
}

// vars are the event's template values.
func (ev *Event) vars() targets.EventVars {
	return targets.EventVars{EventID: ev.ID, Object: ev.Object, Version: strconv.Itoa(ev.Version),
		Time: ev.Time.Format(time.RFC3339), Type: ev.C.Event.Type, Ref: ev.Ref, Operation: ev.Operation, Operations: ev.Operations}
}

// Body renders the event's body.
func (ev *Event) Body() ([]byte, error) { return ev.C.RenderEvent(ev.vars()) }

// Signature says how a webhook delivery is signed.
type Signature int

// The signatures of a delivery.
const (
	// SignValid signs the delivery as the consumer expects.
	SignValid Signature = iota
	// SignNone sends no signature.
	SignNone
	// SignWrong signs with another secret.
	SignWrong
	// SignStale signs validly with a timestamp outside the tolerance.
	SignStale
	// SignTampered signs the body, then sends another body.
	SignTampered
	// SignFuture signs validly with a timestamp beyond the tolerance in the future.
	SignFuture
)

// Delivery says how one event is delivered.
type Delivery struct {
	// Instance picks the instance of a webhook (index modulo their number; -1 = random).
	Instance int
	// Via delivers to this instance instead (e.g. one seen through a fault proxy).
	Via *targets.Instance
	// Signature says how it is signed (webhooks).
	Signature Signature
	// Timeout bounds the delivery (0: the attempt timeout).
	Timeout time.Duration
	// SlowMs, when positive, asks the consumer's slow hook for a handling of that many
	// milliseconds (the consumer must declare hooks.slow).
	SlowMs int64
	// Reencode sends the same content in another byte layout (JSON members reordered, other
	// whitespace): a redelivery as an outbox relay or a provider that re-serialises it sends.
	Reencode bool
	// Fail, when set, is a fail_next hook of message headers that this delivery carries: the
	// event's first delivery, which the consumer fails (its redeliveries carry no such header;
	// the broker's own carry it flagged as redeliveries).
	Fail *targets.FailHook
}

// Deliver delivers the event once, as a provider does (a webhook POST, or a publish on the
// consumer's broker), and returns the attempt as recorded.
func (ev *Event) Deliver(d Delivery) history.Attempt {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = ev.s.Settings.AttemptTimeout
	}
	ctx, cancel := context.WithTimeout(ev.s.Ctx(), timeout)
	defer cancel()
	body, err := ev.Body()
	if err == nil && d.Reencode {
		body, err = targets.Reformat(body, targets.BodyJSON)
	}
	if err != nil {
		return ev.failed(err)
	}
	if ev.C.IsQueue() {
		return ev.publish(ctx, d, body)
	}
	req, meta, err := ev.request(ctx, d, body)
	if err != nil {
		return ev.failed(err)
	}
	return ev.s.Client.Do(ctx, req, meta)
}

// request builds a webhook delivery.
func (ev *Event) request(ctx context.Context, d Delivery, body []byte) (*http.Request, httpclient.Meta, error) {
	s, c := ev.s, ev.C
	ins := s.Instance(d.Instance)
	if d.Via != nil {
		ins = d.Via
	}
	req, err := c.Request(ctx, ins, ev.vars(), body)
	if err != nil {
		return nil, httpclient.Meta{}, err
	}
	hooked, err := ev.hookHeaders(d)
	if err != nil {
		return nil, httpclient.Meta{}, err
	}
	for name, v := range hooked {
		req.Header.Set(name, v)
	}
	signer := s.Faults.Signer(c)
	sent := body
	var hdr http.Header
	switch d.Signature {
	case SignValid:
		hdr, err = signer.Sign(ev.ID, time.Now(), body)
	case SignWrong:
		hdr, err = signer.SignWrong(ev.ID, time.Now(), body)
	case SignStale:
		hdr, err = signer.Sign(ev.ID, time.Now().Add(-2*signer.Tolerance()-time.Minute), body)
	case SignTampered:
		hdr, err = signer.Sign(ev.ID, time.Now(), body)
		sent = append(bytes.Clone(body), ' ')
	case SignFuture:
		hdr, err = signer.Sign(ev.ID, time.Now().Add(2*signer.Tolerance()+time.Minute), body)
	}
	if err != nil {
		return nil, httpclient.Meta{}, err
	}
	// Learned before it is sent: what the consumer prints or answers about it is redacted too.
	s.History.Redactor().LearnHeader(hdr)
	for name, vals := range hdr {
		req.Header[name] = vals
	}
	if d.Signature == SignTampered {
		framework.SetBody(req, sent)
	}
	return req, httpclient.Meta{Op: c.Name, Key: ev.ID, Instance: ins.URL.Host, Note: d.note()}, nil
}

// note says how a delivery differs from an ordinary one.
func (d Delivery) note() string {
	var parts []string
	switch d.Signature {
	case SignNone:
		parts = append(parts, "unsigned delivery")
	case SignWrong:
		parts = append(parts, "delivery signed with another secret")
	case SignStale:
		parts = append(parts, "delivery signed with a timestamp outside the tolerance")
	case SignTampered:
		parts = append(parts, "signed delivery whose body was changed after signing")
	case SignFuture:
		parts = append(parts, "delivery signed with a timestamp beyond the tolerance in the future")
	}
	if d.Reencode {
		parts = append(parts, "re-encoded (same content, other bytes)")
	}
	if d.SlowMs > 0 {
		parts = append(parts, fmt.Sprintf("slowed to %d ms by the slow hook", d.SlowMs))
	}
	if d.Fail != nil {
		parts = append(parts, "carrying the fail_next hook's headers"+strings.TrimSuffix(" at "+d.Fail.When, " at "))
	}
	return strings.Join(parts, "; ")
}

// hookHeaders are the headers the hooks add to a delivery: the slow hook's for a delivery that
// asks for it (none when the slow hook is an environment: the consumer runs with it), the
// fail_next hook's message headers for the first delivery.
func (ev *Event) hookHeaders(d Delivery) (map[string]string, error) {
	out := map[string]string{}
	if d.SlowMs > 0 {
		if !ev.C.Hooks.CanSlow() {
			return nil, fmt.Errorf("consumer %s declares no hooks.slow", ev.C.Name)
		}
		slow, err := ev.C.SlowHeaders(ev.vars(), d.SlowMs)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, slow)
	}
	if d.Fail != nil {
		fail, err := ev.C.FailHeaders(d.Fail, ev.vars())
		if err != nil {
			return nil, err
		}
		maps.Copy(out, fail)
	}
	return out, nil
}

// publish publishes the event on the consumer's broker and records it: ok once the broker
// confirmed it, failed when it certainly did not take it, unknown otherwise. The message id is
// the event id when the event id travels in it; otherwise a new one per publication, so that
// the broker's own deduplication (JetStream's duplicates window) never drops a redelivery.
func (ev *Event) publish(ctx context.Context, d Delivery, body []byte) history.Attempt {
	m := broker.Message{ID: ev.ID, Body: body}
	a := history.Attempt{Op: ev.C.Name, Key: ev.ID, Method: "PUBLISH", URL: ev.C.Destination(), ReqBody: body, Start: time.Now(), Note: d.note()}
	if ev.C.Event.ID.In != targets.IDInTransport {
		m.ID = fmt.Sprintf("%s-pub%d", ev.ID, ev.s.Next())
	}
	headers, err := ev.C.MessageHeaders(ev.vars())
	if err == nil {
		var hooked map[string]string
		hooked, err = ev.hookHeaders(d)
		maps.Copy(headers, hooked)
	}
	if err != nil {
		return ev.failed(err)
	}
	m.Headers = headers
	if len(headers) > 0 {
		a.ReqHeader = http.Header{}
		for name, v := range headers {
			a.ReqHeader.Set(name, v)
		}
	}
	rc, err := ev.s.Faults.Publisher(ev.C).Publish(ctx, m)
	a.End = time.Now()
	switch {
	case err == nil:
		a.Outcome = history.OK
		note := "published as message " + m.ID + ": the broker confirmed it"
		if rc.Duplicate {
			note = "published as message " + m.ID + ": the broker dropped it as a duplicate of its own window (it will not reach the consumer)"
		}
		a.Note = strings.Trim(a.Note+"; "+note, "; ")
	case errors.Is(err, broker.ErrNotPublished):
		a.Outcome, a.Err = history.Failed, err.Error()
	default:
		a.Outcome, a.Err = history.Unknown, err.Error()
	}
	return ev.s.History.Add(a)
}

// failed records a delivery that could not be made.
func (ev *Event) failed(err error) history.Attempt {
	now := time.Now()
	return ev.s.History.Add(history.Attempt{Op: ev.C.Name, Key: ev.ID, Start: now, End: now, Outcome: history.Failed,
		Err: "build the delivery: " + err.Error()})
}

// Effects counts the effects the event left, through the consumer's effects observer.
func (ev *Event) Effects() check.Count {
	c := check.Count{Op: ev.C.Name, Ref: ev.ID, Key: ev.ID, Taken: true}
	name := fmt.Sprintf("effects(%s, event %s)", ev.C.Name, ev.ID)
	if c.N, c.Err = ev.observeNoted(ev.C.Effects, "effects", name); c.Err != "" {
		ev.s.Notef("%s: %s", name, c.Err)
	}
	return c
}

// OperationEffects counts the effects of one business operation the event names, through the
// effects observer asked with {{.Operation}} = op.
func (ev *Event) OperationEffects(op string) check.Count {
	c := check.Count{Op: ev.C.Name, Ref: op, Key: ev.ID, Taken: true}
	name := fmt.Sprintf("effects(%s, operation %s)", ev.C.Name, op)
	if c.N, c.Err = ev.asking(op).observeNoted(ev.C.Effects, "effects", name); c.Err != "" {
		ev.s.Notef("%s: %s", name, c.Err)
	}
	return c
}

// operationEffects counts the effects of one business operation, without a note in the
// evidence (a wait asks again and again).
func (ev *Event) operationEffects(op string) (int, error) {
	return ev.asking(op).observe(ev.C.Effects, "effects")
}

// asking is the event as its observers are asked about op, one of the operations it names
// ({{.Operation}} = op).
func (ev *Event) asking(op string) *Event {
	o := *ev
	o.Operation = op
	return &o
}

// State reads the version the consumer stored for the event's object (not taken without a
// state observer).
func (ev *Event) State() check.Count {
	c := check.Count{Op: ev.C.Name, Ref: ev.Object, Key: ev.ID}
	if ev.C.State == nil {
		return c
	}
	c.Taken = true
	c.N, c.Err = ev.observeNoted(ev.C.State, "state", fmt.Sprintf("state(%s, object %s)", ev.C.Name, ev.Object))
	return c
}

// observeNoted asks a consumer's observer about the event and notes the count as name in the
// evidence; the error comes back redacted.
func (ev *Event) observeNoted(obs *targets.Observer, what, name string) (int, string) {
	n, err := ev.observe(obs, what)
	if err != nil {
		return n, ev.s.History.Redactor().String(err.Error())
	}
	ev.s.NoteCount(name, n)
	return n, ""
}

// observe asks a consumer's observer (what: "effects", "state") about the event, without a note
// in the evidence (a load asks about hundreds).
func (ev *Event) observe(obs *targets.Observer, what string) (int, error) {
	ctx, cancel := ev.s.AttemptCtx(2)
	defer cancel()
	return ev.s.Target.Observe(ctx, obs, ev.vars(), ev.s.Observer, "consumer "+ev.C.Name+" "+what)
}

// redeliver delivers a webhook event again and again, as a provider redelivers what was not
// acknowledged, every retryInterval over the instances from instance from on, until a delivery
// is acknowledged (a 2xx) or d has passed. It stops early at an answer that is neither a 2xx,
// the in-flight status nor 429 (the checker judges it); a delivery without an answer is
// redelivered.
func (ev *Event) redeliver(d time.Duration, from int) check.Eventually {
	s := ev.s
	out := check.Eventually{Within: d}
	deadline := time.Now().Add(d)
	defer s.Waiting(fmt.Sprintf("a redelivery of event %s to be acknowledged (the redelivery clock allows %s)", ev.ID, framework.Seconds(d)), deadline)()
	for i := from; s.Ctx().Err() == nil; i++ {
		a := ev.Deliver(Delivery{Instance: i})
		out.Attempts = append(out.Attempts, a)
		switch {
		case a.Outcome != history.OK: // the consumer may be restarting: keep trying
		case framework.Succeeded(a):
			return out
		case !check.InFlight(a.Status) && a.Status != http.StatusTooManyRequests:
			return out
		}
		if time.Now().After(deadline) || !s.SleepUntil(time.Now().Add(framework.RetryInterval)) {
			return out
		}
	}
	return out
}
