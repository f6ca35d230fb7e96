package parquetenc

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// The lean encoder writes a file's footer (the Thrift FileMetaData) itself,
// byte for byte as arrow-go's metadata builders would
// (TestLeanFooterIsArrowGos holds it to that). The builders rebuilt the
// Parquet schema's Thrift form for every file and allocated several
// objects per column chunk: with hundreds of tables under a budget, files
// are small and the footer was a fifth of their encoding's allocations.
// The schema part does not change between a shape's files, so it is
// serialized once, by arrow-go.

// footerShape is what the footers of one file shape share.
type footerShape struct {
	// prefix is FileMetaData's version and schema fields.
	prefix  []byte
	columns []footerColumn
	// createdBy and the column orders end every footer.
	createdBy string
	// The encodings of a dictionary-encoded chunk's pages: the indices',
	// and the dictionary page's as the encodings list and as
	// encoding_stats name it.
	dictIndex, dictPage, dictStats int32
}

// footerColumn is what a column chunk's metadata takes from its column.
type footerColumn struct {
	typ      int32
	path     []string
	codec    int32
	encoding int32 // of pages without a dictionary
	maxStats int
}

func newFooterShape(sc *schema.Schema, props *parquet.WriterProperties) (*footerShape, error) {
	md, err := metadata.NewFileMetadataBuilder(sc, props, nil).Finish()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := md.WriteTo(&buf, nil); err != nil {
		return nil, err
	}
	fs := &footerShape{createdBy: props.CreatedBy(),
		dictIndex: int32(props.DictionaryIndexEncoding()), dictPage: int32(dictionaryPageEncoding(props)),
		dictStats: int32(props.DictionaryPageEncoding())}
	for i := range sc.NumColumns() {
		col := sc.Column(i)
		path := col.Path()
		fs.columns = append(fs.columns, footerColumn{
			typ:      int32(col.PhysicalType()),
			path:     col.ColumnPath(),
			codec:    int32(props.CompressionFor(path)),
			encoding: int32(props.EncodingFor(path)),
			maxStats: int(props.MaxStatsSizeFor(path)),
		})
	}
	// arrow-go's FileMetaData of no rows ends as this shape's footer of no
	// row groups does; what precedes that is its version and schema.
	if fs.prefix, err = footerPrefix(buf.Bytes(), fs.appendFooter(nil, nil, nil)); err != nil {
		return nil, err
	}
	return fs, nil
}

// footerPrefix returns what precedes tail in footer, or an error when
// footer does not end with tail: the files then go to pqarrow.
func footerPrefix(footer, tail []byte) ([]byte, error) {
	if !bytes.HasSuffix(footer, tail) {
		return nil, errors.New("parquet footer: arrow-go's FileMetaData does not end as the lean encoder's would")
	}
	return bytes.Clone(footer[:len(footer)-len(tail)]), nil
}

// dictionaryPageEncoding is the dictionary page's encoding as a column
// chunk's metadata lists it (Parquet 1.0 calls it PLAIN).
func dictionaryPageEncoding(props *parquet.WriterProperties) parquet.Encoding {
	if props.Version() == parquet.V1_0 {
		return parquet.Encodings.Plain
	}
	return props.DictionaryPageEncoding()
}

// chunkMeta is a written column chunk's entry in the footer.
type chunkMeta struct {
	numValues      int64
	dataPageOffset int64
	dictPageOffset int64 // when dictionary is set
	dictionary     bool
	compressed     int64
	uncompressed   int64
	dataPages      int32
	stats          metadata.EncodedStatistics
}

type rowGroupMeta struct {
	rows   int64
	chunks []chunkMeta
}

// Thrift compact protocol types; thriftWriter writes the page headers too.
const (
	thriftFalse  = 2
	thriftI16    = 4
	thriftI32    = 5
	thriftI64    = 6
	thriftBinary = 8
	thriftList   = 9
	thriftStruct = 12
)

// thriftWriter appends one struct's fields, keeping the id deltas.
type thriftWriter struct {
	b    []byte
	last int16
}

func (w *thriftWriter) field(id int16, typ byte) {
	if d := id - w.last; d > 0 && d <= 15 {
		w.b = append(w.b, byte(d)<<4|typ)
	} else {
		w.b = binary.AppendVarint(append(w.b, typ), int64(id))
	}
	w.last = id
}

func (w *thriftWriter) i64(id int16, v int64) {
	w.field(id, thriftI64)
	w.b = binary.AppendVarint(w.b, v)
}

