package writer

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/arrowschema"
	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
)

// benchRecords decodes a generated one-table stream of n DML records.
func benchRecords(b testing.TB, n, columns int) (*arrowschema.Version, []*cdc.Record) {
	b.Helper()
	vrecs := benchTableRecords(b, n, 1, columns, columns)
	recs := make([]*cdc.Record, len(vrecs))
	for i, r := range vrecs {
		recs[i] = r.rec
	}
	return vrecs[0].v, recs
}

// BenchmarkEncode encodes files of one table (16 columns, with before
// images) of several sizes: the per-file cost is what many tables under
// one memory budget pay for, the per-row cost what one busy table pays.
func BenchmarkEncode(b *testing.B) {
	for _, rows := range []int{500, 5000, 50000} {
		for _, enc := range []string{EncoderLean, EncoderArrow} {
			benchEncode(b, rows, enc)
		}
	}
}

// benchEncode measures one encoder on one file size; both encoders run in
// the same invocation so that their ratio is measured on the same machine
// state: go test ./writer -run XXX -bench Encode
func benchEncode(b *testing.B, rows int, encoder string) {
	b.Run(fmt.Sprintf("rows=%d/encoder=%s", rows, encoder), func(b *testing.B) {
		v, recs := benchRecords(b, rows, 16)
		w, err := New(Config{DeferEncode: true, Encoder: encoder})
		if err != nil {
			b.Fatal(err)
		}
		for i, r := range recs {
			if _, err := w.Append(v, r, Source{Partition: "p0", Offset: int64(i)}); err != nil {
				b.Fatal(err)
			}
		}
		files, err := w.FlushAll("bench")
		if err != nil || len(files) != 1 {
			b.Fatal(err, len(files))
		}
		pe := prepared(files[0])
		b.ReportAllocs()
		size := 0
		for b.Loop() {
			pe.batch.Retain()
			f := &File{Key: "k", enc: pe}
			if err := f.Encode(); err != nil {
				b.Fatal(err)
			}
			size = len(f.Data)
		}
		pe.batch.Release()
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(size), "file-bytes")
	})
}

// BenchmarkAppend buffers decoded records of one table, a file of 20,000
// rows per iteration, with one writer throughout as in a run.
func BenchmarkAppend(b *testing.B) {
	v, recs := benchRecords(b, 20000, 16)
	w, _ := New(Config{DeferEncode: true, MaxRows: len(recs)})
	b.ReportAllocs()
	for b.Loop() {
		for i, r := range recs {
			files, err := w.Append(v, r, Source{Partition: "p0", Offset: int64(i)})
			if err != nil {
				b.Fatal(err)
			}
			for _, f := range files {
				f.Release()
			}
		}
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkAppendTables buffers the same number of records spread over
// few and over many tables, as one writer under a budget holds them: with
// many tables each append lands in a buffer the last append did not
// touch, which is what the 500-table stream pays for.
//
//	go test ./writer -run XXX -bench AppendTables
func BenchmarkAppendTables(b *testing.B) {
	for _, tables := range []int{4, 500} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) {
			recs := benchTableRecords(b, 200_000, tables, 16, 20)
			w, _ := New(Config{DeferEncode: true, MaxRows: 1 << 30, MaxBytes: 1 << 40})
			b.ReportAllocs()
			for b.Loop() {
				for i, r := range recs {
					if _, err := w.Append(r.v, r.rec, Source{Partition: "p0", Offset: int64(i)}); err != nil {
						b.Fatal(err)
					}
				}
				files, err := w.FlushAll("bench")
				if err != nil {
					b.Fatal(err)
				}
				for _, f := range files {
					f.Release()
				}
			}
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

type versionedRecord struct {
	v   *arrowschema.Version
	rec *cdc.Record
}

// benchTableRecords decodes a generated stream of n DML records over
// tables tables of columns to maxColumns columns, each record with the
// version it was decoded under.
func benchTableRecords(b testing.TB, n, tables, columns, maxColumns int) []versionedRecord {
	b.Helper()
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Records: n, Tables: tables, Columns: columns, MaxColumns: maxColumns, Seed: 7}); err != nil {
		b.Fatal(err)
	}
	dec, _ := cdc.NewGoldenGate(cdc.GoldenGateNames{})
	cat := arrowschema.NewCatalog(arrowschema.Options{BeforeImage: true})
	var recs []versionedRecord
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		r := new(cdc.Record)
		if err := dec.Decode(line, r); err != nil {
			b.Fatal(err)
		}
		switch r.Class {
		case cdc.ClassSchema:
			if _, err := cat.ApplySchemaRecord(r.SchemaID, r.Body); err != nil {
				b.Fatal(err)
			}
		case cdc.ClassObjectMetadata:
			if _, err := cat.ApplyMetadata(r.Metadata, r.Pos, r.OpTS); err != nil {
				b.Fatal(err)
			}
		case cdc.ClassDML:
			recs = append(recs, versionedRecord{cat.Current(r.Table), r})
		}
	}
	return recs
}
