package targets

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// opTarget parses a one-operation target whose operation has the given extra YAML lines.
func opTarget(t *testing.T, opYAML, extra string) *Target {
	t.Helper()
	src := "instances: [http://127.0.0.1:8080/base]\noperations:\n  - name: op\n    path: /v1/things?dry=0\n" + opYAML +
		"tenants:\n  - name: alice\n    headers: {Authorization: Bearer alice}\n" + extra
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatalf("parse:\n%s\n%s", src, strings.Join(probs, "\n"))
	}
	return tg
}

func TestBuildKeyPlacement(t *testing.T) {
	bodies := map[BodyFormat]string{
		BodyJSON: "    body: '{\"ref\": \"{{.Ref}}\", \"amount\": 1000}'\n",
		BodyForm: "    body_format: form\n    body: 'ref={{.Ref}}&amount=1000'\n",
	}
	for _, in := range []KeyLocation{KeyInHeader, KeyInQuery, KeyInBody} {
		for _, format := range []BodyFormat{BodyJSON, BodyForm} {
			for _, form := range []KeyForm{KeyQuoted, KeyBare} {
				t.Run(fmt.Sprintf("%s/%s/%s", in, format, form), func(t *testing.T) {
					name := "Idempotency-Key"
					if in != KeyInHeader {
						name = "ClientToken"
					}
					tg := opTarget(t, bodies[format]+fmt.Sprintf("    key: {in: %s, name: %s, form: %s}\n", in, name, form), "")
					op := tg.Operations[0]
					req, body, err := op.Build(BuildInput{Instance: &tg.Instances[0], Tenant: tg.Tenants[0], Vars: Vars{Ref: "r-1", Key: "k-1"}})
					if err != nil {
						t.Fatal(err)
					}
					want := "k-1"
					if form == KeyQuoted {
						want = `"k-1"`
					}
					var got []string
					if v := req.Header.Values(name); len(v) > 0 {
						got = append(got, "header="+v[0])
					}
					if q := req.URL.Query(); q.Has(name) {
						got = append(got, "query="+q.Get(name))
					}
					if v, ok := bodyField(body, format, name); ok {
						got = append(got, "body="+v)
					}
					if len(got) != 1 || got[0] != string(in)+"="+want {
						t.Errorf("key found at %v, want only %s=%s", got, in, want)
					}
					if ref, _ := bodyField(body, format, "ref"); ref != "r-1" {
						t.Errorf("ref field = %q in %s", ref, body)
					}
					checkRequest(t, req, body, format)
					if req.URL.Path != "/base/v1/things" || req.URL.Query().Get("dry") != "0" {
						t.Errorf("URL = %s", req.URL)
					}
				})
			}
		}
	}
}

// checkRequest checks what every built request must satisfy.
func checkRequest(t *testing.T, req *http.Request, body []byte, format BodyFormat) {
	t.Helper()
	if req.GetBody != nil {
		t.Error("GetBody is set: net/http could re-send the request")
	}
	if req.Body == nil || req.Body == http.NoBody {
		t.Error("Body is nil or NoBody: net/http treats a keyed request without body as replayable")
	}
	sent, _ := io.ReadAll(req.Body)
	if !bytes.Equal(sent, body) || req.ContentLength != int64(len(body)) {
		t.Errorf("request body %q (length %d) differs from returned bytes %q", sent, req.ContentLength, body)
	}
	wantCT := map[BodyFormat]string{BodyJSON: "application/json", BodyForm: "application/x-www-form-urlencoded"}[format]
	if len(body) > 0 && req.Header.Get("Content-Type") != wantCT {
		t.Errorf("Content-Type = %q, want %q", req.Header.Get("Content-Type"), wantCT)
	}
	if req.Header.Get("Authorization") != "Bearer alice" {
		t.Errorf("tenant header missing: %v", req.Header)
	}
}

