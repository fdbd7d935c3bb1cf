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
