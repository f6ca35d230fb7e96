package writer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/partition"
)

// ---- fixtures -------------------------------------------------------------

const ordersMetadata = `{"op_type":"OBJECT_METADATA","qual_table":"SALES.ORDERS","columns":{
  "ORDER_ID":{"type":"number","null":false,"key":true},
  "STATUS":{"type":"string","null":false,"key":false},
  "TOTAL_AMOUNT":{"type":"number","null":true,"key":false}}}`

// The DML examples of the reference page, plus an insert with a null.
const (
	insert1001 = `{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:01:01.123456Z","xid":"example-transaction-1001","pos":"G-QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=1001","after":{"ORDER_ID":1001,"STATUS":"NEW","TOTAL_AMOUNT":125.50}}`
	update1001 = `{"qual_table":"SALES.ORDERS","op_type":"UPDATE","op_ts":"2026-07-13T04:02:12.654321Z","xid":"example-transaction-1002","pos":"G-R0hJSktMTU5PUFFSU1RVVldYWVo=1002","before":{"ORDER_ID":1001,"STATUS":"NEW"},"after":{"ORDER_ID":1001,"STATUS":"APPROVED"}}`
	delete1001 = `{"qual_table":"SALES.ORDERS","op_type":"DELETE","op_ts":"2026-07-13T04:03:15.000000Z","xid":"example-transaction-1003","pos":"G-SktMTU5PUFFSU1RVVldYWVo=1003","before":{"ORDER_ID":1001,"STATUS":"APPROVED"}}`
	insert1002 = `{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T05:00:00Z","xid":"t-1004","pos":"p-1004","after":{"ORDER_ID":1002,"STATUS":"PENDING","TOTAL_AMOUNT":null}}`
)

var orderHints = map[string]arrowschema.Type{
	"SALES.ORDERS:ORDER_ID":     {Kind: arrowschema.KindInt64},
	"SALES.ORDERS:TOTAL_AMOUNT": {Kind: arrowschema.KindDecimal, Precision: 12, Scale: 2},
}

type fixture struct {
	t   *testing.T
	dec *cdc.GoldenGate
	cat *arrowschema.Catalog
}

func newFixture(t *testing.T, opts arrowschema.Options) *fixture {
	t.Helper()
	dec, err := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dec: dec, cat: arrowschema.NewCatalog(opts)}
}

func ordersFixture(t *testing.T, beforeImage bool) (*fixture, *arrowschema.Version) {
	t.Helper()
	f := newFixture(t, arrowschema.Options{Hints: orderHints, BeforeImage: beforeImage})
	return f, f.meta(ordersMetadata)
}

func (f *fixture) rec(text string) *cdc.Record {
	f.t.Helper()
	var r cdc.Record
	if err := f.dec.Decode([]byte(text), &r); err != nil {
		f.t.Fatalf("decode %s: %v", text, err)
	}
	return &r
}

// meta applies an OBJECT_METADATA record and returns the current version.
func (f *fixture) meta(text string) *arrowschema.Version {
	f.t.Helper()
	r := f.rec(text)
	if r.Class != cdc.ClassObjectMetadata {
		f.t.Fatalf("not metadata: %s", text)
	}
	if _, err := f.cat.ApplyMetadata(r.Metadata, r.Pos, r.OpTS); err != nil {
		f.t.Fatal(err)
	}
	return f.cat.Current(r.Metadata.Table)
}

