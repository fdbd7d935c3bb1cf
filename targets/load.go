package targets

import (
	"cmp"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Parse decodes a target file's contents. name is used in problems and to resolve relative paths;
// env looks up ${NAME} references (os.LookupEnv for the process environment; nil = none set).
// Problems are returned as a *ValidationError listing every one of them.
func Parse(name string, data []byte, env func(string) (string, bool)) (t *Target, err error) {
	return parseTarget(name, data, env, false)
}

// parseTarget is Parse; with standIn an unset ${NAME} without a default is a warning and <NAME>
// stands in for it (see decoder.standIn).
func parseTarget(name string, data []byte, env func(string) (string, bool), standIn bool) (t *Target, err error) {
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	ps := &problems{file: name}
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, &ValidationError{Problems: []Problem{{File: name, Message: fmt.Sprintf("cannot read this file as YAML: %v", r)}}}
		}
	}()
	f, perr := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if perr != nil {
		line, msg := 0, perr.Error()
		var ye yaml.Error
		if errors.As(perr, &ye) {
			msg = ye.GetMessage()
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				line = tk.Position.Line
				if src := lineText(data, line); strings.Contains(src, "{{") || strings.Contains(src, "${") {
					msg += " (quote values that start with {{ or ${)"
				} else if strings.Contains(msg, "tab character") {
					msg += " (indent with spaces, not tabs)"
				} else if bracketedPath(src) {
					msg += ` (quote a JSONPath with brackets: "$['metadata[ref]']")`
				}
			}
		}
		ps.add(line, "", "bad YAML: %s", msg)
		return nil, ps.err()
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc.Body != nil {
			if body == nil {
				body = doc.Body
			} else {
				ps.add(lineOf(doc.Body), "", "a target file holds one YAML document; this is another one")
			}
		}
	}
	if body == nil {
		ps.add(0, "", "the file is empty; see targets/examples/reference.yaml")
		return nil, ps.err()
	}
	d := &decoder{ps: ps, warns: problems{file: name}, env: env, standIn: standIn, standIns: map[string]bool{},
		anchors: map[string]ast.Node{}, dir: filepath.Dir(name)}
	d.collectAnchors(body)
	if isChain(d.resolve(body)) {
		t = d.chainTarget(body)
	} else {
		t = d.target(body)
	}
	t.Path = name
	t.Warnings = slices.Clone(d.warns.list)
	slices.SortStableFunc(t.Warnings, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	ps.list = slices.DeleteFunc(ps.list, func(p Problem) bool { return d.standIns[p.Field] })
	if err := ps.err(); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// bracketedPath reports whether a line holds a flow sequence with a JSONPath whose own brackets
// break it ([$.amount, $['metadata[ref]']]: unquoted, the path's brackets end the sequence).
func bracketedPath(line string) bool {
	return strings.Contains(line, "$") && strings.Count(line, "[")+strings.Count(line, "]") > 2
}

func lineText(data []byte, line int) string {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	return lines[line-1]
}

// target decodes the top-level mapping.
func (d *decoder) target(n ast.Node) *Target {
	t := &Target{SharedStore: true}
	top, ok := d.object(n, "", ".")
	if !ok {
		return t
	}
	if s, ok := d.str(top, "name"); ok {
		t.Name = strings.TrimSpace(s)
	} else {
		t.Name = strings.TrimSuffix(filepath.Base(d.ps.file), filepath.Ext(d.ps.file))
	}
	t.Instances = d.instances(top)
	if v, ok := d.boolean(top, "shared_store"); ok {
		t.SharedStore = v
	}
	d.tls(top, t)
	if s, ok := d.str(top, "toxiproxy"); ok {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.ps.add(top.lineOf("toxiproxy"), "toxiproxy", "must be the http:// URL of a Toxiproxy API, got %q", s)
		} else {
			t.Toxiproxy = s
		}
	}
	t.Profile = d.profile(top)
	t.Tenants = d.tenants(top)
	d.auth(top, t)
	t.Operations = d.operations(top, t)
	d.checkOperationScope(t)
	if v, ok := d.duration(top, "retention"); ok {
		t.Retention = v
	}
	if v, ok := d.duration(top, "lock_timeout"); ok {
		t.LockTimeout = v
	}
	t.Lifecycle = d.lifecycle(top)
	t.Downstream = d.downstream(top, t.Lifecycle)
	t.Storage = d.storage(top, t.Lifecycle)
	t.Cleanup = d.cleanup(top)
	t.LoadLimits = d.loadLimits(top)
	t.Hooks = d.hooks(top)
	t.Consumers = d.consumers(top)
	t.Clients = d.clients(top)
	d.needInstances(top, t)
	d.checkConsumerHooks(t)
	d.checkReplicas(top, t)
	d.checkPublishes(top, t)
	d.checkAsync(top, t)
	if t.Lifecycle != nil && t.Lifecycle.UsesBroker() && !slices.ContainsFunc(t.Consumers, func(c *Consumer) bool { return c.Transport != TransportWebhook }) {
		d.ps.add(top.lineOf("lifecycle"), "lifecycle", "uses {{.Broker}} but no consumer reads from a broker (transport: amqp or nats)")
	}
	if s, ok := d.strings(top, "secrets"); ok {
		t.Secrets = s
	}
	if t.Lifecycle != nil && t.Downstream == nil && t.Lifecycle.UsesDownstream() {
		d.ps.add(top.lineOf("lifecycle"), "lifecycle", "uses {{.Downstream}} but no downstream is declared (add downstream: {enabled: true})")
	}
	if t.Lifecycle != nil && t.Storage == nil && t.Lifecycle.UsesStorage() {
		d.ps.add(top.lineOf("lifecycle"), "lifecycle", "uses {{.Storage}} but no storage is declared (add storage: {address: HOST:PORT})")
	}
	return t
}

