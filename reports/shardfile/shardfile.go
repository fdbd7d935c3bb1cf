// Package shardfile is the file one shard of a sharded load writes and `retrysafe merge` reads:
// format retrysafe.shard/v1, documented in docs/shards.md.
//
// A shard file is text, one record per line, written to a temporary name (NAME.partial) and
// renamed to NAME when complete, so that a shard that dies leaves no complete file:
//
//	{"header":{...}}        first line: format, run, shard, shards, the target's instances
//	o TAB index TAB ...     the operation table: every operation the shard sent (see Operation)
//	a TAB seq TAB ...       the attempts, in the order they started (see Attempt)
//	{"event":{...}}         the fault events
//	{"manifest":{...}}      last line: the run, the shard, the seed, the target file's SHA-256, the
//	                        planned and actual start and end, the figures, complete: true
//
// Operation and attempt lines are tab-separated rather than JSON so that a merge reads millions
// of them fast.
// Nothing in a shard file is a credential: attempts are redacted by the history before they are
// recorded, and the compact attempts of a load keep no header and no request body.
package shardfile

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

// Format is the format name every shard file's header and manifest carry.
const Format = "retrysafe.shard/v1"

// Ext is the extension of a complete shard file; a shard still writing (or dead) has Ext+".partial".
const Ext = ".rsshard"

// Name is the file name of shard i of n.
func Name(i, n int) string { return fmt.Sprintf("shard-%d-of-%d%s", i, n, Ext) }

// Header is a shard file's first line: enough to say whose a file is, even a partial one.
type Header struct {
	Format string `json:"format"`
	Run    string `json:"run"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
	// Instances are the hosts of the target's instances; an attempt names its instance by index.
	Instances []string `json:"instances"`
}

// Operation is one row of the operation table.
type Operation struct {
	// Index is the row's number, from 0; attempts name their operation by it.
	Index int `json:"i"`
	// Def names the operation's definition in the target file.
	Def    string `json:"def"`
	Ref    string `json:"ref"`
	Key    string `json:"key"`
	Tenant string `json:"tenant,omitempty"`
	// Owner is the shard that started the operation (another shard's for a cross-shard twin or
	// retry).
	Owner int `json:"owner"`
}

// append renders the operation's line:
//
//	o INDEX OWNER DEF REF KEY TENANT
//
// tab-separated; a text field that holds a tab, a newline, a backslash or starts with a double
// quote is Go-quoted.
func (op *Operation) append(b []byte) []byte {
	b = append(b, 'o', '\t')
	b = strconv.AppendInt(b, int64(op.Index), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(op.Owner), 10)
	for _, f := range []string{op.Def, op.Ref, op.Key, op.Tenant} {
		b = append(b, '\t')
		if strings.ContainsAny(f, "\t\n\r\\") || strings.HasPrefix(f, `"`) {
			b = strconv.AppendQuote(b, f)
		} else {
			b = append(b, f...)
		}
	}
	return append(b, '\n')
}

// parseOperation parses an operation line.
func parseOperation(l []byte) (Operation, error) {
	var r Row
	if err := parseRow(l, &r); err != nil {
		return Operation{}, err
	}
	return Operation{Index: r.Index, Owner: r.Owner, Def: string(r.Def), Ref: string(r.Ref), Key: string(r.Key), Tenant: string(r.Tenant)}, nil
}

// Manifest is a shard file's last line.
type Manifest struct {
	Format string `json:"format"`
	Run    string `json:"run"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
	Seed   int64  `json:"seed"`
	// TargetSHA256 is the hex SHA-256 of the target file's bytes.
	TargetSHA256 string `json:"target_sha256"`
	// PlannedStart and PlannedEnd are the window the plan gave the load (--start-at and the
	// duration); Start and End the first attempt's start and the last one's end.
	PlannedStart time.Time `json:"planned_start"`
	PlannedEnd   time.Time `json:"planned_end"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	// Rate is the shard's hits per second, Planned its share of hits, Hits those it sent.
	Rate     int   `json:"rate"`
	Planned  int64 `json:"planned_hits"`
	Hits     int64 `json:"hits"`
	Attempts int64 `json:"attempts"`
	// Operations is the size of the operation table.
	Operations int `json:"operations"`
	// Limits are the load limits in force in the shard, in words.
	Limits string `json:"limits,omitempty"`
	// Figures are the shard's load figures (hits by kind, status counts, ...).
	Figures map[string]string `json:"figures,omitempty"`
	// Complete is true when the shard sent its share of the plan.
	Complete bool `json:"complete"`
	// Incomplete says why a shard that ran could not send its share.
	Incomplete string `json:"incomplete,omitempty"`
}

// line is one JSON line of a shard file.
type line struct {
	Header   *Header        `json:"header,omitempty"`
	Event    *history.Event `json:"event,omitempty"`
	Manifest *Manifest      `json:"manifest,omitempty"`
}

