package writer

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A file of 2,000 orders: ORDER_ID, pos and op_ts never repeat, STATUS and
// op_type take three values. Only the repeating columns should carry a
// dictionary page, and every value must read back unchanged either way.
func TestDictionaryOnlyForRepeatingColumns(t *testing.T) {
	f, v := ordersFixture(t, true)
	w := newWriter(t, Config{})
	statuses := []string{"NEW", "APPROVED", "SHIPPED"}
	const n = 2000
	for i := range n {
		rec := fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:%02d:%02d.%06dZ","xid":"x","pos":"p-%08d","after":{"ORDER_ID":%d,"STATUS":%q,"TOTAL_AMOUNT":%d.25}}`,
			i/60%60, i%60, i, i, 5000+i, statuses[i%3], i)
		mustAppend(t, w, v, f.rec(rec), Source{Partition: "p0", Offset: int64(i)})
	}
	p := readParquet(t, mustFlushAll(t, w)[0].Data)
	if p.rows() != n {
		t.Fatalf("%d rows, want %d", p.rows(), n)
	}
	md := p.rdr.MetaData()
	wantDict := map[string]bool{"ORDER_ID": false, "pos": false, "op_ts": false, "TOTAL_AMOUNT": false, "src_offset": false,
		"STATUS": true, "op_type": true, "xid": true, "src_partition": true}
	for name, want := range wantDict {
		i := md.Schema.ColumnIndexByName(name)
		if i < 0 {
			t.Fatalf("no column %s", name)
		}
		cc, err := md.RowGroup(0).ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if got := cc.HasDictionaryPage(); got != want {
			t.Errorf("column %s: dictionary page %v, want %v", name, got, want)
		}
	}
	ids := p.col("ORDER_ID")
	status := p.strings("STATUS")
	pos := p.strings("pos")
	for i := range n {
		if got := ids.ValueStr(i); got != fmt.Sprint(5000+i) {
			t.Fatalf("row %d: ORDER_ID %s, want %d", i, got, 5000+i)
		}
		if status[i] != statuses[i%3] || pos[i] != fmt.Sprintf("p-%08d", i) {
			t.Fatalf("row %d: STATUS %s pos %s", i, status[i], pos[i])
		}
	}
}

// Columns of a few thousand values in a file of many more rows keep
// their dictionary: their first values are nearly all different (64 drawn
// from 3,000 rarely repeat), but the chunk repeats each value about seven
// times. Judged by the share of distinct values among the first ones,
// STATUS and ORDER_ID were written plain, the file half again as large.
// pos, unique, is still written plain.
func TestDictionaryKeptForColumnsOfThousandsOfValues(t *testing.T) {
	f, v := ordersFixture(t, true)
	w := newWriter(t, Config{})
	r := rand.New(rand.NewPCG(3, 4))
	const n, distinct = 20000, 3000
	status := make([]string, n)
	for i := range n {
		k := r.IntN(distinct)
		status[i] = fmt.Sprintf("status %08x", uint32(k)*2654435761)
		rec := fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00.%06dZ","xid":"x","pos":"p-%08d","after":{"ORDER_ID":%d,"STATUS":%q,"TOTAL_AMOUNT":1.25}}`,
			i%1000000, i, 100000+k, status[i])
		mustAppend(t, w, v, f.rec(rec), Source{Partition: "p0", Offset: int64(i)})
	}
	p := readParquet(t, mustFlushAll(t, w)[0].Data)
	md := p.rdr.MetaData()
	for name, want := range map[string]bool{"STATUS": true, "ORDER_ID": true, "pos": false} {
		cc, err := md.RowGroup(0).ColumnChunk(md.Schema.ColumnIndexByName(name))
		if err != nil {
			t.Fatal(err)
		}
		if got := cc.HasDictionaryPage(); got != want {
			t.Errorf("column %s: dictionary page %v, want %v", name, got, want)
		}
	}
	got := p.strings("STATUS")
	for i := range n {
		if got[i] != status[i] {
			t.Fatalf("row %d: STATUS %q, want %q", i, got[i], status[i])
		}
	}
}

// Small files keep the writer's default: the sample would say nothing.
func TestDictionaryKeptForSmallFiles(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{})
	mustAppend(t, w, v, f.rec(insert1001), Source{Partition: "p0"})
	mustAppend(t, w, v, f.rec(insert1002), Source{Partition: "p0", Offset: 1})
	p := readParquet(t, mustFlushAll(t, w)[0].Data)
	md := p.rdr.MetaData()
	cc, err := md.RowGroup(0).ColumnChunk(md.Schema.ColumnIndexByName("pos"))
	if err != nil {
		t.Fatal(err)
	}
	if !cc.HasDictionaryPage() {
		t.Error("a two-row file lost its dictionary")
	}
}

