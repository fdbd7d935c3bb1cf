// Package targets loads target files: YAML descriptions of an idempotent HTTP API under test, its
// operations, tenants, record observers and the behaviour it promises (the expectation profile).
// It also builds the requests the suites send and counts business records through the observers.
//
// # The target file
//
// Every field, with its default and an example, is in docs/target-file.md; the fields each object
// accepts are one registry (fields.go), which the loader checks a file against and a test checks
// that page against. In short:
//
// Keys are snake_case. Unknown fields and unknown placeholders are errors. Every scalar may use
// ${NAME} or ${NAME:-default} (default also used when NAME is empty); an unset ${NAME} without a
// default is an error naming NAME; $${ is a literal ${. Values marked (template) are Go
// text/template strings that know {{.Ref}} (unique per operation and run), {{.Key}} (the
// idempotency key) and {{.Tenant}} (tenant name), plus the function json ({{json .Ref}} writes a JSON
// string); lifecycle command and env also know {{.Addr}}, {{.Downstream}}, {{.Storage}},
// {{.EventsURL}} (the harness's receiver of the API's webhook events) and {{.EventsBroker}} (the
// host:port, behind a fault proxy, of where the API's events go: its first event's broker, or
// the receiver; event-under-broker-outage cuts it).
// Quote a YAML value that starts with {{ or ${.
//
//	name: reference                  # optional; default: the file name without extension
//	instances:                       # required: base URLs of the instances of one service
//	  - http://127.0.0.1:8080        # a URL; "${URLS}" may hold several, comma-separated
//	  - url: http://127.0.0.1:8081   # or an object
//	shared_store: true               # default true: the instances share one store
//	tls: {ca_file: ca.pem, insecure_skip_verify: false}   # ca_file relative to this file
//	toxiproxy: http://127.0.0.1:8474 # optional external Toxiproxy API (default: embedded)
//	operations:                      # required, at least one
//	  - name: orders                 # required, unique; letters, digits, - _ .
//	    method: POST                 # default POST
//	    path: /v1/orders             # required (template), may carry ?query
//	    headers: {X-Version: "2"}    # (template values)
//	    body_format: json            # json (default) | form (application/x-www-form-urlencoded)
//	    body: '{"ref": "{{.Ref}}", "amount": 1000}'          # (template)
//	    variant_body: '{"ref": "{{.Ref}}", "amount": 2000}'  # (template) other content, same ref: the mismatch check
//	    key:
//	      in: header                 # header (default) | query | body (a top-level field the harness adds)
//	      name: Idempotency-Key      # default Idempotency-Key for header; required for query and body
//	      form: quoted               # quoted (RFC 8941 "k") | bare (k); default: header: first of
//	                                 # profile.key_forms, query/body: bare
//	      format: uuid               # the keys the harness makes: uuid | ulid | a template over
//	                                 # {{.Run}} (the run's key prefix, --key) and {{.Seq}};
//	                                 # default RUN-SEQ. --key RUN makes the same keys again
//	    fingerprint_ignore: [$.note] # body fields ($.a.b) or ?query parameters the API leaves out
//	                                 # of its fingerprint on purpose: the mismatch check keeps them
//	    observer:                    # optional: counts the business records of one {{.Ref}}
//	      http:                      # either http ...
//	        method: GET              # default GET
//	        path: /v1/orders         # required (template)
//	        query: ref={{.Ref}}      # (template) appended to path
//	        headers: {}              # (template values) besides the tenant's headers
//	        jsonpath: $.count        # required, RFC 9535: one number, or one array (its length);
//	                                 # a non-singular path counts the nodes it selects
//	      per_tenant: true           # default true; false: it counts a ref across all tenants
//	      sql:                       # ... or sql (asked once, whatever shared_store says)
//	        driver: postgres         # postgres | mysql (also MariaDB) | sqlite
//	        dsn: ${ORDERS_DSN}       # sqlite: a file path (relative to this file) or file: URI
//	        query: SELECT count(*) FROM orders WHERE ref = '{{.Ref}}'   # (template) one integer
//	    publishes:                   # optional: the events the operation publishes (an outbox's)
//	      - name: order.created      # required, unique in the operation
//	        amqp: {url: "amqp://guest:guest@127.0.0.1:5672/", exchange: orders, routing_key: order.created}
//	                                 # a named exchange (the harness binds an exclusive, auto-deleted
//	                                 # queue of its own: never the default exchange); routing_key is
//	                                 # that queue's binding key (default #); create: true declares a
//	                                 # durable topic exchange at the start and deletes it at the end
//	        # or nats: {url: "nats://127.0.0.1:4222", stream: ORDERS, subject: orders.created}
//	        #                        # observed by an ephemeral ordered consumer (never a WorkQueue
//	        #                        # stream); create: true makes the stream, delete: true deletes it
//	        # or webhook: {listen: "127.0.0.1:0", path: /events}   the harness's receiver (2xx);
//	        #                        # without listen, lifecycle must pass {{.EventsURL}} (or
//	        #                        # http://{{.EventsBroker}}/PATH, through a fault proxy)
//	        id: {jsonpath: $.id}     # where the event id travels: {jsonpath}, {header: NAME} or
//	                                 # {message_id: true} (queues): what consumers dedupe on
//	        ref: {jsonpath: $.data.ref}   # the member that carries the operation's {{.Ref}}, or
//	        # record: {jsonpath: $.data.id, answer: $.id}   the id of the record its 2xx answer names
//	        within: 10s              # published at most this long after the first 2xx (default 10s)
//	        ignore: [$.sent_at]      # members that may differ between copies of one id
//	auth: bearer                     # bearer (default) | header (an API key header) | none (no
//	                                 # credentials: the credential specs are skipped)
//	tenants:                         # optional; two or more enable the tenancy checks
//	  - name: alice                  # required, unique
//	    identity: {X-Tenant: alice}  # who the caller is: not secret, readable in evidence
//	    credentials: {Authorization: Bearer ${ALICE_TOKEN}}   # secret: redacted in all output
//	    headers: {...}               # older spelling of credentials
//	    secrets: [...]               # optional extra values to redact
//	unknown_credentials: {Authorization: Bearer not-a-token}   # optional: what an unknown caller
//	                                 # sends (default: each credential with its value replaced)
//	profile: ietf                    # ietf (default) | stripe, or a mapping with overrides:
//	profile:
//	  base: ietf                     # ietf | stripe
//	  mismatch_status: 422           # same key, other payload (ietf 422, stripe 400). Every status
//	                                 # field takes a code, a list [400, 409] or a class 4xx
//	  in_flight: 409                 # retry while in flight: a status code | wait-replay | either
//	  in_flight_status: 409          # the status that `either` accepts (default 409)
//	  missing_key_status: 400        # a status | processed (no idempotency; stripe's default)
//	  empty_key_status: 400          # a status | processed
//	  long_key_status: 400           # a key longer than max_key_length
//	  max_key_length: 255            # longest key accepted, counted after unquoting; none = no limit
//	  key_forms: [quoted, bare]      # header key forms accepted (ietf both, stripe [bare])
//	  replay_header: "Idempotent-Replayed: true"   # "Name: value", "Name" (any value) or "" = none
//	                                 # (ietf "", stripe "Idempotent-Replayed: true")
//	  error_policy: replay           # replay (5xx results are stored and replayed) | retry
//	  expired: new                   # an expired key: new (processed again) | reject
//	  expired_status: 409            # required with expired: reject
//	  ignore:                        # volatile parts of a replay, added to the defaults
//	    json_paths: [$.created]      # RFC 9535 paths
//	    headers: [X-Served-By]       # defaults: Date, request ids, tracing and timing headers
//	  operation_scope: per-operation # per-operation (default: the same key on another operation
//	                                 # is its own request) | shared (one key space: refused there)
//	  operation_reuse_status: 4xx    # shared: what a key reused on another operation gets
//	retention: 24h                   # optional declared key retention (Go duration, also 7d)
//	lock_timeout: 30s                # optional declared in-progress lock timeout
//	lifecycle:                       # optional: how the harness starts one instance
//	  command: [retrysafe, serve, --addr, "{{.Addr}}"]   # required, one process per instance
//	  env: {DOWNSTREAM: "{{.Downstream}}"}              # (template values) added to the environment
//	  dir: .                         # working directory, relative to this file
//	  ready: {path: /healthz, timeout: 30s}   # readiness probe: GET until 2xx
//	  durable: true                  # the store survives a kill (default false)
//	downstream:                      # optional: the target calls the harness's sink
//	  enabled: true                  # default true when the block is present
//	  listen: 127.0.0.1:9999         # fixed sink address, for a target started elsewhere;
//	                                 # otherwise lifecycle must use {{.Downstream}}
//	  key_header: Idempotency-Key    # header that carries the downstream key
//	storage:                         # optional: the target's database or cache
//	  address: 127.0.0.1:5432        # required host:port
//	  listen: 127.0.0.1:15432        # fixed proxy address, else lifecycle must use {{.Storage}}
//	cleanup:                         # optional, run once per tenant at the end;
//	  method: DELETE                 # .Ref is then the run's ref prefix. Default method DELETE
//	  path: /v1/test-data            # (template) plus query, headers, body, body_format
//	  query: ref_prefix={{.Ref}}
//	  # or  sql: {driver, dsn, query}
//	hooks:                           # optional black-box fault hooks of a test deployment
//	  fail_next: {method: POST, path: /_test/fail}     # sent just before an attempt: it fails
//	  slow: {headers: {X-Test-Delay: "{{.Ms}}"}}       # makes one attempt take {{.Ms}} ms
//	  hold_publish:                  # holds the publications between the commit and the publish
//	    hold: {method: POST, path: /_test/hold-publish}       # sent to every instance: each of
//	                                 # its publications waits before it publishes
//	    held: {path: /_test/hold-publish, jsonpath: $.held}   # how many wait now (GET): the
//	                                 # harness kills an instance once one does
//	    release: {method: DELETE, path: /_test/hold-publish}  # optional: lets them go
//	consumers:                       # optional event consumers under test (then operations may be
//	  - name: webhooks               # left out); the harness delivers every event at least once
//	    transport: webhook           # webhook (default) | amqp | nats
//	    path: /webhooks              # webhook only: POSTed on each instance (method too)
//	    headers: {X-Source: "{{.Object}}"}   # (template values) the webhook's, or each message's
//	    amqp: {url: "amqp://guest:guest@127.0.0.1:5672/", exchange: x, routing_key: k, queue: q, create: true}
//	                                 # exchange "" (or none): the default exchange, routed by queue;
//	                                 # delete: true deletes the queue at the end, whoever made it
//	    nats: {url: "nats://127.0.0.1:4222", stream: s, subject: s.events, durable: d, create: true}
//	                                 # durable: the pull or push consumer to inspect; create_durable:
//	                                 # pull (default with create and durable) | push | false;
//	                                 # delete: true deletes the stream at the end
//	    event:
//	      body: '{"id": "{{.EventID}}", "object": "{{.Object}}", "version": {{.Version}}}'   # also
//	                                 # {{.Time}}, {{.Type}}, {{.Ref}}
//	      type: order.updated
//	      id: {jsonpath: $.id}       # where the id travels, one of: {transport: true} (queues' message
//	                                 # id, their default), {header: NAME}, {jsonpath: P} (webhooks'
//	                                 # default $.id); elsewhere than the transport, each publication
//	                                 # gets its own message id
//	      operation: {jsonpath: $.data.payment_id}   # optional: where an event names the business
//	                                 # operation it applies ({{.Operation}}), or {header: NAME};
//	                                 # effects are then counted per operation
//	      operations: {jsonpath: "$.data.items[*].id"}   # optional: the several it names
//	                                 # ({{.Operations}}, a list)
//	    operation_dedupe: true       # optional: one effect per operation, whatever message names it
//	    signing: {scheme: standard-webhooks, secret: "${WEBHOOK_SECRET}", tolerance: 5m}
//	                                 # standard-webhooks | stripe | github | hmac (hmac: {header,
//	                                 # template, encoding, prefix, timestamp_header}) | none
//	    effects: {http: {path: /v1/effects, query: "event={{.EventID}}", jsonpath: $.count}}
//	    state: {http: {path: "/v1/objects/{{.Object}}", jsonpath: $.version}}   # optional
//	    dedupe_retention: 72h        # how long an event id is remembered
//	    lock_timeout: 30s            # how long a claimed event may stay in progress
//	    hooks:                       # optional test hooks of the consumer
//	      fail_next: {path: /_test/fail, query: "event={{.EventID}}"}   # sent to every instance: the
//	                                 # first handling of the event fails
//	      slow: {headers: {X-Test-Delay: "{{.Ms}}"}}   # the webhook's or message's: one slow handling
//	                                 # lifecycle command and env also know {{.Broker}}: the broker's
//	                                 # host:port behind a fault proxy. Without instances (a queue
//	                                 # worker with no HTTP port, SQL observers), lifecycle.replicas: N
//	                                 # and ready: {log: REGEX} | {broker_consumers: N}
//	secrets: [${EXTRA_SECRET}]       # optional values to redact in all output
package targets

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Target is a loaded, validated target file.
type Target struct {
	// Path is the file the target was loaded from (the name given to Parse).
	Path string
	// Name names the target in reports.
	Name string
	// Instances are the base URLs of the instances of one service (at least one).
	Instances []Instance
	// SharedStore says the instances share one store (default true): observers are asked once.
	SharedStore bool
	// TLS holds the client TLS options.
	TLS TLS
	// Toxiproxy is the URL of an external Toxiproxy API; "" = the harness embeds one.
	Toxiproxy string
	// Operations are the idempotent operations under test (at least one).
	Operations []*Operation
	// Tenants are the callers the requests are sent as; empty = no authentication headers.
	Tenants []*Tenant
	// Auth is how the API tells callers apart (default bearer).
	Auth AuthMode
	// UnknownCredentials are the headers sent as an unknown caller; nil = derived from each
	// tenant's credentials (see Tenant.WithUnknownCredentials).
	UnknownCredentials map[string]string
	// Profile is the behaviour the target promises.
	Profile Profile
	// Retention is the declared key retention; 0 = not declared.
	Retention time.Duration
	// LockTimeout is the declared in-progress lock timeout; 0 = not declared.
	LockTimeout time.Duration
	// Lifecycle says how to start an instance; nil = the target runs on its own.
	Lifecycle *Lifecycle
	// Downstream is the binding to the harness's downstream sink; nil = none.
	Downstream *Downstream
	// Storage names the target's store address; nil = none.
	Storage *Storage
	// Cleanup is run at the end of a run; nil = none.
	Cleanup *Cleanup
	// Hooks are the target's black-box fault hooks; nil = none.
	Hooks *Hooks
	// LoadLimits are the load the target's owner declares it takes from one retrysafe process
	// (load_limits); nil: the guard rails' hard caps of a remote run hold.
	LoadLimits *LoadLimits
	// Consumers are the event consumers under test (webhook or queue); empty = none.
	Consumers []*Consumer
	// Clients are the clients of an idempotent API under test; empty = none.
	Clients []*Client
	// Chain holds the three parts of a chain target file (a client, an API and a consumer run
	// end to end): a chain target sets only Name, Path and Chain. Nil for any other target.
	Chain *Chain
	// Secrets are extra values to redact from all output.
	Secrets []string
	// Warnings are declarations that are valid but contradict what an idempotent API should
	// do (such as a 5xx declared for a client's malformed key); validate prints them.
	Warnings []Problem

	mu    sync.Mutex
	dbs   map[string]*sql.DB
	owned []io.Closer // closed by Close, newest first (Own)
}