func newWriter(t *testing.T, cfg Config) *Writer {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustAppend(t *testing.T, w *Writer, v *arrowschema.Version, r *cdc.Record, src Source) []*File {
	t.Helper()
	files, err := w.Append(v, r, src)
	if err != nil {
		t.Fatalf("Append at %+v: %v", src, err)
	}
	return files
}

// prepared makes a deferred file's record batch, as Encode does first.
func prepared(f *File) *pendingEncode {
	if e := f.enc; e != nil && e.buf != nil {
		f.enc = e.w.prepare(e.buf, e.conv)
		e.buf.release()
	}
	return f.enc
}

func mustFlushAll(t *testing.T, w *Writer) []*File {
	t.Helper()
	files, err := w.FlushAll("shutdown")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// ---- reading files back -----------------------------------------------------

type pfile struct {
	t      *testing.T
	rdr    *file.Reader
	schema *arrow.Schema
	tbl    arrow.Table
}

func readParquet(t *testing.T, data []byte) *pfile {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a Parquet file: %v", err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tbl.Release)
	return &pfile{t: t, rdr: rdr, schema: sc, tbl: tbl}
}

func (p *pfile) rows() int64 { return p.tbl.NumRows() }

// col returns the whole column as one array.
func (p *pfile) col(name string) arrow.Array {
	p.t.Helper()
	idx := p.schema.FieldIndices(name)
	if len(idx) != 1 {
		p.t.Fatalf("column %s not in %v", name, p.schema)
	}
	chunks := p.tbl.Column(idx[0]).Data().Chunks()
	arr, err := array.Concatenate(chunks, memory.DefaultAllocator)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(arr.Release)
	return arr
}

func (p *pfile) kv(key string) string {
	p.t.Helper()
	v := p.rdr.MetaData().KeyValueMetadata().FindValue(key)
	if v == nil {
		p.t.Fatalf("key/value metadata %q missing", key)
	}
	return *v
}

func (p *pfile) strings(name string) []string {
	a := p.col(name).(*array.String)
	out := make([]string, a.Len())
	for i := range out {
		if a.IsNull(i) {
			out[i] = "<null>"
		} else {
			out[i] = a.Value(i)
		}
	}
	return out
}

func (p *pfile) leaf(path string) *schema.Column {
	p.t.Helper()
	i := p.rdr.MetaData().Schema.ColumnIndexByName(path)
	if i < 0 {
		p.t.Fatalf("no Parquet leaf %s", path)
	}
	return p.rdr.MetaData().Schema.Column(i)
}

func eqStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func micros(s string) int64 {
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return ts.UnixMicro()
}

// ---- tests -------------------------------------------------------------------

func TestWriteReferenceExample(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{})
	for i, text := range []string{insert1001, update1001, delete1001, insert1002} {
		if files := mustAppend(t, w, v, f.rec(text), Source{Partition: "p0", Offset: int64(10 + i)}); len(files) != 0 {
			t.Fatalf("append %d rolled %d files", i, len(files))
		}
	}
	if w.BufferedBytes() <= 0 {
		t.Error("BufferedBytes is 0 with four rows buffered")
	}
	files := mustFlushAll(t, w)
	if len(files) != 1 {
		t.Fatalf("%d files, want 1", len(files))
	}
	out := files[0]
	if out.Rows != 4 || out.Table != "SALES.ORDERS" || out.Version != 1 || out.Reason != "shutdown" ||
		out.SourcePartition != "p0" || out.FirstOffset != 10 || out.LastOffset != 13 {
		t.Errorf("file %+v", *out)
	}
	if w.BufferedBytes() != 0 {
		t.Errorf("BufferedBytes after FlushAll = %d", w.BufferedBytes())
	}
	keyRE := regexp.MustCompile(`^SALES\.ORDERS/schema_version=1/dt=2026-07-13/part-[^/]+\.parquet$`)
	if !keyRE.MatchString(out.Key) {
		t.Errorf("key %q does not match %s", out.Key, keyRE)
	}

	p := readParquet(t, out.Data)
	if p.rows() != 4 || p.rdr.NumRows() != 4 {
		t.Fatalf("%d rows", p.rows())
	}
	wantFields := []string{"op_type", "op_ts", "xid", "pos", "ORDER_ID", "STATUS", "TOTAL_AMOUNT", "absent_columns", "src_partition", "src_offset"}
	if p.schema.NumFields() != len(wantFields) {
		t.Fatalf("schema %v", p.schema)
	}
	for i, n := range wantFields {
		if p.schema.Field(i).Name != n {
			t.Errorf("field %d = %s, want %s", i, p.schema.Field(i).Name, n)
		}
	}

	eqStrings(t, "op_type", p.strings("op_type"), []string{"INSERT", "UPDATE", "DELETE", "INSERT"})
	eqStrings(t, "xid", p.strings("xid"), []string{"example-transaction-1001", "example-transaction-1002", "example-transaction-1003", "t-1004"})
	eqStrings(t, "pos", p.strings("pos"), []string{"G-QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=1001", "G-R0hJSktMTU5PUFFSU1RVVldYWVo=1002", "G-SktMTU5PUFFSU1RVVldYWVo=1003", "p-1004"})
	// DELETE's row is its before image.
	eqStrings(t, "STATUS", p.strings("STATUS"), []string{"NEW", "APPROVED", "APPROVED", "PENDING"})

	opts := p.col("op_ts").(*array.Timestamp)
	for i, want := range []string{"2026-07-13T04:01:01.123456Z", "2026-07-13T04:02:12.654321Z", "2026-07-13T04:03:15Z", "2026-07-13T05:00:00Z"} {
		if int64(opts.Value(i)) != micros(want) {
			t.Errorf("op_ts[%d] = %d, want %d (%s)", i, opts.Value(i), micros(want), want)
		}
	}
	ids := p.col("ORDER_ID").(*array.Int64)
	for i, want := range []int64{1001, 1001, 1001, 1002} {
		if ids.IsNull(i) || ids.Value(i) != want {
			t.Errorf("ORDER_ID[%d] = %d, want %d", i, ids.Value(i), want)
		}
	}
	amt := p.col("TOTAL_AMOUNT").(*array.Decimal128)
	if amt.IsNull(0) || amt.Value(0).BigInt().String() != "12550" {
		t.Errorf("TOTAL_AMOUNT[0] = %v, want 125.50 (unscaled 12550)", amt.Value(0))
	}
	for i := 1; i < 4; i++ {
		if !amt.IsNull(i) {
			t.Errorf("TOTAL_AMOUNT[%d] not null", i)
		}
	}
	if dt, ok := amt.DataType().(*arrow.Decimal128Type); !ok || dt.Precision != 12 || dt.Scale != 2 {
		t.Errorf("TOTAL_AMOUNT type %v", amt.DataType())
	}

	// Absent (partial image) is not null (present with null).
	absent := p.col("absent_columns").(*array.List)
	values := absent.ListValues().(*array.String)
	wantAbsent := [][]string{nil, {"TOTAL_AMOUNT"}, {"TOTAL_AMOUNT"}, nil}
	for i, want := range wantAbsent {
		if want == nil {
			if !absent.IsNull(i) {
				t.Errorf("absent_columns[%d] is not null", i)
			}
			continue
		}
		if absent.IsNull(i) {
			t.Errorf("absent_columns[%d] is null, want %v", i, want)
			continue
		}
		start, end := absent.ValueOffsets(i)
		var got []string
		for j := start; j < end; j++ {
			got = append(got, values.Value(int(j)))
		}
		eqStrings(t, fmt.Sprintf("absent_columns[%d]", i), got, want)
	}

	// Key/value metadata.
	for k, want := range map[string]string{
		"lakehouse.table":            "SALES.ORDERS",
		"lakehouse.schema_version":   "1",
		"lakehouse.first_offset":     "10",
		"lakehouse.last_offset":      "13",
		"lakehouse.source_partition": "p0",
		"lakehouse.first_pos":        "G-QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=1001",
		"lakehouse.last_pos":         "p-1004",
	} {
		if got := p.kv(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestTimestampsAreInt64MicrosUTC(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
	p := readParquet(t, mustFlushAll(t, w)[0].Data)

	ts, ok := p.schema.Field(1).Type.(*arrow.TimestampType)
	if !ok || ts.Unit != arrow.Microsecond || ts.TimeZone != "UTC" {
		t.Errorf("op_ts read back as %v, want timestamp[us, tz=UTC]", p.schema.Field(1).Type)
	}
	leaf := p.leaf("op_ts")
	if leaf.PhysicalType() != parquet.Types.Int64 {
		t.Errorf("op_ts physical type %v, want INT64 (never INT96)", leaf.PhysicalType())
	}
	lt, ok := leaf.LogicalType().(schema.TimestampLogicalType)
	if !ok || !lt.IsAdjustedToUTC() || lt.TimeUnit() != schema.TimeUnitMicros {
		t.Errorf("op_ts logical type %v, want TIMESTAMP(isAdjustedToUTC=true, MICROS)", leaf.LogicalType())
	}
	for i := 0; i < p.rdr.MetaData().Schema.NumColumns(); i++ {
		c := p.rdr.MetaData().Schema.Column(i)
		if c.PhysicalType() == parquet.Types.Int96 {
			t.Errorf("column %s is INT96", c.Path())
		}
		if lt, ok := c.LogicalType().(*schema.IntLogicalType); ok && !lt.IsSigned() {
			t.Errorf("column %s is unsigned", c.Path())
		}
	}
}

func TestRequiredColumnsBecomeOptionalOnlyWithNulls(t *testing.T) {
	f, v := ordersFixture(t, false)
	// Full images: NOT NULL columns stay REQUIRED.
	w := newWriter(t, Config{})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
	p := readParquet(t, mustFlushAll(t, w)[0].Data)
	if r := p.leaf("ORDER_ID").SchemaNode().RepetitionType(); r != parquet.Repetitions.Required {
		t.Errorf("ORDER_ID repetition %v, want required", r)
	}
	if r := p.leaf("TOTAL_AMOUNT").SchemaNode().RepetitionType(); r != parquet.Repetitions.Optional {
		t.Errorf("TOTAL_AMOUNT repetition %v, want optional", r)
	}
	// A partial image leaves STATUS (NOT NULL) out: the file says optional.
	mustAppend(t, w, v, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"UPDATE","op_ts":"2026-07-13T04:02:12Z","after":{"ORDER_ID":1001,"TOTAL_AMOUNT":1}}`), Source{Partition: "p0", Offset: 1})
	p = readParquet(t, mustFlushAll(t, w)[0].Data)
	if r := p.leaf("STATUS").SchemaNode().RepetitionType(); r != parquet.Repetitions.Optional {
		t.Errorf("STATUS repetition %v with a null, want optional", r)
	}
	if !p.col("STATUS").IsNull(0) {
		t.Error("absent STATUS is not null")
	}
	if p.strings("xid")[0] != "<null>" || p.strings("pos")[0] != "<null>" {
		t.Errorf("missing xid/pos: %q %q, want nulls", p.strings("xid"), p.strings("pos"))
	}
}

func TestFieldMetadataSurvives(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
	p := readParquet(t, mustFlushAll(t, w)[0].Data)
	for name, want := range map[string]string{"ORDER_ID": "true", "STATUS": "false"} {
		fld, _ := p.schema.FieldsByName(name)
		if len(fld) != 1 {
			t.Fatalf("%s missing", name)
		}
		k := fld[0].Metadata.FindKey("key")
		if k < 0 || fld[0].Metadata.Values()[k] != want {
			t.Errorf("%s key metadata %v, want key=%s", name, fld[0].Metadata, want)
		}
	}
}

func TestBeforeImageStruct(t *testing.T) {
	f, v := ordersFixture(t, true)
	w := newWriter(t, Config{})
	for i, text := range []string{insert1001, update1001, delete1001} {
		mustAppend(t, w, v, f.rec(text), Source{Partition: "p0", Offset: int64(i)})
	}
	p := readParquet(t, mustFlushAll(t, w)[0].Data)
	if p.schema.Field(p.schema.NumFields()-1).Name != "before_image" {
		t.Fatalf("last field %s, want before_image", p.schema.Field(p.schema.NumFields()-1).Name)
	}
	bi := p.col("before_image").(*array.Struct)
	if !bi.IsNull(0) {
		t.Error("INSERT has a before image")
	}
	st := bi.DataType().(*arrow.StructType)
	fieldIdx := func(n string) int {
		i, ok := st.FieldIdx(n)
		if !ok {
			t.Fatalf("before_image has no %s", n)
		}
		return i
	}
	id := bi.Field(fieldIdx("ORDER_ID")).(*array.Int64)
	status := bi.Field(fieldIdx("STATUS")).(*array.String)
	amt := bi.Field(fieldIdx("TOTAL_AMOUNT")).(*array.Decimal128)
	for _, c := range []struct {
		row    int
		status string
	}{{1, "NEW"}, {2, "APPROVED"}} {
		if bi.IsNull(c.row) {
			t.Errorf("row %d: before image null", c.row)
			continue
		}
		if id.Value(c.row) != 1001 || status.Value(c.row) != c.status || !amt.IsNull(c.row) {
			t.Errorf("row %d: before image {%d %q null=%v}, want {1001 %q null}", c.row, id.Value(c.row), status.Value(c.row), amt.IsNull(c.row), c.status)
		}
	}
	// The row image of the UPDATE is its after image.
	eqStrings(t, "STATUS", p.strings("STATUS"), []string{"NEW", "APPROVED", "APPROVED"})

	// A before image that does not fit is a reject like any other.
	_, err := w.Append(v, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"UPDATE","op_ts":"2026-07-13T04:02:12Z","before":{"ORDER_ID":"x"},"after":{"ORDER_ID":1,"STATUS":"A"}}`), Source{Partition: "p0", Offset: 9})
	if re, ok := cdc.AsReject(err); !ok || re.Reason != cdc.ReasonValueMismatch {
		t.Errorf("bad before image: %v", err)
	}
	if files := mustFlushAll(t, w); len(files) != 0 {
		t.Errorf("rejected record left %d files", len(files))
	}
}

func TestAllTypesRoundTrip(t *testing.T) {
	f := newFixture(t, arrowschema.Options{Hints: map[string]arrowschema.Type{
		"*:TS": {Kind: arrowschema.KindTimestamp}, "*:D": {Kind: arrowschema.KindDate}, "*:BIN": {Kind: arrowschema.KindBinary},
		"*:F": {Kind: arrowschema.KindFloat64}, "*:FLAG": {Kind: arrowschema.KindBoolean}, "*:BIG": {Kind: arrowschema.KindDecimal, Precision: 38, Scale: 0},
	}})
	v := f.meta(`{"op_type":"OBJECT_METADATA","qual_table":"A.ALLTYPES","columns":{
	  "TS":{"type":"string"},"D":{"type":"string"},"BIN":{"type":"string"},"F":{"type":"number"},
	  "FLAG":{"type":"boolean"},"BIG":{"type":"number"},"S":{"type":"string"}}}`)
	w := newWriter(t, Config{})
	mustAppend(t, w, v, f.rec(`{"qual_table":"A.ALLTYPES","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{
	  "TS":"1969-12-31T23:59:59.999999Z","D":"1969-12-31","BIN":"3q2+7w==","F":-1.5e3,"FLAG":true,
	  "BIG":-99999999999999999999999999999999999999,"S":"caf\u00e9 \"q\"\n日本"}}`), Source{Partition: "p0"})
	mustAppend(t, w, v, f.rec(`{"qual_table":"A.ALLTYPES","op_type":"UPSERT","op_ts":"2026-07-13T04:00:01Z","after":{
	  "TS":null,"D":"2026-07-13T00:00:00Z","BIN":"","F":0,"FLAG":"false","BIG":"12345678901234567890","S":""}}`), Source{Partition: "p0", Offset: 1})
	p := readParquet(t, mustFlushAll(t, w)[0].Data)

	eqStrings(t, "op_type", p.strings("op_type"), []string{"INSERT", "UPSERT"})
	ts := p.col("TS").(*array.Timestamp)
	if ts.Value(0) != -1 || !ts.IsNull(1) {
		t.Errorf("TS = %d null=%v, want -1 then null", ts.Value(0), ts.IsNull(1))
	}
	if tt := ts.DataType().(*arrow.TimestampType); tt.Unit != arrow.Microsecond || tt.TimeZone != "UTC" {
		t.Errorf("TS type %v", tt)
	}
	d := p.col("D").(*array.Date32)
	if d.Value(0) != -1 || int64(d.Value(1)) != time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC).Unix()/86400 {
		t.Errorf("D = %d, %d", d.Value(0), d.Value(1))
	}
	bin := p.col("BIN").(*array.Binary)
	if !bytes.Equal(bin.Value(0), []byte{0xde, 0xad, 0xbe, 0xef}) || bin.IsNull(1) || len(bin.Value(1)) != 0 {
		t.Errorf("BIN = %x, %x", bin.Value(0), bin.Value(1))
	}
	fl := p.col("F").(*array.Float64)
	if fl.Value(0) != -1500 || fl.Value(1) != 0 {
		t.Errorf("F = %v, %v", fl.Value(0), fl.Value(1))
	}
	flag := p.col("FLAG").(*array.Boolean)
	if !flag.Value(0) || flag.Value(1) || flag.IsNull(1) {
		t.Errorf("FLAG = %v, %v", flag.Value(0), flag.Value(1))
	}
	big := p.col("BIG").(*array.Decimal128)
	if big.Value(0).BigInt().String() != "-99999999999999999999999999999999999999" || big.Value(1).BigInt().String() != "12345678901234567890" {
		t.Errorf("BIG = %s, %s", big.Value(0).BigInt(), big.Value(1).BigInt())
	}
	eqStrings(t, "S", p.strings("S"), []string{"café \"q\"\n日本", ""})
}

func TestDatePartitionIsUTCDateOfOpTS(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{})
	// 23:30 at -02:00 is the next UTC day; 00:30 at +02:00 the previous one.
	mustAppend(t, w, v, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T23:30:00-02:00","after":{"ORDER_ID":1,"STATUS":"A"}}`), Source{Partition: "p0", Offset: 1})
	mustAppend(t, w, v, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-14T00:30:00+02:00","after":{"ORDER_ID":2,"STATUS":"B"}}`), Source{Partition: "p0", Offset: 2})
	files := mustFlushAll(t, w)
	if len(files) != 2 {
		t.Fatalf("%d files, want one per date", len(files))
	}
	byDir := map[string]*File{}
	for _, fl := range files {
		byDir[fl.Key[:strings.LastIndexByte(fl.Key, '/')]] = fl
	}
	next := byDir["SALES.ORDERS/schema_version=1/dt=2026-07-14"]
	prev := byDir["SALES.ORDERS/schema_version=1/dt=2026-07-13"]
	if next == nil || prev == nil {
		t.Fatalf("keys %q, %q", files[0].Key, files[1].Key)
	}
	pn := readParquet(t, next.Data)
	if id := pn.col("ORDER_ID").(*array.Int64).Value(0); id != 1 {
		t.Errorf("dt=2026-07-14 holds order %d, want 1", id)
	}
	if got := int64(pn.col("op_ts").(*array.Timestamp).Value(0)); got != micros("2026-07-14T01:30:00Z") {
		t.Errorf("op_ts not converted to UTC: %d", got)
	}
	pp := readParquet(t, prev.Data)
	if id := pp.col("ORDER_ID").(*array.Int64).Value(0); id != 2 {
		t.Errorf("dt=2026-07-13 holds order %d, want 2", id)
	}
}

func TestHourlyAndProcessingTimePartitions(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{Granularity: partition.Hourly})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
	if k := mustFlushAll(t, w)[0].Key; !strings.HasPrefix(k, "SALES.ORDERS/schema_version=1/dt=2026-07-13/hr=04/part-") {
		t.Errorf("hourly key %q", k)
	}

	now := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	w = newWriter(t, Config{ProcessingTime: true, Now: func() time.Time { return now }})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
	if k := mustFlushAll(t, w)[0].Key; !strings.HasPrefix(k, "SALES.ORDERS/schema_version=1/dt=2027-01-02/") {
		t.Errorf("processing-time key %q", k)
	}
}

func TestTableNameIsOneSafeSegment(t *testing.T) {
	f := newFixture(t, arrowschema.Options{})
	v := f.meta(`{"op_type":"OBJECT_METADATA","qual_table":"../ODD/NAME","columns":{"A":{"type":"string"}}}`)
	w := newWriter(t, Config{})
	mustAppend(t, w, v, f.rec(`{"qual_table":"../ODD/NAME","op_type":"INSERT","op_ts":"2026-07-13T00:00:00Z","after":{"A":"x"}}`), Source{Partition: "p0"})
	out := mustFlushAll(t, w)[0]
	if parts := strings.Split(out.Key, "/"); len(parts) != 4 || strings.Contains(parts[0], "..") && !strings.HasPrefix(parts[0], "%2E") {
		t.Errorf("key %q: the table name is not one safe segment", out.Key)
	}
	if readParquet(t, out.Data).kv("lakehouse.table") != "../ODD/NAME" {
		t.Error("lakehouse.table is not the source's table name")
	}
}

func TestRollOnMaxRows(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{MaxRows: 2})
	var files []*File
	for i := 0; i < 5; i++ {
		r := f.rec(fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:0%dZ","pos":"pos-%d","after":{"ORDER_ID":%d,"STATUS":"S"}}`, i, i, i))
		got := mustAppend(t, w, v, r, Source{Partition: "p0", Offset: int64(100 + i)})
		wantN := 0
		if i%2 == 1 {
			wantN = 1
		}
		if len(got) != wantN {
			t.Fatalf("append %d returned %d files, want %d", i, len(got), wantN)
		}
		files = append(files, got...)
	}
	files = append(files, mustFlushAll(t, w)...)
	if len(files) != 3 {
		t.Fatalf("%d files", len(files))
	}
	keys := map[string]bool{}
	for i, want := range []struct {
		rows        int
		first, last int64
		reason      string
	}{{2, 100, 101, "rows"}, {2, 102, 103, "rows"}, {1, 104, 104, "shutdown"}} {
		fl := files[i]
		if fl.Rows != want.rows || fl.FirstOffset != want.first || fl.LastOffset != want.last || fl.Reason != want.reason {
			t.Errorf("file %d: rows %d offsets %d..%d reason %s; want %+v", i, fl.Rows, fl.FirstOffset, fl.LastOffset, fl.Reason, want)
		}
		p := readParquet(t, fl.Data)
		if p.rows() != int64(want.rows) {
			t.Errorf("file %d has %d rows", i, p.rows())
		}
		if p.kv("lakehouse.first_offset") != fmt.Sprint(want.first) || p.kv("lakehouse.last_offset") != fmt.Sprint(want.last) {
			t.Errorf("file %d offsets metadata %s..%s", i, p.kv("lakehouse.first_offset"), p.kv("lakehouse.last_offset"))
		}
		if p.kv("lakehouse.first_pos") != fmt.Sprintf("pos-%d", want.first-100) {
			t.Errorf("file %d first_pos %s", i, p.kv("lakehouse.first_pos"))
		}
		if keys[fl.Key] {
			t.Errorf("key %s used twice", fl.Key)
		}
		keys[fl.Key] = true
	}
}

func TestRollOnMaxBytes(t *testing.T) {
	f, v := ordersFixture(t, false)
	big := strings.Repeat("x", 600)
	w := newWriter(t, Config{MaxBytes: 1000})
	r := func(i int) *cdc.Record {
		return f.rec(fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ORDER_ID":%d,"STATUS":"%s"}}`, i, big))
	}
	if files := mustAppend(t, w, v, r(1), Source{Partition: "p0", Offset: 1}); len(files) != 0 {
		t.Fatalf("one 600-byte row rolled a 1000-byte buffer")
	}
	if b := w.BufferedBytes(); b < 600 || b >= 1000 {
		t.Errorf("BufferedBytes = %d after a 600-byte value", b)
	}
	files := mustAppend(t, w, v, r(2), Source{Partition: "p0", Offset: 2})
	if len(files) != 1 || files[0].Reason != "bytes" || files[0].Rows != 2 {
		t.Fatalf("second row: %d files %+v", len(files), files)
	}
	if w.BufferedBytes() != 0 {
		t.Errorf("BufferedBytes after the roll = %d", w.BufferedBytes())
	}
	if p := readParquet(t, files[0].Data); p.rows() != 2 || len(p.strings("STATUS")[1]) != 600 {
		t.Errorf("rolled file: %d rows", p.rows())
	}
}

func TestRollOnMaxAge(t *testing.T) {
	f, v := ordersFixture(t, false)
	t1 := time.Date(2026, 7, 13, 12, 0, 0, 0, time.UTC)
	now := t1
	w := newWriter(t, Config{MaxAge: time.Minute, Now: func() time.Time { return now }})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: 1})

	other := f.meta(`{"op_type":"OBJECT_METADATA","qual_table":"SALES.ITEMS","columns":{"ID":{"type":"number"}}}`)
	now = t1.Add(30 * time.Second)
	mustAppend(t, w, other, f.rec(`{"qual_table":"SALES.ITEMS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ID":1}}`), Source{Partition: "p0", Offset: 2})

	now = t1.Add(59 * time.Second)
	if files, err := w.FlushDue(); err != nil || len(files) != 0 {
		t.Fatalf("at 59s: %d files, %v", len(files), err)
	}
	// More rows do not make a buffer younger.
	mustAppend(t, w, v, f.rec(update1001), Source{Partition: "p0", Offset: 3})
	now = t1.Add(60 * time.Second)
	files, err := w.FlushDue()
	if err != nil || len(files) != 1 {
		t.Fatalf("at 60s: %d files, %v", len(files), err)
	}
	if files[0].Table != "SALES.ORDERS" || files[0].Reason != "age" || files[0].Rows != 2 {
		t.Errorf("aged file %+v", files[0])
	}
	now = t1.Add(90 * time.Second)
	files, err = w.FlushDue()
	if err != nil || len(files) != 1 || files[0].Table != "SALES.ITEMS" {
		t.Fatalf("at 90s: %+v, %v", files, err)
	}
	if files, _ := w.FlushAll("shutdown"); len(files) != 0 {
		t.Errorf("%d files left", len(files))
	}
}

