package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultMaxRecordBytes bounds one record; longer ones are rejected as
// oversized rather than buffered without limit.
const DefaultMaxRecordBytes = 16 << 20

// oversizedPrefix is how much of an oversized record is kept for the
// dead-letter output.
const oversizedPrefix = 4 << 10

// Files reads JSON records from files one after another: one record per
// line (JSON Lines), or pretty-printed records one after another, told
// apart record by record (fileReader.next), so that a broken record takes
// no more than its own lines. Gzip files are decompressed transparently,
// member after member. "-" means stdin.
type Files struct {
	paths    []string
	maxBytes int
	stdin    *stoppableReader // nil without a "-" path
	// stdinName names the stream on stdin (NewNamedStdin); empty, each
	// reading of stdin is a stream of its own.
	stdinName string

	i          int
	cur        *fileReader
	done       atomic.Int64 // bytes of input consumed, for progress
	total      int64
	incomplete []IncompleteRecord
}

// NewNamedStdin returns a source over stdin whose stream keeps one name
// from run to run (its partition is "stdin-" + name), so that feeding the
// same stream again after a crash resumes it exactly once, as for a file.
// name must be a safe path segment: letters, digits, '_' and '-'.
func NewNamedStdin(name string, maxRecordBytes int, stdin io.Reader) (*Files, error) {
	if name == "" || len(name) > 64 || strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) >= 0 {
		return nil, fmt.Errorf("stdin stream name %q: use 1 to 64 letters, digits, '_' or '-'", name)
	}
	f, err := NewFiles([]string{"-"}, maxRecordBytes, stdin)
	if err != nil {
		return nil, err
	}
	f.stdinName = name
	return f, nil
}

// NewFiles checks that every path can be opened and returns a source over
// them. stdin is used for the path "-". A file listed twice (by the same
// path, or another spelling of it) is read once: read again, in the same
// partition, its records would be taken for new ones.
func NewFiles(paths []string, maxRecordBytes int, stdin io.Reader) (*Files, error) {
	if len(paths) == 0 {
		return nil, errors.New("no input files given")
	}
	paths = uniquePaths(paths)
	if maxRecordBytes <= 0 {
		maxRecordBytes = DefaultMaxRecordBytes
	}
	f := &Files{paths: paths, maxBytes: maxRecordBytes}
	for _, p := range paths {
		if p == "-" {
			f.stdin = newStoppableReader(stdin)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("input file: %w", err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("input file %s is a folder; list the files to read", p)
		}
		f.total += st.Size()
	}
	return f, nil
}

// uniquePaths drops the paths that name a file listed before them: by
// another spelling, or through a link (os.SameFile).
func uniquePaths(paths []string) []string {
	seen := make(map[string]bool, len(paths))
	var files []os.FileInfo
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		key := p
		if p != "-" {
			if abs, err := filepath.Abs(p); err == nil {
				key = abs // cleaned: ./a.jsonl and a.jsonl are one file
			}
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if p != "-" {
			if st, err := os.Stat(p); err == nil {
				if slices.ContainsFunc(files, func(f os.FileInfo) bool { return os.SameFile(f, st) }) {
					continue
				}
				files = append(files, st)
			}
		}
		out = append(out, p)
	}
	return out
}

// Progress returns the input bytes read so far and the total size of the
// input files (stdin counts as unknown size).
func (f *Files) Progress() (done, total int64) { return f.done.Load(), f.total }

// IncompleteRecords lists the records that input files read to their end
// ended in, left for the next run.
func (f *Files) IncompleteRecords() []IncompleteRecord { return f.incomplete }

// FilePartitions lists the partitions of the input files, stdin left out:
// what the source reads when it runs to its end, records or not.
func (f *Files) FilePartitions() []string {
	var out []string
	for _, p := range f.paths {
		if p != "-" {
			out = append(out, PartitionName(p))
		}
	}
	return out
}

func (f *Files) Next(ctx context.Context) (*Message, error) {
	if f.stdin != nil {
		f.stdin.ctx = ctx
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if f.cur == nil {
			if f.i >= len(f.paths) {
				return nil, io.EOF
			}
			r, err := f.open(f.paths[f.i])
			if err != nil {
				return nil, err
			}
			f.cur = r
		}
		m, err := f.cur.next()
		if err == io.EOF {
			if f.cur.incomplete != nil {
				f.incomplete = append(f.incomplete, *f.cur.incomplete)
			}
			f.cur.close()
			f.cur = nil
			f.i++
			continue
		}
		return m, err
	}
}

func (f *Files) Close() error {
	if f.cur != nil {
		f.cur.close()
		f.cur = nil
	}
	return nil
}

func (f *Files) open(path string) (*fileReader, error) {
	var raw io.Reader
	var closer io.Closer
	name, part := path, PartitionName(path)
	if path == "-" {
		raw, name, part = f.stdin, "stdin", stdinPartition()
		if f.stdinName != "" {
			part = "stdin-" + f.stdinName
		}
	} else {
		fh, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("input file: %w", err)
		}
		raw, closer = fh, fh
	}
	counted := &countingReader{r: raw, n: &f.done}
	br := bufio.NewReaderSize(counted, 256<<10)
	var in io.Reader = br
	var members *gzipMembers
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			if closer != nil {
				closer.Close()
			}
			return nil, fmt.Errorf("input file %s: bad gzip header: %w", path, err)
		}
		members = &gzipMembers{name: name, src: br, counted: counted, gz: gz, max: f.maxBytes}
		gz.Multistream(false)
		in = bufio.NewReaderSize(members, 256<<10)
	}
	r := in.(*bufio.Reader)
	if bom, _ := r.Peek(len(utf8BOM)); string(bom) == utf8BOM {
		// Written by some Windows tools; it is not part of the first
		// record, which would otherwise be rejected as malformed JSON.
		r.Discard(len(utf8BOM))
	}
	return &fileReader{name: name, partition: part, r: r, closer: closer, max: f.maxBytes, stdin: path == "-",
		final: path == "-" && f.stdinName == "", gz: members}, nil
}

