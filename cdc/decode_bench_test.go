package cdc

import (
	"bytes"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
)

// BenchmarkGoldenGateDecode decodes a generated stream (4 tables, 16
// columns, with before images on updates and deletes).
func BenchmarkGoldenGateDecode(b *testing.B) {
	var buf bytes.Buffer
	st, err := gen.Write(&buf, gen.Options{Records: 20000, Columns: 16, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	d, _ := NewGoldenGate(GoldenGateNames{})
	var rec Record
	b.SetBytes(st.Bytes)
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