// instances decodes the instances list: URLs (a value may hold several, comma-separated) or {url}.
// A missing list is reported later, by needInstances, when the target needs one.
func (d *decoder) instances(top *object) []Instance {
	nodes, ok := d.list(top, "instances")
	if !ok {
		return nil
	}
	var out []Instance
	seen := map[string]bool{}
	before := len(d.ps.list)
	for i, n := range nodes {
		path := fmt.Sprintf("instances[%d]", i)
		var raw string
		if _, isMap := d.resolve(n).(*ast.MappingNode); isMap {
			o, ok := d.object(n, path, "instances[]")
			if !ok {
				continue
			}
			if raw, ok = d.required(o, "url", ""); !ok {
				continue
			}
			path = o.at("url")
		} else if raw, ok = d.scalar(n, path); !ok {
			continue
		}
		for _, s := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
			u, err := url.Parse(s)
			switch {
			case err != nil:
				d.ps.add(lineOf(n), path, "bad URL %q: %v", s, err)
			case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
				d.ps.add(lineOf(n), path, "must be an absolute http:// or https:// URL, got %q", s)
			case u.RawQuery != "" || u.Fragment != "":
				d.ps.add(lineOf(n), path, "must not have a query or fragment, got %q", s)
			case u.User != nil:
				d.ps.add(lineOf(n), path, "must not carry credentials; put them in tenants[].headers")
			case seen[u.String()]:
				d.ps.add(lineOf(n), path, "duplicate instance %s", s)
			default:
				seen[u.String()] = true
				out = append(out, Instance{URL: u, Index: len(out)})
			}
		}
	}
	if len(out) == 0 && len(d.ps.list) == before {
		d.ps.add(top.lineOf("instances"), "instances", "must list at least one base URL")
	}
	return out
}

// needInstances reports a target without instances that needs them: every target but one whose
// consumers all read from a broker and are observed through SQL alone (a queue worker with no
// HTTP port), and whose fail_next hooks have nowhere else to go.
func (d *decoder) needInstances(top *object, t *Target) {
	if len(t.Instances) > 0 || top.has("instances") {
		return
	}
	why := ""
	switch {
	case len(t.Operations) == 0 && len(t.Consumers) == 0 && len(t.Clients) > 0:
		// clients only: the harness is the API they call
	case len(t.Operations) > 0 || len(t.Consumers) == 0:
		why = "the base URLs of the API, e.g. [http://127.0.0.1:8080]"
	default:
		for _, c := range t.Consumers {
			switch {
			case !c.IsQueue():
				why = "webhook consumer " + c.Name + " is delivered to over HTTP"
			case c.Effects != nil && c.Effects.HTTP != nil, c.State != nil && c.State.HTTP != nil:
				why = "consumer " + c.Name + " is observed over HTTP; a queue worker without an HTTP port needs SQL observers"
			case c.Hooks.requests():
				why = "consumer " + c.Name + "'s hooks (fail_next, disarm) are requests sent to an instance; a worker without an HTTP port declares fail_next: {message_headers: {...}}"
			}
			if why != "" {
				break
			}
		}
	}
	if why != "" {
		d.ps.add(top.line, "instances", "missing required field (%s)", why)
	}
}

