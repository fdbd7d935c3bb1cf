package targets

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// opWebhook is a webhook consumer whose events name their operation; %EVENT% are the event's
// extra lines, %BODY% its body and %EFFECTS% its effects observer.
const opWebhook = `instances: [http://127.0.0.1:8080]
consumers:
  - name: w
    path: /hooks
    event:
      body: '%BODY%'
%EVENT%
    effects: {http: {path: /e, query: "%EFFECTS%", jsonpath: $.n}}
%EXTRA%
`

// opFile renders opWebhook.
func opFile(body, event, effects, extra string) string {
	return strings.NewReplacer("%BODY%", body, "%EVENT%", event, "%EFFECTS%", effects, "%EXTRA%", extra).Replace(opWebhook)
}

// The reference's form: the one operation in a member, the several in a list; each event's
// body names them where the file says, and the harness reads them back from a body it did not
// render (an API's event) the same way.
func TestEventOperationInTheBody(t *testing.T) {
	body := `{"id": "{{.EventID}}", "data": {"operation": {{json .Operation}}, "items": [{{range $i, $op := .Operations}}{{if $i}}, {{end}}{"id": {{json $op}}}{{end}}]}}`
	src := opFile(body, "      operation: {jsonpath: $.data.operation}\n      operations: {jsonpath: '$.data.items[*].id'}", "operation={{.Operation}}", "    operation_dedupe: true")
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	c := tg.Consumers[0]
	if !c.OperationDedupe || !c.NamesOperation() || !c.NamesOperations() || c.Event.Operation.Path != "$.data.operation" {
		t.Fatalf("consumer = %+v %+v, want operation_dedupe and both places", c, c.Event)
	}
	got, err := c.RenderEvent(EventVars{EventID: "evt_1", Operations: []string{"pay_1", "pay_2"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id": "evt_1", "data": {"operation": "", "items": [{"id": "pay_1"}, {"id": "pay_2"}]}}`; string(got) != want {
		t.Errorf("body = %s, want %s", got, want)
	}
	if ops := c.OperationsOf(got); !slices.Equal(ops, []string{"pay_1", "pay_2"}) {
		t.Errorf("operations of the body = %q", ops)
	}
	if op, ok := c.OperationOf([]byte(`{"data": {"operation": "pay_9"}}`), nil); !ok || op != "pay_9" {
		t.Errorf("operation of the body = %q, %v; want pay_9", op, ok)
	}
	if op, ok := c.OperationOf([]byte(`{"data": {}}`), nil); ok {
		t.Errorf("operation of a body that names none = %q, want none", op)
	}
}

// The operation in a header: the harness sets it on each webhook delivery and each message,
// as it does the event id's.
func TestEventOperationInAHeader(t *testing.T) {
	src := opFile(`{"id": "{{.EventID}}"}`, "      operation: {header: X-Operation}", "operation={{.Operation}}", "")
	tg, probs := parseString(src, nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	c := tg.Consumers[0]
	req, err := c.Request(t.Context(), &tg.Instances[0], EventVars{EventID: "evt_1", Operation: "pay_1"}, nil)
	if err != nil || req.Header.Get("X-Operation") != "pay_1" {
		t.Fatalf("request header = %q, %v; want pay_1", req.Header.Get("X-Operation"), err)
	}
	if op, ok := c.OperationOf(nil, http.Header{"X-Operation": {"pay_2"}}.Get); !ok || op != "pay_2" {
		t.Errorf("operation of the headers = %q, %v", op, ok)
	}
	q := queueFile("amqp", amqpDefault, "      operation: {header: x-op}")
	q = strings.Replace(q, "event = '{{.EventID}}'", "operation = '{{.Operation}}'", 1)
	tq, probs := parseString(q, nil)
	if probs != nil {
		t.Fatalf("problems: %v", probs)
	}
	got, err := tq.Consumers[0].MessageHeaders(EventVars{EventID: "evt_1", Operation: "pay_1"})
	if want := map[string]string{"x-op": "pay_1"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("message headers = %v, %v; want %v", got, err, want)
	}
}

// What a file says about operations is checked against its templates, with lines.
func TestEventOperationProblems(t *testing.T) {
	plain := `{"id": "{{.EventID}}", "data": {"payment": "{{.Operation}}"}}`
	cases := []struct {
		name, src string
		want      []string
	}{
		{"a placeholder without a place", opFile(plain, "", "event={{.EventID}}", ""),
			[]string{"t.yaml:5: consumers[0].event: uses {{.Operation}}, but the event names no operation"}},
		{"operation_dedupe without a place", opFile(`{"id": "{{.EventID}}"}`, "", "event={{.EventID}}", "    operation_dedupe: true"),
			[]string{"t.yaml:9: consumers[0].operation_dedupe: promises one effect per business operation"}},
		{"effects counted per event", opFile(plain, "      operation: {jsonpath: $.data.payment}", "event={{.EventID}}", ""),
			[]string{"t.yaml:8: consumers[0].effects: must count the effects of one operation with {{.Operation}}"}},
		{"a path the body does not name", opFile(plain, "      operation: {jsonpath: $.data.payment_id}", "operation={{.Operation}}", ""),
			[]string{`t.yaml:7: consumers[0].event.operation: $.data.payment_id does not find the event's {{.Operation}} in its body`}},
		{"a query for one operation", opFile(plain, "      operation: {jsonpath: '$.data[*]'}", "operation={{.Operation}}", ""),
			[]string{"t.yaml:7: consumers[0].event.operation.jsonpath: names no single member"}},
		{"two places", opFile(plain, "      operation: {jsonpath: $.data.payment, header: X-Op}", "operation={{.Operation}}", ""),
			[]string{"t.yaml:7: consumers[0].event.operation: declare exactly one of header: NAME and jsonpath: PATH"}},
		{"a list the body does not name", opFile(plain, "      operations: {jsonpath: '$.data.items[*].id'}", "operation={{.Operation}}", ""),
			[]string{`t.yaml:7: consumers[0].event.operations: $.data.items[*].id selects [] in the body, want the event's {{.Operations}} ["op_sample_1" "op_sample_2"]`}},
		{"a header the harness sets", opFile(`{"id": "{{.EventID}}"}`, "      operation: {header: X-Op}", "operation={{.Operation}}", "    headers: {x-op: fixed}"),
			[]string{"t.yaml:9: consumers[0].headers.x-op: is the operation's header"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, probs := parseString(c.src, nil)
			wantProblems(t, probs, c.want)
		})
	}
}