// Write writes a complete shard file into dir: header, operations, attempts (sorted by start by
// the caller), events and manifest (its Attempts set to the attempts written), to a temporary
// name first, renamed when everything is on disk. It returns the file's path.
func Write(dir string, h Header, ops []Operation, attempts iter.Seq[Attempt], events []history.Event, m *Manifest) (string, error) {
	h.Format, m.Format, m.Attempts = Format, Format, 0
	final := filepath.Join(dir, Name(h.Shard, h.Shards))
	tmp := final + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	err = enc.Encode(line{Header: &h})
	var buf []byte
	for i := range ops {
		if err == nil {
			buf = ops[i].append(buf[:0])
			_, err = w.Write(buf)
		}
	}
	if err == nil {
		first := map[int][32]byte{} // the body hash of each operation's first attempt with a body
		for a := range attempts {
			same := false
			if len(a.Body) > 0 {
				h, seen := first[a.Op]
				same = seen && h == a.BodyHash
				if !seen {
					first[a.Op] = a.BodyHash
				}
			}
			buf = a.append(buf[:0], same)
			if _, err = w.Write(buf); err != nil {
				break
			}
			m.Attempts++
		}
	}
	for i := range events {
		if err == nil {
			err = enc.Encode(line{Event: &events[i]})
		}
	}
	if err == nil {
		err = enc.Encode(line{Manifest: m})
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", final, err)
	}
	return final, nil
}

// Attempt is one attempt as a shard file stores it: the load's compact attempt.
type Attempt struct {
	// Seq is the attempt's sequence number in its shard (its local sequence).
	Seq int64
	// Op is the operation's row in the operation table; Instance the instance's index in the
	// header.
	Op, Instance int
	Start, End   time.Time
	Status       int
	Outcome      history.Outcome
	BodyHash     [32]byte
	// Body is the response body (at most the client's cap), Truncated whether it was cut.
	Body      []byte
	Truncated bool
	Err, Note string
}

var outcomeCode = map[history.Outcome]byte{history.OK: 'o', history.Unknown: 'u', history.Failed: 'f'}

// append renders the attempt's line:
//
//	a SEQ OP INSTANCE START_NS END_NS STATUS OUTCOME HASH BODY TRUNCATED ERR NOTE
//
// tab-separated; OUTCOME is o (ok), u (unknown) or f (failed); HASH and BODY are unpadded
// base64, BODY "=" when it is the body of the operation's first attempt with a body in the file
// (same hash: a replay); ERR and NOTE are Go-quoted strings, or empty.
func (a *Attempt) append(b []byte, sameBody bool) []byte {
	b = append(b, 'a', '\t')
	b = strconv.AppendInt(b, a.Seq, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(a.Op), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(a.Instance), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, a.Start.UnixNano(), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, a.End.UnixNano(), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(a.Status), 10)
	b = append(b, '\t', outcomeCode[a.Outcome], '\t')
	b = base64.RawStdEncoding.AppendEncode(b, a.BodyHash[:])
	b = append(b, '\t')
	if sameBody {
		b = append(b, '=')
	} else {
		b = base64.RawStdEncoding.AppendEncode(b, a.Body)
	}
	b = append(b, '\t')
	if a.Truncated {
		b = append(b, '1')
	}
	b = append(b, '\t')
	if a.Err != "" {
		b = strconv.AppendQuote(b, a.Err)
	}
	b = append(b, '\t')
	if a.Note != "" {
		b = strconv.AppendQuote(b, a.Note)
	}
	return append(b, '\n')
}

// parseInt parses a decimal integer without allocating.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 || (len(b) == 19 && string(b) > "9223372036854775807") {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// File is a shard file opened for reading: its header and manifest (nil when the shard did not
// finish writing it), read when it is opened; its operations and attempts, read on demand.
type File struct {
	Path     string
	Header   Header
	Manifest *Manifest
	// Partial is true for a NAME.partial file: a shard that has not finished, or died.
	Partial bool
}

// ErrNotShardFile is the error of a file that is not a shard file.
var ErrNotShardFile = errors.New("not a " + Format + " file")

// Open reads the header and manifest of the shard file at path.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sf := &File{Path: path, Partial: strings.HasSuffix(path, ".partial")}
	r := bufio.NewReader(f)
	first, err := r.ReadBytes('\n')
	var l line
	if err != nil || json.Unmarshal(first, &l) != nil || l.Header == nil {
		return nil, fmt.Errorf("%s: %w (no header line)", path, ErrNotShardFile)
	}
	if l.Header.Format != Format {
		return nil, fmt.Errorf("%s: format %q, want %q", path, l.Header.Format, Format)
	}
	sf.Header = *l.Header
	last, err := lastLine(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var ml line
	if json.Unmarshal(last, &ml) == nil && ml.Manifest != nil {
		sf.Manifest = ml.Manifest
	}
	return sf, nil
}

// lastLine returns the last complete line of f.
func lastLine(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	for chunk := int64(4096); ; chunk *= 4 {
		off := max(size-chunk, 0)
		buf := make([]byte, size-off)
		if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
			return nil, err
		}
		buf = bytes.TrimRight(buf, "\n")
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return buf[i+1:], nil
		}
		if off == 0 {
			return buf, nil
		}
	}
}
