package targets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/theory/jsonpath"
)

// Async says how an operation that finishes after its answer is followed (an operation's async
// block): its 202 answer carries a reference to the operation (a header such as Location or
// Operation-Location, a URL in the body, or an id the status resource's path is made from), the
// status resource names the operation's state, and the business record exists once that state
// is one of Done. An answer other than a 202 is a finished operation (a synchronous completion);
// a reference it carries is kept for the comparison of replays, never polled.
type Async struct {
	// Header is the response header that carries the reference ("" when it is in the body).
	Header string
	// JSONPath selects the reference in the answer's body: a URL or path ($.status_url), or,
	// with Path, the operation's id ($.id).
	JSONPath string
	// Path is the status resource's path when the body carries an id: a template over
	// {{.ID}} (what JSONPath selects), {{.Ref}}, {{.Key}} and {{.Tenant}}.
	Path string
	// State selects the operation's state in the status resource's body ($.status).
	State string
	// Done and Failed are the states of a finished operation: it succeeded, or failed (and
	// left no record). Any other state is pending.
	Done, Failed []string
	// Poll is how often the status resource is read (default DefaultPoll); Settle is the
	// longest an operation may take (default DefaultSettle).
	Poll, Settle time.Duration

	ref   *jsonpath.Path
	path  *tmpl
	state *jsonpath.Path
}

// Defaults of an async block.
const (
	DefaultPoll   = 200 * time.Millisecond
	DefaultSettle = 30 * time.Second
)

// Resource is the resource an operation's answer names (an operation's resource block): where a
// fresh read of it is made (profile.replay_returns: current).
type Resource struct {
	// Path is the resource's path: a template over {{.ID}}, {{.Ref}}, {{.Key}} and {{.Tenant}}.
	Path string
	// ID selects the resource's id in an answer's body ($.id).
	ID string

	path *tmpl
	id   *jsonpath.Path
}

// IDVars are what an async or resource path sees: the request's Vars and {{.ID}}.
type IDVars struct {
	Vars
	// ID is the id the answer carries.
	ID string
}

// idFields are the placeholders of an async or resource path.
var idFields = []string{"Ref", "Key", "Tenant", "ID"}

// Phase is where an asynchronous operation is.
type Phase string

// The phases of an asynchronous operation.
const (
	PhasePending Phase = "pending"
	PhaseDone    Phase = "done"
	PhaseFailed  Phase = "failed"
)

// async decodes an operation's async block.
func (d *decoder) async(o *object) *Async {
	ao, ok := d.child(o, "async")
	if !ok {
		return nil
	}
	a := &Async{Poll: DefaultPoll, Settle: DefaultSettle}
	if !ao.has("reference") {
		d.ps.add(ao.line, ao.at("reference"), "missing required field (where the answer carries the operation's reference: {header: Location}, {jsonpath: $.status_url} or {jsonpath: $.id, path: /v1/operations/{{.ID}}})")
	} else {
		d.asyncReference(ao, a)
	}
	if !ao.has("state") {
		d.ps.add(ao.line, ao.at("state"), "missing required field (how to read the status resource: {jsonpath: $.status, done: [succeeded], failed: [failed]})")
	} else {
		d.asyncState(ao, a)
	}
	if v, ok := d.duration(ao, "poll"); ok {
		a.Poll = v
	}
	if v, ok := d.duration(ao, "settle"); ok {
		a.Settle = v
	}
	if a.Poll > a.Settle {
		d.ps.add(ao.lineOf("poll"), ao.at("poll"), "%v is longer than settle %v: the status resource would be read once at most", a.Poll, a.Settle)
	}
	return a
}

// asyncReference decodes async.reference: {header} or {jsonpath[, path]}.
func (d *decoder) asyncReference(ao *object, a *Async) {
	ro, ok := d.child(ao, "reference")
	if !ok {
		return
	}
	if ro.has("header") == ro.has("jsonpath") {
		d.ps.add(ro.line, ro.path, "declare exactly one of header (Location, Operation-Location) and jsonpath ($.status_url, or $.id with path)")
		return
	}
	if s, ok := d.str(ro, "header"); ok {
		if a.Header = strings.TrimSpace(s); !validHeaderName(a.Header) {
			d.ps.add(ro.lineOf("header"), ro.at("header"), "%q is not a valid HTTP header name", s)
		}
		if ro.has("path") {
			d.ps.add(ro.lineOf("path"), ro.at("path"), "goes with jsonpath (an id in the body), not with header (the header holds the URL)")
		}
		return
	}
	a.JSONPath, a.ref = d.singularPath(ro, "jsonpath")
	if ro.has("path") {
		if tp, ok := d.idPath(ro, "path"); ok {
			a.path, a.Path = tp, tp.src
		}
	}
}

