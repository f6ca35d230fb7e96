package cdc

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
)

// BenchmarkGoldenGateDecode decodes a generated stream (16 columns, with
// before images on updates and deletes) of 4 tables, and of 500, whose
// per-table state no longer stays in the cache from one record to the
// next of the same table.
func BenchmarkGoldenGateDecode(b *testing.B) {
	for _, tables := range []int{4, 500} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) {
			d, _ := NewGoldenGate(GoldenGateNames{})
			benchmarkDecode(b, d, generatedLines(b, tables))
		})
	}
}

// BenchmarkAutoDecode decodes the 4-table stream with --format auto's
// decoder, which must cost what the GoldenGate decoder alone does.
func BenchmarkAutoDecode(b *testing.B) {
	d, _ := NewGoldenGate(GoldenGateNames{})
	benchmarkDecode(b, &Auto{GoldenGate: d, Qlik: NewQlik(QlikOptions{})}, generatedLines(b, 4))
}

func generatedLines(b *testing.B, tables int) [][]byte {
	var buf bytes.Buffer
	if _, err := gen.Write(&buf, gen.Options{Records: 20000, Tables: tables, Columns: 16, Seed: 3}); err != nil {
		b.Fatal(err)
	}
	return bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
}

// BenchmarkQlikDecode decodes the Qlik sample's data messages, for a
// comparison per byte with BenchmarkGoldenGateDecode: as the sample has
// them, in Qlik's envelope, and bare (the envelope's message alone).
func BenchmarkQlikDecode(b *testing.B) {
	data, err := os.ReadFile("../testdata/qlik/sample.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	d := NewQlik(QlikOptions{})
	var enveloped, bare [][]byte
	var rec Record
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if d.Decode(l, &rec) == nil && rec.Class == ClassDML {
			enveloped = append(enveloped, l)
			bare = append(bare, rec.Body) // the data message
		}
	}
	if len(enveloped) == 0 {
		b.Fatal("no data messages in the sample")
	}
	b.Run("envelope", func(b *testing.B) { benchmarkDecode(b, NewQlik(QlikOptions{}), enveloped) })
	b.Run("bare", func(b *testing.B) { benchmarkDecode(b, NewQlik(QlikOptions{}), bare) })
}

func benchmarkDecode(b *testing.B, d interface{ Decode([]byte, *Record) error }, lines [][]byte) {
	var size int64
	for _, l := range lines {
		size += int64(len(l))
	}
	var rec Record
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if err := d.Decode(l, &rec); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
