package cdc

import (
	"bytes"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/internal/gen"
)

// Decoding a DML record allocates nothing once the decoder has seen its
// table (the "no per-record allocations in steady state"): a
// string per record was half of all the objects a run allocated.
func TestDecodeAllocatesNothingPerRecord(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters allocate")
	}
	gg, _ := NewGoldenGate(GoldenGateNames{})
	for _, c := range []struct {
		format string
		dec    interface{ Decode([]byte, *Record) error }
	}{{gen.FormatGoldenGate, gg}, {gen.FormatQlik, NewQlik(QlikOptions{})}} {
		var lines [][]byte
		if _, err := gen.Write(&bytes.Buffer{}, gen.Options{Records: 300, Tables: 3, Seed: 5, Format: c.format, Lines: &lines}); err != nil {
			t.Fatal(err)
		}
		var rec Record
		var dml [][]byte
		for _, l := range lines { // metadata first, then every DML once: the decoder's caches warm
			if err := c.dec.Decode(l, &rec); err != nil {
				t.Fatalf("%s: %v", c.format, err)
			}
			if rec.Class == ClassDML {
				dml = append(dml, l)
			}
		}
		i := 0
		allocs := testing.AllocsPerRun(len(dml), func() {
			if err := c.dec.Decode(dml[i%len(dml)], &rec); err != nil {
				t.Fatal(err)
			}
			i++
		})
		if allocs != 0 {
			t.Errorf("%s: %.2f allocations per DML record, want 0", c.format, allocs)
		}
	}
}
