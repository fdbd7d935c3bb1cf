package targets

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/theory/jsonpath"
)

// KeyForm is how an idempotency key is written on the wire.
type KeyForm string

const (
	// KeyQuoted is the RFC 8941 structured-field string form: "abc".
	KeyQuoted KeyForm = "quoted"
	// KeyBare is the key verbatim: abc.
	KeyBare KeyForm = "bare"
)

// InFlightMode is what the target answers to a retry while the first attempt is still running.
type InFlightMode string

const (
	// InFlightStatus: the retry is rejected with Profile.InFlightStatus (409 by default).
	InFlightStatus InFlightMode = "status"
	// InFlightWaitReplay: the retry waits for the first attempt and replays its result.
	InFlightWaitReplay InFlightMode = "wait-replay"
	// InFlightEither: either of the above is correct.
	InFlightEither InFlightMode = "either"
	// InFlightStatusResource: the retry is answered 202 (Profile.InFlightStatus) with the
	// reference of the operation in progress (the operation's async block says where), never a
	// second execution.
	InFlightStatusResource InFlightMode = "status-resource"
)

// ReplayReturns is what a replay returns (profile.replay_returns).
type ReplayReturns string

const (
	// ReplayOriginal: the first answer (status, headers and body), the default.
	ReplayOriginal ReplayReturns = "original"
	// ReplayCurrent: a current representation of the resource the first answer names: a replay is
	// compared with a fresh read of it (the operation's resource block).
	ReplayCurrent ReplayReturns = "current"
	// ReplayReference: the reference of the operation (the operation's async block says where):
	// a replay carries the first answer's reference.
	ReplayReference ReplayReturns = "reference"
)

// ErrorPolicy is what happens to a retry after the first attempt ended in a 5xx.
type ErrorPolicy string

const (
	// ErrorReplay: the 5xx result is stored and replayed without executing again.
	ErrorReplay ErrorPolicy = "replay"
	// ErrorRetry: the key is released and the retry executes again.
	ErrorRetry ErrorPolicy = "retry"
)

// ExpiredPolicy is what a request with an expired key gets.
type ExpiredPolicy string

const (
	// ExpiredNew: the request is processed as new (a second record).
	ExpiredNew ExpiredPolicy = "new"
	// ExpiredReject: the request is rejected with Profile.ExpiredStatus.
	ExpiredReject ExpiredPolicy = "reject"
)

// Profile is the behaviour a target promises, from a base (ietf or stripe) plus overrides.
type Profile struct {
	// Base is "ietf" or "stripe".
	Base string
	// MismatchStatus answers the same key with a different payload.
	MismatchStatus StatusSet
	// InFlight and InFlightStatus describe the answer to a retry while the first attempt runs.
	InFlight       InFlightMode
	InFlightStatus StatusSet
	// MissingKeyStatus answers a request without a key; Processed = processed normally.
	MissingKeyStatus StatusSet
	// EmptyKeyStatus answers an empty key; Processed = processed normally.
	EmptyKeyStatus StatusSet
	// LongKeyStatus answers a key longer than MaxKeyLength.
	LongKeyStatus StatusSet
	// MaxKeyLength is the longest key accepted, counted after unquoting; 0 = no maximum.
	MaxKeyLength int
	// KeyForms are the header key forms the target accepts (at least one).
	KeyForms []KeyForm
	// ReplayHeader is the header a replay must carry; Name "" = none required, Value "" = any value.
	ReplayHeader ReplayHeader
	// ErrorPolicy says whether 5xx results are replayed or retried.
	ErrorPolicy ErrorPolicy
	// Expired and ExpiredStatus say what a request with an expired key gets.
	Expired       ExpiredPolicy
	ExpiredStatus StatusSet
	// Ignore lists the volatile parts of a response that replays may change.
	Ignore Ignore

	// OperationScope says whether a key is scoped to its operation (the default) or shared by
	// every operation; under ScopeShared a key reused on another operation MUST get
	// OperationReuseStatus (default 4xx) and leave no record (profile_scope.go).
	OperationScope       OperationScope
	OperationReuseStatus StatusSet
	scopeLine            int // where operation_scope is declared

	formsDeclared bool // the file writes key_forms (keyforms.go)

	// ReplayReturns is what a replay returns: the original answer (default), the current
	// representation of the resource, or the operation's reference.
	ReplayReturns ReplayReturns

	inFlightLine, replayReturnsLine int // where in_flight and replay_returns were declared
}

