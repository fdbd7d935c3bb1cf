package openapi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrysafe/retrysafe/targets"
)

// load writes a generated file and loads it as retrysafe validate would.
func load(t *testing.T, data []byte) *targets.Target {
	t.Helper()
	path := filepath.Join(t.TempDir(), "target.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if problems, _ := targets.Validate(path); len(problems) > 0 {
		t.Fatalf("generated file does not validate: %v\n%s", problems, data)
	}
	tg, err := targets.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

func TestOrdersSpec(t *testing.T) {
	data, err := FromFile("testdata/orders.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg := load(t, data)
	if len(tg.Operations) != 2 {
		t.Fatalf("%d operations, want createOrder and createRefund:\n%s", len(tg.Operations), data)
	}
	for i, want := range []struct{ name, path, observer string }{
		{"createOrder", "/v1/orders", "/v1/orders"},
		{"createRefund", "/v1/refunds", "/v1/refunds"},
	} {
		op := tg.Operations[i]
		if op.Name != want.name || op.Path != want.path || op.Key.Name != "Idempotency-Key" {
			t.Errorf("operation %d = %s %s key %s, want %s %s key Idempotency-Key", i, op.Name, op.Path, op.Key.Name, want.name, want.path)
		}
		if body := `{"amount": 1000, "currency": "eur", "ref": "{{.Ref}}"}`; op.Body != body {
			t.Errorf("%s body %s, want %s", op.Name, op.Body, body)
		}
		if !op.HasVariant() || !strings.Contains(op.VariantBody, `"amount": 2000`) {
			t.Errorf("%s variant_body %q, want amount 2000", op.Name, op.VariantBody)
		}
		if op.Observer == nil || op.Observer.HTTP.Path != want.observer || op.Observer.HTTP.JSONPath != "$.count" ||
			op.Observer.HTTP.Query != "ref={{.Ref}}" {
			t.Errorf("%s observer %+v, want GET %s?ref={{.Ref}} $.count", op.Name, op.Observer, want.observer)
		}
	}
	if len(tg.Tenants) != 2 || tg.Tenants[0].Headers["Authorization"] != "Bearer changeme" {
		t.Errorf("tenants %+v, want two with a bearer Authorization header", tg.Tenants)
	}
	for _, want := range []string{"${TARGET_URL:-http://127.0.0.1:8080}", "${TENANT_A_BEARER_AUTH:-changeme}", "${TENANT_B_BEARER_AUTH:-changeme}"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("file lacks %s", want)
		}
	}
}

func TestAllPost(t *testing.T) {
	data, err := FromFile("testdata/orders.yaml", Options{AllPost: true})
	if err != nil {
		t.Fatal(err)
	}
	tg := load(t, data)
	if n := len(tg.Operations); n != 3 || tg.Operations[2].Name != "createSession" || tg.Operations[2].Body != `{"user": "{{.Ref}}"}` {
		t.Errorf("operations %d (last %+v), want createSession with the user field carrying {{.Ref}}", n, tg.Operations[n-1])
	}
}

const formSpec = `openapi: 3.1.0
info: {title: Payments, version: "2"}
servers: [{url: "https://{region}.pay.example/api", variables: {region: {default: eu}}}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Api-Key}
paths:
  /customers/{customer_id}/charges:
    parameters:
      - {name: customer_id, in: path, required: true, schema: {type: string}, example: cus_123}
    post:
      security: [{key: []}]
      parameters:
        - {name: X-Idempotency-Key, in: header, required: true, schema: {type: string}}
        - {name: dry_run, in: query, required: true, schema: {type: boolean}}
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                amount: {type: integer, maximum: 500}
                description: {type: string}
                id: {type: string, readOnly: true}
                status: {type: string, enum: [pending, paid]}
      responses: {"200": {description: ok}}
`

func TestFormSpecWithPathParameterAndAPIKey(t *testing.T) {
	data, err := FromData([]byte(formSpec), Options{Source: "payments.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	tg := load(t, data)
	op := tg.Operations[0]
	checks := []struct{ what, got, want string }{
		{"instance", tg.Instances[0].URL.String(), "https://eu.pay.example/api"},
		{"path", op.Path, "/customers/cus_123/charges?dry_run=true"},
		{"format", string(op.BodyFormat), "form"},
		{"body", op.Body, "amount=500&description={{.Ref}}&status=pending"},
		{"variant", op.VariantBody, "amount=1000&description={{.Ref}}&status=pending"},
		{"key", op.Key.Name, "X-Idempotency-Key"},
		{"tenant header", tg.Tenants[1].Headers["X-Api-Key"], "changeme"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if op.Observer != nil {
		t.Errorf("observer %+v, want none (no GET filters by ref)", op.Observer)
	}
	if !strings.Contains(string(data), "path: '/customers/${CUSTOMER_ID:-cus_123}/charges?dry_run=${DRY_RUN:-true}'") {
		t.Errorf("path parameters are not environment placeholders with the example as default:\n%s", data)
	}
	if !strings.Contains(string(data), "No observer") {
		t.Errorf("file does not say why there is no observer:\n%s", data)
	}
}

func TestNoOperations(t *testing.T) {
	spec := "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    post:\n      responses: {'200': {description: ok}}\n"
	if _, err := FromData([]byte(spec), Options{}); !errors.Is(err, ErrNoOperations) || !strings.Contains(err.Error(), "--all-post") {
		t.Errorf("error %v, want ErrNoOperations suggesting --all-post", err)
	}
	if _, err := FromData([]byte(spec), Options{AllPost: true}); err != nil {
		t.Errorf("with AllPost: %v", err)
	}
	if _, err := FromData([]byte("swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n"), Options{}); err == nil {
		t.Error("a Swagger 2.0 document was accepted")
	}
}

func TestStarterValidates(t *testing.T) {
	tg := load(t, []byte(Starter))
	if len(tg.Operations) != 1 || len(tg.Tenants) != 2 || tg.Operations[0].Observer == nil {
		t.Errorf("starter: %d operations, %d tenants", len(tg.Operations), len(tg.Tenants))
	}
}

func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{"bearerAuth": "BEARER_AUTH", "tenant-a": "TENANT_A", "X-Api-Key": "X_API_KEY",
		"customer_id": "CUSTOMER_ID", "9lives": "X_9LIVES", "clé": "CL"} {
		if got := envName(in); got != want {
			t.Errorf("envName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRefField(t *testing.T) {
	tests := []struct {
		obj  map[string]any
		want string
	}{
		{map[string]any{"amount": 1.0, "client_reference": "x", "ref": "y"}, "ref"},
		{map[string]any{"amount": 1.0, "merchant_ref": "x", "b": "y"}, "merchant_ref"},
		{map[string]any{"zeta": "x", "alpha": "y"}, "alpha"},
		{map[string]any{"amount": 1.0}, ""},
	}
	for _, tt := range tests {
		if got := refField(tt.obj); got != tt.want {
			t.Errorf("refField(%v) = %q, want %q", tt.obj, got, tt.want)
		}
	}
}