func (w *thriftWriter) i32(id int16, v int32) {
	w.field(id, thriftI32)
	w.b = binary.AppendVarint(w.b, int64(v))
}

func (w *thriftWriter) binary(id int16, v []byte) {
	w.field(id, thriftBinary)
	w.b = appendThriftBinary(w.b, v)
}

func (w *thriftWriter) string(id int16, v string) {
	w.field(id, thriftBinary)
	w.b = appendThriftBinary(w.b, v)
}

// list starts a list field of n elements of typ.
func (w *thriftWriter) list(id int16, typ byte, n int) {
	w.field(id, thriftList)
	w.b = appendListHeader(w.b, typ, n)
}

// begin starts a struct field or element; it returns the enclosing
// struct's last id, for end.
func (w *thriftWriter) begin() int16 {
	last := w.last
	w.last = 0
	return last
}

func (w *thriftWriter) end(outer int16) {
	w.b = append(w.b, 0)
	w.last = outer
}

func appendListHeader(b []byte, typ byte, n int) []byte {
	if n < 15 {
		return append(b, byte(n)<<4|typ)
	}
	return binary.AppendUvarint(append(b, 0xf0|typ), uint64(n))
}

func appendThriftBinary[T string | []byte](b []byte, v T) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

// appendFooter appends the file's FileMetaData.
func (fs *footerShape) appendFooter(b []byte, rowGroups []rowGroupMeta, kv metadata.KeyValueMetadata) []byte {
	w := thriftWriter{b: append(b, fs.prefix...), last: 2}
	var rows int64
	for _, rg := range rowGroups {
		rows += rg.rows
	}
	w.i64(3, rows)
	w.list(4, thriftStruct, len(rowGroups))
	for ordinal, rg := range rowGroups {
		outer := w.begin()
		fs.appendRowGroup(&w, &rg, int16(ordinal))
		w.end(outer)
	}
	if kv != nil {
		w.list(5, thriftStruct, len(kv))
		for _, p := range kv {
			outer := w.begin()
			w.string(1, p.Key)
			if p.Value != nil {
				w.string(2, *p.Value)
			}
			w.end(outer)
		}
	}
	w.string(6, fs.createdBy)
	// Every column is in TYPE_DEFINED_ORDER: a ColumnOrder union whose
	// field 1 is an empty struct.
	w.list(7, thriftStruct, len(fs.columns))
	for range fs.columns {
		w.b = append(w.b, 1<<4|thriftStruct, 0, 0)
	}
	return append(w.b, 0)
}

func (fs *footerShape) appendRowGroup(w *thriftWriter, rg *rowGroupMeta, ordinal int16) {
	w.list(1, thriftStruct, len(rg.chunks))
	var compressed, uncompressed, fileOffset int64
	for i := range rg.chunks {
		c := &rg.chunks[i]
		offset := c.dataPageOffset
		if c.dictionary {
			offset = c.dictPageOffset
		}
		if i == 0 {
			fileOffset = offset
		}
		compressed += c.compressed
		uncompressed += c.uncompressed
		outer := w.begin()
		w.i64(2, offset) // file_offset
		w.field(3, thriftStruct)
		md := w.begin()
		fs.appendColumnMeta(w, &fs.columns[i], c)
		w.end(md)
		w.end(outer)
	}
	w.i64(2, uncompressed) // total_byte_size
	w.i64(3, rg.rows)
	w.i64(5, fileOffset)
	w.i64(6, compressed)
	w.field(7, thriftI16)
	w.b = binary.AppendVarint(w.b, int64(ordinal))
}