// Instance is one base URL of the service.
type Instance struct {
	// URL is the base URL (no query, no fragment); operation paths are appended to its path.
	URL *url.URL
	// Index is the instance's position in Target.Instances.
	Index int
}

// Addr returns the instance's host:port, with the scheme's default port when none is written.
func (in *Instance) Addr() string {
	if in.URL.Port() != "" {
		return in.URL.Host
	}
	port := "80"
	if in.URL.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(in.URL.Hostname(), port)
}

// Resolve returns the URL of pathQuery (a rendered "/path?query") on this instance.
func (in *Instance) Resolve(pathQuery string) (*url.URL, error) {
	s, err := in.resolveString(pathQuery)
	if err != nil {
		return nil, err
	}
	return url.Parse(s)
}

// resolveString is Resolve without parsing the result.
func (in *Instance) resolveString(pathQuery string) (string, error) {
	if !strings.HasPrefix(pathQuery, "/") {
		return "", errors.New("path " + pathQuery + " must start with /")
	}
	return strings.TrimSuffix(in.URL.String(), "/") + pathQuery, nil
}

// TLS holds the client TLS options of a target.
type TLS struct {
	// CAFile is the PEM file of extra trusted CAs, resolved against the target file's folder.
	CAFile string
	// InsecureSkipVerify turns off certificate verification.
	InsecureSkipVerify bool

	pool *x509.CertPool
}