// asyncState decodes async.state: {jsonpath, done, failed}.
func (d *decoder) asyncState(ao *object, a *Async) {
	so, ok := d.child(ao, "state")
	if !ok {
		return
	}
	a.State, a.state = d.singularPath(so, "jsonpath")
	if done, ok := d.strings(so, "done"); ok {
		a.Done = trimAll(done)
	}
	if len(a.Done) == 0 {
		d.ps.add(so.lineOf("done"), so.at("done"), "must list at least one state of an operation that succeeded (such as succeeded)")
	}
	if failed, ok := d.strings(so, "failed"); ok {
		a.Failed = trimAll(failed)
	}
	for _, s := range a.Failed {
		if slices.Contains(a.Done, s) {
			d.ps.add(so.lineOf("failed"), so.at("failed"), "%q is also listed in done", s)
		}
	}
}

// resource decodes an operation's resource block: {path, id}.
func (d *decoder) resource(o *object) *Resource {
	ro, ok := d.child(o, "resource")
	if !ok {
		return nil
	}
	r := &Resource{}
	if _, ok := d.required(ro, "path", " (such as /v1/orders/{{.ID}})"); ok {
		if tp, ok := d.idPath(ro, "path"); ok {
			r.path, r.Path = tp, tp.src
		}
	}
	if _, ok := d.required(ro, "id", " (where an answer carries the resource's id, such as $.id)"); ok {
		r.ID, r.id = d.singularPath(ro, "id")
	}
	return r
}

// idPath decodes a path template over idFields that must start with /.
func (d *decoder) idPath(o *object, name string) (*tmpl, bool) {
	tp, ok := d.tmplField(o, name, idFields)
	if !ok || tp == nil {
		return nil, false
	}
	if p, _ := tp.render(sampleFor(idFields)); !strings.HasPrefix(p, "/") {
		d.ps.add(o.lineOf(name), o.at(name), "must start with /, got %q", tp.src)
		return nil, false
	}
	return tp, true
}

// singularPath decodes a required JSONPath that selects one value.
func (d *decoder) singularPath(o *object, name string) (string, *jsonpath.Path) {
	s, ok := d.required(o, name, " (such as $.status)")
	if !ok {
		return "", nil
	}
	s = strings.TrimSpace(s)
	p, err := jsonpath.Parse(s)
	switch {
	case err != nil:
		d.ps.add(o.lineOf(name), o.at(name), "bad JSONPath %q: %v", s, err)
		return "", nil
	case p.Query().Singular() == nil:
		d.ps.add(o.lineOf(name), o.at(name), "%q may select several values; name one member ($.status, $.operation.id)", s)
		return "", nil
	}
	return s, p
}