// The level reaches the codec: zstd's best level writes a smaller file
// than its fastest on the same rows.
func TestCompressionLevelReachesTheCodec(t *testing.T) {
	size := func(level int) int {
		f, v := ordersFixture(t, false)
		w := newWriter(t, Config{CompressionLevel: level})
		for i := range 3000 {
			rec := fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"UPDATE","op_ts":"2026-07-13T04:00:00Z","xid":"x%d","pos":"position-%08d","after":{"ORDER_ID":%d,"STATUS":"status text %d","TOTAL_AMOUNT":%d.25}}`,
				i/7, i*7919%100000, i*31, i%97, i*13)
			mustAppend(t, w, v, f.rec(rec), Source{Partition: "p0", Offset: int64(i)})
		}
		return len(mustFlushAll(t, w)[0].Data)
	}
	fast, best := size(1), size(19)
	if best >= fast {
		t.Errorf("zstd level 19 wrote %d bytes, level 1 %d: the level did not reach the codec", best, fast)
	}
}

// --int-encoding reaches the pages of every 64-bit column without a
// dictionary, on both encoders, and nothing else.
func TestIntEncodingReachesTheInt64Columns(t *testing.T) {
	encodings := func(encoder, ints string) map[string]string {
		f, v := ordersFixture(t, false)
		w := newWriter(t, Config{Encoder: encoder, IntEncoding: ints})
		for i := range 3000 {
			rec := fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"UPDATE","op_ts":"2026-07-13T04:00:%02d.%06dZ","xid":"x%d","pos":"position-%08d","after":{"ORDER_ID":%d,"STATUS":"status text %d","TOTAL_AMOUNT":%d.25}}`,
				i/1000, i, i/7, i, i*31, i%97, i*13)
			mustAppend(t, w, v, f.rec(rec), Source{Partition: "p0", Offset: int64(i)})
		}
		md := readParquet(t, mustFlushAll(t, w)[0].Data).rdr.MetaData()
		out := map[string]string{}
		for c := range md.Schema.NumColumns() {
			cc, _ := md.RowGroup(0).ColumnChunk(c)
			out[cc.PathInSchema().String()] = fmt.Sprint(cc.Encodings())
		}
		return out
	}
	for _, encoder := range []string{EncoderLean, EncoderArrow} {
		plain, delta := encodings(encoder, IntEncodingPlain), encodings(encoder, "")
		for _, col := range []string{"ORDER_ID", "op_ts", "src_offset"} {
			if !strings.Contains(delta[col], "DELTA_BINARY_PACKED") || strings.Contains(plain[col], "DELTA") {
				t.Errorf("%s encoder, %s: %s by default, %s with plain", encoder, col, delta[col], plain[col])
			}
		}
		for col, enc := range delta {
			if strings.Contains(enc, "DELTA") && !slices.Contains([]string{"ORDER_ID", "op_ts", "src_offset"}, col) {
				t.Errorf("%s encoder: %s is %s", encoder, col, enc)
			}
		}
	}
	if _, err := New(Config{IntEncoding: "zigzag"}); err == nil {
		t.Error("an unknown integer encoding was accepted")
	}
}

// growthCounter counts the reallocations that grow a buffer.
type growthCounter struct {
	memory.Allocator
	grows int
}

func (g *growthCounter) Reallocate(size int, b []byte) []byte {
	if size > cap(b) {
		g.grows++
	}
	return g.Allocator.Reallocate(size, b)
}

// The second file of a table version reserves what the first held (when
// the first filled up), so its builders do not grow row by row; its rows
// are still all there.
func TestNextFileReservesWhatTheLastHeld(t *testing.T) {
	f, v := ordersFixture(t, true)
	mem := &growthCounter{Allocator: memory.NewGoAllocator()}
	w := newWriter(t, Config{Allocator: mem, MaxRows: 1000})
	fill := func(from int) []*File {
		var files []*File
		for i := from; i < from+1000; i++ {
			rec := fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","xid":"x%d","pos":"p-%08d","after":{"ORDER_ID":%d,"STATUS":"status %d","TOTAL_AMOUNT":%d.25}}`,
				i, i, i, i, i)
			files = append(files, mustAppend(t, w, v, f.rec(rec), Source{Partition: "p0", Offset: int64(i)})...)
		}
		return files
	}
	fill(0)
	first := mem.grows
	mem.grows = 0
	files := fill(1000)
	second := mem.grows
	if first == 0 || second > first/4 {
		t.Errorf("buffers grew %d times for the first file and %d for the second of the same size", first, second)
	}
	if len(files) != 1 {
		t.Fatalf("%d files rolled, want 1", len(files))
	}
	p := readParquet(t, files[0].Data)
	pos := p.strings("pos")
	if len(pos) != 1000 || pos[0] != "p-00001000" || pos[999] != "p-00001999" {
		t.Errorf("second file: %d rows, pos %v .. %v", len(pos), pos[0], pos[len(pos)-1])
	}

	// A file cut short (here by a commit) predicts nothing.
	mustFlushAll(t, w)
	w2 := newWriter(t, Config{Allocator: mem})
	mustAppend(t, w2, v, f.rec(insert1001), Source{Partition: "p0"})
	mustFlushAll(t, w2)
	mem.grows = 0
	before := w2.converters[v].hint
	if before != nil {
		t.Errorf("a file flushed by a commit left a size hint: %+v", before)
	}
}

