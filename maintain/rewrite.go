package maintain

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/tables"
)

// The key/value metadata a compacted file carries beside the schema's.
const (
	kvTable        = "lakehouse.table"
	kvVersion      = "lakehouse.schema_version"
	kvSourceRanges = "lakehouse.source_ranges" // {"partition": {"first": N, "last": M}, ...}
	kvCompactedBy  = "lakehouse.compacted_by"  // the maintenance pass that wrote it
	// The last source offset and position of the input that went
	// furthest (as the exporter writes them into its files): what
	// `exporter tables` shows as a table's last position.
	kvLastOffset = "lakehouse.last_offset"
	kvLastPos    = "lakehouse.last_pos"
)

// SourceRange is the part of a source partition a file holds, as
// lakehouse.source_ranges gives it.
type SourceRange struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// SourceRanges reads a compacted file's lakehouse.source_ranges; ok is
// false for a file without it (the exporter's own files name one range
// with lakehouse.source_partition, first_offset and last_offset).
func SourceRanges(kv interface{ FindValue(string) *string }) (map[string]SourceRange, bool, error) {
	v := kv.FindValue(kvSourceRanges)
	if v == nil {
		return nil, false, nil
	}
	var out map[string]SourceRange
	if err := json.Unmarshal([]byte(*v), &out); err != nil {
		return nil, true, fmt.Errorf("%s is not a map of source ranges: %w", kvSourceRanges, err)
	}
	return out, true, nil
}

// binInput is what writeBin reads of its files.
type binInput struct {
	schema  *arrow.Schema
	batches []arrow.RecordBatch
	table   string
	ranges  map[string]SourceRange
	// lastOffset and lastPos are the furthest input's (kvLastOffset).
	lastOffset int64
	lastPos    string
	hasLast    bool
	arrowBytes int64 // of batches
}

// add moves what o read into in.
func (in *binInput) add(o *binInput) error {
	if in.table != "" && in.table != o.table {
		return fmt.Errorf("holds rows of %s, its folder's other files of %s", o.table, in.table)
	}
	schema, err := unify(in.schema, o.schema)
	if err != nil {
		return err
	}
	in.schema, in.table = schema, o.table
	for p, r := range o.ranges {
		mergeRange(in.ranges, p, r)
	}
	if o.hasLast && (!in.hasLast || o.lastOffset > in.lastOffset) {
		in.lastOffset, in.lastPos, in.hasLast = o.lastOffset, o.lastPos, true
	}
	in.batches = append(in.batches, o.batches...)
	in.arrowBytes += o.arrowBytes
	o.batches = nil
	return nil
}

func (in *binInput) release() {
	for _, b := range in.batches {
		b.Release()
	}
	in.batches = nil
}

// writeBin reads a bin's files record batch by record batch, sorts their
// rows and writes them as the file name.parquet. The rows are held once
// in memory, then once more sorted. Where the next file's rows would take
// them past BinArrowBytes in Arrow, those read so far are written first,
// as a full part: name-p0.parquet, name-p1.parquet and so on, which later
// passes leave alone (isSplitPart); the rest is name.parquet, compacted
// again with newer files. It returns the files written, also when it
// fails after some.
func (t *tablePass) writeBin(ctx context.Context, g *group, bin []smallFile, name string) ([]tables.DataFile, int64, error) {
	var (
		out  []tables.DataFile
		rows int64
	)
	in := &binInput{ranges: map[string]SourceRange{}}
	defer func() { in.release() }() // the input being read when it fails
	parts := 0
	flush := func(full bool) error {
		key := name + ".parquet"
		if full {
			key = fmt.Sprintf("%s%s%d.parquet", name, splitPartMark, parts)
			parts++
		}
		df, n, err := t.writeRows(ctx, g, in, len(bin), key)
		if err != nil {
			return err
		}
		out, rows = append(out, df), rows+n
		in = &binInput{ranges: map[string]SourceRange{}}
		return nil
	}
	for _, f := range bin {
		next := &binInput{ranges: map[string]SourceRange{}}
		err := t.readFile(ctx, f.key, g.version, next)
		if err == nil && len(in.batches) > 0 && in.arrowBytes+next.arrowBytes > t.cfg.BinArrowBytes {
			err = flush(true)
		}
		if err == nil {
			if err = in.add(next); err != nil {
				err = fmt.Errorf("%s: %w", f.key, err)
			}
		}
		next.release()
		if err != nil {
			return out, rows, err
		}
	}
	if err := flush(false); err != nil {
		return out, rows, err
	}
	return out, rows, nil
}