// tls decodes the tls options and loads the CA file.
func (d *decoder) tls(top *object, t *Target) {
	o, ok := d.child(top, "tls")
	if !ok {
		return
	}
	if v, ok := d.boolean(o, "insecure_skip_verify"); ok {
		t.TLS.InsecureSkipVerify = v
	}
	if s, ok := d.str(o, "ca_file"); ok {
		p := d.rel(s)
		pem, err := os.ReadFile(p)
		if err != nil {
			d.ps.add(o.lineOf("ca_file"), o.at("ca_file"), "cannot read the CA file: %v", err)
			return
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			d.ps.add(o.lineOf("ca_file"), o.at("ca_file"), "%s holds no PEM certificate", p)
			return
		}
		t.TLS.CAFile, t.TLS.pool = p, pool
	}
}

// rel resolves a relative path against the target file's folder.
func (d *decoder) rel(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(d.dir, p)
}

// tenants decodes the tenant list.
func (d *decoder) tenants(top *object) []*Tenant {
	nodes, _ := d.list(top, "tenants")
	var out []*Tenant
	seen := map[string]int{}
	for i, n := range nodes {
		o, ok := d.object(n, fmt.Sprintf("tenants[%d]", i), "tenants[]")
		if !ok {
			continue
		}
		tn := &Tenant{Headers: map[string]string{}}
		if name, ok := d.required(o, "name", ""); ok {
			tn.Name = strings.TrimSpace(name)
			if first, dup := seen[tn.Name]; dup {
				d.ps.add(o.lineOf("name"), o.at("name"), "duplicate tenant %q (first on line %d)", tn.Name, first)
			}
			seen[tn.Name] = o.lineOf("name")
		}
		declared := map[string]bool{} // header names are case-insensitive: X-Tenant is x-tenant
		for _, field := range []string{"identity", "headers", "credentials"} {
			for _, h := range d.headers(o, field) {
				canon := strings.ToLower(h.Name)
				if declared[canon] {
					d.ps.add(h.line, o.at(field)+"."+h.Name, "header %s is declared twice for this tenant", h.Name)
					continue
				}
				declared[canon] = true
				tn.Headers[h.Name] = h.Value
				tn.order = append(tn.order, h.Name)
				if field == "identity" {
					tn.Identity = append(tn.Identity, h.Name)
				}
			}
		}
		if s, ok := d.strings(o, "secrets"); ok {
			tn.Secrets = s
		}
		out = append(out, tn)
	}
	return out
}

// auth decodes the top-level auth mode and unknown_credentials, and checks the tenants against
// the mode.
func (d *decoder) auth(top *object, t *Target) {
	t.Auth = AuthBearer
	if s, ok := d.str(top, "auth"); ok {
		switch m := AuthMode(strings.TrimSpace(s)); m {
		case AuthBearer, AuthHeader, AuthNone:
			t.Auth = m
		default:
			d.ps.add(top.lineOf("auth"), "auth", "must be bearer, header or none, got %q", s)
		}
	}
	for _, h := range d.headers(top, "unknown_credentials") {
		if t.UnknownCredentials == nil {
			t.UnknownCredentials = map[string]string{}
		}
		t.UnknownCredentials[h.Name] = h.Value
	}
	if t.Auth != AuthNone {
		return
	}
	for i, tn := range t.Tenants {
		if creds := tn.Credentials(); len(creds) > 0 {
			d.ps.add(top.lineOf("tenants"), fmt.Sprintf("tenants[%d]", i),
				"auth: none, but tenant %s sends credentials (%s): put the headers that only name the tenant under identity", tn.Name, strings.Join(creds, ", "))
		}
	}
}

