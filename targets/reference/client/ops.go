package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// The default body fields of an operation, which Operation.Params may override.
const (
	DefaultAmount   = 1000
	DefaultCurrency = "eur"
)

// Operation is one logical operation: one POST /v1/orders with its own key, retried with
// that key until it succeeds or fails finally. Two operations with one Ref are two
// operations (two keys).
type Operation struct {
	Ref string
	// Params are merged into the body over the defaults (amount, currency); they may not
	// set "ref" (the operation's Ref is) nor "created_at" (the client fixes it when the
	// operation is created).
	Params map[string]any
}

// Operations returns n operations with refs PREFIX-1 .. PREFIX-N and the default body.
func Operations(prefix string, n int) []Operation {
	ops := make([]Operation, n)
	for i := range ops {
		ops[i] = Operation{Ref: fmt.Sprintf("%s-%d", prefix, i+1)}
	}
	return ops
}

// reservedParams are the body fields an operation's Params may not set, and why.
var reservedParams = map[string]string{
	"ref":        `the ref is the entry's "ref" field`,
	"created_at": "the client sets created_at when it creates the operation",
}

// ReadOpsFile reads an ops file: a JSON array of {"ref": "...", "params": {...}}, one
// entry per operation, in the order they are performed. Errors name the file, the line and
// the entry.
func ReadOpsFile(path string) ([]Operation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ops, err := ParseOps(data)
	if err != nil {
		return nil, fmt.Errorf("%s%v", path, err)
	}
	return ops, nil
}

// ParseOps parses the content of an ops file (see ReadOpsFile). Its errors start with
// ":LINE: " or ": " so that a file name can be put in front of them.
func ParseOps(data []byte) ([]Operation, error) {
	const hint = `want a JSON array of {"ref": "...", "params": {...}}`
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil {
		return nil, jsonProblem(data, err, hint)
	} else if tok != json.Delim('[') {
		return nil, fmt.Errorf(":%d: found %v: %s", lineOf(data, dec.InputOffset()), tok, hint)
	}
	var ops []Operation
	for dec.More() {
		start := skipSeparators(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonProblem(data, err, hint)
		}
		op, err := parseEntry(raw)
		if err != nil {
			return nil, fmt.Errorf(":%d: entry %d: %v", lineOf(data, start), len(ops)+1, err)
		}
		ops = append(ops, op)
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return nil, jsonProblem(data, err, hint)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf(":%d: data after the array: %s", lineOf(data, dec.InputOffset()), hint)
	}
	if len(ops) == 0 {
		return nil, errors.New(": no operations: the array is empty")
	}
	return ops, nil
}

// parseEntry parses one ops-file entry.
func parseEntry(raw json.RawMessage) (Operation, error) {
	var e struct {
		Ref    string         `json:"ref"`
		Params map[string]any `json:"params"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // amounts keep their exact digits
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Operation{}, fmt.Errorf("%v (an entry is {\"ref\": \"...\", \"params\": {...}})", strings.TrimPrefix(err.Error(), "json: "))
	}
	if strings.TrimSpace(e.Ref) == "" {
		return Operation{}, errors.New(`ref: missing or empty: every operation needs a business ref`)
	}
	for name, why := range reservedParams {
		if _, set := e.Params[name]; set {
			return Operation{}, fmt.Errorf("params.%s: not allowed: %s", name, why)
		}
	}
	return Operation{Ref: e.Ref, Params: e.Params}, nil
}

// body returns the JSON body of the operation's attempts: ref, amount, currency and
// created_at, with Params over the defaults. Keys are sorted, so that equal values give
// equal bytes.
func (op Operation) body(createdAt time.Time) ([]byte, error) {
	fields := map[string]any{
		"ref":        op.Ref,
		"amount":     DefaultAmount,
		"currency":   DefaultCurrency,
		"created_at": createdAt.UTC().Format(time.RFC3339Nano),
	}
	for name, v := range op.Params {
		if _, reserved := reservedParams[name]; !reserved {
			fields[name] = v
		}
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("operation %s: params cannot be encoded as JSON: %v", op.Ref, err)
	}
	return b, nil
}

// jsonProblem turns a JSON decoding error into ":LINE: message (hint)".
func jsonProblem(data []byte, err error, hint string) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf(":%d: the JSON ends early: %s", lineOf(data, int64(len(data))), hint)
	case errors.As(err, &syn):
		return fmt.Errorf(":%d: invalid JSON: %v", lineOf(data, syn.Offset), syn)
	case errors.As(err, &typ):
		return fmt.Errorf(":%d: found a JSON %s: %s", lineOf(data, typ.Offset), typ.Value, hint)
	}
	return fmt.Errorf(": %v: %s", err, hint)
}

// skipSeparators returns the offset of the first byte at or after offset that is neither
// JSON white space nor a comma: where the next array element starts.
func skipSeparators(data []byte, offset int64) int64 {
	for offset < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[offset]) >= 0 {
		offset++
	}
	return offset
}

// lineOf returns the 1-based line of a byte offset.
func lineOf(data []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(data)))
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}