// TLSConfig returns the client TLS configuration the target asks for.
func (t *Target) TLSConfig() *tls.Config {
	c := &tls.Config{InsecureSkipVerify: t.TLS.InsecureSkipVerify} //nolint:gosec // declared by the target file
	if t.TLS.pool != nil {
		c.RootCAs = t.TLS.pool
	}
	return c
}

// ObserverClient returns a client for the requests that are not attempts (observers,
// reachability checks): the target's TLS settings, redirects not followed, every request
// bounded by timeout, maxIdle idle connections kept per host (0: net/http's default).
func (t *Target) ObserverClient(timeout time.Duration, maxIdle int) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		Transport:     &http.Transport{TLSClientConfig: t.TLSConfig(), MaxIdleConnsPerHost: maxIdle},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// SecretHeaders returns the names of the headers the tenants authenticate with (their
// credentials, not their identity headers): their values are secrets.
func (t *Target) SecretHeaders() []string {
	var names []string
	for _, tn := range t.Tenants {
		names = append(names, tn.Credentials()...)
	}
	return names
}

// PublicValues returns what names a tenant and is never a secret, even where a credential
// carries it: the tenants' names and identity header values. Evidence keeps them readable ("bob
// received alice's body").
func (t *Target) PublicValues() []string {
	var out []string
	for _, tn := range t.Tenants {
		out = append(out, tn.Name)
		for _, name := range tn.Identity {
			out = append(out, tn.Headers[name])
		}
	}
	return out
}

