package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// StateVersion is the version of the state file format Record describes.
const StateVersion = 1

// The statuses of a Record.
const (
	StatusPending = "pending" // stored before the first attempt; not finished yet
	StatusDone    = "done"    // succeeded: never sent again
	StatusFailed  = "failed"  // failed finally (rejected, or out of attempts): never sent again
)

// Record is one operation's state file, DIR/op-NNNN.json where NNNN is the operation's
// 1-based position in the ops list (four digits or more). It is written before the
// operation's first attempt and again before every attempt and when it finishes, each time
// as a temporary file that is fsynced and renamed over the old one (and the directory is
// fsynced), so that a kill at any moment leaves either the old or the new record.
type Record struct {
	Version int    `json:"version"` // StateVersion
	Index   int    `json:"index"`   // 1-based position in the ops list
	Ref     string `json:"ref"`
	// Params are the operation's params as given (not the defaults).
	Params map[string]any `json:"params,omitempty"`
	// Key is the operation's Idempotency-Key (empty only when the key-in-memory mutant wrote
	// the record).
	Key string `json:"key"`
	// Body is the exact request body every attempt sends, created_at included.
	Body   string `json:"body"`
	Status string `json:"status"` // StatusPending, StatusDone or StatusFailed
	// Attempts counts the attempts started, across restarts; one killed mid-attempt counts.
	Attempts int `json:"attempts"`
	// Reason says why a failed operation failed, or why one was reported pending.
	Reason string `json:"reason,omitempty"`
	// Answered is set once an attempt got an answer (any status): an operation out of attempts
	// none of which was answered is reported pending, not failed.
	Answered bool `json:"answered,omitempty"`
	// PendingAt is Attempts when the operation was last reported pending: a run that resumes it
	// gives it max-attempts more.
	PendingAt int `json:"pending_at,omitempty"`
	// Updated is when the record was written.
	Updated time.Time `json:"updated"`
}

// recordName is the file name of operation index's record.
func recordName(index int) string { return fmt.Sprintf("op-%04d.json", index) }

// ReadState reads every record of a state directory, in index order. A directory that does
// not exist holds none.
func ReadState(dir string) ([]Record, error) {
	names, err := filepath.Glob(filepath.Join(dir, "op-*.json"))
	if err != nil {
		return nil, err
	}
	var recs []Record
	for _, path := range names {
		index, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "op-"), ".json"))
		if err != nil || index < 1 {
			return nil, fmt.Errorf("state file %s: not a record name (op-NNNN.json): remove it or use a fresh --state", path)
		}
		r, err := readRecord(path)
		if err != nil {
			return nil, err
		}
		if r.Index != index {
			return nil, fmt.Errorf("state file %s: holds operation %d: remove it or use a fresh --state", path, r.Index)
		}
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b Record) int { return a.Index - b.Index })
	return recs, nil
}

// readRecord reads and checks one state file.
func readRecord(path string) (Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // params compare by their exact digits
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("state file %s: unreadable (%v): remove it or use a fresh --state", path, err)
	}
	var problem string
	switch {
	case r.Version != StateVersion:
		problem = fmt.Sprintf("version %d, this client reads version %d", r.Version, StateVersion)
	case r.Status != StatusPending && r.Status != StatusDone && r.Status != StatusFailed:
		problem = fmt.Sprintf("status %q (known: pending, done, failed)", r.Status)
	case r.Body == "":
		problem = "no body"
	}
	if problem != "" {
		return Record{}, fmt.Errorf("state file %s: %s: remove it or use a fresh --state", path, problem)
	}
	return r, nil
}

// stateDir keeps the records of one run's operations.
type stateDir struct {
	dir string
	// omitKey leaves the key out of every record written (the key-in-memory mutant).
	omitKey bool
}

// open creates the directory if needed and returns the stored record of each operation
// (nil for one never started), refusing records that describe other operations.
func (s stateDir) open(ops []Operation) ([]*Record, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %v", err)
	}
	recs, err := ReadState(s.dir)
	if err != nil {
		return nil, err
	}
	// A kill during save can leave its temporary file behind; the record itself is intact.
	stale, _ := filepath.Glob(filepath.Join(s.dir, ".op-*.tmp"))
	for _, tmp := range stale {
		_ = os.Remove(tmp)
	}
	byOp := make([]*Record, len(ops))
	for _, r := range recs {
		if r.Index > len(ops) {
			return nil, fmt.Errorf("state directory %s holds operation %d (ref %s) but the ops list has %d: it belongs to another ops list; use a fresh --state",
				s.dir, r.Index, r.Ref, len(ops))
		}
		op := ops[r.Index-1]
		if r.Ref != op.Ref || canonical(r.Params) != canonical(op.Params) {
			return nil, fmt.Errorf("state directory %s: operation %d was ref %s with params %s, but the ops list's operation %d is ref %s with params %s: use a fresh --state for a new ops list",
				s.dir, r.Index, r.Ref, canonical(r.Params), r.Index, op.Ref, canonical(op.Params))
		}
		byOp[r.Index-1] = &r
	}
	return byOp, nil
}

// save writes r durably: a temporary file in the directory, fsynced, renamed over the
// record's file, then the directory fsynced.
func (s stateDir) save(r Record) error {
	if s.omitKey {
		r.Key = ""
	}
	r.Version, r.Updated = StateVersion, time.Now().UTC()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("operation %d (ref %s): encoding its state: %v", r.Index, r.Ref, err)
	}
	if err := writeDurably(s.dir, recordName(r.Index), append(data, '\n')); err != nil {
		return fmt.Errorf("operation %d (ref %s): storing its state in %s: %v (the client sends nothing it could not store)", r.Index, r.Ref, s.dir, err)
	}
	return nil
}

// remove deletes r's record (the forgets-pending mutant: the next run starts it over).
func (s stateDir) remove(r Record) error {
	if err := os.Remove(filepath.Join(s.dir, recordName(r.Index))); err != nil {
		return fmt.Errorf("operation %d (ref %s): removing its state: %v", r.Index, r.Ref, err)
	}
	return syncDir(s.dir)
}

// writeDurably replaces dir/name by data: temp file, fsync, rename, fsync of dir.
func writeDurably(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory, so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return err
	}
	return nil
}

// canonical is the JSON text of params with sorted keys ("{}" for none).
func canonical(params map[string]any) string {
	if len(params) == 0 {
		return "{}"
	}
	b, err := json.Marshal(params)
	if err != nil {
		return fmt.Sprintf("%v", params)
	}
	return string(b)
}
