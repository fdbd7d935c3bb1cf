package main

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/reports"
	"github.com/retrysafe/retrysafe/suites/bench"
	"github.com/retrysafe/retrysafe/suites/framework"
)

// TestMergeFindsWhatASetHides merges a synthetic set (a correct API's answers, one record per
// operation) after three edits, each of which the merge must name: one operation's record
// deleted (missing-record), one recorded twice (duplicate-record), and one replay in shard 3
// given another body (replay-differs: its body and the first one, in another file, are read again
// by offset).
// mergeSet writes a synthetic set of 4000 attempts in 4 shards and returns it and a function
// that merges it into a report named by its argument, returning the load property's report and
// the command's error.
func mergeSet(t *testing.T) (*bench.ShardSet, func(string) (*reports.Property, error)) {
	t.Helper()
	dir := t.TempDir()
	set, err := bench.WriteShardSet(t.Context(), dir, 4, 4000, bench.ShardSetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	t.Setenv("RETRYSAFE_URL", "http://"+ln.Addr().String())

	return set, func(name string) (*reports.Property, error) {
		t.Helper()
		report := filepath.Join(dir, name)
		var out bytes.Buffer
		root := newRoot()
		root.SetArgs([]string{"merge", "--target", set.Target, "--report-dir", report, "--no-cleanup", dir})
		root.SetOut(&out)
		root.SetErr(&out)
		err := root.Execute()
		data, rerr := os.ReadFile(filepath.Join(report, "report.json"))
		if rerr != nil {
			t.Fatalf("merge (%v) wrote no report: %v\n%s", err, rerr, out.String())
		}
		var r reports.Run
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		for i := range r.Properties {
			if r.Properties[i].Name == framework.LoadProperty {
				return &r.Properties[i], err
			}
		}
		t.Fatalf("no load property in the report:\n%s", out.String())
		return nil, err
	}
}

func TestMergeFindsWhatASetHides(t *testing.T) {
	set, merge := mergeSet(t)
	dir := set.Dir
	if p, err := merge("correct"); err != nil || p.Verdict != reports.Pass {
		t.Fatalf("the untouched set: %v, verdict %s", err, p.Verdict)
	}

	db, err := sql.Open("sqlite", filepath.Join(dir, "records.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"DELETE FROM rs_records WHERE ref = 'rs-bench-4000005'",
		"INSERT INTO rs_records (ref) VALUES ('rs-bench-4000010')"} {
		if res, err := db.Exec(q); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s: %d rows", q, n)
		}
	}
	replay := editReplay(t, filepath.Join(dir, "shard-3-of-4.rsshard"))

	p, err := merge("edited")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitViolation {
		t.Fatalf("the edited set: %v, want exit %d", err, exitViolation)
	}
	var got []string
	for _, sp := range p.Specs {
		for _, a := range sp.Anomalies {
			got = append(got, string(a.Kind)+" "+a.Key)
			if a.Kind == reports.KindReplayDiffs && (!strings.Contains(a.Message, "at $['status'] (sent by different shards") ||
				len(a.Shards) != 2 || a.Shards[0].Shard == 3 || a.Shards[1].Shard != 3) {
				t.Errorf("replay-differs: %s, shards %+v; want the changed $.status, first in its owner's file, then the edited attempt of shard 3", a.Message, a.Shards)
			}
		}
	}
	want := []string{"duplicate-record rs-bench-4000010", "missing-record rs-bench-4000005", "replay-differs " + replay}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("anomalies:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// editReplay gives the first 201 in a shard file to an operation another shard owns (a
// cross-shard twin, whose first 201 is in its owner's file) a body with another status field,
// and returns the key of its operation.
func editReplay(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	owners, keys := map[string]string{}, map[string]string{} // by row
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if f[0] == "o" {
			owners[f[1]], keys[f[1]] = f[2], f[5]
			continue
		}
		if f[0] != "a" || f[6] != "201" || owners[f[2]] == "3" {
			continue
		}
		seq := strings.TrimPrefix(keys[f[2]], "rs-bench-")
		body := fmt.Appendf(nil, `{"id":"ord_%s","ref":"rs-bench-%s","amount":1000,"currency":"eur","status":"changed"}`, seq, seq)
		sum := sha256.Sum256(body)
		f[8], f[9] = base64.RawStdEncoding.EncodeToString(sum[:]), base64.RawStdEncoding.EncodeToString(body)
		lines[i] = strings.Join(f, "\t")
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return keys[f[2]]
	}
	t.Fatal("no replay in " + path)
	return ""
}

// TestMergeOfAnUnreadableSetIsUnknown merges sets whose shard files are complete but do not
// hold what they should: the load property is unknown, with the reason, and merge exits 3.
func TestMergeOfAnUnreadableSetIsUnknown(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"an operation the target does not declare", "\torders\t", "\trefunds\t", `names operation "refunds", which the target file does not declare`},
		{"a tenant the target does not declare", "\talice\n", "\tbob\n", `names tenant "bob", which the target file does not declare`},
		{"a malformed attempt", "\t201\to\t", "\t201\tx\t", `a shard file cannot be read: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, merge := mergeSet(t)
			path := filepath.Join(set.Dir, "shard-2-of-4.rsshard")
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			i := strings.LastIndex(string(raw), tc.old)
			if i < 0 {
				t.Fatalf("no %q in %s", tc.old, path)
			}
			edited := string(raw[:i]) + tc.new + string(raw[i+len(tc.old):])
			if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := merge("report")
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitIncomplete {
				t.Fatalf("merge: %v, want exit %d", err, exitIncomplete)
			}
			if p.Verdict != reports.Unknown || len(p.Specs) != 1 || !strings.Contains(p.Specs[0].Failure, tc.want) {
				t.Fatalf("load %s, specs %+v; want unknown with %q", p.Verdict, p.Specs, tc.want)
			}
		})
	}
}