// UnknownCaller returns tn as an unknown caller: its identity headers and the target's declared
// unknown_credentials, or, when none are declared, its credentials replaced (see
// Tenant.WithUnknownCredentials).
func (t *Target) UnknownCaller(tn *Tenant) *Tenant {
	if len(t.UnknownCredentials) == 0 {
		return tn.WithUnknownCredentials()
	}
	bad := tn.WithoutCredentials()
	bad.Name = "unknown"
	for _, name := range slices.Sorted(maps.Keys(t.UnknownCredentials)) {
		bad.Headers[name] = t.UnknownCredentials[name]
		bad.order = append(bad.order, name)
	}
	return bad
}

// Tenant is one caller identity.
type Tenant struct {
	// Name names the tenant ({{.Tenant}}).
	Name string
	// Headers are sent with every request of this tenant: its identity headers and its
	// credentials (see Identity and Credentials).
	Headers map[string]string
	// Identity names the headers that only say who the tenant is (not secret: they stay
	// readable in evidence); every other header is a credential (secret).
	Identity []string
	// Secrets are extra values of this tenant to redact.
	Secrets []string

	order []string // header names in file order
}

// Lifecycle says how the harness starts one instance of the target.
type Lifecycle struct {
	// Command is the argument list (templates, with LifecycleVars); Command[0] is the program.
	Command []string
	// Env holds extra environment variables (template values).
	Env map[string]string
	// Dir is the working directory ("" = the harness's), resolved against the target file's folder.
	Dir string
	// Ready is the readiness probe; nil = ready once the port accepts connections.
	Ready *Ready
	// Durable says the store survives a SIGKILL and restart (needed by the crash properties).
	Durable bool
	// Replicas is how many processes run: one per instance, or, for a target without
	// instances (a queue worker with no HTTP port), the declared number (default 1).
	Replicas int

	command []*tmpl
	env     map[string]*tmpl
	envKeys []string
	// lines of the block and of its replicas and ready fields, for problems found later
	line, replicasLine, readyLine int
}

