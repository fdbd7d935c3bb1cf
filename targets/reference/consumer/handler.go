package consumer

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"
)

// routes is the consumer's HTTP contract.
func (c *Consumer) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhooks", c.receive)
	mux.HandleFunc("GET /v1/effects", c.effects)
	mux.HandleFunc("GET /v1/objects/{id}", c.object)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	if c.cfg.Hooks {
		mux.HandleFunc("POST /_test/fail", c.failNext)
		mux.HandleFunc("DELETE /_test/fail", c.disarmAll)
	}
	return mux
}

// receive answers POST /webhooks: verify, then Deliver, then say what became of it.
func (c *Consumer) receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		writeProblem(w, http.StatusBadRequest, "cannot read body: "+err.Error())
		return
	}
	if err := c.verify(r.Header, body); err != nil {
		writeProblem(w, http.StatusUnauthorized, err.Error())
		return
	}
	id, err := c.webhookID(r.Header)
	if err != nil {
		writeProblem(w, http.StatusBadRequest, err.Error())
		return
	}
	delay, err := c.delayOf(r.Header.Get)
	if err != nil {
		writeProblem(w, http.StatusBadRequest, err.Error())
		return
	}
	d := Delivery{ID: id, Body: body, Delay: delay, Operation: c.operationHeader(r.Header.Get)}
	if c.hooks.on {
		d.Fail = r.Header.Get(FailHeader) // a webhook has no redelivery flag: the harness sends it first only
	}
	writeOutcome(w, c.Deliver(r.Context(), d))
}

// verify checks the delivery's signature, or what a mutant makes of that check.
func (c *Consumer) verify(h http.Header, body []byte) error {
	switch {
	case !c.signer.Signs() || c.cfg.Mutant == MutantNoSignatureCheck:
		return nil
	case c.cfg.Mutant == MutantStaleTimestampAccepted:
		return c.signer.VerifyIgnoringTimestamp(h, body)
	case c.cfg.Mutant == MutantFutureTimestampAccepted:
		return c.signer.VerifyIgnoringFuture(h, body, c.cfg.Now())
	}
	return c.signer.Verify(h, body, c.cfg.Now())
}

// outcomeBody is the JSON of an acknowledged delivery.
type outcomeBody struct {
	Status string `json:"status"` // "processed" or "duplicate"
	Event  string `json:"event"`
}

// writeOutcome maps an Outcome to HTTP: 200 for acknowledged deliveries, 409 (Retry-After)
// while another delivery holds the event, 502 when the downstream failed, 500 when the
// fail_next hook failed the handling, 503 when the store failed, 400 for a body that is no
// event.
func writeOutcome(w http.ResponseWriter, o Outcome) {
	switch o.Kind {
	case Processed, Duplicate:
		writeJSON(w, http.StatusOK, outcomeBody{Status: o.Kind.String(), Event: o.Event})
	case InFlight:
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusConflict, o.Text)
	case Failed:
		status := http.StatusServiceUnavailable
		switch {
		case errors.Is(o.Err, ErrDownstream):
			status = http.StatusBadGateway
		case errors.Is(o.Err, errHookFailure):
			status = http.StatusInternalServerError
		}
		writeProblem(w, status, o.Text)
	default:
		writeProblem(w, http.StatusBadRequest, o.Text)
	}
}

// effectBody is one effect as GET /v1/effects lists it.
type effectBody struct {
	Event     string    `json:"event"`
	Object    string    `json:"object"`
	Version   int64     `json:"version"`
	Created   time.Time `json:"created"`
	Operation string    `json:"operation"`
}

// effects answers GET /v1/effects?event=ID, ?operation=ID and/or ?object=ID: the observer that
// counts effects (an event's, an operation's: the one an event named, or the event's own id
// when it named none).
func (c *Consumer) effects(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := EffectFilter{Event: q.Get("event"), Object: q.Get("object"), Operation: q.Get("operation")}
	if f.Event == "" && f.Object == "" && f.Operation == "" {
		writeProblem(w, http.StatusBadRequest, "query parameter event, operation or object is required")
		return
	}
	list, err := c.cfg.Store.Effects(r.Context(), f)
	if err != nil {
		c.cfg.Logger.Printf("effects: %v", err)
		writeProblem(w, http.StatusServiceUnavailable, "store error")
		return
	}
	items := make([]effectBody, len(list))
	for i, e := range list {
		items[i] = effectBody(e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": len(items), "items": items})
}

// object answers GET /v1/objects/{id}: the object's version (0 when unknown).
func (c *Consumer) object(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v, err := c.cfg.Store.ObjectVersion(r.Context(), id)
	if err != nil {
		c.cfg.Logger.Printf("object %s: %v", id, err)
		writeProblem(w, http.StatusServiceUnavailable, "store error")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": id, "version": v})
}

// writeJSON writes a JSON value.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// writeProblem writes an RFC 9457 problem response.
func writeProblem(w http.ResponseWriter, status int, detail string) {
	body, _ := json.Marshal(map[string]any{
		"type": "about:blank", "title": http.StatusText(status), "status": status, "detail": detail,
	})
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	w.Write(body)
}
