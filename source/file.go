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
// line (JSON Lines), or pretty-printed records one after another, which
// is detected from the first record of each file. Gzip files are
// decompressed transparently. "-" means stdin.
type Files struct {
	paths    []string
	maxBytes int
	stdin    io.Reader
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
	f := &Files{paths: paths, maxBytes: maxRecordBytes, stdin: stdin}
	for _, p := range paths {
		if p == "-" {
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

// uniquePaths drops the paths that name a file listed before them.
func uniquePaths(paths []string) []string {
	seen := make(map[string]bool, len(paths))
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		key := p
		if p != "-" {
			if abs, err := filepath.Abs(p); err == nil {
				key = abs // cleaned: ./a.jsonl and a.jsonl are one file
			}
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
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
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			if closer != nil {
				closer.Close()
			}
			return nil, fmt.Errorf("input file %s: bad gzip header: %w", path, err)
		}
		in = bufio.NewReaderSize(gz, 256<<10)
	}
	r := in.(*bufio.Reader)
	if bom, _ := r.Peek(len(utf8BOM)); string(bom) == utf8BOM {
		// Written by some Windows tools; it is not part of the first
		// record, which would otherwise be rejected as malformed JSON.
		r.Discard(len(utf8BOM))
	}
	return &fileReader{name: name, partition: part, r: r, closer: closer, max: f.maxBytes, stdin: path == "-"}, nil
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

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type fileReader struct {
	name, partition string
	r               *bufio.Reader
	closer          io.Closer
	max             int

	line      int64
	framing   int        // 0 unknown, 1 lines, 2 concatenated
	depth     depthState // of the pretty-printed record being read
	buf       []byte
	msg       Message
	eof       bool
	positions []byte
	stdin     bool // cannot be read again: an incomplete record is final
	// incomplete is the record the file ended in, left unread.
	incomplete *IncompleteRecord
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

const (
	framingLines = 1
	framingMulti = 2
)

func (r *fileReader) close() {
	if r.closer != nil {
		r.closer.Close()
	}
}

// readLine returns the next line without its line ending, and the line's
// size (without the ending too); of a line longer than max only the first
// max+1 bytes or more are kept. open says the input ended in the line,
// with no line ending.
//
// With ds set, every byte of the line goes through it, those past max too.
func (r *fileReader) readLine(ds *depthState) (line []byte, size int64, open bool, err error) {
	r.buf = r.buf[:0]
	whole := true // r.buf holds all of the line
	for {
		chunk, err := r.r.ReadSlice('\n')
		if ds != nil {
			ds.feed(chunk)
		}
		if size == 0 && (err == nil || err == io.EOF && len(chunk) > 0) {
			// The whole line in the reader's buffer, as nearly every one
			// is: handed out from there, valid until the next read, as
			// Message.Value is until the next Next; the consumer copies it.
			r.line++
			b := trimLineEnd(chunk)
			return b, int64(len(b)), err == io.EOF, nil
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
			return nil, 0, false, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, 0, false, fmt.Errorf("read %s: %w", r.name, err)
		}
		r.line++
		b := trimLineEnd(r.buf)
		if whole {
			// exact even when a CRLF was split between two reads
			size = int64(len(b))
		}
		return b, size, err == io.EOF, nil
	}
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

func (r *fileReader) next() (*Message, error) {
	for {
		// A pretty-printed record's depth is followed over all of its
		// bytes, those of lines longer than the limit too: a record
		// longer than the limit is read to its end, kept only in part,
		// instead of its remaining lines being taken for records of their
		// own. So is the first line's, which decides the framing.
		var ds *depthState
		if r.framing != framingLines {
			r.depth = depthState{}
			ds = &r.depth
		}
		line, size, open, err := r.readLine(ds)
		if err != nil {
			return nil, err
		}
		start := r.line
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if r.framing == 0 {
			r.framing = framingLines
			if r.depth.d > 0 {
				r.framing = framingMulti
			}
		}
		if r.framing == framingMulti {
			rec := append([]byte(nil), line...)
			// Past twice the limit the record is given up on, as
			// oversized, and the lines after are read as records again:
			// brackets left open by a record cut short (a writer that
			// died mid-record, then appended) must not take the rest of
			// the file with it.
			for r.depth.d > 0 && size <= 2*int64(r.max) {
				more, n, moreOpen, err := r.readLine(&r.depth)
				if err == io.EOF {
					open = true // the input ended inside the record, line ending or not
					break
				}
				if err != nil {
					return nil, err
				}
				size += 1 + n // the record as joined here, with one newline per line break
				if int64(len(rec)) <= int64(r.max) {
					rec = append(append(rec, '\n'), more...)
				}
				open = moreOpen
			}
			line = rec
		}
		if open && !r.stdin && size <= int64(r.max) && r.endsInside(line) {
			// The file ends inside a record that is still being written:
			// dead-lettered now, it would be skipped as already read once
			// it is complete. It is left for the next run.
			r.incomplete = &IncompleteRecord{File: r.name, Line: start, Bytes: size}
			return nil, io.EOF
		}
		r.msg = Message{Value: line, Partition: r.partition, Offset: start, Origin: r.name, Sep: ':', Size: size, Lag: -1}
		if size > int64(r.max) {
			r.msg.Oversized = true
			r.msg.Value = line[:min(len(line), oversizedPrefix)]
		}
		return &r.msg, nil
	}
}

// endsInside reports whether record, just read, ends inside an object or
// array. Only asked at the end of the input: scanning every record again
// cost a tenth of a benchmark run's CPU.
func (r *fileReader) endsInside(record []byte) bool {
	if r.framing == framingMulti {
		return r.depth.d > 0
	}
	return depth(record) > 0
}

// depth returns how many objects and arrays are still open at the end of
// b, ignoring brackets inside strings.
func depth(b []byte) int {
	var s depthState
	s.feed(b)
	return s.d
}

// depthState is depth's scan, carried from one part of a record to the
// next.
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
	if f.cur == nil || !f.cur.stdin {
		return true
	}
	return f.cur.r.Buffered() > 0
}