// Ready is a readiness probe, tried for at most Timeout: GET Path on the instance until it
// answers 2xx; or, for a process without an HTTP port, until the broker counts BrokerConsumers
// consumers for each running process (RabbitMQ's consumers of the queue, JetStream's waiting
// pull requests or a bound push consumer), or until the process prints a line matching Log.
type Ready struct {
	Path    string
	Timeout time.Duration
	// BrokerConsumers is how many consumers each process attaches to its queue (0 = not this probe).
	BrokerConsumers int
	// Log matches the line a process prints once it is ready (nil = not this probe).
	Log *regexp.Regexp
}

// Render returns the argument list and the extra environment ("NAME=value") for one instance.
func (l *Lifecycle) Render(v LifecycleVars) (argv, env []string, err error) {
	for i, t := range l.command {
		s, err := t.render(v)
		if err != nil {
			return nil, nil, errors.New("lifecycle.command[" + strconv.Itoa(i) + "]: " + err.Error())
		}
		argv = append(argv, s)
	}
	for _, k := range l.envKeys {
		s, err := l.env[k].render(v)
		if err != nil {
			return nil, nil, errors.New("lifecycle.env." + k + ": " + err.Error())
		}
		env = append(env, k+"="+s)
	}
	return argv, env, nil
}

// UsesDownstream reports whether the command or env refers to {{.Downstream}}.
func (l *Lifecycle) UsesDownstream() bool { return l.uses("Downstream") }

