package pipeline

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

// dlqEntry is one line of a dead-letter file. The original record is kept
// as text when it is valid UTF-8, else as base64, so it can be replayed.
type dlqEntry struct {
	Reason       cdc.Reason `json:"reason"`
	Error        string     `json:"error"`
	Source       string     `json:"source"`
	Partition    string     `json:"partition"`
	Offset       int64      `json:"offset"`
	Table        string     `json:"table,omitempty"`
	RejectedAt   time.Time  `json:"rejected_at"`
	Size         int64      `json:"size"`
	Truncated    bool       `json:"truncated,omitempty"`
	Record       *string    `json:"record,omitempty"`
	RecordBase64 string     `json:"record_base64,omitempty"`
}

// dlqBatch collects rejected records of one source partition until they
// are written as one file.
type dlqBatch struct {
	firstOffset int64
	lastOffset  int64
	buf         bytes.Buffer
	count       int
}

type deadLetters struct {
	batches map[string]*dlqBatch
	bytes   int // held in batches
	now     func() time.Time
	run     string // named in the files' keys, as in data files'
}

func newDeadLetters(now func() time.Time, run string) *deadLetters {
	return &deadLetters{batches: map[string]*dlqBatch{}, now: now, run: run}
}

func (d *deadLetters) add(m *source.Message, table string, rej *cdc.RejectError) {
	e := dlqEntry{Reason: rej.Reason, Error: rej.Detail, Source: m.Position(), Partition: m.Partition, Offset: m.Offset,
		Table: table, RejectedAt: d.now().UTC(), Size: m.Size, Truncated: int64(len(m.Value)) < m.Size}
	if utf8.Valid(m.Value) {
		s := string(m.Value)
		e.Record = &s
	} else {
		e.RecordBase64 = base64.StdEncoding.EncodeToString(m.Value)
	}
	b := d.batches[m.Partition]
	if b == nil {
		b = &dlqBatch{firstOffset: m.Offset}
		d.batches[m.Partition] = b
	}
	line, _ := json.Marshal(e) // cannot fail: only strings, numbers, times
	b.lastOffset = m.Offset
	b.buf.Write(line)
	b.buf.WriteByte('\n')
	b.count++
	d.bytes += len(line) + 1
}

func (d *deadLetters) pending() int {
	n := 0
	for _, b := range d.batches {
		n += b.count
	}
	return n
}

// dlqFile is a dead-letter file to write: the rejects of one source
// partition from firstOffset to lastOffset.
type dlqFile struct {
	partition   string
	firstOffset int64
	lastOffset  int64
	key         string
	data        []byte
}

// drain returns the files to write, by partition, and forgets them.
func (d *deadLetters) drain() []dlqFile {
	out := make([]dlqFile, 0, len(d.batches))
	day := d.now()
	for part, b := range d.batches {
		out = append(out, dlqFile{partition: part, firstOffset: b.firstOffset, lastOffset: b.lastOffset,
			key: partition.DLQKey(day, part, b.firstOffset, d.run), data: b.buf.Bytes()})
		delete(d.batches, part)
	}
	d.bytes = 0
	slices.SortFunc(out, func(a, b dlqFile) int { return strings.Compare(a.partition, b.partition) })
	return out
}
