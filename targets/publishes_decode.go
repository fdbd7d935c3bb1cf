package targets

import (
	"fmt"
	"slices"
	"strings"

	"github.com/theory/jsonpath"
)

// publishes decodes an operation's publishes block: the events the operation publishes.
func (d *decoder) publishes(o *object, op *Operation) []*Publish {
	nodes, ok := d.list(o, "publishes")
	if !ok {
		return nil
	}
	var out []*Publish
	seen := map[string]int{}
	for i, n := range nodes {
		po, ok := d.object(n, fmt.Sprintf("%s[%d]", o.at("publishes"), i), o.sub("publishes")+"[]")
		if !ok {
			continue
		}
		p := &Publish{Name: d.uniqueName(po, "event", seen), Within: DefaultWithin, Grace: DefaultGrace, line: po.line}
		d.publishTransport(po, p)
		d.publishID(po, p)
		d.publishTie(po, p, op)
		if v, ok := d.duration(po, "within"); ok {
			p.Within = v
		}
		p.Outage = p.Within
		if v, ok := d.duration(po, "outage"); ok {
			p.Outage = v
		}
		if v, ok := d.duration(po, "grace"); ok {
			p.Grace = v
		}
		d.publishIgnore(po, p)
		out = append(out, p)
	}
	return out
}

// publishTransport decodes the one transport of a publishes entry: amqp, nats or webhook.
func (d *decoder) publishTransport(po *object, p *Publish) {
	var declared []string
	for _, f := range []string{"amqp", "nats", "webhook"} {
		if po.has(f) {
			declared = append(declared, f)
		}
	}
	slices.SortStableFunc(declared, func(a, b string) int { return po.lineOf(a) - po.lineOf(b) }) // in the file's order
	switch {
	case len(declared) == 0:
		d.ps.add(po.line, po.path, "declare where the event is published: one of amqp: {url, exchange, routing_key}, nats: {url, stream, subject} or webhook: {listen}")
		return
	case len(declared) > 1:
		d.ps.add(po.lineOf(declared[1]), po.at(declared[1]), "an event is published on one transport, and %s is declared too: keep one of %s",
			declared[0], strings.Join(declared, ", "))
		return
	}
	p.Transport = Transport(declared[0])
	switch p.Transport {
	case TransportAMQP:
		p.AMQP = d.amqpBlock(po, false)
	case TransportNATS:
		p.NATS = d.natsBlock(po, false)
	default:
		p.Webhook = d.eventReceiver(po)
	}
}

// eventReceiver decodes a publishes entry's webhook block: where the harness receives it.
func (d *decoder) eventReceiver(po *object) *EventReceiver {
	wo, ok := d.child(po, "webhook")
	if !ok {
		return nil
	}
	r := &EventReceiver{}
	r.Listen, _ = d.hostPort(wo, "listen")
	if s, ok := d.str(wo, "path"); ok {
		if r.Path = strings.TrimSpace(s); !strings.HasPrefix(r.Path, "/") {
			d.ps.add(wo.lineOf("path"), wo.at("path"), "must start with /, got %q", s)
		}
	}
	return r
}

// publishID decodes where the event's id travels: exactly one of message_id: true (queues
// only), header: NAME and jsonpath: PATH.
func (d *decoder) publishID(po *object, p *Publish) {
	if !po.has("id") {
		d.ps.add(po.line, po.at("id"), "missing required field (where the event id travels, what consumers deduplicate on: {jsonpath: $.id}, {header: NAME} or {message_id: true})")
		return
	}
	io, ok := d.child(po, "id")
	if !ok {
		return
	}
	declared := 0
	for _, f := range []string{"jsonpath", "header", "message_id"} {
		if io.has(f) {
			declared++
		}
	}
	if declared != 1 {
		d.ps.add(io.line, po.at("id"), "names nothing: declare exactly one of jsonpath: PATH, header: NAME and message_id: true (where the event id travels)")
		return
	}
	switch {
	case io.has("message_id"):
		v, ok := d.boolean(io, "message_id")
		switch {
		case !ok:
		case !v:
			d.ps.add(io.lineOf("message_id"), io.at("message_id"), "names nothing: only message_id: true is meaningful (name a header or a jsonpath instead)")
		case p.Transport == TransportWebhook:
			d.ps.add(io.lineOf("message_id"), io.at("message_id"), "a webhook has no transport message id: name the header or the body's jsonpath that carries the event id")
		default:
			p.ID = EventID{In: IDInTransport}
		}
	case io.has("header"):
		s, _ := d.str(io, "header")
		name := strings.TrimSpace(s)
		if !validHeaderName(name) {
			d.ps.add(io.lineOf("header"), io.at("header"), "names nothing: %q is not a header name", s)
			return
		}
		p.ID = EventID{In: IDInHeader, Header: name}
	default:
		if path, src := d.memberPath(io, "jsonpath"); path != nil {
			p.ID, p.id = EventID{In: IDInBody, Path: src}, path
		}
	}
}