// ReplayHeader is a header (and optionally its value) that marks a replayed response.
type ReplayHeader struct {
	Name, Value string
}

// Ignore lists what response comparison skips.
type Ignore struct {
	// JSONPaths are RFC 9535 paths into the body.
	JSONPaths []string
	// Headers are header names (case-insensitive).
	Headers []string

	paths []*jsonpath.Path
}

// Paths returns the compiled JSONPaths (validated at load time).
func (ig Ignore) Paths() []*jsonpath.Path { return ig.paths }

// IgnoresHeader reports whether the named header is ignored when comparing responses.
func (ig Ignore) IgnoresHeader(name string) bool {
	return slices.ContainsFunc(ig.Headers, func(h string) bool { return strings.EqualFold(h, name) })
}

// RequiresKey reports whether a request without a key must be rejected.
func (p Profile) RequiresKey() bool { return !p.MissingKeyStatus.Processed }

// AcceptsInFlightStatus reports whether an in-flight retry may be answered with status.
func (p Profile) AcceptsInFlightStatus(status int) bool {
	return p.InFlight != InFlightWaitReplay && p.InFlightStatus.Contains(status)
}

// AcceptsWaitReplay reports whether an in-flight retry may wait and replay the first result.
func (p Profile) AcceptsWaitReplay() bool {
	return p.InFlight != InFlightStatus && p.InFlight != InFlightStatusResource
}

// InFlightAnswer reports whether a 2xx status is the answer to a retry while the first attempt
// runs rather than a success: the 202 of in_flight: status-resource.
func (p Profile) InFlightAnswer(status int) bool {
	return p.InFlight == InFlightStatusResource && p.InFlightStatus.Contains(status)
}

// Success reports whether status is a success: a 2xx that is not the in-flight answer.
func (p Profile) Success(status int) bool {
	return status >= 200 && status < 300 && !p.InFlightAnswer(status)
}

// DefaultIgnoredHeaders are response headers that may differ between an answer and its replay.
var DefaultIgnoredHeaders = []string{
	"Date", "Age", "Expires", "Last-Modified", "Set-Cookie", "Server-Timing", "X-Runtime", "X-Response-Time",
	"Request-Id", "X-Request-Id", "X-Correlation-Id", "X-Trace-Id", "X-Amzn-Trace-Id", "X-Amzn-RequestId",
	"X-Cloud-Trace-Context", "Traceparent", "Tracestate", "Cf-Ray", "Via", "Retry-After", "Connection", "Keep-Alive",
}

// Profiles returns the named base profile ("ietf" or "stripe").
func Profiles(base string) (Profile, bool) {
	p := Profile{
		Base:             base,
		MismatchStatus:   Status(422),
		InFlight:         InFlightStatus,
		InFlightStatus:   Status(409),
		MissingKeyStatus: Status(400),
		EmptyKeyStatus:   Status(400),
		LongKeyStatus:    Status(400),
		MaxKeyLength:     255,
		KeyForms:         []KeyForm{KeyQuoted, KeyBare},
		ErrorPolicy:      ErrorReplay,
		Expired:          ExpiredNew,
		ReplayReturns:    ReplayOriginal,
		Ignore:           Ignore{Headers: slices.Clone(DefaultIgnoredHeaders)},
	}
	p.scopeDefaults()
	switch base {
	case "ietf":
	case "stripe":
		p.MismatchStatus = Status(400)
		p.MissingKeyStatus = Processed
		p.KeyForms = []KeyForm{KeyBare}
		p.ReplayHeader = ReplayHeader{Name: "Idempotent-Replayed", Value: "true"}
	default:
		return Profile{}, false
	}
	return p, true
}