// Images may list their fields in any order, and the order may change
// from one record to the next; each value lands in its own column.
func TestFieldOrderMayChangeBetweenRecords(t *testing.T) {
	f, v := ordersFixture(t, false)
	w := newWriter(t, Config{})
	for i, after := range []string{
		`{"ORDER_ID":1,"STATUS":"a","TOTAL_AMOUNT":1.5}`,
		`{"STATUS":"b","ORDER_ID":2,"TOTAL_AMOUNT":2.5}`,
		`{"TOTAL_AMOUNT":3.5,"STATUS":"c","ORDER_ID":3}`,
		`{"ORDER_ID":4,"STATUS":"d"}`,
		`{"ORDER_ID":5,"STATUS":"e","TOTAL_AMOUNT":5.5}`,
	} {
		rec := fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:00:00Z","pos":"p%d","after":%s}`, i, after)
		mustAppend(t, w, v, f.rec(rec), Source{Partition: "p0", Offset: int64(i)})
	}
	p := readParquet(t, mustFlushAll(t, w)[0].Data)
	ids, amounts := p.col("ORDER_ID"), p.col("TOTAL_AMOUNT").(*array.Decimal128)
	status := p.strings("STATUS")
	for i, want := range []string{"1 a 150", "2 b 250", "3 c 350", "4 d null", "5 e 550"} {
		cents := "null"
		if amounts.IsValid(i) {
			cents = fmt.Sprint(amounts.Value(i).LowBits()) // unscaled, scale 2
		}
		if got := ids.ValueStr(i) + " " + status[i] + " " + cents; got != want {
			t.Errorf("row %d: %s, want %s", i, got, want)
		}
	}
}

// A level the codec cannot take is refused when the writer is made, not
// by a panic in the codec later.
func TestCompressionLevelIsCheckedPerCodec(t *testing.T) {
	for _, c := range []struct {
		codec string
		level int
		ok    bool
	}{
		{"zstd", 0, true}, {"zstd", 1, true}, {"zstd", 22, true}, {"zstd", 23, false}, {"zstd", -1, false},
		{"gzip", 9, true}, {"gzip", 10, false}, {"gzip", 12, false},
		{"snappy", 0, true}, {"snappy", 3, false}, {"none", 1, false},
	} {
		_, err := New(Config{Compression: c.codec, CompressionLevel: c.level})
		if (err == nil) != c.ok {
			t.Errorf("%s level %d: error %v, want ok=%v", c.codec, c.level, err, c.ok)
		}
	}
}

// checkEncodeWeight encodes the file makeFile flushes a few times and
// checks that the least the lean encoder allocated (once the writer's
// encoder's pools have filled over the first files) stays within the
// EncodeMemoryBytes the memory budget counts for it beside its rows.
// Everything encoding allocates is counted here, also what it takes
// through the Arrow allocator, which the budget sees anyway.
func checkEncodeWeight(t *testing.T, makeFile func() *File) {
	t.Helper()
	var weight int64
	var allocated uint64
	for i := range 5 {
		f := makeFile()
		prepared(f) // the record batch, as Encode makes it first
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := f.Encode(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		weight = f.EncodeMemoryBytes()
		if a := after.TotalAlloc - before.TotalAlloc; i == 0 || a < allocated {
			allocated = a
		}
	}
	if int64(allocated) > weight {
		t.Errorf("encoding allocated %d bytes, more than the %d the budget counts", allocated, weight)
	}
	t.Logf("encoding allocated %d bytes; the budget counts %d", allocated, weight)
}

// skipAllocationsUnderRace skips a test that counts allocations: the
// race detector's sync.Pool drops the encoder's scratch at random.
// scripts/test.sh runs these tests once more without it.
func skipAllocationsUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations under the race detector are not the steady state; scripts/test.sh runs this without it")
	}
}

