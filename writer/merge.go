package writer

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// A memory budget shared by hundreds of tables flushes each of them every
// few hundred rows. Written as they come, those are thousands of small
// files: each costs a file creation and two fsyncs here, or a PUT on S3,
// a footer, and a file open for every query that reads it. Files of one
// buffer key encoded by the lean encoder can instead be joined: their
// column chunks are copied as they are, one row group per file, under one
// new footer. The pipeline keeps a budget-flushed file's compressed bytes
// (a tenth of its Arrow memory) until the key's next file comes, and
// writes the two as one.

// mergeable is what joining a lean file with another needs.
type mergeable struct {
	layout *leanLayout
	shape  *fileShape
	kv     [][2]string // the file's own key/value pairs (prepare)
}

// Group names the buffer a file came from: files of one group, encoded by
// the lean encoder with the same Parquet schema, can be merged.
func (f *File) Group() string {
	return f.group.Table + "\x00" + strconv.Itoa(f.group.Version) + "\x00" + f.group.TimePart + "\x00" + f.group.Partition
}

// CanMerge reports whether f and g can be merged into one file.
func (f *File) CanMerge(g *File) bool {
	return f.merge != nil && g.merge != nil && f.group == g.group && f.merge.shape == g.merge.shape
}

// MergeFiles joins two encoded files of one group (CanMerge) into one
// holding the row groups of the file that starts at the lower offset, then
// the other's. It takes the key of the first: both keys were named in
// intents, so recovery handles either.
func MergeFiles(a, b *File) (*File, error) {
	if !a.CanMerge(b) {
		return nil, fmt.Errorf("merge %s and %s: not files of one buffer and schema", a.Key, b.Key)
	}
	if b.FirstOffset < a.FirstOffset {
		a, b = b, a
	}
	la, lb := a.merge.layout, b.merge.layout
	shift := int64(la.bodyEnd - 4) // b's body starts where a's footer did
	rowGroups := slices.Clone(la.rowGroups)
	for _, rg := range lb.rowGroups {
		chunks := slices.Clone(rg.chunks)
		for i := range chunks {
			c := &chunks[i]
			c.info.DataPageOffset += shift
			if c.dict {
				c.info.DictPageOffset += shift
			}
		}
		rowGroups = append(rowGroups, rowGroupLayout{rows: rg.rows, chunks: chunks})
	}
	kv := slices.Clone(a.merge.kv)
	if b.LastOffset > a.LastOffset {
		for i, p := range kv {
			if p[0] == kvLastOffset || p[0] == kvLastPos {
				kv[i][1] = pairValue(b.merge.kv, p[0])
			}
		}
	}
	sh := a.merge.shape
	var out bytes.Buffer
	out.Grow(la.bodyEnd + lb.bodyEnd + 64<<10)
	out.Write(a.Data[:la.bodyEnd])
	out.Write(b.Data[4:lb.bodyEnd])
	bodyEnd := out.Len()
	meta := append(make(metadata.KeyValueMetadata, 0, len(sh.kv)+len(kv)), sh.kv...)
	for _, p := range kv {
		meta.Append(p[0], p[1])
	}
	if err := writeFooter(&out, sh.pq, sh.props, meta, rowGroups); err != nil {
		return nil, fmt.Errorf("merge %s and %s: %w", a.Key, b.Key, err)
	}
	m := *a
	m.Data = out.Bytes()
	m.Rows = a.Rows + b.Rows
	m.LastOffset = max(a.LastOffset, b.LastOffset)
	m.NewestOpTS = a.NewestOpTS
	if b.NewestOpTS.After(m.NewestOpTS) {
		m.NewestOpTS = b.NewestOpTS
	}
	if a.Reason != b.Reason {
		m.Reason = b.Reason // what finally wrote it
	}
	m.enc = nil
	m.merge = &mergeable{layout: &leanLayout{rowGroups: rowGroups, bodyEnd: bodyEnd}, shape: sh, kv: kv}
	return &m, nil
}

const (
	kvLastOffset = "lakehouse.last_offset"
	kvLastPos    = "lakehouse.last_pos"
)

func pairValue(kv [][2]string, key string) string {
	for _, p := range kv {
		if p[0] == key {
			return p[1]
		}
	}
	return ""
}