// UsesStorage reports whether the command or env refers to {{.Storage}}.
func (l *Lifecycle) UsesStorage() bool { return l.uses("Storage") }

// UsesBroker reports whether the command or env refers to {{.Broker}}.
func (l *Lifecycle) UsesBroker() bool { return l.uses("Broker") }

// UsesEventsURL reports whether the command or env refers to {{.EventsURL}}.
func (l *Lifecycle) UsesEventsURL() bool { return l.uses("EventsURL") }

// UsesEventsBroker reports whether the command or env refers to {{.EventsBroker}}.
func (l *Lifecycle) UsesEventsBroker() bool { return l.uses("EventsBroker") }

func (l *Lifecycle) uses(name string) bool {
	if l == nil {
		return false
	}
	ph := "." + name
	for _, s := range l.Command {
		if strings.Contains(s, ph) {
			return true
		}
	}
	for _, s := range l.Env {
		if strings.Contains(s, ph) {
			return true
		}
	}
	return false
}

// Downstream binds the target to the harness's downstream sink.
type Downstream struct {
	// Listen is a fixed address for the sink; "" = any port, passed as {{.Downstream}}.
	Listen string
	// KeyHeader is the header carrying the downstream idempotency key (default Idempotency-Key).
	KeyHeader string
}

// Storage names the target's database or cache, so that the harness can put a fault proxy on it.
type Storage struct {
	// Address is the real host:port of the store.
	Address string
	// Listen is a fixed proxy address; "" = any port, passed as {{.Storage}}.
	Listen string
}

// Close releases the database connections the SQL observers opened and what the target owns
// (Own).
func (t *Target) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for _, db := range t.dbs {
		errs = append(errs, db.Close())
	}
	t.dbs = nil
	for i := len(t.owned) - 1; i >= 0; i-- {
		errs = append(errs, t.owned[i].Close())
	}
	t.owned = nil
	return errors.Join(errs...)
}

// Own makes Close close c too: what was set up for this target alone (ports reserved for its
// processes, a database schema), released with it.
func (t *Target) Own(c io.Closer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.owned = append(t.owned, c)
}

// sensitiveHeaders are header names whose static values are secret wherever they appear.
var sensitiveHeaders = []string{"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"}

