package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/theory/jsonpath"
)

// What the client reads of an error answer besides its status, as SDKs do: a should-retry
// header (Stripe-Should-Retry, x-should-retry) that decides over the status both ways, and an
// error code in the body that a status is retried on only (a 429 only when its code is
// lock_timeout). Neither is read unless configured (Config.ShouldRetryHeader, Config.RetryWhen).

// RetryWhen makes its status retried only when the answer's JSON body holds Equals at Path (a
// JSONPath naming one member, $.error.code); otherwise the status fails the operation at once.
type RetryWhen struct {
	Status int
	Path   string
	Equals string

	path *jsonpath.Path
}

// ParseRetryWhen reads STATUS:JSONPATH=VALUE ("429:$.error.code=lock_timeout").
func ParseRetryWhen(s string) (RetryWhen, error) {
	const want = "want STATUS:JSONPATH=VALUE, e.g. 429:$.error.code=lock_timeout"
	st, rest, ok := strings.Cut(s, ":")
	path, value, ok2 := strings.Cut(rest, "=")
	if !ok || !ok2 {
		return RetryWhen{}, fmt.Errorf("%q: %s", s, want)
	}
	status, err := strconv.Atoi(strings.TrimSpace(st))
	if err != nil || status < 400 || status > 599 {
		return RetryWhen{}, fmt.Errorf("%q: the status must be 400-599 (%s)", s, want)
	}
	w := RetryWhen{Status: status, Path: strings.TrimSpace(path), Equals: value}
	if w.path, err = jsonpath.Parse(w.Path); err != nil {
		return RetryWhen{}, fmt.Errorf("%q: bad JSONPath %s: %v", s, w.Path, err)
	}
	return w, nil
}

// met reports whether an answer's body meets the condition (a string compared as its text, any
// other value as JSON writes it).
func (w RetryWhen) met(body []byte) bool {
	if w.path == nil {
		var err error
		if w.path, err = jsonpath.Parse(w.Path); err != nil {
			return false
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return false
	}
	nodes := w.path.Select(doc)
	if len(nodes) == 0 {
		return false
	}
	if s, ok := nodes[0].(string); ok {
		return s == w.Equals
	}
	b, err := json.Marshal(nodes[0])
	return err == nil && string(b) == w.Equals
}

// shouldRetry is what the configured should-retry header of an answer says: retry ("true"),
// fail now ("false"), or nothing (absent, another value, or no header configured).
func (r *runner) shouldRetry(h http.Header) (retry, says bool) {
	if r.cfg.ShouldRetryHeader == "" {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(h.Get(r.cfg.ShouldRetryHeader))) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// conditioned reports whether a condition names this status, and whether one of those the
// answer's body meets.
func (r *runner) conditioned(status int, body []byte) (named, met bool) {
	for _, w := range r.cfg.RetryWhen {
		if w.Status == status {
			named = true
			met = met || w.met(body)
		}
	}
	return named, met
}