const utf8BOM = "\xef\xbb\xbf"

// stdinPartition names the partition of one reading of an unnamed stdin.
// Unlike a file, stdin cannot be read again: every run brings a new
// stream, so it gets a partition of its own (a fixed one made a second run
// skip as many lines of its stream as the first had, as already durable),
// and its files never take the names of an earlier run's. A stream fed
// again after a crash needs a name (NewNamedStdin) to resume exactly once.
func stdinPartition() string {
	var id [4]byte
	rand.Read(id[:])
	return "stdin-" + time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(id[:])
}

// countingReader counts the bytes read, for progress (n, shared by the
// files of a source) and for positions in this input (read).
type countingReader struct {
	r    io.Reader
	n    *atomic.Int64
	read int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	c.read += int64(n)
	return n, err
}

// gzipMembers decompresses a gzip input member after member, as gzip -d
// does, and keeps what follows the last member when it is not another
// one. Those bytes (a file appended to a .gz, a copy cut and patched) are
// not a record: the records before them are read, and they are handed out
// once as a damaged record of their own (Message.Damaged), to be
// dead-lettered, rather than failing every run over a file whose records
// were all read.
type gzipMembers struct {
	name    string
	src     *bufio.Reader // the compressed input; gzip reads it byte by byte, so its position is exact
	counted *countingReader
	gz      *gzip.Reader
	max     int

	memberStart int64 // in the compressed input
	done        bool
	trailing    *TrailingDataError
}

