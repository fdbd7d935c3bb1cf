package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/retrysafe/retrysafe/targets"
	"github.com/retrysafe/retrysafe/targets/history"
	"github.com/theory/jsonpath/spec"
)

// transportHeaders never count as a difference between two answers.
// Neither do the usual replay markers: a replay is expected to carry one the first answer
// lacks (the replay property checks the profile's marker separately), nor the arrival time
// a burst asks for (see ArrivalSpread).
var transportHeaders = []string{"Content-Length", "Connection", "Keep-Alive", "Transfer-Encoding",
	"Idempotent-Replayed", "Idempotency-Replayed", "X-Idempotent-Replayed", "X-Idempotency-Replayed",
	"X-Retrysafe-Arrival"}

// Compare lists how answer b differs from answer a: the status, headers (except volatile,
// transport and the profile's replay header) and the body (JSON compared by value, with the
// profile's ignored paths left out; other bodies byte for byte). Each difference is a path
// such as `status`, `header Location` or `$['id']`. No differences: nil.
func Compare(a, b history.Attempt, p targets.Profile) []string {
	var diffs []string
	if a.Status != b.Status {
		diffs = append(diffs, fmt.Sprintf("status (%d != %d)", a.Status, b.Status))
	}
	if a.Reference != b.Reference {
		diffs = append(diffs, fmt.Sprintf("reference (%s != %s)", orNone(a.Reference), orNone(b.Reference)))
	}
	diffs = append(diffs, compareHeaders(a.RespHeader, b.RespHeader, p)...)
	return append(diffs, CompareBodies(a.RespBody, b.RespBody, p.Ignore)...)
}

func compareHeaders(a, b http.Header, p targets.Profile) []string {
	names := map[string]bool{}
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	var diffs []string
	for n := range names {
		if p.Ignore.IgnoresHeader(n) || slices.Contains(transportHeaders, n) ||
			(p.ReplayHeader.Name != "" && http.CanonicalHeaderKey(p.ReplayHeader.Name) == n) {
			continue
		}
		if !slices.Equal(a[n], b[n]) {
			diffs = append(diffs, "header "+n)
		}
	}
	sort.Strings(diffs)
	return diffs
}

// CompareBodies compares two bodies: as JSON values when both are JSON (ignoring the
// given paths and everything below them), else byte for byte (reported as path `body`).
func CompareBodies(a, b []byte, ig targets.Ignore) []string {
	va, errA := decodeJSON(a)
	vb, errB := decodeJSON(b)
	if errA != nil || errB != nil {
		if bytes.Equal(a, b) {
			return nil
		}
		return []string{"body"}
	}
	var ignored []spec.NormalizedPath
	for _, p := range ig.Paths() {
		for _, v := range []any{va, vb} {
			for np := range p.SelectLocated(v).Paths() {
				ignored = append(ignored, np)
			}
		}
	}
	var diffs []string
	diffJSON(nil, va, vb, func(np spec.NormalizedPath) {
		for _, ip := range ignored {
			if len(ip) <= len(np) && slices.Equal(ip, np[:len(ip)]) {
				return
			}
		}
		diffs = append(diffs, np.String())
	})
	return diffs
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

// diffJSON walks two JSON values and reports the normalized path of every difference.
func diffJSON(at spec.NormalizedPath, a, b any, report func(spec.NormalizedPath)) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			report(at)
			return
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diffJSON(append(slices.Clip(at), spec.Name(k)), member(x, k), member(y, k), report)
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			report(at)
			return
		}
		for i := range max(len(x), len(y)) {
			var xi, yi any = missing{}, missing{}
			if i < len(x) {
				xi = x[i]
			}
			if i < len(y) {
				yi = y[i]
			}
			diffJSON(append(slices.Clip(at), spec.Index(i)), xi, yi, report)
		}
	default:
		if a != b {
			report(at)
		}
	}
}

// missing stands for an absent array element or object member.
type missing struct{}

// member returns an object's member, or missing: an absent member is not a null one.
func member(o map[string]any, k string) any {
	if v, ok := o[k]; ok {
		return v
	}
	return missing{}
}
