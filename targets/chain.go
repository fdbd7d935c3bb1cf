package targets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// A chain target file names three ordinary target parts that the harness runs end to end:
//
//	name: orders-chain
//	chain:
//	  client: client.yaml      # a file with clients[] (the first one's command drives the chain)
//	  api: api.yaml            # a file with operations[].publishes and a lifecycle
//	  consumer: consumer.yaml  # a file with consumers[] (an effects observer) and a lifecycle
//
// Each part is a path relative to the chain file, {file: PATH, env: {NAME: VALUE}} (the file read
// with variables of its own over the process's: two parts of one chain that read one variable,
// RETRYSAFE_URL say, each get theirs), or an inline mapping written as that file would be. Each keeps its own lifecycle: the harness starts the API and the consumer, then the
// client against the API (through a fault proxy), the API's events reaching the consumer
// through the broker.

// Chain is a chain target's three parts.
type Chain struct {
	// Client holds the client under test: its first client, which declares a command.
	Client *Target
	// API holds the API under test: an operation that publishes its events, and a lifecycle.
	API *Target
	// Consumer holds the consumer of those events: a consumer on the events' transport with an
	// effects observer, and a lifecycle.
	Consumer *Target
}

// chainParts are the fields of a chain block, in the order they are loaded.
var chainParts = []string{"client", "api", "consumer"}

// NewChain returns a chain target named name over three loaded parts (the chain closes them
// when it closes), or every reason they cannot form a chain.
func NewChain(name string, client, api, consumer *Target) (*Target, error) {
	t := &Target{Name: name, SharedStore: true, Chain: &Chain{Client: client, API: api, Consumer: consumer}}
	for _, p := range []*Target{client, api, consumer} {
		t.Own(p)
	}
	if err := t.Chain.check(); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// Published returns the API's operation that publishes, and its first event.
func (c *Chain) Published() (*Operation, *Publish) {
	for _, op := range c.API.Publishing() {
		return op, op.Publishes[0]
	}
	return nil, nil
}

// EventConsumer returns the consumer of the events the API publishes: the consumer part's
// first one on their transport.
func (c *Chain) EventConsumer() *Consumer {
	_, pub := c.Published()
	for _, k := range c.Consumer.Consumers {
		if pub != nil && k.Transport == pub.Transport {
			return k
		}
	}
	return nil
}

// check returns what keeps the three parts from forming a chain.
func (c *Chain) check() error {
	var errs []error
	switch {
	case len(c.Client.Clients) == 0:
		errs = append(errs, errors.New("chain.client: the client part declares no clients[]"))
	case len(c.Client.Clients[0].Command) == 0:
		errs = append(errs, fmt.Errorf("chain.client: client %s declares no command: the harness starts the chain's client", c.Client.Clients[0].Name))
	}
	_, pub := c.Published()
	if pub == nil {
		errs = append(errs, errors.New("chain.api: the API part declares no operation that publishes its events (operations[].publishes)"))
	}
	if c.API.Lifecycle == nil {
		errs = append(errs, errors.New("chain.api: the API part declares no lifecycle: the harness starts the API, and kills it between a commit and its publication"))
	}
	if c.Consumer.Lifecycle == nil {
		errs = append(errs, errors.New("chain.consumer: the consumer part declares no lifecycle: the harness starts the consumer, and kills it before its ack"))
	}
	k := c.EventConsumer()
	switch {
	case pub != nil && k == nil:
		errs = append(errs, fmt.Errorf("chain.consumer: no consumer on %s, the transport of the API's event %s", pub.Transport, pub.Name))
	case k != nil && (k.Effects == nil):
		errs = append(errs, fmt.Errorf("chain.consumer: consumer %s declares no effects observer: the chain counts each event's effects", k.Name))
	case k != nil && k.NamesOperations() && k.Event.Operation == nil:
		errs = append(errs, fmt.Errorf("chain.consumer: consumer %s names only a list of operations per event (event.operations): the chain counts the effects of the one operation an event of the API names (declare event.operation too)", k.Name))
	case k != nil && k.Event.Operation != nil && k.Event.Operation.Header != "":
		errs = append(errs, fmt.Errorf("chain.consumer: consumer %s names its operation in the header %s: the chain reads an event's operation from the body the API published (declare event.operation as a jsonpath)", k.Name, k.Event.Operation.Header))
	}
	return errors.Join(errs...)
}

// isChain reports whether a target file's top-level mapping has a chain block.
func isChain(n ast.Node) bool {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		if mv, ok := n.(*ast.MappingValueNode); ok {
			return mv.Key.GetToken().Value == "chain"
		}
		return false
	}
	return slices.ContainsFunc(m.Values, func(mv *ast.MappingValueNode) bool { return mv.Key.GetToken().Value == "chain" })
}