// A large file of the benchmark's rows.
func TestEncodeAllocatesWithinItsWeight(t *testing.T) {
	skipAllocationsUnderRace(t)
	v, recs := benchRecords(t, 50000, 16)
	// One writer, as a run has: its encoder's pools fill over the first files.
	w := newWriter(t, Config{DeferEncode: true})
	checkEncodeWeight(t, func() *File {
		for i, r := range recs {
			mustAppend(t, w, v, r, Source{Partition: "p0", Offset: int64(i)})
		}
		return mustFlushAll(t, w)[0]
	})
}

// Values that do not compress (random printable text), packed: the
// encoder's output is about the values' own size, more than half the
// file's memory (which the budget counted first).
func TestEncodeWeightCoversIncompressibleValues(t *testing.T) {
	skipAllocationsUnderRace(t)
	fx, v := ordersFixture(t, false)
	r := rand.New(rand.NewPCG(1, 2))
	recs := make([]string, 20000)
	buf := make([]byte, 400)
	for i := range recs {
		for j := range buf {
			c := byte(' ' + r.IntN(94))
			if c == '"' || c == '\\' {
				c = 'x'
			}
			buf[j] = c
		}
		recs[i] = fmt.Sprintf(`{"qual_table":"SALES.ORDERS","op_type":"INSERT","op_ts":"2026-07-13T04:01:01.123456Z","xid":"x","pos":"p%d","after":{"ORDER_ID":%d,"STATUS":"%s","TOTAL_AMOUNT":1.5}}`, i, i, buf)
	}
	w := newWriter(t, Config{DeferEncode: true, MaxPackedBytes: 1 << 30})
	checkEncodeWeight(t, func() *File {
		for p := range stageAbove + 1 { // many buffers open: the rows are packed
			mustAppend(t, w, v, fx.rec(recs[p]), Source{Partition: fmt.Sprintf("c%02d", p), Offset: int64(p)})
		}
		for i, s := range recs {
			mustAppend(t, w, v, fx.rec(s), Source{Partition: "p0", Offset: int64(i)})
		}
		var f *File
		for _, g := range mustFlushAll(t, w) {
			if g.SourcePartition == "p0" {
				f = g
			} else {
				g.Release()
			}
		}
		if f.expands == 0 {
			t.Fatal("rows not packed")
		}
		return f
	})
}

// Files of one schema share its derived Parquet schema and metadata, and
// the pipeline encodes them on several goroutines at once: run with -race.
func TestFilesOfOneSchemaEncodeConcurrently(t *testing.T) {
	v, recs := benchRecords(t, 1200, 12)
	w := newWriter(t, Config{DeferEncode: true, MaxRows: 300})
	var files []*File
	for i, r := range recs {
		fs, err := w.Append(v, r, Source{Partition: "p0", Offset: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if len(files) != 4 {
		t.Fatalf("%d files, want 4 of 300 rows", len(files))
	}
	errs := make(chan error, len(files))
	for _, f := range files {
		go func() { errs <- f.Encode() }()
	}
	for range files {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for k, f := range files {
		pos := readParquet(t, f.Data).strings("pos")
		if len(pos) != 300 {
			t.Fatalf("file %d: %d rows", k, len(pos))
		}
		for i, p := range pos {
			if want := recs[k*300+i].Pos; p != want {
				t.Fatalf("file %d row %d: pos %s, want %s", k, i, p, want)
			}
		}
	}
}

// --parquet-encoder arrow writes every file with pqarrow; the two encoders'
// files read back the same, and an unknown encoder is refused.
func TestArrowEncoderWritesTheSameRows(t *testing.T) {
	v, recs := benchRecords(t, 400, 8)
	var pos [2][]string
	for k, enc := range []string{EncoderLean, EncoderArrow} {
		w := newWriter(t, Config{Encoder: enc})
		for i, r := range recs {
			if _, err := w.Append(v, r, Source{Partition: "p0", Offset: int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		files, err := w.FlushAll("test")
		if err != nil || len(files) != 1 {
			t.Fatalf("%s: %v, %d files", enc, err, len(files))
		}
		pos[k] = readParquet(t, files[0].Data).strings("pos")
	}
	if len(pos[0]) != len(recs) || fmt.Sprint(pos[0]) != fmt.Sprint(pos[1]) {
		t.Fatalf("lean and arrow files differ: %d and %d rows", len(pos[0]), len(pos[1]))
	}
	if _, err := New(Config{Encoder: "parquet-go"}); err == nil {
		t.Fatal("an unknown encoder was accepted")
	}
}
