package profile

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func profileOf(fields ...Field) *Profile {
	return &Profile{Schema: SchemaVersion, Fields: fields}
}

func TestCompare(t *testing.T) {
	ev := func(seq int64, status int) []Exchange {
		return []Exchange{{Seq: seq, Method: "POST", URL: "http://127.0.0.1:1/v1/orders", Status: status, Outcome: "ok"}}
	}
	old := profileOf(
		Field{Name: FieldMismatchStatus, Value: "422", Evidence: ev(5, 422)},
		Field{Name: FieldInFlight, Value: NotProbed},
		Field{Name: FieldReplay, Value: "same", Evidence: ev(2, 201)},
		Field{Name: FieldMaxKeyLength, Value: "255", Evidence: ev(9, 400)},
		Field{Name: FieldTenantScope, Value: "per-tenant"},
	)
	after := profileOf(
		Field{Name: FieldMismatchStatus, Value: "201", Unsafe: "another request's response replayed", Evidence: ev(7, 201)},
		Field{Name: FieldInFlight, Value: "409"},                                                  // was not probed: not compared
		Field{Name: FieldReplay, Value: "same", Unsafe: "duplicate record", Evidence: ev(3, 201)}, // same value, now unsafe
		Field{Name: FieldMaxKeyLength, Value: "255", Evidence: ev(40, 400)},                       // other evidence only
		Field{Name: FieldTenantScope, Value: NotProbed},                                           // now not probed: not compared
	)
	var got []string
	for _, c := range Compare(old, after) {
		got = append(got, c.Field)
	}
	if want := []string{FieldReplay, FieldMismatchStatus}; !slices.Equal(got, want) {
		t.Fatalf("changed %v, want %v", got, want)
	}
	if c := Compare(old, old); len(c) != 0 {
		t.Errorf("a profile compared with itself changed %v", c)
	}
	var buf bytes.Buffer
	WriteChanges(&buf, Compare(old, after))
	out := buf.String()
	for _, want := range []string{"2 behaviour field(s) changed: replay, mismatch_status",
		"mismatch_status: 422 -> 201 (UNSAFE: another request's response replayed)",
		"old evidence:", "#5 POST http://127.0.0.1:1/v1/orders -> 422", "new evidence:", "#7 POST"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestProfileJSONRoundTrip(t *testing.T) {
	p := profileOf(Field{Name: FieldMismatchStatus, Value: "422", Evidence: []Exchange{{Seq: 1, Status: 422}}})
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f := back.Field(FieldMismatchStatus); f == nil || f.Value != "422" || f.Evidence[0].Status != 422 {
		t.Errorf("read back %+v", back.Fields)
	}
	for _, bad := range []string{`{"fields": []}`, `{"schema": "retrysafe.report/v1"}`, `{"schema": "retrysafe.profile/v1", "fields": [{"value": "1"}]}`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) accepted it", bad)
		}
	}
}

func TestExpectationsLeaveOutUnsafeAndNotProbed(t *testing.T) {
	p := profileOf(
		Field{Name: FieldMismatchStatus, Value: "400"},
		Field{Name: FieldInFlight, Value: "500", Unsafe: "5xx to a race loser"},
		Field{Name: FieldReplayHeader, Value: "none"},
		Field{Name: FieldExpired, Value: NotProbed},
	)
	got := p.Expectations()
	want := []string{"mismatch_status: 400", "# in_flight: 500  (left out: unsafe: 5xx to a race loser)", `replay_header: ""`}
	if !slices.Equal(got, want) {
		t.Errorf("Expectations() = %q, want %q", got, want)
	}
}

// TestDeviations: a field that starts or stops deviating from the draft is a change; the text
// shows deviations apart from unsafe fields, and keys and base in the header.
func TestDeviations(t *testing.T) {
	dev := "the draft says 422 for a reused key with another payload"
	old := profileOf(Field{Name: FieldMismatchStatus, Value: "400"}, Field{Name: FieldInFlight, Value: "409"})
	now := profileOf(Field{Name: FieldMismatchStatus, Value: "400", Deviation: dev},
		Field{Name: FieldInFlight, Value: "500", Unsafe: "5xx to a race loser"})
	var got []string
	for _, c := range Compare(old, now) {
		got = append(got, c.Field)
	}
	if want := []string{FieldMismatchStatus, FieldInFlight}; !slices.Equal(got, want) {
		t.Errorf("changed %v, want %v", got, want)
	}
	if d := now.Deviations(); len(d) != 1 || d[0].Name != FieldMismatchStatus {
		t.Errorf("Deviations() = %+v", d)
	}
	now.KeyPrefix = "rs-abc"
	var buf bytes.Buffer
	WriteText(&buf, now)
	out := buf.String()
	for _, want := range []string{"keys: --key rs-abc", "400  ≠ draft", "500  UNSAFE",
		"UNSAFE (1):\n  in_flight = 500: 5xx to a race loser\n",
		"DEVIATIONS from the IETF draft (1; declare them if they are the API's choice):\n  mismatch_status = 400: " + dev + "\n",
		"profile:\n  mismatch_status: 400\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	WriteChanges(&buf, Compare(old, now))
	if !strings.Contains(buf.String(), "mismatch_status: 400 -> 400 (deviation: "+dev+")") {
		t.Errorf("changes:\n%s", buf.String())
	}
}