// lifecycle decodes the optional lifecycle block.
func (d *decoder) lifecycle(top *object) *Lifecycle {
	if !top.has("lifecycle") {
		return nil
	}
	o, ok := d.child(top, "lifecycle")
	if !ok {
		return nil
	}
	l := &Lifecycle{Env: map[string]string{}, env: map[string]*tmpl{}}
	if _, isSeq := o.fields["command"].val.(*ast.SequenceNode); o.has("command") && !isSeq {
		d.ps.add(o.lineOf("command"), o.at("command"), `must be a list of arguments, e.g. [./server, --addr, "{{.Addr}}"]`)
	} else if nodes, ok := d.list(o, "command"); ok && len(nodes) > 0 {
		for i, n := range nodes {
			path := fmt.Sprintf("%s[%d]", o.at("command"), i)
			s, ok := d.scalar(n, path)
			if !ok {
				continue
			}
			l.Command = append(l.Command, s)
			if t, ok := d.compile(s, posOf(d.resolve(n)), path, lifecycleFields); ok {
				l.command = append(l.command, t)
			}
		}
	} else {
		d.ps.add(o.line, o.at("command"), "missing required field (the program and its arguments)")
	}
	for _, h := range d.envMap(o, "env") {
		l.Env[h.Name] = h.Value
		l.envKeys = append(l.envKeys, h.Name)
		if t, ok := d.compile(h.Value, srcPos{line: h.line}, o.at("env")+"."+h.Name, lifecycleFields); ok {
			l.env[h.Name] = t
		}
	}
	if s, ok := d.str(o, "dir"); ok {
		l.Dir = d.rel(s)
		if st, err := os.Stat(l.Dir); err != nil || !st.IsDir() {
			d.ps.add(o.lineOf("dir"), o.at("dir"), "%s is not a folder", l.Dir)
		}
	}
	l.Ready = d.ready(o)
	if v, ok := d.boolean(o, "durable"); ok {
		l.Durable = v
	}
	if v, ok := d.integer(o, "replicas", 1, 64); ok {
		l.Replicas = v
	}
	l.line, l.replicasLine, l.readyLine = o.line, o.lineOf("replicas"), o.lineOf("ready")
	return l
}

// ready decodes lifecycle.ready: one of path (an HTTP probe), broker_consumers and log.
func (d *decoder) ready(o *object) *Ready {
	if !o.has("ready") {
		return nil
	}
	ro, ok := d.child(o, "ready")
	if !ok {
		return nil
	}
	r := &Ready{Path: "/", Timeout: 30 * time.Second}
	probes := 0
	for _, f := range []string{"path", "broker_consumers", "log"} {
		if ro.has(f) {
			probes++
		}
	}
	if probes > 1 {
		d.ps.add(ro.line, o.at("ready"), "declare one probe: path, broker_consumers or log")
	}
	if s, ok := d.str(ro, "path"); ok {
		if !strings.HasPrefix(s, "/") {
			d.ps.add(ro.lineOf("path"), ro.at("path"), "must start with /, got %q", s)
		}
		r.Path = s
	}
	if n, ok := d.integer(ro, "broker_consumers", 1, 1000); ok {
		r.Path, r.BrokerConsumers = "", n
	}
	if s, ok := d.str(ro, "log"); ok {
		re, err := regexp.Compile(s)
		if err != nil {
			d.ps.add(ro.lineOf("log"), ro.at("log"), "bad regular expression %q: %v", s, err)
		}
		r.Path, r.Log = "", re
	}
	if v, ok := d.duration(ro, "timeout"); ok {
		r.Timeout = v
	}
	return r
}

