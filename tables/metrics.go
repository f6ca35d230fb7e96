package tables

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
	"github.com/lakehouse-exporter/lakehouse-exporter/parquetenc"
)

// chunkMetrics are a file's column metrics added up over every row group
// of its footer, by field ID.
type chunkMetrics struct {
	sizes, values, nulls map[int]int64
	// unbounded are the columns with a row group that holds values but
	// no min and max: no bounds of the other row groups hold its values.
	unbounded map[int]bool
}

// footerMetrics adds up the footer's column chunks. A column with a chunk
// without statistics has no null count.
func footerMetrics(md *metadata.FileMetaData) chunkMetrics {
	m := chunkMetrics{sizes: map[int]int64{}, values: map[int]int64{}, nulls: map[int]int64{}, unbounded: map[int]bool{}}
	noNulls := map[int]bool{}
	for i := range md.Schema.NumColumns() {
		id := int(md.Schema.Column(i).SchemaNode().FieldID())
		if id < 0 {
			continue
		}
		for g := range md.NumRowGroups() {
			cc, err := md.RowGroup(g).ColumnChunk(i)
			if err != nil {
				m.unbounded[id], noNulls[id] = true, true
				continue
			}
			m.sizes[id] += cc.TotalCompressedSize()
			m.values[id] += cc.NumValues()
			st, _ := cc.Statistics() // nil when the chunk has none, or none to trust
			if st == nil || !st.HasNullCount() {
				m.unbounded[id], noNulls[id] = true, true
				continue
			}
			m.nulls[id] += st.NullCount()
			if st.NullCount() < cc.NumValues() && !hasMinAndMax(md, g, i) {
				m.unbounded[id] = true
			}
		}
	}
	for id := range noNulls {
		delete(m.nulls, id)
	}
	return m
}

// withFileMetrics returns df with the counts of every row group of the
// file, the NaN counts, and without the bounds of its unbounded columns.
//
// iceberg-go (v0.7.0) builds a column's bounds from the row groups whose
// chunks have a min and max and skips the others, so a chunk without them
// (the lean encoder's chunk holding NaN, or one whose largest or smallest
// value passes the statistics size limit, of either encoder) leaves its values outside the
// file's bounds: engines then skip the file for queries those values
// answer. It also stops counting a column's values at a chunk without
// statistics.
//
// nans, when not nil, gives the NaN counts of the floating-point columns.
func withFileMetrics(df iceberg.DataFile, md *metadata.FileMetaData, nans map[int]int64, spec iceberg.PartitionSpec, sc *iceberg.Schema) (iceberg.DataFile, error) {
	m := footerMetrics(md)
	nanCounts := df.NaNValueCounts()
	if nans != nil {
		nanCounts = map[int]int64{}
		for id := range m.values {
			if f, ok := sc.FindFieldByID(id); ok {
				switch f.Type.(type) {
				case iceberg.Float32Type, iceberg.Float64Type:
					nanCounts[id] = nans[id]
				}
			}
		}
	}
	lower, upper := df.LowerBoundValues(), df.UpperBoundValues()
	changed := false
	for id := range m.unbounded {
		_, lo := lower[id]
		_, hi := upper[id]
		if lo || hi {
			delete(lower, id)
			delete(upper, id)
			changed = true
		}
	}
	changed = changed || !sameCounts(df.ValueCounts(), m.values) || !sameCounts(df.NaNValueCounts(), nanCounts) || !sameCounts(df.NullValueCounts(), m.nulls) ||
		!sameCounts(df.ColumnSizes(), m.sizes)
	if !changed {
		return df, nil
	}
	b, err := iceberg.NewDataFileBuilder(spec, df.ContentType(), df.FilePath(), df.FileFormat(), df.Partition(),
		partitionLogicalTypes(spec, sc), nil, df.Count(), df.FileSizeBytes())
	if err != nil {
		return nil, fmt.Errorf("rebuild the data file entry: %w", err)
	}
	b.ColumnSizes(m.sizes).ValueCounts(m.values).NullValueCounts(m.nulls).SplitOffsets(df.SplitOffsets())
	if len(lower) > 0 {
		b.LowerBoundValues(lower)
	}
	if len(upper) > 0 {
		b.UpperBoundValues(upper)
	}
	if len(nanCounts) > 0 {
		b.NaNValueCounts(nanCounts)
	}
	if id := df.SortOrderID(); id != nil {
		b.SortOrderID(*id)
	}
	return b.Build(), nil
}

