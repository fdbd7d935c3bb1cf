// Package openapi writes retrysafe target files: from an OpenAPI 3 document (the operations
// that declare an idempotency-key header, with request bodies from the spec's examples or
// generated from its schemas, observers from matching list operations, and tenants from its
// security schemes), or a commented starter file.
package openapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Options shape a generated target file.
type Options struct {
	// AllPost selects every POST operation, also those that declare no idempotency key (their
	// key is sent as Idempotency-Key).
	AllPost bool
	// Source names the document in the file's header comment.
	Source string
}

// ErrNoOperations means the document has no operation to test.
var ErrNoOperations = errors.New("no idempotent operation found")

// keyParamRe matches the name of an idempotency-key header once lowercased and stripped of
// '-' and '_': Idempotency-Key, X-Idempotency-Key, Idempotency_Token ...
var keyParamRe = regexp.MustCompile(`idempot`)

// nameRe is what the target file accepts as an operation name.
var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// nonNameChars are the runs of characters an operation name cannot hold.
var nonNameChars = regexp.MustCompile(`[^A-Za-z0-9_.]+`)

// FromFile reads an OpenAPI 3 document (YAML or JSON; references to other files are not
// followed) and returns a target file for it.
func FromFile(path string, opts Options) ([]byte, error) {
	loader := openapi3.NewLoader()
	loader.Context = context.Background()
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: not an OpenAPI 3 document: %w", path, err)
	}
	if opts.Source == "" {
		opts.Source = path
	}
	return Generate(doc, opts)
}

// FromData is FromFile for a document in memory.
func FromData(data []byte, opts Options) ([]byte, error) {
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("not an OpenAPI 3 document: %w", err)
	}
	return Generate(doc, opts)
}

// operation is one selected operation, ready to write.
type operation struct {
	name, method, path string
	headers            [][2]string
	key                string
	keyDeclared        bool
	plan               bodyPlan
	observer           *observer
	summary            string
	spec               *openapi3.Operation
}

// Generate returns a target file for the document. It fails with ErrNoOperations when no
// operation declares an idempotency-key header (and, with AllPost, there is no POST).
func Generate(doc *openapi3.T, opts Options) ([]byte, error) {
	if !strings.HasPrefix(doc.OpenAPI, "3") {
		return nil, fmt.Errorf("openapi %q: only OpenAPI 3 documents are supported", doc.OpenAPI)
	}
	var ops []*operation
	names := map[string]int{}
	if doc.Paths != nil {
		for _, path := range doc.Paths.Keys() {
			item := doc.Paths.Value(path)
			if item == nil {
				continue
			}
			for _, method := range methodsOf(item) {
				if op := selectOp(path, method, item, opts.AllPost); op != nil {
					op.name = uniqueName(op.name, names)
					op.observer = findObserver(path, item, op.plan.refField)
					ops = append(ops, op)
				}
			}
		}
	}
	if len(ops) == 0 {
		what := "declares an idempotency-key header parameter"
		if opts.AllPost {
			what += " or is a POST"
		}
		return nil, fmt.Errorf("%w: no operation %s (pass --all-post to take every POST)", ErrNoOperations, what)
	}
	specs := make([]*openapi3.Operation, len(ops))
	for i, op := range ops {
		specs[i] = op.spec
	}
	creds, notes := credentials(doc, specs)
	return write(doc, opts, ops, creds, notes), nil
}

// methodsOf lists a path item's methods in a fixed order, POST first.
func methodsOf(item *openapi3.PathItem) []string {
	ops := item.Operations()
	order := []string{"POST", "PUT", "PATCH", "DELETE"}
	for _, m := range slices.Sorted(maps.Keys(ops)) {
		if !slices.Contains(order, m) {
			order = append(order, m)
		}
	}
	return slices.DeleteFunc(order, func(m string) bool { return ops[m] == nil })
}

// selectOp returns the operation when it declares an idempotency-key header (or, with allPost,
// is a POST), else nil.
func selectOp(path, method string, item *openapi3.PathItem, allPost bool) *operation {
	spec := item.GetOperation(method)
	params := parameters(item.Parameters, spec.Parameters)
	op := &operation{method: method, spec: spec, summary: strings.TrimSpace(spec.Summary)}
	for _, p := range params {
		n := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(p.Name))
		if p.In == openapi3.ParameterInHeader && keyParamRe.MatchString(n) {
			op.key, op.keyDeclared = p.Name, true
		}
	}
	if !op.keyDeclared && !(allPost && method == "POST") {
		return nil
	}
	if op.key == "" {
		op.key = "Idempotency-Key"
	}
	op.name = opName(spec.OperationID, method, path)
	op.path, op.headers = fill(path, params, op.key)
	op.plan = planBody(spec.RequestBody)
	return op
}

// parameters merges path-level and operation-level parameters (the operation's win).
func parameters(pathLevel, opLevel openapi3.Parameters) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	for _, list := range []openapi3.Parameters{opLevel, pathLevel} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			p := ref.Value
			if !slices.ContainsFunc(out, func(q *openapi3.Parameter) bool { return q.In == p.In && q.Name == p.Name }) {
				out = append(out, p)
			}
		}
	}
	return out
}

// fill returns the path with its parameters and required query parameters filled, and the
// required header parameters other than the key, as ${NAME:-example} placeholders.
func fill(path string, params []*openapi3.Parameter, key string) (string, [][2]string) {
	var query []string
	var headers [][2]string
	for _, p := range params {
		value := func(escape func(string) string) string {
			return "${" + envName(p.Name) + ":-" + escape(exampleOf(p)) + "}"
		}
		switch {
		case p.In == openapi3.ParameterInPath:
			path = strings.ReplaceAll(path, "{"+p.Name+"}", value(url.PathEscape))
		case p.In == openapi3.ParameterInQuery && p.Required:
			query = append(query, url.QueryEscape(p.Name)+"="+value(url.QueryEscape))
		case p.In == openapi3.ParameterInHeader && p.Required && !strings.EqualFold(p.Name, key):
			headers = append(headers, [2]string{p.Name, value(func(s string) string { return s })})
		}
	}
	if len(query) > 0 {
		path += "?" + strings.Join(query, "&")
	}
	return path, headers
}

// exampleOf is a parameter's example, else its schema's, else "example".
func exampleOf(p *openapi3.Parameter) string {
	v := p.Example
	if v == nil && p.Schema != nil {
		v = generate(p.Schema, 0)
	}
	s := strings.Trim(mustJSON(v), `"`)
	if v == nil || s == "" || strings.ContainsAny(s, "{}$") {
		return "example"
	}
	return s
}

// opName is the operationId when it is a valid name, else one made of the method and path.
func opName(id, method, path string) string {
	if nameRe.MatchString(id) {
		return id
	}
	s := strings.ToLower(method) + "-" + path
	if id != "" {
		s = id
	}
	s = strings.Trim(nonNameChars.ReplaceAllString(s, "-"), "-.")
	if s == "" {
		return strings.ToLower(method)
	}
	return s
}

// uniqueName appends -2, -3 ... to a name already used.
func uniqueName(name string, seen map[string]int) string {
	seen[name]++
	if seen[name] == 1 {
		return name
	}
	return fmt.Sprintf("%s-%d", name, seen[name])
}