func (fs *footerShape) appendColumnMeta(w *thriftWriter, col *footerColumn, c *chunkMeta) {
	w.i32(1, col.typ)
	hasDict := c.dictionary
	if hasDict {
		w.list(2, thriftI32, 3)
		w.b = binary.AppendVarint(w.b, int64(fs.dictIndex))
		w.b = binary.AppendVarint(w.b, int64(fs.dictPage))
	} else {
		w.list(2, thriftI32, 2)
		w.b = binary.AppendVarint(w.b, int64(col.encoding))
	}
	w.b = binary.AppendVarint(w.b, int64(parquet.Encodings.RLE)) // levels
	w.list(3, thriftBinary, len(col.path))
	for _, p := range col.path {
		w.b = appendThriftBinary(w.b, p)
	}
	w.i32(4, col.codec)
	w.i64(5, c.numValues)
	w.i64(6, c.uncompressed)
	w.i64(7, c.compressed)
	w.i64(9, c.dataPageOffset)
	if hasDict {
		w.i64(11, c.dictPageOffset)
	}
	w.field(12, thriftStruct)
	st := w.begin()
	s := &c.stats
	// As EncodedStatistics.ToThrift: the deprecated min and max too when
	// the order is signed; a field is written when its value is not nil.
	if s.HasMax && s.Signed && s.Max != nil {
		w.binary(1, s.Max)
	}
	if s.HasMin && s.Signed && s.Min != nil {
		w.binary(2, s.Min)
	}
	if s.HasNullCount {
		w.i64(3, s.NullCount)
	}
	if s.HasDistinctCount {
		w.i64(4, s.DistinctCount)
	}
	if s.HasMax && s.Max != nil {
		w.binary(5, s.Max)
	}
	if s.HasMin && s.Min != nil {
		w.binary(6, s.Min)
	}
	w.end(st)
	// encoding_stats: the dictionary page, then the data pages.
	if hasDict {
		w.list(13, thriftStruct, 2)
		w.b = appendPageEncodingStats(w.b, dictionaryPage, fs.dictStats, 1)
		w.b = appendPageEncodingStats(w.b, dataPage, fs.dictIndex, c.dataPages)
	} else {
		w.list(13, thriftStruct, 1)
		w.b = appendPageEncodingStats(w.b, dataPage, col.encoding, c.dataPages)
	}
}

func appendPageEncodingStats(b []byte, pageType, encoding, count int32) []byte {
	w := thriftWriter{b: b}
	w.i32(1, pageType)
	w.i32(2, encoding)
	w.i32(3, count)
	return append(w.b, 0)
}

// Page types (PageHeader field 1).
const (
	dataPage       = 0
	dictionaryPage = 2
)

// pageHeader writes a data page's or dictionary page's PageHeader.
func pageHeader(b []byte, pageType int32, uncompressed, compressed, numValues int, enc parquet.Encoding) []byte {
	w := thriftWriter{b: b}
	w.i32(1, pageType)
	w.i32(2, int32(uncompressed))
	w.i32(3, int32(compressed))
	if pageType == dataPage {
		w.field(5, thriftStruct) // data_page_header
	} else {
		w.field(7, thriftStruct) // dictionary_page_header
	}
	outer := w.begin()
	w.i32(1, int32(numValues))
	w.i32(2, int32(enc))
	if pageType == dataPage {
		w.i32(3, int32(parquet.Encodings.RLE)) // definition levels
		w.i32(4, int32(parquet.Encodings.RLE)) // repetition levels
	} else {
		w.field(3, thriftFalse) // is_sorted
	}
	w.end(outer)
	return append(w.b, 0)
}

// leanKeyValues is the start of a file's key/value metadata as pqarrow
// writes it: the Arrow schema's own, then the serialized Arrow schema
// (with list elements named as the Parquet columns are). The file's own
// pairs follow.
func leanKeyValues(sc *arrow.Schema, mem memory.Allocator) metadata.KeyValueMetadata {
	md := sc.Metadata()
	kv := make(metadata.KeyValueMetadata, 0, md.Len()+1)
	for i := range md.Len() {
		kv.Append(md.Keys()[i], md.Values()[i])
	}
	fields := make([]arrow.Field, sc.NumFields())
	for i, fld := range sc.Fields() {
		fields[i] = elementNamed(fld)
	}
	stored := arrow.NewSchema(fields, &md)
	kv.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(stored, mem)))
	return kv
}

// elementNamed renames list elements "element", as pqarrow does before it
// stores the schema, for the shapes the lean encoder writes.
func elementNamed(f arrow.Field) arrow.Field {
	switch t := f.Type.(type) {
	case *arrow.ListType:
		elem := elementNamed(t.ElemField())
		elem.Name = "element"
		return arrow.Field{Name: f.Name, Type: arrow.ListOfField(elem), Nullable: f.Nullable, Metadata: f.Metadata}
	case *arrow.StructType:
		fields := make([]arrow.Field, t.NumFields())
		for i := range fields {
			fields[i] = elementNamed(t.Field(i))
		}
		return arrow.Field{Name: f.Name, Type: arrow.StructOf(fields...), Nullable: f.Nullable, Metadata: f.Metadata}
	}
	return f
}