// writeRows sorts the rows read into in (of n files) and writes them as
// the file key.
func (t *tablePass) writeRows(ctx context.Context, g *group, in *binInput, n int, key string) (tables.DataFile, int64, error) {
	rec, err := sortedRecord(ctx, t.cfg.Allocator, in)
	if err != nil {
		return tables.DataFile{}, 0, fmt.Errorf("sort the rows of %d files of %s: %w", n, g.dir, err)
	}
	defer rec.Release()
	ranges, err := json.Marshal(in.ranges) // map keys come out sorted
	if err != nil {
		return tables.DataFile{}, 0, err
	}
	shape := t.cfg.Encoder.NewShape(rec.Schema(), in.table, g.version)
	kv := [][2]string{
		{kvTable, in.table},
		{kvVersion, strconv.Itoa(g.version)},
		{kvSourceRanges, string(ranges)},
		{kvCompactedBy, t.cfg.Run},
	}
	if in.hasLast {
		kv = append(kv, [2]string{kvLastOffset, strconv.FormatInt(in.lastOffset, 10)}, [2]string{kvLastPos, in.lastPos})
	}
	res, err := t.cfg.Encoder.Encode(shape, rec, kv)
	if err != nil {
		return tables.DataFile{}, 0, fmt.Errorf("encode %s: %w", key, err)
	}
	footer, err := tables.Footer(res.Data)
	if err != nil {
		return tables.DataFile{}, 0, fmt.Errorf("%s: %w", key, err)
	}
	if err := t.cfg.Store.Put(ctx, key, res.Data); err != nil {
		return tables.DataFile{}, 0, fmt.Errorf("upload %s: %w", key, err)
	}
	return tables.DataFile{Table: in.table, Version: g.version, Location: t.cfg.Store.String() + "/" + key,
		SizeBytes: int64(len(res.Data)), Footer: footer, NaNs: tables.NaNs(res.Columns)}, rec.NumRows(), nil
}

// readFile reads a file's record batches, schema and source ranges into
// in, which is empty.
func (t *tablePass) readFile(ctx context.Context, key string, version int, in *binInput) error {
	data, err := t.cfg.Store.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	pf, err := file.NewParquetReader(bytes.NewReader(data), file.WithReadProps(parquet.NewReaderProperties(t.pages)))
	if err != nil {
		return fmt.Errorf("%s is not a Parquet file: %w", key, err)
	}
	defer pf.Close()
	kv := pf.MetaData().KeyValueMetadata()
	table := valueOf(kv.FindValue(kvTable))
	if v := valueOf(kv.FindValue(kvVersion)); table == "" || v != strconv.Itoa(version) {
		return fmt.Errorf("%s names table %q version %q in its metadata, not a file of version %d of its folder: move it out of the table's folders", key, table, v, version)
	}
	in.table = table
	if err := addRanges(kv, key, in.ranges); err != nil {
		return err
	}
	if off, err := strconv.ParseInt(valueOf(kv.FindValue(kvLastOffset)), 10, 64); err == nil && (!in.hasLast || off > in.lastOffset) {
		in.lastOffset, in.lastPos, in.hasLast = off, valueOf(kv.FindValue(kvLastPos)), true
	}
	// The record reader reserves a batch's worth of values per column
	// up front: a 64k-row batch for a file of 20 rows made allocating and
	// clearing those buffers most of a small file's read.
	batch := min(max(pf.NumRows(), 1), 64<<10)
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, t.cfg.Allocator)
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	defer rr.Release()
	// The reader's schema is the file's (fr.Schema would convert the
	// Parquet schema a second time).
	if in.schema, err = unify(in.schema, rr.Schema()); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	for rr.Next() {
		b := rr.RecordBatch()
		b.Retain()
		in.batches = append(in.batches, b)
		in.arrowBytes += recordBytes(b)
	}
	if err := rr.Err(); err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	return nil
}

// recordBytes is the size of a record batch's buffers.
func recordBytes(b arrow.RecordBatch) int64 {
	var n int64
	for _, c := range b.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
		n += dataBytes(dict) // an interface holding a nil *array.Data when there is none
	}
	return n
}

// mergeRange widens ranges[p] to cover r.
func mergeRange(ranges map[string]SourceRange, p string, r SourceRange) {
	if cur, ok := ranges[p]; ok {
		r.First, r.Last = min(r.First, cur.First), max(r.Last, cur.Last)
	}
	ranges[p] = r
}

// addRanges merges the source ranges a file's metadata names into ranges.
func addRanges(kv interface{ FindValue(string) *string }, key string, ranges map[string]SourceRange) error {
	rs, ok, err := SourceRanges(kv)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	if ok {
		for p, r := range rs {
			mergeRange(ranges, p, r)
		}
		return nil
	}
	p := valueOf(kv.FindValue("lakehouse.source_partition"))
	first, err1 := strconv.ParseInt(valueOf(kv.FindValue("lakehouse.first_offset")), 10, 64)
	last, err2 := strconv.ParseInt(valueOf(kv.FindValue("lakehouse.last_offset")), 10, 64)
	if p == "" || err1 != nil || err2 != nil {
		return fmt.Errorf("%s lacks the exporter's source range in its metadata: it was not written by the exporter; move it out of the table's folders", key)
	}
	mergeRange(ranges, p, SourceRange{First: first, Last: last})
	return nil
}

func valueOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// unify returns the schema of the compacted file: the files' columns,
// which one version's files share, nullable where any file's is (a
// NOT NULL column is written REQUIRED in a file without a null in it).
// The schema keeps the Arrow fields' metadata (their field IDs) and the
// schema's own (the table), and drops the files' key/value metadata,
// which the compacted file writes anew.
func unify(have, next *arrow.Schema) (*arrow.Schema, error) {
	if have == nil {
		md := next.Metadata()
		var keys, values []string
		for i, k := range md.Keys() {
			if !strings.HasPrefix(k, "lakehouse.") && !strings.HasPrefix(k, "ARROW:") {
				keys, values = append(keys, k), append(values, md.Values()[i])
			}
		}
		own := arrow.NewMetadata(keys, values)
		return arrow.NewSchema(next.Fields(), &own), nil
	}
	if have.NumFields() != next.NumFields() {
		return nil, fmt.Errorf("has %d columns, the version's other files %d", next.NumFields(), have.NumFields())
	}
	fields := slices.Clone(have.Fields())
	for i, f := range next.Fields() {
		if f.Name != fields[i].Name || !arrow.TypeEqual(f.Type, fields[i].Type) {
			return nil, fmt.Errorf("column %d is %s %s, in the version's other files %s %s", i, f.Name, f.Type, fields[i].Name, fields[i].Type)
		}
		fields[i].Nullable = fields[i].Nullable || f.Nullable
	}
	md := have.Metadata()
	return arrow.NewSchema(fields, &md), nil
}

// sortedRecord concatenates in's batches and orders the rows by op_ts,
// then src_partition and src_offset (the metacolumns present).
func sortedRecord(ctx context.Context, mem memory.Allocator, in *binInput) (arrow.RecordBatch, error) {
	sc := in.schema
	cols := make([]arrow.Array, sc.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var rows int64
	for _, b := range in.batches {
		rows += b.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, 0, len(in.batches))
		for _, b := range in.batches {
			parts = append(parts, b.Column(i))
		}
		c, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", sc.Field(i).Name, err)
		}
		cols[i] = c
	}
	in.release()
	order := rowOrder(sc, cols, int(rows))
	if slices.IsSortedFunc(order, cmp.Compare[int64]) {
		// Already in order (the files of one source partition, read in
		// offset order): no copy to make.
		return array.NewRecordBatch(sc, cols, rows), nil // retains cols; the deferred release drops ours
	}
	bld := array.NewInt64Builder(mem)
	bld.AppendValues(order, nil)
	idx := bld.NewArray()
	bld.Release()
	defer idx.Release()
	out := make([]arrow.Array, len(cols))
	for i, c := range cols {
		taken, err := compute.TakeArray(ctx, c, idx)
		if err != nil {
			for _, o := range out[:i] {
				o.Release()
			}
			return nil, fmt.Errorf("reorder column %s: %w", sc.Field(i).Name, err)
		}
		out[i] = taken
	}
	rec := array.NewRecordBatch(sc, out, rows)
	for _, o := range out {
		o.Release()
	}
	return rec, nil
}

// rowOrder is the rows' order by op_ts, src_partition, src_offset; rows
// equal in all three keep their order. A null sorts first.
func rowOrder(sc *arrow.Schema, cols []arrow.Array, rows int) []int64 {
	col := func(name string) arrow.Array {
		if idx := sc.FieldIndices(name); len(idx) == 1 {
			return cols[idx[0]]
		}
		return nil
	}
	ts, _ := col(arrowschema.ColOpTS).(*array.Timestamp)
	part, _ := col(arrowschema.ColSrcPartition).(*array.String)
	off, _ := col(arrowschema.ColSrcOffset).(*array.Int64)
	order := make([]int64, rows)
	for i := range order {
		order[i] = int64(i)
	}
	nullFirst := func(a arrow.Array, i, j int64) (int, bool) {
		ni, nj := a.IsNull(int(i)), a.IsNull(int(j))
		switch {
		case ni && nj:
			return 0, true
		case ni:
			return -1, true
		case nj:
			return 1, true
		}
		return 0, false
	}
	slices.SortStableFunc(order, func(i, j int64) int {
		if ts != nil {
			if c, null := nullFirst(ts, i, j); null {
				if c != 0 {
					return c
				}
			} else if a, b := ts.Value(int(i)), ts.Value(int(j)); a != b {
				return cmp.Compare(a, b)
			}
		}
		if part != nil {
			if c, null := nullFirst(part, i, j); null {
				if c != 0 {
					return c
				}
			} else if c := strings.Compare(part.Value(int(i)), part.Value(int(j))); c != 0 {
				return c
			}
		}
		if off != nil {
			if c, null := nullFirst(off, i, j); null {
				return c
			}
			return cmp.Compare(off.Value(int(i)), off.Value(int(j)))
		}
		return 0
	})
	return order
}