// hasMinAndMax reports whether column i of row group g has both a min
// and a max. arrow-go's statistics report a chunk with only one of them
// (Parquet writers drop a value past their statistics size limit, 4 KiB
// by default, and keep the other) as having both, the missing one empty.
func hasMinAndMax(md *metadata.FileMetaData, g, i int) bool {
	if md.FileMetaData == nil || g >= len(md.RowGroups) || i >= len(md.RowGroups[g].Columns) {
		return false
	}
	cmd := md.RowGroups[g].Columns[i].MetaData
	if cmd == nil || cmd.Statistics == nil {
		return false
	}
	st := cmd.Statistics
	if md.Schema.Column(i).ColumnOrder() == parquet.ColumnOrders.TypeDefinedOrder {
		return st.IsSetMinValue() && st.IsSetMaxValue()
	}
	return st.IsSetMin() && st.IsSetMax()
}

func sameCounts(a, b map[int]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// partitionLogicalTypes are the Avro logical types of the partition
// values, as iceberg-go gives them when it builds a data file.
func partitionLogicalTypes(spec iceberg.PartitionSpec, sc *iceberg.Schema) map[int]string {
	out := map[int]string{}
	for _, f := range spec.Fields() {
		src, ok := sc.FindFieldByID(f.SourceID())
		if !ok {
			continue
		}
		switch f.Transform.ResultType(src.Type).(type) {
		case iceberg.DateType:
			out[f.FieldID] = "date"
		case iceberg.TimeType:
			out[f.FieldID] = "time-micros"
		case iceberg.TimestampType, iceberg.TimestampTzType:
			out[f.FieldID] = "timestamp-micros"
		case iceberg.DecimalType:
			out[f.FieldID] = "decimal"
		case iceberg.UUIDType:
			out[f.FieldID] = "uuid"
		}
	}
	return out
}

// Footer parses the footer at the end of an encoded Parquet file's
// bytes, for the file's DataFile.
func Footer(data []byte) (*metadata.FileMetaData, error) {
	raw, err := footerOf(data)
	if err != nil {
		return nil, err
	}
	return parseFooter(raw)
}

// FooterBytes returns a copy of the footer at the end of an encoded
// Parquet file's bytes, as DataFile.FooterBytes holds it.
func FooterBytes(data []byte) ([]byte, error) {
	raw, err := footerOf(data)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), raw...), nil
}

func footerOf(data []byte) ([]byte, error) {
	const tail = 8 // footer length, then "PAR1"
	if len(data) < tail+4 || string(data[len(data)-4:]) != "PAR1" {
		return nil, fmt.Errorf("not a Parquet file (%d bytes): no footer to take its statistics from", len(data))
	}
	n := int(binary.LittleEndian.Uint32(data[len(data)-tail:]))
	if n <= 0 || n > len(data)-tail-4 {
		return nil, fmt.Errorf("parquet footer length %d does not fit the file's %d bytes", n, len(data))
	}
	return data[len(data)-tail-n : len(data)-tail], nil
}

func parseFooter(raw []byte) (*metadata.FileMetaData, error) {
	md, err := metadata.NewFileMetaData(raw, nil)
	if err != nil {
		return nil, fmt.Errorf("parse the parquet footer: %w", err)
	}
	return md, nil
}

// NaNs is a file's NaN count per field ID, as DataFile.NaNs takes it,
// from the encoder's column statistics (a Parquet footer has none).
func NaNs(cols []parquetenc.ColumnStats) map[int]int64 {
	nans := map[int]int64{}
	for _, c := range cols {
		if c.FieldID >= 0 && c.NaNs > 0 {
			nans[int(c.FieldID)] += c.NaNs
		}
	}
	return nans
}