// checkReplicas checks lifecycle.replicas and the readiness probe against the instances: one
// process per instance, or, without instances, the declared replicas with a probe that needs no
// HTTP port.
func (d *decoder) checkReplicas(top *object, t *Target) {
	l := t.Lifecycle
	if l == nil {
		return
	}
	if len(t.Instances) > 0 || top.has("instances") {
		if l.Replicas != 0 && l.Replicas != len(t.Instances) && len(t.Instances) > 0 {
			d.ps.add(l.replicasLine, "lifecycle.replicas", "is %d, but one process runs per instance (%d): leave replicas out", l.Replicas, len(t.Instances))
		}
		l.Replicas = len(t.Instances)
		return
	}
	if l.Replicas == 0 {
		l.Replicas = 1
	}
	if r := l.Ready; r == nil || (r.BrokerConsumers == 0 && r.Log == nil) {
		d.ps.add(l.readyLine, "lifecycle.ready", "a target without instances has no HTTP port to probe: declare {broker_consumers: N} or {log: REGEX}")
	}
	if r := l.Ready; r != nil && r.BrokerConsumers > 0 && !slices.ContainsFunc(t.Consumers, (*Consumer).IsQueue) {
		d.ps.add(l.readyLine, "lifecycle.ready.broker_consumers", "no consumer reads from a broker")
	}
}

// envMap decodes a mapping of environment variable names to values.
func (d *decoder) envMap(o *object, name string) []header {
	if !o.has(name) {
		return nil
	}
	m, ok := o.fields[name].val.(*ast.MappingNode)
	if !ok {
		d.ps.add(o.lineOf(name), o.at(name), "must be a mapping of variable names to values, got %s", kindOf(o.fields[name].val))
		return nil
	}
	var out []header
	entries, local := d.mappingEntries(m, o.at(name), 0)
	seen := map[string]int{}
	for i, mv := range entries {
		key := mv.Key.GetToken().Value
		path := o.at(name) + "." + key
		if !validEnvName(key) {
			d.ps.add(lineOf(mv.Key), path, "%q is not a valid environment variable name", key)
			continue
		}
		if first, dup := seen[key]; dup {
			if i < local {
				d.ps.add(lineOf(mv.Key), path, "duplicate variable (first set on line %d)", first)
			}
			continue
		}
		seen[key] = lineOf(mv.Key)
		if v, ok := d.scalar(mv.Value, path); ok {
			out = append(out, header{Name: key, Value: v, line: lineOf(mv.Key)})
		}
	}
	return out
}

// hostPort checks a host:port value.
func (d *decoder) hostPort(o *object, name string) (string, bool) {
	s, ok := d.str(o, name)
	if !ok || d.standIns[o.at(name)] {
		return s, ok // a stand-in for an unset variable is taken as it is
	}
	if _, port, err := net.SplitHostPort(s); err != nil || port == "" {
		d.ps.add(o.lineOf(name), o.at(name), "must be host:port, got %q", s)
		return "", false
	}
	return s, true
}

// downstream decodes the optional downstream binding.
func (d *decoder) downstream(top *object, l *Lifecycle) *Downstream {
	if !top.has("downstream") {
		return nil
	}
	o, ok := d.child(top, "downstream")
	if !ok {
		return nil
	}
	ds := &Downstream{KeyHeader: "Idempotency-Key"}
	ds.Listen, _ = d.hostPort(o, "listen")
	if s, ok := d.str(o, "key_header"); ok {
		if !validHeaderName(s) {
			d.ps.add(o.lineOf("key_header"), o.at("key_header"), "%q is not a valid HTTP header name", s)
		}
		ds.KeyHeader = s
	}
	if on, ok := d.boolean(o, "enabled"); ok && !on {
		return nil
	}
	if ds.Listen == "" && !l.UsesDownstream() {
		d.ps.add(o.line, "downstream", "the target cannot learn the sink's address: set downstream.listen, or use {{.Downstream}} in lifecycle.command or lifecycle.env")
	}
	return ds
}

// storage decodes the optional storage address.
func (d *decoder) storage(top *object, l *Lifecycle) *Storage {
	if !top.has("storage") {
		return nil
	}
	o, ok := d.child(top, "storage")
	if !ok {
		return nil
	}
	st := &Storage{}
	if _, ok := d.required(o, "address", " (host:port of the target's database or cache)"); ok {
		st.Address, _ = d.hostPort(o, "address")
	}
	st.Listen, _ = d.hostPort(o, "listen")
	if st.Listen == "" && !l.UsesStorage() {
		d.ps.add(o.line, "storage", "the target cannot learn the proxied address: set storage.listen, or use {{.Storage}} in lifecycle.command or lifecycle.env")
	}
	return st
}