// SecretValues returns every value the target file marks or implies secret: tenant header values
// (and the credential after an auth scheme such as "Bearer "), static values of sensitive headers,
// tenant and top-level secrets, and database passwords in DSNs. Longest first, without duplicates.
func (t *Target) SecretValues() []string {
	var out []string
	public := t.PublicValues()
	addCred := func(v string) {
		out = append(out, v)
		scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
		if cred = strings.TrimSpace(cred); ok && len(cred) >= 8 && !strings.Contains(scheme, "=") && !slices.Contains(public, cred) {
			out = append(out, cred)
		}
	}
	for _, tn := range t.Tenants {
		for _, name := range tn.Credentials() {
			addCred(tn.Headers[name])
		}
		out = append(out, tn.Secrets...)
	}
	sensitive := func(h map[string]string) {
		for k, v := range h {
			if slices.Contains(sensitiveHeaders, strings.ToLower(k)) && !strings.Contains(v, "{{") {
				addCred(v)
			}
		}
	}
	var dsns []*SQLQuery
	for _, op := range t.Operations {
		sensitive(op.Headers)
		if op.Observer != nil && op.Observer.HTTP != nil {
			sensitive(op.Observer.HTTP.Headers)
		}
		if op.Observer != nil && op.Observer.SQL != nil {
			dsns = append(dsns, op.Observer.SQL)
		}
	}
	if t.Cleanup != nil {
		sensitive(t.Cleanup.Headers)
		if t.Cleanup.SQL != nil {
			dsns = append(dsns, t.Cleanup.SQL)
		}
	}
	for _, q := range dsns {
		out = append(out, dsnPassword(q.Driver, q.DSN))
	}
	out = append(out, t.Secrets...)
	brokerURLs := t.publishBrokerURLs()
	for _, c := range t.Consumers {
		out = append(out, c.Signing.Secret)
		brokerURLs = append(brokerURLs, c.brokerURL())
	}
	for _, raw := range brokerURLs {
		if pu, err := url.Parse(raw); err == nil && pu.User != nil {
			if pw, ok := pu.User.Password(); ok && pw != "guest" {
				out = append(out, pw)
			}
		}
	}
	var clean []string
	for _, s := range out {
		if strings.TrimSpace(s) != "" && !slices.Contains(clean, s) {
			clean = append(clean, s)
		}
	}
	slices.SortStableFunc(clean, func(a, b string) int { return len(b) - len(a) })
	return clean
}

// UnknownCredential is the credential the harness sends where a tenant's is expected, to check
// that an unknown caller never gets a stored answer.
const UnknownCredential = "retrysafe-unknown-credential"

// WithUnknownCredentials returns the tenant as an unknown caller: the same headers in the same
// order, its identity headers as they are and each credential replaced by UnknownCredential
// (after the auth scheme, as in "Bearer retrysafe-unknown-credential").
func (tn *Tenant) WithUnknownCredentials() *Tenant {
	bad := &Tenant{Name: "unknown", Headers: map[string]string{}, Identity: tn.Identity, order: slices.Clone(tn.order)}
	for name, v := range tn.Headers {
		if slices.Contains(tn.Identity, name) {
			bad.Headers[name] = v
		} else if scheme, _, ok := strings.Cut(v, " "); ok && validHeaderName(scheme) {
			// An auth scheme is a token ("Bearer", "Basic"); "session=abc; theme=dark" has none,
			// and keeping its first word would send the tenant's real cookie.
			bad.Headers[name] = scheme + " " + UnknownCredential
		} else {
			bad.Headers[name] = UnknownCredential
		}
	}
	return bad
}

// Credentials returns the names of the tenant's credential headers (its headers that are not
// identity headers), in file order.
func (tn *Tenant) Credentials() []string {
	var out []string
	for _, name := range tn.order {
		if !slices.Contains(tn.Identity, name) {
			out = append(out, name)
		}
	}
	return out
}

// WithoutCredentials returns the tenant without its credentials: its identity headers alone.
func (tn *Tenant) WithoutCredentials() *Tenant {
	bare := &Tenant{Name: "anonymous", Headers: map[string]string{}, Identity: tn.Identity}
	for _, name := range tn.order {
		if slices.Contains(tn.Identity, name) {
			bare.Headers[name] = tn.Headers[name]
			bare.order = append(bare.order, name)
		}
	}
	return bare
}