func TestBuildKeyModes(t *testing.T) {
	tg := opTarget(t, "    body: '{\"ref\": \"{{.Ref}}\"}'\n    variant_body: '{\"ref\": \"{{.Ref}}\", \"x\": 1}'\n    headers: {X-Tenant: \"{{.Tenant}}\"}\n", "")
	op, inst := tg.Operations[0], &tg.Instances[0]
	build := func(in BuildInput) (*http.Request, []byte) {
		t.Helper()
		in.Instance = inst
		if in.Vars.Key == "" {
			in.Vars = Vars{Ref: "r", Key: "k"}
		}
		req, body, err := op.Build(in)
		if err != nil {
			t.Fatal(err)
		}
		return req, body
	}
	if req, _ := build(BuildInput{}); req.Header.Get("Idempotency-Key") != `"k"` || req.Header.Get("Authorization") != "" {
		t.Errorf("default: %v", req.Header)
	}
	if req, _ := build(BuildInput{Key: KeyMode{Form: KeyBare}}); req.Header.Get("Idempotency-Key") != "k" {
		t.Errorf("bare: %v", req.Header)
	}
	if req, _ := build(BuildInput{Key: KeyMode{Omit: true}}); len(req.Header.Values("Idempotency-Key")) != 0 {
		t.Errorf("omit: %v", req.Header)
	}
	empty := ""
	if req, _ := build(BuildInput{Key: KeyMode{Raw: &empty}}); !reflect.DeepEqual(req.Header.Values("Idempotency-Key"), []string{""}) {
		t.Errorf("raw empty: %v", req.Header)
	}
	raw := `"unterminated`
	if req, _ := build(BuildInput{Key: KeyMode{Raw: &raw}}); req.Header.Get("Idempotency-Key") != raw {
		t.Errorf("raw: %v", req.Header)
	}
	if req, body := build(BuildInput{Variant: true, Tenant: tg.Tenants[0]}); string(body) != `{"ref": "r", "x": 1}` || req.Header.Get("X-Tenant") != "alice" {
		t.Errorf("variant: %s %v", body, req.Header)
	}
	if _, body := build(BuildInput{Body: []byte(`{"ref":"r"}`)}); string(body) != `{"ref":"r"}` {
		t.Errorf("body override: %s", body)
	}
	if _, _, err := op.Build(BuildInput{Instance: inst, Vars: Vars{Key: "clé"}}); err == nil || !strings.Contains(err.Error(), "RFC 8941") {
		t.Errorf("non-ASCII quoted key: %v", err)
	}
	if _, _, err := op.Build(BuildInput{}); err == nil {
		t.Error("Build without an instance should fail")
	}
	noVariant := opTarget(t, "", "").Operations[0]
	if _, _, err := noVariant.Build(BuildInput{Instance: inst, Variant: true}); err == nil || !strings.Contains(err.Error(), "variant_body") {
		t.Errorf("missing variant: %v", err)
	}
	req, body, err := noVariant.Build(BuildInput{Instance: inst, Vars: Vars{Key: "k"}})
	if err != nil || len(body) != 0 || req.Header.Get("Content-Type") != "" {
		t.Fatalf("empty body: %v %q %v", err, body, req.Header)
	}
	checkRequest(t, withAuth(req), body, BodyJSON)
}

func withAuth(r *http.Request) *http.Request {
	r.Header.Set("Authorization", "Bearer alice")
	return r
}