// pos is the position in the compressed input.
func (g *gzipMembers) pos() int64 { return g.counted.read - int64(g.src.Buffered()) }

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		if g.done {
			return 0, io.EOF
		}
		n, err := g.gz.Read(p)
		if err != io.EOF {
			return n, err
		}
		if err := g.nextMember(); err != nil {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// nextMember moves on to the member after the one that ended, if any.
func (g *gzipMembers) nextMember() error {
	g.memberStart = g.pos()
	head, err := g.src.Peek(2)
	if len(head) == 0 && err == io.EOF {
		g.done = true
		return nil
	}
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		if err := g.gz.Reset(g.src); err != nil {
			return err
		}
		g.gz.Multistream(false)
		return nil
	}
	g.done = true
	t := &TrailingDataError{File: g.name, Offset: g.memberStart}
	buf := make([]byte, 32<<10)
	for {
		n, err := g.src.Read(buf)
		if len(t.Head) <= g.max {
			t.Head = append(t.Head, buf[:n]...)
		}
		t.Bytes += int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	g.trailing = t
	return nil
}

// TrailingDataError describes bytes after the last member of a gzip input
// that are not gzip data.
type TrailingDataError struct {
	File   string
	Offset int64 // where they start in the compressed file
	Bytes  int64 // how many there are
	Head   []byte
}

func (e *TrailingDataError) Error() string {
	return fmt.Sprintf("input file %s: the %d bytes from byte %d to its end follow its last gzip member and are not gzip data; the records before them were read: cut the file at byte %d (truncate -s %d) to drop them",
		e.File, e.Bytes, e.Offset, e.Offset, e.Offset)
}

type fileReader struct {
	name, partition string
	r               *bufio.Reader
	closer          io.Closer
	max             int
	// gz, when the input is gzip, says where its members end and what
	// follows the last one.
	gz *gzipMembers

	line  int64
	buf   []byte // a line longer than the read buffer, as kept
	rec   []byte // the pretty-printed record being joined
	msg   Message
	stdin bool // reads stdin: only buffered input is ready (Ready)
	// final says the input cannot be read again, so an incomplete record
	// at its end is final: an unnamed stdin. A file, and a named stdin
	// stream that is fed again after a crash, leave it for the next run.
	final bool
	// cur is the line being framed, more the one read after it.
	cur, more lineRead
	// pending is a line read as the end of a broken record that begins
	// the next one (hasPending): it is framed by the next call.
	pending    lineRead
	hasPending bool
	pendingBuf []byte
	// peekBuf keeps a line while the line after it is looked at.
	peekBuf []byte
	// incomplete is the record the file ended in, left unread.
	incomplete *IncompleteRecord
	// trailingDone: the bytes after the last gzip member were handed out.
	trailingDone bool
}

// IncompleteRecord is a record an input file ended in, with no line ending
// and brackets still open: most likely one being appended. It is not
// read, so the file's checkpoint stays before it and the next run reads
// it, complete.
type IncompleteRecord struct {
	File  string
	Line  int64
	Bytes int64
}

func (r *fileReader) close() {
	if r.closer != nil {
		r.closer.Close()
	}
}

// lineRead is one line as readLine returns it.
type lineRead struct {
	b    []byte // without its line ending; of a long line only the first max+1 bytes or more
	size int64  // of the whole line, without its line ending
	open bool   // the input ended in the line, with no line ending
	num  int64  // its line number
	// last is the line's last byte that is not white space (0: blank).
	last byte
	// depth is the scan of the whole line from a fresh state, made when
	// scanned is set (always for lines longer than the read buffer).
	depth   depthState
	scanned bool
}

// scan returns the depth scan of the line, from a fresh state.
func (l *lineRead) scan() depthState {
	if !l.scanned {
		l.depth = depthState{}
		l.depth.feed(l.b)
		l.scanned = true
	}
	return l.depth
}

// readLine reads the next line. The line is handed out from the reader's
// buffer when it fits there, as nearly every one does: valid until the
// next read, as Message.Value is until the next Next; the consumer copies
// it.
//
// It fills l in place: lines returned by value took a third of the
// reader's time in copies.
func (r *fileReader) readLine(l *lineRead) error {
	r.buf = r.buf[:0]
	whole := true // r.buf holds all of the line
	var size int64
	for {
		chunk, err := r.r.ReadSlice('\n')
		if size == 0 && (err == nil || err == io.EOF && len(chunk) > 0) {
			r.line++
			b := trimLineEnd(chunk)
			l.b, l.size, l.open, l.num, l.last, l.scanned = b, int64(len(b)), err == io.EOF, r.line, lastByte(b), false
			return nil
		}
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return r.readErr(err)
		}
		if size == 0 {
			*l = lineRead{}
		}
		// A line longer than the read buffer: scanned as it goes, since
		// only its beginning is kept.
		l.scanned = true
		l.depth.feed(chunk)
		if lb := lastByte(chunk); lb != 0 {
			l.last = lb
		}
		size += int64(len(chunk))
		if err == nil { // the chunk ends the line
			size -= int64(len(chunk) - len(trimLineEnd(chunk)))
		}
		if len(r.buf) < r.max+1 {
			r.buf = append(r.buf, chunk...)
		} else {
			whole = false
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && size == 0 {
			return io.EOF
		}
		r.line++
		l.b = trimLineEnd(r.buf)
		l.size = size
		if whole {
			// exact even when a CRLF was split between two reads
			l.size = int64(len(l.b))
		}
		l.open, l.num = err == io.EOF, r.line
		return nil
	}
}

// readErr says which input failed to read, and where.
func (r *fileReader) readErr(err error) error {
	var te *TrailingDataError
	if errors.As(err, &te) {
		return err
	}
	if r.gz != nil {
		return fmt.Errorf("input file %s: gzip data damaged in the member that starts at byte %d (%w); the records before it were read, those after it cannot be: restore the file from its source", r.name, r.gz.memberStart, err)
	}
	return fmt.Errorf("read %s: %w", r.name, err)
}

// lastByte is b's last byte that is not white space, 0 if none.
func lastByte(b []byte) byte {
	for i := len(b) - 1; i >= 0; i-- {
		switch c := b[i]; c {
		case ' ', '\t', '\r', '\n', '\v', '\f':
		default:
			return c
		}
	}
	return 0
}

// trimLineEnd drops the line's trailing CRs and LFs. bytes.TrimRight,
// which builds its set of bytes from the cutset on every call, took 1.5%
// of a benchmark run's CPU for the two calls per line.
func trimLineEnd(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// take puts the pending line, if any, or the next one read in l.
func (r *fileReader) take(l *lineRead) error {
	if r.hasPending {
		r.hasPending = false
		*l = r.pending
		return nil
	}
	return r.readLine(l)
}

// next frames the next record. The framing is decided record by record,
// so one broken record cannot change how the rest of the input is read:
//
//   - A line that ends with '}', or leaves no bracket open, is a record of
//     its own (JSON Lines).
//   - A line that leaves a bracket open begins a pretty-printed record,
//     joined with the lines after it until its brackets close.
//   - A record also ends, broken, before a line that begins the next
//     record: one that starts with '{' in its first column after the
//     record's first line, inside a record whose lines are indented, at
//     the record's top level (where a value cannot start a line), or that
//     ends with '}' too (a whole JSON Lines record); or, inside a record
//     whose lines are not indented, one whose next line is indented. A
//     line that ends inside a string ends its record too: JSON strings
//     hold no line breaks.
//
// A broken record thus takes its own lines only and reaches the consumer
// whole (up to the size limit), to be rejected there. What these rules
// cannot tell apart is a record printed without indentation, broken
// inside an array of objects, from its own nested objects: that record is
// given up on, as oversized, at twice the size limit.
func (r *fileReader) next() (*Message, error) {
	for {
		l := &r.cur
		err := r.take(l)
		if err == io.EOF {
			return r.trailing()
		}
		if err != nil {
			return nil, err
		}
		if l.last == 0 {
			continue // blank
		}
		if l.last == '}' && !l.open {
			// JSON Lines, without a scan of the line.
			return r.emit(l.b, l.num, l.size), nil
		}
		ds := l.scan()
		switch {
		case ds.d <= 0:
			return r.emit(l.b, l.num, l.size), nil
		case l.open:
			// The input ends in the line, brackets open: a record still
			// being written, unless it is final or already too long.
			if !r.final && l.size <= int64(r.max) {
				return r.leaveIncomplete(l.num, l.size)
			}
			return r.emit(l.b, l.num, l.size), nil
		case ds.inString:
			return r.emit(l.b, l.num, l.size), nil
		}
		return r.joinRecord(l)
	}
}

// joinRecord reads the rest of the pretty-printed record that first
// begins.
func (r *fileReader) joinRecord(first *lineRead) (*Message, error) {
	r.rec = append(r.rec[:0], first.b...)
	// A first line that is only an opening bracket is how a pretty printer
	// starts a record; one with more, and its line ending, was written
	// whole, as a JSON Lines record is.
	bracketOnly := len(bytes.TrimSpace(first.b)) == 1
	ds, size := first.depth, first.size
	styled, indented := false, false // the record's second non-blank line is known, and is indented
	for ds.d > 0 && !ds.inString && (indented || size <= 2*int64(r.max)) {
		l := &r.more
		err := r.readLine(l)
		if err == io.EOF {
			if !r.final && size <= int64(r.max) && (styled || bracketOnly) {
				return r.leaveIncomplete(first.num, size)
			}
			break
		}
		if err != nil {
			return nil, err
		}
		if len(l.b) > 0 && l.b[0] == '{' && r.beginsRecord(l, ds.d, styled, indented) {
			r.pendingBuf = append(r.pendingBuf[:0], l.b...)
			r.pending, r.hasPending = *l, true
			r.pending.b = r.pendingBuf
			break
		}
		if !styled && l.last != 0 {
			styled, indented = true, l.b[0] == ' ' || l.b[0] == '\t'
		}
		ld := l.scan()
		ds.d += ld.d
		ds.inString = ld.inString
		size += 1 + l.size // the record as joined here, with one newline per line break
		if int64(len(r.rec)) <= int64(r.max) {
			r.rec = append(append(r.rec, '\n'), l.b...)
		}
		if l.open && ds.d > 0 {
			if !r.final && size <= int64(r.max) {
				return r.leaveIncomplete(first.num, size)
			}
			break
		}
	}
	return r.emit(r.rec, first.num, size), nil
}

// beginsRecord reports whether l, a line starting with '{' read inside a
// record at depth d (styled: its second line was read), begins the next record
// (next's rules). l is kept valid: the line after it may be looked at.
func (r *fileReader) beginsRecord(l *lineRead, d int, styled, indented bool) bool {
	if !styled || indented || d == 1 || l.last == '}' && len(bytes.TrimSpace(l.b)) > 2 {
		return true
	}
	// A record printed without indentation: the '{' opens a nested object
	// unless the line after it is indented, as an indented record's is.
	r.peekBuf = append(r.peekBuf[:0], l.b...)
	l.b = r.peekBuf
	ahead, _ := r.r.Peek(1)
	return len(ahead) == 1 && (ahead[0] == ' ' || ahead[0] == '\t')
}

// emit hands out one record.
func (r *fileReader) emit(value []byte, line, size int64) *Message {
	// Field by field: assigning a whole Message (a copy with write
	// barriers) was a third of the reader's time.
	m := &r.msg
	m.Value, m.Offset, m.Size, m.Oversized, m.Damaged = value, line, size, false, ""
	if m.Partition != r.partition {
		*m = Message{Value: value, Partition: r.partition, Offset: line, Origin: r.name, Sep: ':', Size: size, Lag: -1}
	}
	if size > int64(r.max) {
		r.msg.Oversized = true
		r.msg.Value = value[:min(len(value), oversizedPrefix)]
	}
	return &r.msg
}

// leaveIncomplete ends the input before a record that is still being
// written: dead-lettered now, it would be skipped as already read once it
// is complete. It is left for the next run.
func (r *fileReader) leaveIncomplete(line, size int64) (*Message, error) {
	r.incomplete = &IncompleteRecord{File: r.name, Line: line, Bytes: size}
	return nil, io.EOF
}

// trailing hands out, once, the bytes after the last gzip member as a
// damaged record, and then the end of the input. They are no line, and
// take the offset of the last one read: at the next line's, they would
// make it durable, and the first record of a member appended once the
// file is repaired (cut at their start, as their dead letter says) would
// be skipped.
func (r *fileReader) trailing() (*Message, error) {
	if r.gz == nil || r.gz.trailing == nil || r.trailingDone {
		return nil, io.EOF
	}
	r.trailingDone = true
	t := r.gz.trailing
	r.msg = Message{Value: t.Head, Partition: r.partition, Offset: r.line, Origin: r.name, Sep: ':', Size: t.Bytes, Lag: -1,
		Damaged: t.Error()}
	if t.Bytes > int64(r.max) {
		r.msg.Oversized = true
		r.msg.Value = t.Head[:min(len(t.Head), oversizedPrefix)]
	}
	return &r.msg, nil
}

// depthState follows how many objects and arrays are open, ignoring
// brackets inside strings, from one part of a record to the next.
type depthState struct {
	d                 int
	inString, escaped bool
}

func (s *depthState) feed(b []byte) {
	for _, c := range b {
		switch {
		case s.inString:
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
			}
		case c == '"':
			s.inString = true
		case c == '{' || c == '[':
			s.d++
		case c == '}' || c == ']':
			s.d--
		}
	}
}

// Ready reports whether Next would return without waiting: always for
// files, and for stdin only while input is buffered.
func (f *Files) Ready() bool {
	if f.cur == nil || !f.cur.stdin || f.cur.hasPending {
		return true
	}
	return f.cur.r.Buffered() > 0
}
