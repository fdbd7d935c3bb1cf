package shardfile

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

// sample writes a shard file of three attempts (one a replay, one with an error and a note) and
// two operations (one with fields that must be quoted) and returns its path and contents.
func sample(t *testing.T) (string, []Attempt, []Operation, Manifest) {
	t.Helper()
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 123, time.UTC)
	in := []Attempt{
		{Seq: 1, Op: 0, Instance: 1, Start: t0, End: t0.Add(time.Millisecond), Status: 201, Outcome: history.OK,
			BodyHash: sha256.Sum256([]byte(`{"id":1}`)), Body: []byte("{\"id\":1,\n\t\"x\":\"é\"}")},
		{Seq: 2, Op: 1, Start: t0.Add(time.Second), End: t0.Add(2 * time.Second), Outcome: history.Unknown,
			Err: "read: connection reset\tby peer", Note: `re-sent "after" 429`, Truncated: true},
		{Seq: 3, Op: 0, Start: t0.Add(3 * time.Second), End: t0.Add(4 * time.Second), Status: 201, Outcome: history.OK,
			BodyHash: sha256.Sum256([]byte(`{"id":1}`)), Body: []byte("{\"id\":1,\n\t\"x\":\"é\"}")}, // a replay: stored as "="
	}
	ops := []Operation{{Index: 0, Def: "orders", Ref: "rs-r-1", Key: "rs-rs-r-1", Tenant: "alice"}, {Index: 1, Def: "refunds", Ref: `"rs-r-5`, Key: "k5\tx\\y", Owner: 3}}
	ev := []history.Event{{At: t0, Action: "inject", Kind: "kill", Target: "shard 2"}}
	m := Manifest{Run: "r", Shard: 2, Shards: 4, Seed: 9, TargetSHA256: "ab", Start: t0, End: t0.Add(2 * time.Second), Complete: true}
	path, err := Write(dir, Header{Run: "r", Shard: 2, Shards: 4, Instances: []string{"a:1", "b:2"}}, ops, slices.Values(in), ev, &m)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "shard-2-of-4.rsshard" {
		t.Fatalf("written as %s", path)
	}
	if _, err := os.Stat(path + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("the temporary file is left: %v", err)
	}
	if raw, _ := os.ReadFile(path); strings.Count(string(raw), "\t=\t") != 1 {
		t.Fatalf("the replay's body is not stored as \"=\":\n%s", raw)
	}
	return path, in, ops, m
}