func TestFlushTableAndLargest(t *testing.T) {
	f, v := ordersFixture(t, false)
	items := f.meta(`{"op_type":"OBJECT_METADATA","qual_table":"SALES.ITEMS","columns":{"ID":{"type":"number"},"NOTE":{"type":"string"}}}`)
	w := newWriter(t, Config{})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: 1})
	mustAppend(t, w, v, f.rec(insert1002), Source{Partition: "p1", Offset: 1})
	mustAppend(t, w, items, f.rec(`{"qual_table":"SALES.ITEMS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ID":1,"NOTE":"`+strings.Repeat("n", 5000)+`"}}`), Source{Partition: "p0", Offset: 2})

	files, err := w.FlushTable("SALES.ORDERS", "ddl")
	if err != nil || len(files) != 2 {
		t.Fatalf("FlushTable: %d files, %v", len(files), err)
	}
	for _, fl := range files {
		if fl.Table != "SALES.ORDERS" || fl.Reason != "ddl" {
			t.Errorf("file %+v", fl)
		}
	}
	if files[0].SourcePartition == files[1].SourcePartition || files[0].Key == files[1].Key {
		t.Errorf("two source partitions share a file: %q %q", files[0].Key, files[1].Key)
	}

	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: 3})
	files, err = w.FlushLargest(1000, 0, 0, "memory")
	if err != nil || len(files) != 1 || files[0].Table != "SALES.ITEMS" || files[0].Reason != "memory" {
		t.Fatalf("FlushLargest: %+v, %v", files, err)
	}
	if w.BufferedBytes() > 1000 || w.BufferedBytes() <= 0 {
		t.Errorf("BufferedBytes after FlushLargest = %d", w.BufferedBytes())
	}
	// Below the target already, but a file is asked for: the largest goes.
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: 4})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p1", Offset: 5})
	files, err = w.FlushLargest(1<<40, 0, 1, "budget")
	if err != nil || len(files) != 1 || files[0].Table != "SALES.ORDERS" || files[0].SourcePartition != "p0" {
		t.Fatalf("FlushLargest with a file asked for: %+v, %v", files, err)
	}
	if files := mustFlushAll(t, w); len(files) != 1 || files[0].Table != "SALES.ORDERS" || files[0].SourcePartition != "p1" {
		t.Errorf("left: %+v", files)
	}

	// Files asked for past the target come only while they hold half of
	// what the first did.
	for i := range 10 {
		mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: int64(10 + i)})
	}
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p1", Offset: 30})
	files, err = w.FlushLargest(1<<40, 0, 2, "budget")
	if err != nil || len(files) != 1 || files[0].SourcePartition != "p0" {
		t.Fatalf("FlushLargest past the target: %+v, %v", files, err)
	}
	if w.OpenBuffers() != 1 {
		t.Errorf("%d buffers open, want the small one", w.OpenBuffers())
	}
}

