package pipeline

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
)

// sizedSource returns records of the given sizes, each filled with its
// index's byte, and is always ready.
type sizedSource struct {
	sizes []int
	next  int
}

func (s *sizedSource) Next(context.Context) (*source.Message, error) {
	if s.next == len(s.sizes) {
		return nil, io.EOF
	}
	i := s.next
	s.next++
	return &source.Message{Partition: "p", Offset: int64(i), Value: bytes.Repeat([]byte{byte(i)}, s.sizes[i])}, nil
}

func (s *sizedSource) Ready() bool  { return true }
func (s *sizedSource) Close() error { return nil }

type nopDecoder struct{}

func (nopDecoder) Decode([]byte, *cdc.Record) error { return nil }

// Batches end at batchBytes of records (or one larger record) as well as
// at batchSize records, not before, and every record comes back whole and
// in order.
func TestPrefetchBatchesAreBoundedByBytes(t *testing.T) {
	var sizes []int
	for range 3 * batchSize {
		sizes = append(sizes, 100) // small records: batches of batchSize
	}
	for range 10 {
		sizes = append(sizes, 100<<10) // three per batch
	}
	sizes = append(sizes, 2*batchBytes, 2*batchBytes) // one per batch
	for range 5 {
		sizes = append(sizes, 100)
	}
	p := newPrefetcher(context.Background(), &sizedSource{sizes: sizes}, func() Decoder { return nopDecoder{} }, 2, nil, false)
	defer p.close()
	want := 0
	for {
		b := p.next()
		if b == nil {
			break
		}
		size := 0
		for i := range b.items[:b.n] {
			it := &b.items[i]
			if it.srcErr == io.EOF {
				continue
			}
			if it.srcErr != nil {
				t.Fatal(it.srcErr)
			}
			if it.msg.Offset != int64(want) || len(it.msg.Value) != sizes[want] || it.msg.Value[len(it.msg.Value)-1] != byte(want) {
				t.Fatalf("record %d of the batch is offset %d with %d bytes, want offset %d with %d bytes of %d",
					i, it.msg.Offset, len(it.msg.Value), want, sizes[want], byte(want))
			}
			if i > 0 && size >= batchBytes {
				t.Errorf("a batch took record %d after %d bytes, past the bound of %d", want, size, batchBytes)
			}
			size += len(it.msg.Value)
			want++
		}
		// Nor is a batch cut short: it ends at batchSize records, at the
		// bound, or at the end of the input.
		if b.n < batchSize && size < batchBytes && b.items[b.n-1].srcErr != io.EOF {
			t.Errorf("a batch ended after %d records and %d bytes, short of both bounds", b.n, size)
		}
		p.recycle(b)
	}
	if want != len(sizes) {
		t.Fatalf("%d records came back, want %d", want, len(sizes))
	}
}
