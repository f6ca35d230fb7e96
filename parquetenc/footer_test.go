package parquetenc

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// arrowGoFooter writes a footer with arrow-go's metadata builders, as the
// lean encoder did before it wrote its own.
func arrowGoFooter(t *testing.T, sc *schema.Schema, props *parquet.WriterProperties) func(*footerShape, []byte, []rowGroupMeta, metadata.KeyValueMetadata) []byte {
	return func(fs *footerShape, b []byte, rowGroups []rowGroupMeta, kv metadata.KeyValueMetadata) []byte {
		fmb := metadata.NewFileMetadataBuilder(sc, props, kv)
		for ordinal, rg := range rowGroups {
			rgb := fmb.AppendRowGroup()
			rgb.SetNumRows(int(rg.rows))
			for _, c := range rg.chunks {
				cb := rgb.NextColumnChunk()
				cb.SetStats(c.stats)
				encStats := metadata.EncodingStats{
					DictEncodingStats: map[parquet.Encoding]int32{},
					DataEncodingStats: map[parquet.Encoding]int32{},
				}
				hasDict := c.dictionary
				if hasDict {
					encStats.DictEncodingStats[props.DictionaryPageEncoding()] = 1
					encStats.DataEncodingStats[props.DictionaryIndexEncoding()] = c.dataPages
				} else {
					encStats.DataEncodingStats[props.EncodingFor(cb.Descr().Path())] = c.dataPages
				}
				if err := cb.Finish(metadata.ChunkMetaInfo{
					NumValues:        c.numValues,
					DictPageOffset:   c.dictPageOffset,
					IndexPageOffset:  -1,
					DataPageOffset:   c.dataPageOffset,
					CompressedSize:   c.compressed,
					UncompressedSize: c.uncompressed,
				}, hasDict, false, encStats); err != nil {
					t.Fatal(err)
				}
			}
			if err := rgb.Finish(0, int16(ordinal)); err != nil {
				t.Fatal(err)
			}
		}
		md, err := fmb.Finish()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := md.WriteTo(&buf, nil); err != nil {
			t.Fatal(err)
		}
		return append(b, buf.Bytes()...)
	}
}

// encodeLeanChecked encodes rec with the lean encoder and checks that its
// footer is byte for byte the one arrow-go's builders write.
func encodeLeanChecked(t *testing.T, sc *schema.Schema, leaves []leaf, rec arrow.RecordBatch, props *parquet.WriterProperties, kv metadata.KeyValueMetadata) []byte {
	t.Helper()
	fs, err := newFooterShape(sc, props)
	if err != nil {
		t.Fatal(err)
	}
	e := testEncoder(t)
	own, _, err := e.encodeLean(fs, leaves, rec, props, kv)
	if err != nil {
		t.Fatal(err)
	}
	// The reference is encoded serially, so the check also holds the
	// parallel chunk encoding to the serial bytes: with the default
	// workers, and with three, more than the CPUs the tests have.
	ref := &leanFile{enc: e, props: props, level: props.CompressionLevel(), rows: int(rec.NumRows()), footer: arrowGoFooter(t, sc, props), workers: 1}
	want, _, err := ref.encodeBatch(fs, leaves, rec, kv)
	if err != nil {
		t.Fatal(err)
	}
	three := &leanFile{enc: e, props: props, level: props.CompressionLevel(), rows: int(rec.NumRows()), footer: (*footerShape).appendFooter, workers: 3}
	shared, _, err := three.encodeBatch(fs, leaves, rec, kv)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		got  []byte
	}{{"lean file", own}, {"lean file encoded by three goroutines", shared}} {
		if !bytes.Equal(c.got, want) {
			n := 0
			for n < min(len(c.got), len(want)) && c.got[n] == want[n] {
				n++
			}
			t.Fatalf("%s of %d bytes differs from the serial one with arrow-go's footer (%d bytes) at byte %d", c.what, len(c.got), len(want), n)
		}
	}
	return own
}

// The prefix is what arrow-go writes before the part of the footer the
// lean encoder writes itself: a shape is made for both Parquet versions
// (else every file would go to pqarrow), and a FileMetaData that ends
// otherwise is refused.
func TestFooterPrefixIsWhatPrecedesTheOwnTail(t *testing.T) {
	rec := randomBatch(t, rand.New(rand.NewPCG(3, 3)), 10, 0.2, 5)
	defer rec.Release()
	for _, v := range []parquet.Version{parquet.V1_0, parquet.V2_LATEST} {
		props := parquet.NewWriterProperties(parquet.WithVersion(v), parquet.WithStats(true), parquet.WithCreatedBy("lakehouse-exporter"))
		sc, err := pqarrow.ToParquet(rec.Schema(), props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			t.Fatal(err)
		}
		fs, err := newFooterShape(sc, props)
		if err != nil {
			t.Fatalf("Parquet %s: %v", v, err)
		}
		if len(fs.prefix) < 2 || fs.prefix[0] != 0x15 {
			t.Errorf("Parquet %s: prefix % x does not start with the version field", v, fs.prefix[:min(len(fs.prefix), 8)])
		}
	}
	if p, err := footerPrefix([]byte("version+schema|tail"), []byte("|tail")); err != nil || string(p) != "version+schema" {
		t.Errorf("footerPrefix = %q, %v; want the part before the tail", p, err)
	}
	for _, c := range [][2]string{{"version+schema|tail", "|tale"}, {"tail", "|tail"}} {
		if p, err := footerPrefix([]byte(c[0]), []byte(c[1])); err == nil {
			t.Errorf("footerPrefix(%q, %q) = %q, want an error", c[0], c[1], p)
		}
	}
}

// Parquet 1.0 names the dictionary page PLAIN in a chunk's encodings but
// PLAIN_DICTIONARY in its encoding_stats; the footer follows arrow-go in
// both (the writer itself uses 2.x).
func TestLeanFooterIsArrowGosForParquet1(t *testing.T) {
	rec := randomBatch(t, rand.New(rand.NewPCG(7, 7)), 300, 0.2, 5)
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithVersion(parquet.V1_0), parquet.WithStats(true), parquet.WithCreatedBy("lakehouse-exporter"))
	encodeLeanWith(t, rec, props)
}

// encodeLeanWith returns rec as the lean encoder writes it under props,
// its footer checked against arrow-go's.
func encodeLeanWith(t *testing.T, rec arrow.RecordBatch, props *parquet.WriterProperties) []byte {
	t.Helper()
	sc, err := pqarrow.ToParquet(rec.Schema(), props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := planLeaves(leafColumns(sc), rec)
	if err != nil {
		t.Fatal(err)
	}
	return encodeLeanChecked(t, sc, leaves, rec, props, leanKeyValues(rec.Schema(), memory.DefaultAllocator))
}

// testEncoder is an Encoder of the default options, for the tests that
// drive the lean encoder's parts themselves.
func testEncoder(t testing.TB) *Encoder {
	t.Helper()
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
