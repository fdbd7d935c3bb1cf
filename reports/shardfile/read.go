package shardfile

// The reader a merge uses: the operation table as raw fields and the attempts without their
// bodies (each knows the offset of the line that holds its body), so that millions of lines are
// read without an allocation per line; a body or an operation row is read again by offset, the
// few times a judgement needs one.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/retrysafe/retrysafe/targets/history"
)

// Row is an operation line's fields, valid only during the callback that receives it.
type Row struct {
	Index, Owner          int
	Def, Ref, Key, Tenant []byte
}

// Compact is an attempt as a merge reads it: its body left in the file.
type Compact struct {
	// Seq is the attempt's local sequence; Op its operation's row; Instance its instance's index.
	Seq          int64
	Op, Instance int32
	// Start and End are Unix nanoseconds.
	Start, End int64
	Status     int32
	Truncated  bool
	Outcome    history.Outcome
	BodyHash   [32]byte
	// BodyAt is the offset of the line that holds the attempt's body (for a repeated body, the
	// operation's first line with one), -1 when it has none.
	BodyAt    int64
	Err, Note string
}

// lineReader reads lines and knows the offset of each.
type lineReader struct {
	r    *bufio.Reader
	off  int64
	long []byte
}

func newLineReader(f io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(f, 1<<20)}
}

// next returns the next line without its newline (valid until the next call) and its offset;
// io.EOF after the last.
func (lr *lineReader) next() ([]byte, int64, error) {
	at := lr.off
	l, err := lr.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		lr.long = append(lr.long[:0], l...)
		for errors.Is(err, bufio.ErrBufferFull) {
			l, err = lr.r.ReadSlice('\n')
			lr.long = append(lr.long, l...)
		}
		l = lr.long
	}
	lr.off += int64(len(l))
	if err == io.EOF && len(l) > 0 {
		err = nil // a last line without a newline
	}
	if err != nil {
		return nil, at, err
	}
	return bytes.TrimSuffix(l, []byte{'\n'}), at, nil
}

// Operations reads the operation table: each row with the offset of its line, in order. It
// returns the offset where the attempts begin.
func (sf *File) Operations(each func(off int64, r *Row) error) (int64, error) {
	f, err := os.Open(sf.Path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lr := newLineReader(f)
	var row Row
	for n := 1; ; n++ {
		l, at, err := lr.next()
		if err == io.EOF {
			return lr.off, nil
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %w", sf.Path, err)
		}
		if len(l) > 1 && l[0] == 'a' && l[1] == '\t' {
			return at, nil
		}
		if len(l) < 2 || l[0] != 'o' || l[1] != '\t' {
			continue // the header
		}
		if err := parseRow(l, &row); err != nil {
			return 0, fmt.Errorf("%s:%d: %w", sf.Path, n, err)
		}
		if err := each(at, &row); err != nil {
			return 0, err
		}
	}
}

// parseRow parses an operation line into r, unquoting a quoted field.
func parseRow(l []byte, r *Row) error {
	var f [7][]byte
	if n := splitTabs(l, f[:]); n != 7 {
		return fmt.Errorf("an operation line has %d fields, want 7", n)
	}
	idx, ok1 := parseInt(f[1])
	owner, ok2 := parseInt(f[2])
	if !ok1 || !ok2 {
		return fmt.Errorf("operation index or owner %q, %q is not an integer", f[1], f[2])
	}
	r.Index, r.Owner = int(idx), int(owner)
	for i, dst := range [...]*[]byte{&r.Def, &r.Ref, &r.Key, &r.Tenant} {
		v := f[3+i]
		if len(v) > 0 && v[0] == '"' {
			s, err := strconv.Unquote(string(v))
			if err != nil {
				return fmt.Errorf("operation field %d: %w", 4+i, err)
			}
			v = []byte(s)
		}
		*dst = v
	}
	return nil
}

// splitTabs splits l at tabs into f (the last field holds the rest) and returns how many fields
// there are, counting those beyond len(f).
func splitTabs(l []byte, f [][]byte) int {
	n := 0
	for n < len(f)-1 {
		i := bytes.IndexByte(l, '\t')
		if i < 0 {
			break
		}
		f[n], l = l[:i], l[i+1:]
		n++
	}
	f[n] = l
	return n + 1 + bytes.Count(l, []byte{'\t'})
}

// Attempts reads the attempts from offset from (0: the start of the file; Operations returns
// where they begin) to the first line that is not an attempt, in file order, passing each to
// each, which must not keep it. It stops at the first malformed line or when each returns false.
func (sf *File) Attempts(from int64, each func(*Compact) bool) error {
	f, err := os.Open(sf.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return err
	}
	lr := newLineReader(f)
	lr.off = from
	var firstAt []int64 // by operation row: the offset of its first attempt with a body, +1
	if sf.Manifest != nil {
		firstAt = make([]int64, sf.Manifest.Operations)
	}
	var a Compact
	started := false
	for {
		l, at, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sf.Path, err)
		}
		if len(l) < 2 || l[0] != 'a' || l[1] != '\t' {
			if started {
				return nil // the events and the manifest follow
			}
			continue // the header and the operation table
		}
		started = true
		body, err := parseCompact(l, &a)
		if err != nil {
			return fmt.Errorf("%s at offset %d: %w", sf.Path, at, err)
		}
		if a.Op < 0 || a.Op > 1<<28 {
			return fmt.Errorf("%s at offset %d: operation row %d", sf.Path, at, a.Op)
		}
		if int(a.Op) >= len(firstAt) {
			firstAt = slices.Grow(firstAt, max(int(a.Op)+1, 2*len(firstAt))-len(firstAt))
			firstAt = firstAt[:cap(firstAt)]
		}
		a.BodyAt = -1
		switch {
		case len(body) == 0:
		case len(body) == 1 && body[0] == '=':
			if firstAt[a.Op] == 0 {
				return fmt.Errorf("%s at offset %d: a repeated body (=) before the operation's first", sf.Path, at)
			}
			a.BodyAt = firstAt[a.Op] - 1
		default:
			a.BodyAt = at
			if firstAt[a.Op] == 0 {
				firstAt[a.Op] = at + 1
			}
		}
		if !each(&a) {
			return nil
		}
	}
}

