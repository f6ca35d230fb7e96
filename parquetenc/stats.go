package parquetenc

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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

// statsAcc is a column chunk's running minimum and maximum, compared as
// Parquet orders the column's type.
type statsAcc struct {
	has              bool
	nan              bool // a NaN was seen: the chunk gets no min and max
	minI, maxI       int64
	minF, maxF       float64
	minB, maxB       []byte
	minD, maxD       decimal128.Num
	minBool, maxBool bool
}

func (a *statsAcc) int(v int64) {
	if !a.has {
		a.has, a.minI, a.maxI = true, v, v
		return
	}
	a.minI, a.maxI = min(a.minI, v), max(a.maxI, v)
}

func (a *statsAcc) ints(v []int64) {
	for _, x := range v {
		a.int(x)
	}
}

// float skips NaN, which has no place in an order, as the format requires,
// but remembers it: encode then leaves min and max out.
func (a *statsAcc) float(v float64) {
	if math.IsNaN(v) {
		a.nan = true
		return
	}
	if !a.has {
		a.has, a.minF, a.maxF = true, v, v
		return
	}
	a.minF, a.maxF = math.Min(a.minF, v), math.Max(a.maxF, v)
}

func (a *statsAcc) bool(v bool) {
	if !a.has {
		a.has, a.minBool, a.maxBool = true, v, v
		return
	}
	a.minBool = a.minBool && v
	a.maxBool = a.maxBool || v
}

// bytes keeps its own copies: the chunk's values are only borrowed.
func (a *statsAcc) bytes(v []byte) {
	if !a.has {
		a.has = true
		a.minB, a.maxB = append(a.minB[:0], v...), append(a.maxB[:0], v...)
		return
	}
	if bytes.Compare(v, a.minB) < 0 {
		a.minB = append(a.minB[:0], v...)
	} else if bytes.Compare(v, a.maxB) > 0 {
		a.maxB = append(a.maxB[:0], v...)
	}
}

func (a *statsAcc) decimal(v decimal128.Num) {
	if !a.has {
		a.has, a.minD, a.maxD = true, v, v
		return
	}
	if v.Less(a.minD) {
		a.minD = v
	}
	if a.maxD.Less(v) {
		a.maxD = v
	}
}

func (a *statsAcc) encode(l *leaf, nulls int64) metadata.EncodedStatistics {
	var enc metadata.EncodedStatistics
	enc.SetNullCount(nulls)
	if !a.has {
		enc.AllNullValue = true
		return enc
	}
	if a.nan {
		// The format lets a chunk's min and max skip its NaNs, but
		// readers that prune on them (DuckDB) then skip the chunk for a
		// filter a NaN row passes, or a NaN row for one it fails: as
		// parquet-mr (PARQUET-1246), a chunk holding NaN has none.
		return enc
	}
	switch l.values.(type) {
	case *array.Int64, *array.Timestamp:
		enc.SetMin(binary.LittleEndian.AppendUint64(nil, uint64(a.minI)))
		enc.SetMax(binary.LittleEndian.AppendUint64(nil, uint64(a.maxI)))
	case *array.Date32, *array.Int32:
		enc.SetMin(binary.LittleEndian.AppendUint32(nil, uint32(int32(a.minI))))
		enc.SetMax(binary.LittleEndian.AppendUint32(nil, uint32(int32(a.maxI))))
	case *array.Float64:
		lo, hi := a.minF, a.maxF
		if lo == 0 {
			lo = math.Copysign(0, -1) // the format asks for -0 as a zero minimum
		}
		if hi == 0 {
			hi = 0
		}
		enc.SetMin(binary.LittleEndian.AppendUint64(nil, math.Float64bits(lo)))
		enc.SetMax(binary.LittleEndian.AppendUint64(nil, math.Float64bits(hi)))
	case *array.Boolean:
		enc.SetMin([]byte{byte(b2i(a.minBool))})
		enc.SetMax([]byte{byte(b2i(a.maxBool))})
	case *array.String, *array.Binary:
		// Not nil when empty: the footer leaves out a nil value, and ""
		// is a minimum like any other.
		enc.SetMin(append([]byte{}, a.minB...))
		enc.SetMax(append([]byte{}, a.maxB...))
	case *array.Decimal128:
		w := l.col.TypeLength()
		enc.SetMin(appendDecimal(nil, a.minD, w))
		enc.SetMax(appendDecimal(nil, a.maxD, w))
	}
	return enc
}