func TestWriteThenOpen(t *testing.T) {
	path, in, _, m := sample(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Attempts != int64(len(in)) {
		t.Fatalf("the manifest counts %d attempts, %d written", m.Attempts, len(in))
	}
	if f.Manifest == nil || f.Manifest.Seed != 9 || f.Manifest.Format != Format || f.Header.Instances[1] != "b:2" {
		t.Fatalf("header %+v manifest %+v", f.Header, f.Manifest)
	}
}

func TestWriteThenReadBack(t *testing.T) {
	path, in, ops, _ := sample(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.OpenReader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows []Operation
	from, err := f.Operations(func(off int64, row *Row) error {
		got, err := r.Operation(off)
		if err != nil {
			return err
		}
		if got.Def != string(row.Def) || got.Ref != string(row.Ref) || got.Key != string(row.Key) || got.Tenant != string(row.Tenant) {
			t.Errorf("row %+v; read again at offset %d: %+v", row, off, got)
		}
		rows = append(rows, got)
		return nil
	})
	if err != nil || !slices.Equal(rows, ops) {
		t.Fatalf("operations %+v (%v), want %+v", rows, err, ops)
	}
	for _, start := range []int64{from, 0} {
		var got []Compact
		if err := f.Attempts(start, func(c *Compact) bool { got = append(got, *c); return true }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(in) {
			t.Fatalf("from offset %d: %d attempts, want %d", start, len(got), len(in))
		}
		for i, w := range in {
			g := got[i]
			if g.Seq != w.Seq || int(g.Op) != w.Op || int(g.Instance) != w.Instance || g.Start != w.Start.UnixNano() || g.End != w.End.UnixNano() ||
				int(g.Status) != w.Status || g.Outcome != w.Outcome || g.BodyHash != w.BodyHash || g.Truncated != w.Truncated || g.Err != w.Err || g.Note != w.Note {
				t.Fatalf("attempt %d: %+v, want %+v", i, g, w)
			}
			if w.Body == nil {
				if g.BodyAt != -1 {
					t.Errorf("attempt %d has no body, but BodyAt %d", i, g.BodyAt)
				}
				continue
			}
			body, err := r.Body(g.BodyAt)
			if err != nil || string(body) != string(w.Body) {
				t.Errorf("attempt %d: body %q (%v), want %q", i, body, err, w.Body)
			}
		}
		if got[2].BodyAt != got[0].BodyAt {
			t.Errorf("the replay's body is at %d, the first's at %d", got[2].BodyAt, got[0].BodyAt)
		}
	}
}

func TestAPartialFileHasNoManifest(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, Name(1, 4)+".partial")
	if err := os.WriteFile(p, []byte(`{"header":{"format":"`+Format+`","run":"r","shard":1,"shards":4}}`+"\na\t1\t0\t0\t1\t2\t201\to\t"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Partial || f.Manifest != nil || f.Header.Shard != 1 {
		t.Fatalf("%+v", f)
	}
	if _, err := Open(filepath.Join("testdata", "missing")); err == nil {
		t.Fatal("a missing file opened")
	}
	other := filepath.Join(dir, "x.rsshard")
	os.WriteFile(other, []byte("hello\n"), 0o644)
	if _, err := Open(other); err == nil {
		t.Fatal("a file that is not a shard file opened")
	}
}

func TestCheckSet(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	mk := func(run string, i, n int, partial bool, start time.Duration, sha string) *File {
		f := &File{Path: Name(i, n), Header: Header{Format: Format, Run: run, Shard: i, Shards: n}, Partial: partial}
		if !partial {
			f.Manifest = &Manifest{Run: run, Shard: i, Shards: n, TargetSHA256: sha, Complete: true,
				Start: t0.Add(start), End: t0.Add(start + 10*time.Second)}
		}
		return f
	}
	good := func() []*File {
		return []*File{mk("r", 2, 4, false, 0, "s"), mk("r", 0, 4, false, 0, "s"), mk("r", 1, 4, false, time.Second, "s"), mk("r", 3, 4, false, 0, "s")}
	}
	set, problems := CheckSet(good(), "", "s")
	if len(problems) > 0 || len(set) != 4 || set[0].Header.Shard != 0 || set[3].Header.Shard != 3 {
		t.Fatalf("a good set: %v %v", set, problems)
	}
	for _, tc := range []struct {
		name  string
		edit  func([]*File) []*File
		wants string
	}{
		{"missing", func(fs []*File) []*File { return fs[1:] }, "shard 2 of 4 is missing"},
		{"died", func(fs []*File) []*File { fs[0] = mk("r", 2, 4, true, 0, "s"); return fs }, "shard 2 of 4 did not finish"},
		{"twice", func(fs []*File) []*File { return append(fs, mk("r", 2, 4, false, 0, "s")) }, "shard 2 of 4 appears 2 times"},
		{"other run", func(fs []*File) []*File { return append(fs, mk("q", 1, 4, false, 0, "s")) }, `shard 1 of run "q", not of run "r"`},
		{"two runs", func(fs []*File) []*File { return append(fs, mk("q", 1, 4, false, 0, "s")) }, `several runs`},
		{"other target", func(fs []*File) []*File { fs[0] = mk("r", 2, 4, false, 0, "t"); return fs }, "another target file"},
		{"other count", func(fs []*File) []*File { return append(fs, mk("r", 4, 5, false, 0, "s")) }, "is shard 4 of 5"},
		{"short", func(fs []*File) []*File {
			fs[0].Manifest.Complete, fs[0].Manifest.Incomplete = false, "sent 3 of its 10 hits"
			return fs
		}, "shard 2 of 4 did not send its share: sent 3 of its 10 hits"},
		{"apart", func(fs []*File) []*File { fs[0] = mk("r", 2, 4, false, 5*time.Second, "s"); return fs }, "overlap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := "r"
			if tc.name == "two runs" {
				run = ""
			}
			set, problems := CheckSet(tc.edit(good()), run, "s")
			if set != nil || len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), tc.wants) {
				t.Fatalf("set %v, problems %q; want one with %q", set, problems, tc.wants)
			}
		})
	}
}

// TestTheFastParserAgreesWithTheFieldParser parses varied attempt lines both ways.
func TestTheFastParserAgreesWithTheFieldParser(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	bodies := [][]byte{nil, {}, []byte(`{"id":1}`), []byte("\t\n\x00é")}
	fast := 0
	for i := range 400 {
		a := Attempt{Seq: int64(i * 7919), Op: i % 13, Instance: i % 3, Start: t0.Add(time.Duration(i) * time.Microsecond),
			End: t0.Add(time.Duration(i*3) * time.Millisecond), Status: []int{0, 201, 409, 503}[i%4],
			Outcome: []history.Outcome{history.OK, history.Unknown, history.Failed}[i%3], Body: bodies[i%4], Truncated: i%5 == 0}
		a.BodyHash = sha256.Sum256(a.Body)
		if i%7 == 0 {
			a.Err = "reset\tby peer"
		}
		if i%11 == 0 {
			a.Note = `"quoted"`
		}
		l := a.append(nil, i%6 == 0)
		l = l[:len(l)-1]
		var f, g Compact
		fb, ok := parseCompactFast(l, &f)
		gb, err := parseCompactFields(l, &g)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if !ok {
			continue
		}
		fast++
		if f != g || string(fb) != string(gb) {
			t.Fatalf("line %q: fast %+v %q, fields %+v %q", l, f, fb, g, gb)
		}
	}
	if fast < 200 {
		t.Fatalf("the fast parser took %d of 400 lines", fast)
	}
}