// chainTarget decodes a chain target file: its name and its three parts.
func (d *decoder) chainTarget(n ast.Node) *Target {
	t := &Target{SharedStore: true}
	top, ok := d.object(n, "", "(chain file)")
	if !ok {
		return t
	}
	if s, ok := d.str(top, "name"); ok {
		t.Name = strings.TrimSpace(s)
	} else {
		t.Name = strings.TrimSuffix(filepath.Base(d.ps.file), filepath.Ext(d.ps.file))
	}
	co, ok := d.child(top, "chain")
	if !ok {
		return t
	}
	parts := make([]*Target, len(chainParts))
	for i, name := range chainParts {
		parts[i] = d.chainPart(co, name)
		if parts[i] != nil {
			t.Own(parts[i])
		}
	}
	if slices.Contains(parts, nil) {
		return t
	}
	t.Chain = &Chain{Client: parts[0], API: parts[1], Consumer: parts[2]}
	if err := t.Chain.check(); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			field, msg, _ := strings.Cut(line, ": ")
			d.ps.add(co.lineOf(strings.TrimPrefix(field, "chain.")), field, "%s", msg)
		}
	}
	return t
}

// chainPart loads one part of a chain: a file (relative to the chain file) or an inline mapping.
// Its problems are the chain file's; nil when it has any.
func (d *decoder) chainPart(co *object, name string) *Target {
	if !co.has(name) {
		d.ps.add(co.line, co.at(name), "missing required field: a target file (or an inline mapping) for the chain's %s", name)
		return nil
	}
	val := co.fields[name].val
	var t *Target
	var err error
	offset := 0
	env, path, ok := d.env, "", true
	if isPartRef(val) {
		env, path, ok = d.partRef(co, name)
	} else if _, inline := val.(*ast.MappingNode); inline {
		offset = lineOf(val) - 1
		t, err = parseTarget(fmt.Sprintf("%s (chain.%s)", d.ps.file, name), []byte(val.String()), d.env, d.standIn)
	} else {
		path, ok = d.str(co, name)
	}
	if !ok {
		return nil
	}
	if path != "" {
		if !filepath.IsAbs(path) {
			path = filepath.Join(d.dir, path)
		}
		data, rerr := os.ReadFile(path)
		if rerr != nil {
			d.ps.add(co.lineOf(name), co.at(name), "cannot read the %s part: %v", name, rerr)
			return nil
		}
		t, err = parseTarget(path, data, env, d.standIn)
	}
	var ve *ValidationError
	switch {
	case errors.As(err, &ve):
		for _, p := range ve.Problems {
			if offset > 0 && p.Line > 0 {
				p.File, p.Line = d.ps.file, p.Line+offset
			}
			d.ps.list = append(d.ps.list, p)
		}
		return nil
	case err != nil:
		d.ps.add(co.lineOf(name), co.at(name), "%v", err)
		return nil
	}
	for _, w := range t.Warnings {
		if offset > 0 && w.Line > 0 {
			w.File, w.Line = d.ps.file, w.Line+offset
		}
		d.warns.list = append(d.warns.list, w)
	}
	return t
}

// isPartRef reports whether a part is a file with variables of its own ({file, env}) rather than
// an inline target (which has no field named file).
func isPartRef(n ast.Node) bool {
	m, ok := n.(*ast.MappingNode)
	return ok && slices.ContainsFunc(m.Values, func(mv *ast.MappingValueNode) bool { return mv.Key.GetToken().Value == "file" })
}

// partRef decodes a part given as {file: PATH, env: {NAME: VALUE}}: the file, read with the
// variables of env over the chain's own (so that two parts reading one variable, such as
// RETRYSAFE_URL, each get their own).
func (d *decoder) partRef(co *object, name string) (func(string) (string, bool), string, bool) {
	o, ok := d.child(co, name)
	if !ok {
		return nil, "", false
	}
	path, ok := d.required(o, "file", ": the part's target file")
	if !ok {
		return nil, "", false
	}
	vars := map[string]string{}
	if m, ok := d.mapping(o, "env", "variable names to values"); ok {
		entries, _ := d.mappingEntries(m, o.at("env"), 0)
		for _, mv := range entries {
			key := mv.Key.GetToken().Value
			if v, ok := d.scalar(mv.Value, o.at("env")+"."+key); ok {
				vars[key] = v
			}
		}
	}
	outer := d.env
	return func(k string) (string, bool) {
		if v, ok := vars[k]; ok {
			return v, true
		}
		return outer(k)
	}, path, true
}