func TestReformat(t *testing.T) {
	in := []byte(`{"ref":"r-1","amount":1000,"nested":{"a":1,"b":[1,{"x":"<&>","y":null}],"c":true},"big":12345678901234567890,"e":{},"l":[]}`)
	out, err := Reformat(in, BodyJSON)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(in, out) {
		t.Fatal("Reformat returned the same bytes")
	}
	c1, _ := canonical(in, BodyJSON)
	c2, err := canonical(out, BodyJSON)
	if err != nil || c1 != c2 {
		t.Fatalf("content changed (%v):\n%s\n%s", err, in, out)
	}
	if !strings.Contains(string(out), "12345678901234567890") || !strings.Contains(string(out), "<&>") {
		t.Errorf("numbers or strings rewritten: %s", out)
	}
	if i, j := bytes.Index(out, []byte(`"ref"`)), bytes.Index(out, []byte(`"amount"`)); i < j {
		t.Errorf("keys not reversed: %s", out)
	}
	single := []byte(`{"a":1}`)
	if out, _ := Reformat(single, BodyJSON); bytes.Equal(out, single) {
		t.Error("single-member object unchanged")
	}
	if _, err := Reformat([]byte(`{"a":`), BodyJSON); err == nil {
		t.Error("truncated JSON accepted")
	}
	if _, err := Reformat([]byte(`{"a":1} x`), BodyJSON); err == nil {
		t.Error("trailing data accepted")
	}
	form := []byte("amount=1000&currency=eur&metadata%5Bref%5D=r+1")
	fout, err := Reformat(form, BodyForm)
	if err != nil || string(fout) != "metadata%5Bref%5D=r+1&currency=eur&amount=1000" {
		t.Errorf("form: %s %v", fout, err)
	}
	one := []byte("amount=1000")
	fout, err = Reformat(one, BodyForm)
	a, _ := url.ParseQuery(string(one))
	b, _ := url.ParseQuery(string(fout))
	if err != nil || bytes.Equal(one, fout) || !reflect.DeepEqual(a, b) {
		t.Errorf("single form field: %s %v", fout, err)
	}
	if _, err := Reformat(in, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestBuiltRequestsAreNeverResent proves that a request from Build is not silently re-sent by
// net/http when a reused keep-alive connection breaks after the request went out, while a request
// built the usual way is (so the test would notice a regression).
func TestBuiltRequestsAreNeverResent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var seen atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for first := true; ; first = false {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if req.URL.Path != "/warm" {
						seen.Add(1)
					}
					if !first {
						return // the handler "ran"; the answer is lost
					}
					_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}(c)
		}
	}()
	tg, probs := parseString(fmt.Sprintf("instances: [http://%s]\noperations:\n  - {name: a, path: /a, body: '{\"n\": 1}'}\n  - {name: b, path: /b}\n", ln.Addr()), nil)
	if probs != nil {
		t.Fatal(probs)
	}
	attempt := func(req *http.Request) (int32, error) {
		hc := &http.Client{Transport: &http.Transport{}}
		defer hc.CloseIdleConnections()
		warm, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/warm", nil)
		resp, err := hc.Do(warm)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		seen.Store(0)
		resp, err = hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return seen.Load(), err
	}
	for _, op := range tg.Operations {
		req, _, err := op.Build(BuildInput{Instance: &tg.Instances[0], Vars: Vars{Key: "k"}})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := attempt(req); n != 1 || err == nil {
			t.Errorf("operation %s: the handler ran %d times for one Do (error %v, want the lost answer reported)", op.Name, n, err)
		}
	}
	naive, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/a", strings.NewReader(`{"n": 1}`))
	naive.Header.Set("Idempotency-Key", "k")
	if n, _ := attempt(naive); n != 2 {
		t.Errorf("control: a plain keyed request ran %d times; the test no longer reproduces the transport retry", n)
	}
}

func TestSimpleTemplatesSkipTextTemplate(t *testing.T) {
	for _, c := range []struct {
		src    string
		simple bool
	}{
		{`{"ref": "{{.Ref}}", "k": {{json .Key}}}`, true},
		{`{{.Tenant}}/{{ .Ref }}-{{- .Key -}} x`, true},
		{`{{/* note */}}{{.Ref}}`, true},
		{`{{printf "%s" .Ref}}`, false},
		{`{{if .Tenant}}{{.Tenant}}{{end}}`, false},
		{`{{.Ref | printf "%q"}}`, false},
		{`{{$x := .Ref}}{{$x}}`, false},
		{"{{json .Ref}}{{html .Tenant}}", false},
	} {
		d := decoder{ps: &problems{file: "f.yaml"}}
		tm, ok := d.compile(c.src, srcPos{line: 1}, "body", requestFields)
		if !ok {
			t.Fatalf("%q does not compile: %v", c.src, d.ps.list)
		}
		if got := tm.parts != nil; got != c.simple {
			t.Errorf("%q: simple = %v, want %v", c.src, got, c.simple)
		}
		if tm.parts == nil {
			continue // rendered by text/template itself
		}
		vars := Vars{Ref: `r"<&>` + "\u2028", Key: "k\x00", Tenant: "t\xff"}
		fast, ferr := tm.render(vars)
		slow, serr := tm.execute(vars)
		if fast != slow || ferr != nil || serr != nil {
			t.Errorf("%q renders as %q, %v; text/template gives %q, %v", c.src, fast, ferr, slow, serr)
		}
	}
}

func TestDeclaredHostHeader(t *testing.T) {
	src := minimal + "    method: POST\n    headers: {Host: \"api.{{.Tenant}}.example\"}\n    body: '{}'\n"
	tg, err := Parse("t.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.Host }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	req, _, err := tg.Operations[0].Build(BuildInput{Instance: &Instance{URL: u}, Vars: Vars{Tenant: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	if req.Host != "api.alice.example" || req.Header.Get("Host") != "" {
		t.Fatalf("Host %q, header %q; want the declared host as the request's Host", req.Host, req.Header.Get("Host"))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "api.alice.example" {
		t.Errorf("the server saw Host %q", got)
	}
}