func TestReplacedVersionClosesProvisionalFile(t *testing.T) {
	f, v1 := ordersFixture(t, false)
	w := newWriter(t, Config{})
	mustAppend(t, w, v1, f.rec(insert1001), Source{Partition: "p0", Offset: 1})

	ev, err := f.cat.ApplyDDL("SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)", "ddl-pos", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	v2 := ev.Version
	mustAppend(t, w, v2, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:05:00Z","after":{"ORDER_ID":1,"STATUS":"A","CUSTOMER_TIER":"GOLD"}}`), Source{Partition: "p0", Offset: 3})

	// The refresh disagrees with the DDL: same number, new schema.
	v2b := f.meta(`{"op_type":"OBJECT_METADATA","qual_table":"SALES.ORDERS","columns":{
	  "ORDER_ID":{"type":"number","null":false,"key":true},"STATUS":{"type":"string","null":false},
	  "TOTAL_AMOUNT":{"type":"number","null":true},"CUSTOMER_TIER":{"type":"string","null":true},
	  "EXTRA":{"type":"number","null":true}}}`)
	if v2b == v2 || v2b.Number != 2 {
		t.Fatalf("expected a replaced version 2, got %d (same=%v)", v2b.Number, v2b == v2)
	}
	files := mustAppend(t, w, v2b, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:06:00Z","after":{"ORDER_ID":2,"STATUS":"B","EXTRA":3}}`), Source{Partition: "p0", Offset: 4})
	if len(files) != 1 || files[0].Reason != "ddl" || files[0].Version != 2 || files[0].Rows != 1 {
		t.Fatalf("appending under the replaced schema: %+v", files)
	}
	pOld := readParquet(t, files[0].Data)
	if pOld.schema.HasField("EXTRA") || pOld.strings("CUSTOMER_TIER")[0] != "GOLD" {
		t.Errorf("provisional file schema %v", pOld.schema)
	}
	rest := mustFlushAll(t, w)
	if len(rest) != 2 {
		t.Fatalf("%d files left, want v1 and v2", len(rest))
	}
	var newest *File
	for _, fl := range rest {
		if fl.Version == 2 {
			newest = fl
		}
	}
	if newest == nil || newest.Key == files[0].Key || !strings.Contains(newest.Key, "/schema_version=2/") {
		t.Fatalf("v2 file %+v", newest)
	}
	pNew := readParquet(t, newest.Data)
	if extra, ok := pNew.col("EXTRA").(*array.Float64); !ok || extra.Value(0) != 3 {
		t.Error("replaced schema not used for the new file")
	}
}

func TestCompletedVersionKeepsFileOpen(t *testing.T) {
	f, _ := ordersFixture(t, false)
	w := newWriter(t, Config{})
	ev, err := f.cat.ApplyDDL("SALES.ORDERS", "ALTER TABLE SALES.ORDERS ADD CUSTOMER_TIER VARCHAR2(20)", "ddl-pos", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	v2 := ev.Version
	mustAppend(t, w, v2, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:05:00Z","after":{"ORDER_ID":1,"STATUS":"A","CUSTOMER_TIER":"GOLD"}}`), Source{Partition: "p0", Offset: 3})
	same := f.meta(`{"op_type":"OBJECT_METADATA","qual_table":"SALES.ORDERS","columns":{
	  "ORDER_ID":{"type":"number","null":false,"key":true},"STATUS":{"type":"string","null":false},
	  "TOTAL_AMOUNT":{"type":"number","null":true},"CUSTOMER_TIER":{"type":"string","null":true}}}`)
	if same != v2 {
		t.Fatal("refresh did not complete the provisional version")
	}
	if files := mustAppend(t, w, same, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:06:00Z","after":{"ORDER_ID":2,"STATUS":"B"}}`), Source{Partition: "p0", Offset: 4}); len(files) != 0 {
		t.Errorf("completion closed the open file: %+v", files)
	}
	if files := mustFlushAll(t, w); len(files) != 1 || files[0].Rows != 2 {
		t.Errorf("files %+v", files)
	}
}

func TestCompression(t *testing.T) {
	for _, c := range []struct {
		name string
		want compress.Compression
	}{
		{"", compress.Codecs.Zstd},
		{"zstd", compress.Codecs.Zstd},
		{"snappy", compress.Codecs.Snappy},
		{"gzip", compress.Codecs.Gzip},
		{"none", compress.Codecs.Uncompressed},
	} {
		got, err := ParseCompression(c.name)
		if err != nil || got != c.want {
			t.Errorf("ParseCompression(%q) = %v, %v; want %v", c.name, got, err, c.want)
		}
		f, v := ordersFixture(t, true)
		w := newWriter(t, Config{Compression: c.name})
		mustAppend(t, w, v, f.rec(update1001), Source{Partition: "p0"})
		p := readParquet(t, mustFlushAll(t, w)[0].Data)
		md := p.rdr.MetaData()
		for rg := 0; rg < md.NumRowGroups(); rg++ {
			for i := 0; i < md.Schema.NumColumns(); i++ {
				cc, err := md.RowGroup(rg).ColumnChunk(i)
				if err != nil {
					t.Fatal(err)
				}
				if cc.Compression() != c.want {
					t.Errorf("%q: column %s compressed with %v, want %v", c.name, md.Schema.Column(i).Path(), cc.Compression(), c.want)
				}
			}
		}
	}
	for _, bad := range []string{"lz5", "ZSTD ", "brotli9", "snapy"} {
		if _, err := ParseCompression(bad); err == nil {
			t.Errorf("ParseCompression(%q) accepted", bad)
		}
		if _, err := New(Config{Compression: bad}); err == nil {
			t.Errorf("New with compression %q accepted", bad)
		}
	}
}

func TestRowGroups(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{RowGroupRows: 2})
	for i := 0; i < 5; i++ {
		mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: int64(i)})
	}
	p := readParquet(t, mustFlushAll(t, w)[0].Data)
	if p.rdr.NumRowGroups() != 3 || p.rows() != 5 {
		t.Errorf("%d row groups, %d rows; want 3, 5", p.rdr.NumRowGroups(), p.rows())
	}
}

func TestRejectedRecordAppendsNothing(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{MaxRows: 2})
	// A reject as the first record of a buffer opens nothing.
	for _, c := range []struct {
		text   string
		reason cdc.Reason
	}{
		{`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ORDER_ID":1,"STATUS":"A","TOTAL_AMOUNT":1.234}}`, cdc.ReasonValueMismatch},
		{`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ORDER_ID":"one","STATUS":"A"}}`, cdc.ReasonValueMismatch},
		{`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ORDER_ID":9223372036854775808,"STATUS":"A"}}`, cdc.ReasonValueMismatch},
		{`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ORDER_ID":1,"STATUS":"A","NEW_COL":5}}`, cdc.ReasonUnknownColumn},
		{`{"qual_table":"SALES.ORDERS","op_type":"DELETE","op_ts":"2026-07-13T04:00:00Z","before":{"ORDER_ID":1.5}}`, cdc.ReasonValueMismatch},
	} {
		files, err := w.Append(v, f.rec(c.text), Source{Partition: "p0", Offset: 1})
		re, ok := cdc.AsReject(err)
		if !ok || re.Reason != c.reason {
			t.Errorf("%s: %v, want %s", c.text, err, c.reason)
		}
		if len(files) != 0 || w.BufferedBytes() != 0 {
			t.Errorf("%s: files %d buffered %d", c.text, len(files), w.BufferedBytes())
		}
	}
	if files := mustFlushAll(t, w); len(files) != 0 {
		t.Fatalf("rejects opened %d files", len(files))
	}

	// A reject between good records leaves no row and no half row; it does
	// not count towards MaxRows either.
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: 10})
	before := w.BufferedBytes()
	_, err := w.Append(v, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ORDER_ID":7,"STATUS":"OK","TOTAL_AMOUNT":"lots"}}`), Source{Partition: "p0", Offset: 11})
	if re, ok := cdc.AsReject(err); !ok || re.Reason != cdc.ReasonValueMismatch {
		t.Fatalf("mismatch: %v", err)
	}
	var rerr *cdc.RejectError
	if !errors.As(err, &rerr) {
		t.Fatal("not a *cdc.RejectError")
	}
	if w.BufferedBytes() != before {
		t.Errorf("BufferedBytes %d → %d after a reject", before, w.BufferedBytes())
	}
	files := mustAppend(t, w, v, f.rec(insert1002), Source{Partition: "p0", Offset: 12})
	if len(files) != 1 || files[0].Rows != 2 || files[0].LastOffset != 12 {
		t.Fatalf("files %+v", files)
	}
	p := readParquet(t, files[0].Data)
	ids := p.col("ORDER_ID").(*array.Int64)
	if p.rows() != 2 || ids.Value(0) != 1001 || ids.Value(1) != 1002 {
		t.Errorf("rows %d ids %v", p.rows(), ids)
	}
	// Every column has exactly two values: no half-appended row anywhere.
	for i := 0; i < int(p.tbl.NumCols()); i++ {
		if n := p.tbl.Column(i).Len(); n != 2 {
			t.Errorf("column %s has %d values", p.tbl.Column(i).Name(), n)
		}
	}
}