// parseCompact parses an attempt line into a, and returns its body field, undecoded.
func parseCompact(l []byte, a *Compact) ([]byte, error) {
	if body, ok := parseCompactFast(l, a); ok {
		return body, nil
	}
	return parseCompactFields(l, a)
}

// hashLen is the length of an attempt line's HASH field: 32 bytes in unpadded base64.
var hashLen = base64.RawStdEncoding.EncodedLen(32)

// parseCompactFast parses the usual attempt line in one pass: no field wider than it should
// be, no error or note; false sends the line to parseCompactFields, which says what is wrong.
func parseCompactFast(l []byte, a *Compact) ([]byte, bool) {
	if len(l) < 2 || l[0] != 'a' || l[1] != '\t' {
		return nil, false
	}
	i := 2
	var nums [6]int64
	for k := range nums {
		v, n := uint64(0), 0
		for ; i < len(l) && l[i] >= '0' && l[i] <= '9'; i++ {
			v = v*10 + uint64(l[i]-'0') // 19 digits fit in a uint64
			n++
		}
		if n == 0 || n > 19 || v > math.MaxInt64 || i >= len(l) || l[i] != '\t' {
			return nil, false
		}
		nums[k] = int64(v)
		i++
	}
	if i+2+hashLen >= len(l) || l[i+1] != '\t' || l[i+2+hashLen] != '\t' {
		return nil, false
	}
	var ok bool
	if a.Outcome, ok = outcomeOf(l[i : i+1]); !ok {
		return nil, false
	}
	i += 2
	if k, err := base64.RawStdEncoding.Decode(a.BodyHash[:], l[i:i+hashLen]); err != nil || k != 32 {
		return nil, false
	}
	i += hashLen + 1
	j := bytes.IndexByte(l[i:], '\t')
	if j < 0 {
		return nil, false
	}
	body, rest := l[i:i+j], l[i+j+1:]
	switch {
	case len(rest) == 2 && rest[0] == '\t' && rest[1] == '\t':
		a.Truncated = false
	case len(rest) == 3 && rest[0] == '1' && rest[1] == '\t' && rest[2] == '\t':
		a.Truncated = true
	default:
		return nil, false // an error or a note: parsed field by field
	}
	a.Seq, a.Op, a.Instance, a.Start, a.End, a.Status = nums[0], int32(nums[1]), int32(nums[2]), nums[3], nums[4], int32(nums[5])
	a.Err, a.Note = "", ""
	return body, true
}