// profile decodes the profile field: a base name, or a mapping with base and overrides.
func (d *decoder) profile(top *object) Profile {
	p, _ := Profiles("ietf")
	if !top.has("profile") {
		return p
	}
	n := top.fields["profile"].val
	if _, isMap := n.(*ast.MappingNode); !isMap {
		base, ok := d.str(top, "profile")
		if ok {
			if bp, known := Profiles(strings.TrimSpace(base)); known {
				return bp
			}
			d.ps.add(top.lineOf("profile"), "profile", "unknown profile %q (known: ietf, stripe)", base)
		}
		return p
	}
	o, _ := d.object(n, "profile", "profile")
	if base, ok := d.str(o, "base"); ok {
		if bp, known := Profiles(strings.TrimSpace(base)); known {
			p = bp
		} else {
			d.ps.add(o.lineOf("base"), o.at("base"), "unknown profile %q (known: ietf, stripe)", base)
		}
	}
	if v, ok := d.statusSet(o, "mismatch_status", false); ok {
		p.MismatchStatus = v
	}
	if v, ok := d.statusSet(o, "in_flight_status", false); ok {
		p.InFlightStatus = v
	}
	if s, ok := d.str(o, "in_flight"); ok {
		p.inFlightLine = o.lineOf("in_flight")
		switch s = strings.TrimSpace(s); s {
		case string(InFlightWaitReplay), string(InFlightEither):
			p.InFlight = InFlightMode(s)
		case string(InFlightStatusResource):
			p.InFlight = InFlightMode(s)
			if !o.has("in_flight_status") {
				p.InFlightStatus = Status(202)
			}
		default:
			if v, ok := d.statusSet(o, "in_flight", false); ok {
				p.InFlight, p.InFlightStatus = InFlightStatus, v
			}
		}
	}
	if v, ok := d.statusSet(o, "missing_key_status", true); ok {
		p.MissingKeyStatus = v
	}
	if v, ok := d.statusSet(o, "empty_key_status", true); ok {
		p.EmptyKeyStatus = v
	}
	if v, ok := d.statusSet(o, "long_key_status", false); ok {
		p.LongKeyStatus = v
	}
	if s, ok := d.str(o, "max_key_length"); ok {
		if v, err := strconv.Atoi(strings.TrimSpace(s)); strings.TrimSpace(s) == "none" {
			p.MaxKeyLength = 0
		} else if err != nil || v < 1 || v > 1<<20 {
			d.ps.add(o.lineOf("max_key_length"), o.at("max_key_length"), "must be an integer from 1 to %d, or none (no maximum), got %q", 1<<20, s)
		} else {
			p.MaxKeyLength = v
		}
	}
	if forms, ok := d.strings(o, "key_forms"); ok {
		p.formsDeclared = true
		p.KeyForms = nil
		for _, f := range forms {
			f = strings.TrimSpace(f)
			if f != string(KeyQuoted) && f != string(KeyBare) {
				d.ps.add(o.lineOf("key_forms"), o.at("key_forms"), "unknown key form %q (known: quoted, bare)", f)
			} else if !slices.Contains(p.KeyForms, KeyForm(f)) {
				p.KeyForms = append(p.KeyForms, KeyForm(f))
			}
		}
		if len(p.KeyForms) == 0 {
			d.ps.add(o.lineOf("key_forms"), o.at("key_forms"), "must list at least one of quoted, bare")
			p.KeyForms = []KeyForm{KeyBare}
		}
	}
	if o.has("replay_header") || o.fields["replay_header"].line > 0 {
		s, _ := d.str(o, "replay_header")
		name, value, _ := strings.Cut(s, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if name != "" && !validHeaderName(name) {
			d.ps.add(o.lineOf("replay_header"), o.at("replay_header"), "must be \"Name: value\", \"Name\" or \"\", got %q", s)
		}
		p.ReplayHeader = ReplayHeader{Name: name, Value: value}
	}
	if s, ok := d.str(o, "error_policy"); ok {
		switch ErrorPolicy(strings.TrimSpace(s)) {
		case ErrorReplay, ErrorRetry:
			p.ErrorPolicy = ErrorPolicy(strings.TrimSpace(s))
		default:
			d.ps.add(o.lineOf("error_policy"), o.at("error_policy"), "must be replay or retry, got %q", s)
		}
	}
	if s, ok := d.str(o, "expired"); ok {
		switch ExpiredPolicy(strings.TrimSpace(s)) {
		case ExpiredNew, ExpiredReject:
			p.Expired = ExpiredPolicy(strings.TrimSpace(s))
		default:
			d.ps.add(o.lineOf("expired"), o.at("expired"), "must be new or reject, got %q", s)
		}
	}
	if v, ok := d.statusSet(o, "expired_status", false); ok {
		p.ExpiredStatus = v
	}
	if p.Expired == ExpiredReject && p.ExpiredStatus.IsZero() && !o.has("expired_status") {
		d.ps.add(o.lineOf("expired"), o.at("expired_status"), "required with expired: reject (the status an expired key gets)")
	}
	for _, f := range []struct {
		name string
		set  StatusSet
	}{{"missing_key_status", p.MissingKeyStatus}, {"empty_key_status", p.EmptyKeyStatus}, {"long_key_status", p.LongKeyStatus}} {
		if o.has(f.name) && (slices.ContainsFunc(f.set.Codes, func(c int) bool { return c >= 500 }) || slices.Contains(f.set.Classes, 5)) {
			d.warns.add(o.lineOf(f.name), o.at(f.name), "declares a 5xx for a client's malformed key: retrysafe reports any 5xx there as a server-error anomaly all the same (the draft asks for 400)")
		}
	}
	d.ignore(o, &p.Ignore)
	d.operationScope(o, &p)
	d.replayReturns(o, &p)
	return p
}

// replayReturns decodes profile.replay_returns: original, current or reference.
func (d *decoder) replayReturns(o *object, p *Profile) {
	s, ok := d.str(o, "replay_returns")
	if !ok {
		return
	}
	p.replayReturnsLine = o.lineOf("replay_returns")
	switch v := ReplayReturns(strings.TrimSpace(s)); v {
	case ReplayOriginal, ReplayCurrent, ReplayReference:
		p.ReplayReturns = v
	default:
		d.ps.add(o.lineOf("replay_returns"), o.at("replay_returns"), "must be original, current or reference, got %q", s)
	}
}

// ignore decodes profile.ignore, adding to the default lists.
func (d *decoder) ignore(o *object, ig *Ignore) {
	if !o.has("ignore") {
		return
	}
	io, ok := d.child(o, "ignore")
	if !ok {
		return
	}
	if hs, ok := d.strings(io, "headers"); ok {
		for i, h := range hs {
			if !validHeaderName(h) {
				d.ps.add(io.lineOf("headers"), fmt.Sprintf("%s[%d]", io.at("headers"), i), "%q is not a valid HTTP header name", h)
			} else if !ig.IgnoresHeader(h) {
				ig.Headers = append(ig.Headers, h)
			}
		}
	}
	if ps, ok := d.strings(io, "json_paths"); ok {
		for i, s := range ps {
			p, err := jsonpath.Parse(s)
			if err != nil {
				d.ps.add(io.lineOf("json_paths"), fmt.Sprintf("%s[%d]", io.at("json_paths"), i), "bad JSONPath %q: %v", s, err)
				continue
			}
			ig.JSONPaths = append(ig.JSONPaths, s)
			ig.paths = append(ig.paths, p)
		}
	}
}
