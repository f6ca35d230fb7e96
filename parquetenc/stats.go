package parquetenc

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
)

// ColumnStats are a Parquet leaf column's statistics over the whole file,
// as a table format's data file metrics take them.
type ColumnStats struct {
	// FieldID is the Arrow field's PARQUET:field_id (written into the
	// Parquet schema too), or -1 when it has none: the column is then
	// known by Path or its index in Result.Columns.
	FieldID      int32
	Path         string // the dotted Parquet path, as pqarrow names it ("l.list.element")
	PhysicalType parquet.Type
	Values       int64 // the chunks' num_values: rows, or list elements and empty or null lists
	// Nulls is the sum of the chunks' null counts, or -1 when a chunk has
	// none (pqarrow writing a column holding NaN without statistics).
	Nulls int64
	NaNs  int64 // NaN values, for floating-point columns
	// Min and Max are the file's smallest and largest value in Parquet's
	// PLAIN encoding (little-endian numbers, big-endian two's complement
	// decimals, the bytes of strings), or nil when not every chunk with a
	// value has them: a chunk holding NaN has none, nor one whose values
	// pass the statistics size limit (4 KiB).
	Min, Max     []byte
	Compressed   int64 // the chunks' bytes in the file, page headers included
	Uncompressed int64 // the same before compression
}

// columnInfo is what a leaf's statistics take from the Parquet schema.
type columnInfo struct {
	fieldID  int32
	path     string
	physical parquet.Type
	signed   bool // a FIXED_LEN_BYTE_ARRAY ordered as signed (decimals)
}

func columnInfos(sc *pqschema.Schema) []columnInfo {
	cols := make([]columnInfo, sc.NumColumns())
	for i := range cols {
		c := sc.Column(i)
		_, dec := c.LogicalType().(pqschema.DecimalLogicalType)
		cols[i] = columnInfo{fieldID: c.SchemaNode().FieldID(), path: c.Path(), physical: c.PhysicalType(), signed: dec}
	}
	return cols
}

// chunkStats is one column chunk's share of a column's statistics.
type chunkStats struct {
	values, compressed, uncompressed int64
	stats                            metadata.EncodedStatistics
}

// fileStats adds up a column's chunks.
func fileStats(col columnInfo, chunks []chunkStats, nans int64) ColumnStats {
	cs := ColumnStats{FieldID: col.fieldID, Path: col.path, PhysicalType: col.physical, NaNs: nans}
	bounds := true
	for _, c := range chunks {
		cs.Values += c.values
		cs.Compressed += c.compressed
		cs.Uncompressed += c.uncompressed
		st := &c.stats
		if !st.HasNullCount || cs.Nulls < 0 {
			cs.Nulls = -1
		} else {
			cs.Nulls += st.NullCount
		}
		if !st.HasMin || !st.HasMax || st.Min == nil || st.Max == nil {
			if !st.HasNullCount || st.NullCount < c.values {
				bounds = false // values without a min and max
			}
			continue
		}
		if cs.Min == nil || compareEncoded(col, st.Min, cs.Min) < 0 {
			cs.Min = st.Min
		}
		if cs.Max == nil || compareEncoded(col, st.Max, cs.Max) > 0 {
			cs.Max = st.Max
		}
	}
	if !bounds {
		cs.Min, cs.Max = nil, nil
	}
	return cs
}

// compareEncoded orders two PLAIN-encoded values of col as Parquet's
// column order for its type does.
func compareEncoded(col columnInfo, a, b []byte) int {
	switch col.physical {
	case parquet.Types.Boolean:
		return int(a[0]) - int(b[0])
	case parquet.Types.Int32:
		return cmp3(int32(binary.LittleEndian.Uint32(a)), int32(binary.LittleEndian.Uint32(b)))
	case parquet.Types.Int64:
		return cmp3(int64(binary.LittleEndian.Uint64(a)), int64(binary.LittleEndian.Uint64(b)))
	case parquet.Types.Float:
		return cmp3(math.Float32frombits(binary.LittleEndian.Uint32(a)), math.Float32frombits(binary.LittleEndian.Uint32(b)))
	case parquet.Types.Double:
		return cmp3(math.Float64frombits(binary.LittleEndian.Uint64(a)), math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case parquet.Types.FixedLenByteArray:
		if col.signed && len(a) > 0 && len(b) > 0 && (a[0]^b[0])&0x80 != 0 {
			return int(b[0]>>7) - int(a[0]>>7) // the negative one is smaller
		}
	}
	return bytes.Compare(a, b)
}

func cmp3[T int32 | int64 | float32 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// leanStats are the statistics of a file the lean encoder wrote.
func leanStats(cols []columnInfo, leaves []leaf, rowGroups []rowGroupMeta) []ColumnStats {
	out := make([]ColumnStats, len(cols))
	chunks := make([]chunkStats, len(rowGroups))
	for i, col := range cols {
		for g := range rowGroups {
			c := &rowGroups[g].chunks[i]
			chunks[g] = chunkStats{values: c.numValues, compressed: c.compressed, uncompressed: c.uncompressed, stats: c.stats}
		}
		out[i] = fileStats(col, chunks, nanCount(leaves[i].values))
	}
	return out
}

// pqarrowStats are the statistics of a file pqarrow wrote, from its
// footer; nans are counted from the arrays.
func pqarrowStats(cols []columnInfo, md *metadata.FileMetaData, nans []int64) []ColumnStats {
	out := make([]ColumnStats, len(cols))
	chunks := make([]chunkStats, md.NumRowGroups())
	for i, col := range cols {
		chunks = chunks[:0]
		for g := range md.NumRowGroups() {
			cc, err := md.RowGroup(g).ColumnChunk(i)
			if err != nil {
				continue
			}
			c := chunkStats{values: cc.NumValues(), compressed: cc.TotalCompressedSize(), uncompressed: cc.TotalUncompressedSize()}
			if st, err := cc.Statistics(); err == nil && st != nil {
				if st.HasNullCount() {
					c.stats.SetNullCount(st.NullCount())
				}
				if st.HasMinMax() {
					c.stats.SetMin(st.EncodeMin())
					c.stats.SetMax(st.EncodeMax())
				}
			}
			chunks = append(chunks, c)
		}
		out[i] = fileStats(col, chunks, nans[i])
	}
	return out
}