func trimAll(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// checkAsync checks what the profile asks of the operations: in_flight: status-resource and
// replay_returns: reference need every operation's async block (where the reference is),
// replay_returns: current every operation's resource block.
func (d *decoder) checkAsync(top *object, t *Target) {
	p := t.Profile
	for _, op := range t.Operations {
		switch {
		case p.InFlight == InFlightStatusResource && op.Async == nil:
			d.ps.add(p.inFlightLine, "profile.in_flight", "status-resource needs operation %s's async block (where a 202 carries the reference of the operation in progress)", op.Name)
		case p.ReplayReturns == ReplayReference && op.Async == nil:
			d.ps.add(p.replayReturnsLine, "profile.replay_returns", "reference needs operation %s's async block (where an answer carries the operation's reference)", op.Name)
		case p.ReplayReturns == ReplayCurrent && op.Resource == nil:
			d.ps.add(p.replayReturnsLine, "profile.replay_returns", "current needs operation %s's resource block (the resource an answer names: {path: /v1/orders/{{.ID}}, id: $.id})", op.Name)
		}
	}
}

// Reference returns the operation reference an answer carries ("" when it carries none): the
// header's value, the URL the JSONPath selects, or the path made from the id it selects. An
// error says why a value that is there is not a reference.
func (a *Async) Reference(header http.Header, body []byte, v Vars) (string, error) {
	if a.Header != "" {
		return strings.TrimSpace(header.Get(a.Header)), nil
	}
	val, found, err := selectString(a.ref, body)
	if err != nil || !found {
		return "", err
	}
	if a.path == nil {
		return val, nil
	}
	return a.path.render(IDVars{Vars: v, ID: url.PathEscape(val)})
}

// PhaseOf reads an operation's state from its status resource's body.
func (a *Async) PhaseOf(body []byte) (state string, ph Phase, err error) {
	state, found, err := selectString(a.state, body)
	switch {
	case err != nil:
		return "", PhasePending, err
	case !found:
		return "", PhasePending, fmt.Errorf("jsonpath %s selects nothing in %s", a.State, snippet(body))
	case slices.Contains(a.Done, state):
		return state, PhaseDone, nil
	case slices.Contains(a.Failed, state):
		return state, PhaseFailed, nil
	}
	return state, PhasePending, nil
}

// IDOf returns the id an answer's body carries (found false: none).
func (r *Resource) IDOf(body []byte) (string, bool) {
	id, found, err := selectString(r.id, body)
	return id, found && err == nil && id != ""
}

// PathOf renders the resource's path for an id.
func (r *Resource) PathOf(v Vars, id string) (string, error) {
	return r.path.render(IDVars{Vars: v, ID: url.PathEscape(id)})
}

// selectString applies a singular JSONPath to a JSON body: the string (or number) it selects.
func selectString(p *jsonpath.Path, body []byte) (string, bool, error) {
	if p == nil || len(bytes.TrimSpace(body)) == 0 {
		return "", false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return "", false, fmt.Errorf("the body is not JSON (%v): %s", err, snippet(body))
	}
	nodes := p.Select(doc)
	if len(nodes) == 0 {
		return "", false, nil
	}
	switch v := nodes[0].(type) {
	case string:
		return v, true, nil
	case json.Number:
		return v.String(), true, nil
	}
	return "", false, fmt.Errorf("jsonpath %s selects %s, not a string", p, clip(string(mustJSON(nodes[0]))))
}

// StatusURL returns where the status resource of ref is read on inst: a path (the async block's
// path, or a relative reference) is resolved against the instance, an absolute URL keeps its
// path and query on the instance's origin (the harness talks to declared instances only:
// behind a fault proxy, or an API that writes its own address).
func StatusURL(inst *Instance, ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("the reference %q is not a URL: %v", ref, err)
	}
	if !u.IsAbs() && u.Host == "" {
		if !strings.HasPrefix(ref, "/") {
			return "", fmt.Errorf("the reference %q is neither a path nor an absolute URL", ref)
		}
		return inst.resolveString(ref)
	}
	origin := *inst.URL
	origin.Path, origin.RawPath, origin.RawQuery, origin.Fragment = u.Path, u.RawPath, u.RawQuery, ""
	return origin.String(), nil
}

// NewReadRequest returns a GET of url with the tenant's headers (nil tenant = none): the read of
// a status resource or of the resource an answer names.
func NewReadRequest(ctx context.Context, url string, tn *Tenant) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if tn != nil {
		for _, name := range tn.order {
			req.Header.Set(name, tn.Headers[name])
		}
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// Read GETs url (a status resource, or the resource an answer names) with the tenant's
// headers through hc: its status and body (at most 1 MiB), or why it got none.
func Read(ctx context.Context, hc *http.Client, url string, tn *Tenant) (int, []byte, error) {
	req, err := NewReadRequest(ctx, url, tn)
	if err != nil {
		return 0, nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxObserverBody+1))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) > maxObserverBody {
		return resp.StatusCode, nil, fmt.Errorf("the answer is larger than 1 MiB")
	}
	return resp.StatusCode, body, nil
}

// TenantNamed returns the declared tenant of that name (nil: none).
func (t *Target) TenantNamed(name string) *Tenant {
	for _, tn := range t.Tenants {
		if tn.Name == name {
			return tn
		}
	}
	return nil
}

// InstanceAt returns the declared instance whose host:port is hostPort, else the first.
func (t *Target) InstanceAt(hostPort string) *Instance {
	for i := range t.Instances {
		if t.Instances[i].URL.Host == hostPort {
			return &t.Instances[i]
		}
	}
	return &t.Instances[0]
}
