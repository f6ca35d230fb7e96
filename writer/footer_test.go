package writer

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
					encStats.DataEncodingStats[parquet.Encodings.Plain] = c.dataPages
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
	own, err := encodeLean(fs, leaves, rec, props, kv)
	if err != nil {
		t.Fatal(err)
	}
	// The reference is encoded serially, so the check also holds the
	// parallel chunk encoding to the serial bytes: with the default
	// workers, and with three, more than the CPUs the tests have.
	ref := &leanFile{props: props, level: props.CompressionLevel(), rows: int(rec.NumRows()), footer: arrowGoFooter(t, sc, props), workers: 1}
	want, err := ref.encodeBatch(fs, leaves, rec, kv)
	if err != nil {
		t.Fatal(err)
	}
	three := &leanFile{props: props, level: props.CompressionLevel(), rows: int(rec.NumRows()), footer: (*footerShape).appendFooter, workers: 3}
	shared, err := three.encodeBatch(fs, leaves, rec, kv)
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

// The prefix is found by reading the Thrift, not by guessing: anything
// but a version and a schema list is refused, and the file goes to pqarrow.
func TestSchemaEndReadsTheThrift(t *testing.T) {
	// version 2, then a schema list of one struct {4: name "x"}, then num_rows.
	good := []byte{0x15, 0x04, 0x19, 0x1c, 0x48, 0x01, 'x', 0x00, 0x16, 0x00}
	if end, err := schemaEnd(good); err != nil || end != 8 {
		t.Errorf("schemaEnd = %d, %v; want 8", end, err)
	}
	for _, b := range [][]byte{{}, {0x15}, {0x15, 0x04}, {0x15, 0x04, 0x19}, {0x15, 0x04, 0x19, 0x1c, 0x48, 0x05, 'x'},
		{0x25, 0x04, 0x19, 0x10}, {0x15, 0x04, 0x00}} {
		if end, err := schemaEnd(b); err == nil {
			t.Errorf("% x: schemaEnd = %d, want an error", b, end)
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
	sc, err := pqarrow.ToParquet(rec.Schema(), props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := planLeaves(sc, rec)
	if err != nil {
		t.Fatal(err)
	}
	encodeLeanChecked(t, sc, leaves, rec, props, leanKeyValues(rec.Schema(), memory.DefaultAllocator))
}