func TestCheckedAllocatorEndsAtZero(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	f, v := ordersFixture(t, true)
	w := newWriter(t, Config{Allocator: mem, MaxRows: 3, RowGroupRows: 2})

	// Appends (incl. before images, absent lists, decimals, strings).
	for i, text := range []string{insert1001, update1001, delete1001, insert1002, update1001} {
		files, err := w.Append(v, f.rec(text), Source{Partition: "p0", Offset: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		for _, fl := range files {
			readParquet(t, fl.Data)
		}
	}
	if mem.CurrentAlloc() == 0 {
		t.Fatal("the writer does not allocate from Config.Allocator")
	}
	// Rejects.
	for _, text := range []string{
		`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ORDER_ID":1,"STATUS":"A","TOTAL_AMOUNT":1.234}}`,
		`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","after":{"ORDER_ID":1,"NOPE":1}}`,
	} {
		if _, err := w.Append(v, f.rec(text), Source{Partition: "p0", Offset: 9}); err == nil {
			t.Fatal("reject expected")
		}
	}
	// A flush of everything.
	files, err := w.FlushAll("shutdown")
	if err != nil || len(files) == 0 {
		t.Fatalf("FlushAll: %d, %v", len(files), err)
	}
	mem.AssertSize(t, 0)

	// More appends across two dates, then Close without flushing.
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: 20})
	mustAppend(t, w, v, f.rec(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-20T00:00:00Z","after":{"ORDER_ID":3,"STATUS":"C"}}`), Source{Partition: "p1", Offset: 21})
	if mem.CurrentAlloc() == 0 {
		t.Fatal("nothing buffered")
	}
	w.Close()
	if w.BufferedBytes() != 0 {
		t.Errorf("BufferedBytes after Close = %d", w.BufferedBytes())
	}
	if files := mustFlushAll(t, w); len(files) != 0 {
		t.Errorf("Close left %d buffers", len(files))
	}
	mem.AssertSize(t, 0)
}

func TestCheckedAllocatorWithRollsAndAge(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	f, v := ordersFixture(t, false)
	now := time.Date(2026, 7, 13, 0, 0, 0, 0, time.UTC)
	w := newWriter(t, Config{Allocator: mem, MaxBytes: 300, MaxAge: time.Second, Now: func() time.Time { return now }, Compression: "snappy"})
	for i := 0; i < 20; i++ {
		if _, err := w.Append(v, f.rec(insert1001), Source{Partition: "p0", Offset: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Hour)
	if _, err := w.FlushDue(); err != nil {
		t.Fatal(err)
	}
	mem.AssertSize(t, 0)
	w.Close()
	mem.AssertSize(t, 0)
}

func TestNewDefaults(t *testing.T) {
	w := newWriter(t, Config{})
	if w.cfg.MaxRows <= 0 || w.cfg.MaxBytes <= 0 || w.cfg.MaxAge <= 0 || w.cfg.RowGroupRows <= 0 ||
		w.cfg.Granularity != partition.Daily || w.cfg.Allocator == nil || w.cfg.Now == nil {
		t.Errorf("defaults not filled: %+v", w.cfg)
	}
	if w.codec != compress.Codecs.Zstd {
		t.Errorf("default codec %v, want zstd", w.codec)
	}
}

// A decoder's DML record shares the memory of the data it was decoded from
// (xid, pos, values), and the pipeline reuses that memory for the next
// record: everything the writer keeps must be its own copy.
func TestRecordMemoryIsNotKeptPastAppend(t *testing.T) {
	for _, parts := range []int{1, stageAbove + 8} {
		t.Run(fmt.Sprintf("%d buffers", parts), func(t *testing.T) {
			f, v := ordersFixture(t, false)
			w := newWriter(t, Config{MaxRows: 7})
			var data []byte // one buffer for every record, as the pipeline's
			var rec cdc.Record
			const n = 60
			var files []*File
			for i := range n {
				data = fmt.Appendf(data[:0], `{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","xid":"tx-%d","pos":"%0*d","after":{"ORDER_ID":%d,"STATUS":"S-%d"}}`,
					i, 3+i%5, i, i, i)
				if err := f.dec.Decode(data, &rec); err != nil {
					t.Fatal(err)
				}
				files = append(files, mustAppend(t, w, v, &rec, Source{Partition: fmt.Sprintf("p%02d", i%parts), Offset: int64(i)})...)
				for j := range data {
					data[j] = 'X'
				}
			}
			files = append(files, mustFlushAll(t, w)...)
			pos := func(i int64) string { return fmt.Sprintf("%0*d", 3+int(i)%5, i) }
			rows := 0
			for _, fl := range files {
				p := readParquet(t, fl.Data)
				ids := p.col("ORDER_ID").(*array.Int64)
				xids, poss, statuses := p.strings("xid"), p.strings("pos"), p.strings("STATUS")
				for r := range ids.Len() {
					id := ids.Value(r)
					if xids[r] != fmt.Sprintf("tx-%d", id) || poss[r] != pos(id) || statuses[r] != fmt.Sprintf("S-%d", id) {
						t.Errorf("row %d: xid %q pos %q STATUS %q", id, xids[r], poss[r], statuses[r])
					}
				}
				rows += ids.Len()
				if got, want := p.kv("lakehouse.first_pos"), pos(fl.FirstOffset); got != want {
					t.Errorf("%s: first_pos %q, want %q", fl.Key, got, want)
				}
				if got, want := p.kv("lakehouse.last_pos"), pos(fl.LastOffset); got != want {
					t.Errorf("%s: last_pos %q, want %q", fl.Key, got, want)
				}
			}
			if rows != n {
				t.Errorf("%d rows written, want %d", rows, n)
			}
		})
	}
}

// Qlik masks share the record's memory too, and the writer remembers the
// last ones it parsed: the memory is reused for the next message, so what
// it remembers must be its own copy, and a mask that changes must be
// parsed again.
func TestQlikMasksAreNotKeptPastAppend(t *testing.T) {
	dec := cdc.NewQlik(cdc.QlikOptions{})
	cat := arrowschema.NewCatalog(arrowschema.Options{})
	var rec cdc.Record
	md := `{"lineage":{"schema":"S","table":"T","tableVersion":1,"timestamp":"2026-07-13T03:00:00.000"},"tableStructure":{"tableColumns":` +
		`{"A":{"ordinal":1,"type":"INT8"},"B":{"ordinal":2,"type":"STRING"},"C":{"ordinal":3,"type":"STRING"}}}}`
	if err := dec.Decode([]byte(md), &rec); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.ApplyMetadata(rec.Metadata, rec.Pos, rec.OpTS); err != nil {
		t.Fatal(err)
	}
	v := cat.Current("S.T")
	// columnMask, changeMask, the values sent for B and C (Qlik sends null
	// for a column it could not replicate), and what they mean: absent
	// and changed columns. A value sent for a column the mask leaves out
	// is kept (the last case).
	masks := []struct{ column, change, b, c, absent, changed string }{
		{"7", "7", `"b"`, `"c"`, "", "A,B,C"}, {"3", "2", `"b"`, "null", "C", "B"}, {"3", "2", `"b"`, "null", "C", "B"},
		{"5", "4", "null", `"c"`, "B", "C"}, {"7", "1", `"b"`, `"c"`, "", "A"}, {"3", "2", `"b"`, `"c"`, "", "B"},
	}
	w := newWriter(t, Config{})
	var data []byte
	const n = 42
	for i := range n {
		m := masks[i%len(masks)]
		data = fmt.Appendf(data[:0], `{"schema":"S","table":"T","data":{"A":"%d","B":%s,"C":%s},"headers":{"operation":"INSERT",`+
			`"timestamp":"2026-07-13T04:00:00","streamPosition":"p%d","columnMask":"%s","changeMask":"%s"}}`, i, m.b, m.c, i, m.column, m.change)
		if err := dec.Decode(data, &rec); err != nil {
			t.Fatal(err)
		}
		mustAppend(t, w, v, &rec, Source{Partition: "p0", Offset: int64(i)})
		for j := range data {
			data[j] = '0' // still hexadecimal: a kept mask would silently change
		}
	}
	files := mustFlushAll(t, w)
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	p := readParquet(t, files[0].Data)
	ids := p.col("A").(*array.Int64)
	lists := func(name string) []string {
		l := p.col(name).(*array.List)
		vals := l.ListValues().(*array.String)
		out := make([]string, l.Len())
		for r := range l.Len() {
			var names []string
			start, end := l.ValueOffsets(r)
			for k := start; k < end; k++ {
				names = append(names, vals.Value(int(k)))
			}
			out[r] = strings.Join(names, ",")
		}
		return out
	}
	absent, changed := lists("absent_columns"), lists("changed_columns")
	for r := range ids.Len() {
		m := masks[int(ids.Value(r))%len(masks)]
		if absent[r] != m.absent || changed[r] != m.changed {
			t.Errorf("row %d: absent %q changed %q, want %q and %q", ids.Value(r), absent[r], changed[r], m.absent, m.changed)
		}
	}
	if ids.Len() != n {
		t.Errorf("%d rows, want %d", ids.Len(), n)
	}
}

// A table's records alternating between dates and partitions each reach
// their own buffer, and a buffer flushed between two records of its key
// is not appended to again.
func TestInterleavedKeysOfOneTable(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{})
	// Records come in pairs of one key; the keys go round two dates and
	// two partitions.
	day := func(id int64) int { return 13 + int(id/2%2) }
	part := func(id int64) string { return fmt.Sprintf("p%d", id/4%2) }
	var files []*File
	for i := range int64(16) {
		r := f.rec(fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-%dT04:00:00Z","after":{"ORDER_ID":%d,"STATUS":"S"}}`, day(i), i))
		files = append(files, mustAppend(t, w, v, r, Source{Partition: part(i), Offset: i})...)
		if i == 8 { // between the two records of a pair
			got, err := w.FlushTable("SALES.ORDERS", "test")
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, got...)
		}
	}
	files = append(files, mustFlushAll(t, w)...)
	var want, got []string
	for i := range int64(16) {
		want = append(want, fmt.Sprintf("%d in dt=2026-07-%d of %s", i, day(i), part(i)))
	}
	for _, fl := range files {
		for _, id := range readParquet(t, fl.Data).col("ORDER_ID").(*array.Int64).Int64Values() {
			dt := fl.Key[strings.Index(fl.Key, "dt="):][:len("dt=2026-07-13")]
			got = append(got, fmt.Sprintf("%d in %s of %s", id, dt, fl.SourcePartition))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%v\nwant\n%v", got, want)
	}
	// Four keys, each with records before the flush and after it.
	if len(files) != 8 {
		t.Errorf("%d files, want 8", len(files))
	}
}

// The footer's created_by is in the form parquet-mr parses (its
// VersionParser's pattern), naming this application with a version.
func TestCreatedByParsesAsParquetMrExpects(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
	got := readParquet(t, mustFlushAll(t, w)[0].Data).rdr.MetaData().GetCreatedBy()
	parquetMr := regexp.MustCompile(`^(.*?)\s+version\s*(?:([^(]*?)\s*(?:\(\s*build\s*([^)]*?)\s*\))?)?$`)
	if m := parquetMr.FindStringSubmatch(got); m == nil || m[1] != "lakehouse-exporter" || m[2] == "" {
		t.Errorf("created_by %q: parquet-mr reads it as %q", got, m)
	}
}

// TestFileSchemaGivesFieldIDs: Config.FileSchema is asked once per
// version, before its first file, and the metadata it adds (an Iceberg
// table's field IDs) is in every file of the version, from both
// encoders; an error fails the flush.
func TestFileSchemaGivesFieldIDs(t *testing.T) {
	for _, enc := range []string{EncoderLean, EncoderArrow} {
		t.Run(enc, func(t *testing.T) {
			f, v := ordersFixture(t, false)
			asked := 0
			fail := true
			w := newWriter(t, Config{Encoder: enc, FileSchema: func(got *arrowschema.Version) (*arrow.Schema, error) {
				if fail {
					fail = false
					return nil, errors.New("catalog down")
				}
				asked++
				fields := got.Schema.Fields()
				for i := range fields {
					fields[i].Metadata = arrow.NewMetadata(append(fields[i].Metadata.Keys(), "PARQUET:field_id"),
						append(fields[i].Metadata.Values(), strconv.Itoa(100+i)))
				}
				md := got.Schema.Metadata()
				return arrow.NewSchema(fields, &md), nil
			}})
			mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
			if _, err := w.FlushAll("shutdown"); err == nil || !strings.Contains(err.Error(), "catalog down") {
				t.Fatalf("flush with FileSchema failing: %v", err)
			}
			for i := range 2 {
				mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: int64(i + 1)})
				p := readParquet(t, mustFlushAll(t, w)[0].Data)
				root := p.rdr.MetaData().Schema.Root()
				for j := 0; j < root.NumFields(); j++ {
					if got := root.Field(j).FieldID(); got != int32(100+j) {
						t.Errorf("file %d column %s: field id %d, want %d", i, root.Field(j).Name(), got, 100+j)
					}
				}
			}
			if asked != 1 {
				t.Errorf("FileSchema asked %d times after its failure, want once", asked)
			}
		})
	}
}

// TestFileSchemaAheadHearsOfAVersionsFirstRow: Config.FileSchemaAhead
// hears of a version once, at its first row, before the version's first
// file is flushed (that is when FileSchema is asked), and again only for
// another version.
func TestFileSchemaAheadHearsOfAVersionsFirstRow(t *testing.T) {
	f, v := ordersFixture(t, false)
	_, other := ordersFixture(t, false)
	var heard []*arrowschema.Version
	asked := 0
	w := newWriter(t, Config{
		FileSchemaAhead: func(got *arrowschema.Version) { heard = append(heard, got) },
		FileSchema: func(got *arrowschema.Version) (*arrow.Schema, error) {
			asked++
			return got.Schema, nil
		},
	})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
	if len(heard) != 1 || heard[0] != v || asked != 0 {
		t.Fatalf("after the first row: heard of %d versions (the row's: %v), FileSchema asked %d times; want the row's version, before any file",
			len(heard), len(heard) > 0 && heard[0] == v, asked)
	}
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p1", Offset: 1}) // another buffer of the version
	mustFlushAll(t, w)
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0", Offset: 2})
	mustAppend(t, w, other, f.rec(insert1001), Source{Partition: "p0", Offset: 3})
	if len(heard) != 2 || heard[1] != other {
		t.Errorf("heard of %d versions, want each version once", len(heard))
	}
}

// TestForgetIdleVersions: the converters of versions without an open
// buffer go (a pipeline that rebuilds its catalogs at every rebalance
// made new versions each time, and kept every old one's); those of a
// version still being written stay.
func TestForgetIdleVersions(t *testing.T) {
	f, v := ordersFixture(t, false)
	_, other := ordersFixture(t, false)
	w := newWriter(t, Config{})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
	mustFlushAll(t, w)
	mustAppend(t, w, other, f.rec(insert1001), Source{Partition: "p1"})
	if len(w.converters) != 2 {
		t.Fatalf("%d converters, want one per version written", len(w.converters))
	}
	w.ForgetIdleVersions()
	if len(w.converters) != 1 || w.converters[other] == nil {
		t.Errorf("after ForgetIdleVersions: %d converters (open version's kept: %v), want only the open version's", len(w.converters), w.converters[other] != nil)
	}
	if files := mustFlushAll(t, w); len(files) != 1 {
		t.Errorf("%d files flushed, want the open buffer's", len(files))
	}
}
