package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/retrysafe/retrysafe/suites/history"
	"github.com/retrysafe/retrysafe/targets"
	"github.com/theory/jsonpath/spec"
)

// differences lists where answer b differs from answer a: "status 201 != 422", then the JSON
// paths of the body (by value, the profile's ignored paths left out), or "body" for bodies that
// are not JSON and differ. No difference: nil.
func differences(a, b history.Attempt, ig targets.Ignore) []string {
	var out []string
	if a.Status != b.Status {
		out = append(out, fmt.Sprintf("status %d != %d", a.Status, b.Status))
	}
	return append(out, bodyDifferences(a.RespBody, b.RespBody, ig)...)
}

// sameAnswer reports whether b repeats a: same status and body.
func sameAnswer(a, b history.Attempt, ig targets.Ignore) bool {
	return len(differences(a, b, ig)) == 0
}

// bodyDifferences compares two bodies as JSON values when both are JSON, else byte for byte.
func bodyDifferences(a, b []byte, ig targets.Ignore) []string {
	va, errA := decodeJSON(a)
	vb, errB := decodeJSON(b)
	if errA != nil || errB != nil {
		if bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) {
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
	var out []string
	diffJSON(nil, va, vb, func(np spec.NormalizedPath) {
		for _, ip := range ignored {
			if len(ip) <= len(np) && slices.Equal(ip, np[:len(ip)]) {
				return
			}
		}
		out = append(out, np.String())
	})
	return out
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

// absent stands for a missing object member or array element.
type absent struct{}

// diffJSON reports the normalized path of every difference between two JSON values.
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
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			xa, okA := x[k]
			yb, okB := y[k]
			if !okA {
				xa = absent{}
			}
			if !okB {
				yb = absent{}
			}
			diffJSON(append(slices.Clip(at), spec.Name(k)), xa, yb, report)
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			report(at)
			return
		}
		for i := range max(len(x), len(y)) {
			var xi, yi any = absent{}, absent{}
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

// replayMarker returns the header a replay carries that the first answer lacked, as
// "Name: value": a header whose name mentions "replay" or "idempot" first, else none. Volatile
// headers (targets.DefaultIgnoredHeaders and the profile's ignored ones) never count.
func replayMarker(first, replay history.Attempt, ig targets.Ignore) (marker string, others []string) {
	var added []string
	for name := range replay.RespHeader {
		if _, had := first.RespHeader[name]; had || ig.IgnoresHeader(name) ||
			slices.ContainsFunc(targets.DefaultIgnoredHeaders, func(h string) bool { return strings.EqualFold(h, name) }) {
			continue
		}
		added = append(added, name)
	}
	sort.Strings(added)
	for _, name := range added {
		l := strings.ToLower(name)
		line := http.CanonicalHeaderKey(name) + ": " + replay.RespHeader.Get(name)
		if marker == "" && (strings.Contains(l, "replay") || strings.Contains(l, "idempot")) {
			marker = line
			continue
		}
		others = append(others, line)
	}
	return marker, others
}
