// Package probetest starts the reference API, or one of its mutants, in-process on 127.0.0.1 for
// tests of the probe and of the commands built on it, and writes the target file that describes
// it, downstream sink or test hooks included.
package probetest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/targets/reference"
)

// TargetYAML is the target file of a reference API started by Start; %s are its name, its URL
// and the address of the downstream sink the probe must serve.
const TargetYAML = `# The reference API started in-process by a test (mutant: %[1]s).
name: %[1]s
instances:
  - %[2]s
operations:
  - name: orders
    path: /v1/orders
    body: '{"ref": "{{.Ref}}", "amount": 1000, "currency": "eur"}'
    variant_body: '{"ref": "{{.Ref}}", "amount": 2000, "currency": "eur"}'
    observer:
      http:
        path: /v1/orders
        query: "ref={{.Ref}}"
        jsonpath: $.count
  - name: refunds
    path: /v1/refunds
    body: '{"ref": "{{.Ref}}", "amount": 1000, "currency": "eur"}'
    variant_body: '{"ref": "{{.Ref}}", "amount": 500, "currency": "eur"}'
    observer:
      http:
        path: /v1/refunds
        query: "ref={{.Ref}}"
        jsonpath: $.count
tenants:
  - name: alice
    headers: {Authorization: Bearer alice}
  - name: bob
    headers: {Authorization: Bearer bob}
profile:
  base: ietf
  replay_header: "Idempotent-Replayed: true"
downstream:
  listen: %[3]s
`

// Server is a running reference API.
type Server struct {
	// Name is "reference" or the mutant's name.
	Name string
	// URL is the API's base URL.
	URL string
	// Sink is the host:port the API calls as its downstream provider (nobody listens there
	// until a probe does); "" when it calls none.
	Sink string
	// TargetFile is the path of a target file describing the API.
	TargetFile string
}

// Options shape a reference API started by StartWith.
type Options struct {
	// Mutant is the mutant to run (reference.MutantNone = the correct API).
	Mutant reference.Mutant
	// Downstream makes the API call a downstream provider at a fixed address, which the target
	// file declares as downstream.listen (the harness serves its sink there).
	Downstream bool
	// Hooks serves the black-box test hooks (`serve --hooks`) and declares them in the target
	// file (hooks.fail_next, hooks.slow).
	Hooks bool
	// Configure changes the API's configuration (a shape: key format, auth, mismatch status).
	Configure func(*reference.Config)
	// Wrap wraps the API's handler: a test's own misbehaviour on top of the reference.
	Wrap func(http.Handler) http.Handler
	// Edit changes the target file's text before it is written.
	Edit func(string) string
}

// hooksYAML declares the reference API's test hooks.
const hooksYAML = `hooks:
  fail_next: {method: POST, path: /_test/fail}
  slow: {headers: {X-Test-Delay: "{{.Ms}}"}}
`

// Start starts the reference API with mutant m (reference.MutantNone = the correct API) until
// the test ends, and writes its target file into a temporary folder.
func Start(tb testing.TB, m reference.Mutant) Server {
	tb.Helper()
	return StartWith(tb, Options{Mutant: m, Downstream: true})
}

// StartWithoutDownstream is Start for an API that calls no downstream provider; its target file
// declares none.
func StartWithoutDownstream(tb testing.TB, m reference.Mutant) Server {
	tb.Helper()
	return StartWith(tb, Options{Mutant: m})
}

// StartWith starts the reference API shaped by o (on the memory store) until the test ends,
// and writes its target file into a temporary folder.
func StartWith(tb testing.TB, o Options) Server {
	tb.Helper()
	cfg := reference.Config{
		Store: reference.NewMemoryStore(), Tenants: []string{"alice", "bob"}, Mutant: o.Mutant,
		Retention: reference.DefaultRetention, LockTimeout: reference.DefaultLockTimeout,
		WorkDelay: reference.DefaultWorkDelay, Hooks: o.Hooks,
	}
	sink := ""
	if o.Downstream {
		sink = FreeAddr(tb)
		cfg.Downstream = "http://" + sink + "/charge"
	}
	if o.Configure != nil {
		o.Configure(&cfg)
	}
	api, err := reference.NewAPI(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	var h http.Handler = api
	if o.Wrap != nil {
		h = o.Wrap(api)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	s := Server{Name: "reference", URL: srv.URL, Sink: sink}
	if o.Mutant != reference.MutantNone {
		s.Name = string(o.Mutant)
	}
	s.TargetFile = filepath.Join(tb.TempDir(), s.Name+".yaml")
	text := fmt.Sprintf(TargetYAML, s.Name, s.URL, s.Sink)
	if !o.Downstream {
		text, _, _ = strings.Cut(text, "downstream:")
	}
	if o.Hooks {
		text += hooksYAML
	}
	if o.Edit != nil {
		text = o.Edit(text)
	}
	if err := os.WriteFile(s.TargetFile, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return s
}

// FreeAddr returns a 127.0.0.1 address that was free a moment ago.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