// outcomeOf reads an OUTCOME field: o, u or f.
func outcomeOf(b []byte) (history.Outcome, bool) {
	if len(b) == 1 {
		switch b[0] {
		case 'o':
			return history.OK, true
		case 'u':
			return history.Unknown, true
		case 'f':
			return history.Failed, true
		}
	}
	return "", false
}

// parseCompactFields parses an attempt line field by field.
func parseCompactFields(l []byte, a *Compact) ([]byte, error) {
	var f [13][]byte
	if n := splitTabs(l, f[:]); n != 13 {
		return nil, fmt.Errorf("an attempt line has %d fields, want 13", n)
	}
	var nums [6]int64
	for i := range nums {
		v, ok := parseInt(f[i+1])
		if !ok {
			return nil, fmt.Errorf("attempt field %d: %q is not an integer", i+2, f[i+1])
		}
		nums[i] = v
	}
	a.Seq, a.Op, a.Instance, a.Start, a.End, a.Status = nums[0], int32(nums[1]), int32(nums[2]), nums[3], nums[4], int32(nums[5])
	var ok bool
	if a.Outcome, ok = outcomeOf(f[7]); !ok {
		return nil, fmt.Errorf("attempt outcome %q", f[7])
	}
	if len(f[8]) != base64.RawStdEncoding.EncodedLen(32) {
		return nil, fmt.Errorf("attempt body hash %q", f[8])
	}
	if k, err := base64.RawStdEncoding.Decode(a.BodyHash[:], f[8]); err != nil || k != 32 {
		return nil, fmt.Errorf("attempt body hash %q", f[8])
	}
	a.Truncated = len(f[10]) > 0
	a.Err, a.Note = "", ""
	for i, dst := range [...]*string{&a.Err, &a.Note} {
		if len(f[11+i]) > 0 {
			s, err := strconv.Unquote(string(f[11+i]))
			if err != nil {
				return nil, fmt.Errorf("attempt field %d: %w", 12+i, err)
			}
			*dst = s
		}
	}
	return f[9], nil
}

// Reader reads single lines of a shard file by offset: an attempt's body, an operation's row.
// It is not safe for concurrent use.
type Reader struct {
	f   *os.File
	buf []byte
}

// OpenReader opens the file for reads by offset.
func (sf *File) OpenReader() (*Reader, error) {
	f, err := os.Open(sf.Path)
	if err != nil {
		return nil, err
	}
	return &Reader{f: f}, nil
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// line reads the line at off, without its newline.
func (r *Reader) line(off int64) ([]byte, error) {
	n := 0
	if cap(r.buf) < 4096 {
		r.buf = make([]byte, 4096)
	}
	r.buf = r.buf[:cap(r.buf)]
	for {
		k, err := r.f.ReadAt(r.buf[n:], off+int64(n))
		if i := bytes.IndexByte(r.buf[n:n+k], '\n'); i >= 0 {
			return r.buf[:n+i], nil
		}
		n += k
		if err != nil {
			if err == io.EOF && n > 0 {
				return r.buf[:n], nil
			}
			return nil, fmt.Errorf("%s at offset %d: %w", r.f.Name(), off, err)
		}
		r.buf = append(r.buf, make([]byte, len(r.buf))...)
	}
}

// Body returns the decoded body of the attempt line at off (a Compact's BodyAt).
func (r *Reader) Body(off int64) ([]byte, error) {
	l, err := r.line(off)
	if err != nil {
		return nil, err
	}
	var a Compact
	body, err := parseCompact(l, &a)
	if err == nil && len(body) == 1 && body[0] == '=' {
		err = errors.New("a repeated body (=) where the body was expected")
	}
	if err != nil {
		return nil, fmt.Errorf("%s at offset %d: %w", r.f.Name(), off, err)
	}
	return base64.RawStdEncoding.AppendDecode(nil, body)
}

// Operation returns the operation row of the line at off (an offset Operations passed).
func (r *Reader) Operation(off int64) (Operation, error) {
	l, err := r.line(off)
	if err != nil {
		return Operation{}, err
	}
	op, err := parseOperation(l)
	if err != nil {
		return op, fmt.Errorf("%s at offset %d: %w", r.f.Name(), off, err)
	}
	return op, nil
}

// Time converts Unix nanoseconds to a time.
func Time(ns int64) time.Time { return time.Unix(0, ns) }