// publishTie decodes how an event names its operation: ref (the operation's {{.Ref}}) or record
// (the id of the record its 2xx answer names).
func (d *decoder) publishTie(po *object, p *Publish, op *Operation) {
	switch {
	case po.has("ref") && po.has("record"):
		d.ps.add(po.lineOf("record"), po.at("record"), "ties the event to its operation like ref does: declare one of ref and record")
		return
	case po.has("ref"):
		ro, ok := d.child(po, "ref")
		if !ok {
			return
		}
		path, src := d.memberPath(ro, "jsonpath")
		if path == nil {
			return
		}
		p.Tie, p.tie = EventTie{Path: src}, path
		if !op.usesRef() {
			d.ps.add(po.lineOf("ref"), po.at("ref"), "the operation sends no {{.Ref}} (in its path, query, headers or body): an event cannot carry it")
		}
	case po.has("record"):
		ro, ok := d.child(po, "record")
		if !ok {
			return
		}
		path, src := d.memberPath(ro, "jsonpath")
		if path == nil {
			return
		}
		p.Tie, p.tie = EventTie{Record: true, Path: src, Answer: "$.id"}, path
		p.answer, _ = jsonpath.Parse(p.Tie.Answer)
		if ro.has("answer") {
			if ap, asrc := d.memberPath(ro, "answer"); ap != nil {
				p.Tie.Answer, p.answer = asrc, ap
			}
		}
	default:
		d.ps.add(po.line, po.at("ref"), "missing required field (how an event names its operation: ref: {jsonpath: $.data.ref} for the operation's {{.Ref}}, or record: {jsonpath: $.data.id} for the id in its 2xx answer)")
	}
}

// memberPath decodes a required singular JSONPath that names one member ($.a.b, $.items[0]):
// not the whole document, not a query that may select several nodes.
func (d *decoder) memberPath(o *object, name string) (*jsonpath.Path, string) {
	s, ok := d.required(o, name, " (such as $.id)")
	if !ok {
		return nil, ""
	}
	src := strings.TrimSpace(s)
	p, err := jsonpath.Parse(src)
	switch {
	case err != nil:
		d.ps.add(o.lineOf(name), o.at(name), "bad JSONPath %q: %v", s, err)
	case len(p.Query().Segments()) == 0:
		d.ps.add(o.lineOf(name), o.at(name), "names nothing: %q is the whole document, name one member (such as $.id)", src)
	case p.Query().Singular() == nil:
		d.ps.add(o.lineOf(name), o.at(name), "names no single member: %q may select several nodes (use names and indexes only, such as $.data.id)", src)
	default:
		return p, src
	}
	return nil, ""
}

// publishIgnore decodes the members that may differ between copies of one event id.
func (d *decoder) publishIgnore(po *object, p *Publish) {
	paths, ok := d.strings(po, "ignore")
	if !ok {
		return
	}
	for i, s := range paths {
		s = strings.TrimSpace(s)
		jp, err := jsonpath.Parse(s)
		if err != nil {
			d.ps.add(po.lineOf("ignore"), fmt.Sprintf("%s[%d]", po.at("ignore"), i), "bad JSONPath %q: %v", s, err)
			continue
		}
		p.Ignore = append(p.Ignore, s)
		p.ignore.JSONPaths = append(p.ignore.JSONPaths, s)
		p.ignore.paths = append(p.ignore.paths, jp)
	}
}

// usesRef reports whether the operation sends its {{.Ref}} somewhere.
func (op *Operation) usesRef() bool {
	if op.req.path.uses("Ref") || op.req.query.uses("Ref") || op.req.body.uses("Ref") {
		return true
	}
	for _, h := range op.req.headers {
		if h.tmpl.uses("Ref") {
			return true
		}
	}
	return false
}

// checkPublishes checks the publishes blocks against the rest of the file: a webhook receiver
// the API can learn the address of, one receiver address, {{.EventsURL}} only where a webhook
// event is declared and {{.EventsBroker}} only where an event is.
func (d *decoder) checkPublishes(top *object, t *Target) {
	var hooks []*Publish
	for _, op := range t.Operations {
		for _, p := range op.Publishes {
			if p.Webhook != nil {
				hooks = append(hooks, p)
			}
		}
	}
	uses := t.Lifecycle.UsesEventsURL()
	if uses && len(hooks) == 0 {
		d.ps.add(top.lineOf("lifecycle"), "lifecycle", "uses {{.EventsURL}} but no operation publishes a webhook event (publishes[].webhook)")
	}
	linked := t.Lifecycle.UsesEventsBroker()
	if linked && len(t.Publishing()) == 0 {
		d.ps.add(top.lineOf("lifecycle"), "lifecycle", "uses {{.EventsBroker}} but no operation publishes an event (operations[].publishes)")
	}
	paths := map[string]int{}
	for _, p := range hooks {
		if p.Webhook.Listen == "" && !uses && !linked {
			d.ps.add(p.line, "publishes", "event %s: the API cannot learn the receiver's address: set webhook.listen, or use {{.EventsURL}} (or {{.EventsBroker}}, "+
				"the receiver's host:port behind a fault proxy) in lifecycle.command or lifecycle.env", p.Name)
		}
		if p.Webhook.Listen != "" && p.Webhook.Listen != hooks[0].Webhook.Listen {
			d.ps.add(p.line, "publishes", "event %s: the harness runs one receiver for every webhook event, on %s (event %s): use one listen address",
				p.Name, hooks[0].Webhook.Listen, hooks[0].Name)
		}
		if first, dup := paths[p.Webhook.Path]; dup && len(hooks) > 1 {
			d.ps.add(p.line, "publishes", "event %s: another webhook event arrives on path %q too (line %d): give each its own webhook.path",
				p.Name, p.Webhook.Path, first)
		}
		paths[p.Webhook.Path] = p.line
	}
}
