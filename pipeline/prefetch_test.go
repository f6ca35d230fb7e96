package pipeline

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

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
	p := newPrefetcher(context.Background(), &sizedSource{sizes: sizes}, func() Decoder { return nopDecoder{} }, 2)
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

// tableDecoder decodes a record into its first byte as the table name,
// after a pause, and counts what it decoded.
type tableDecoder struct {
	pause   time.Duration
	decoded *atomic.Int64
}

func (d tableDecoder) Decode(v []byte, rec *cdc.Record) error {
	time.Sleep(d.pause)
	rec.Table = string(v[:1])
	d.decoded.Add(1)
	return nil
}

// When the workers fall behind (here, every decode of theirs takes 20 ms),
// the caller decodes the records it waits for itself instead of waiting,
// and every record still comes back decoded, in order.
func TestPrefetchCallerDecodesWhatWorkersHaveNotClaimed(t *testing.T) {
	sizes := make([]int, 4*batchSize)
	for i := range sizes {
		sizes[i] = 1
	}
	var own, workers atomic.Int64
	calls := 0
	newDecoder := func() Decoder {
		calls++
		if calls == 1 { // the prefetcher's own decoder is made first
			return tableDecoder{decoded: &own}
		}
		return tableDecoder{pause: 20 * time.Millisecond, decoded: &workers}
	}
	p := newPrefetcher(context.Background(), &sizedSource{sizes: sizes}, newDecoder, 2)
	defer p.close()
	want := 0
	for b := p.next(); b != nil; b = p.next() {
		for i := range b.items[:b.n] {
			it := &b.items[i]
			if it.srcErr != nil {
				continue
			}
			if it.rec.Table != string([]byte{byte(want)}) || it.msg.Offset != int64(want) {
				t.Fatalf("record %d: table %q offset %d", want, it.rec.Table, it.msg.Offset)
			}
			want++
		}
		p.recycle(b)
	}
	if want != len(sizes) {
		t.Fatalf("%d records back, want %d", want, len(sizes))
	}
	// The workers, 20 ms a record, would take over 2.5 s for all 256; the
	// caller took all but the few they had claimed.
	if own.Load() < int64(len(sizes))/2 || own.Load()+workers.Load() != int64(len(sizes)) {
		t.Errorf("caller decoded %d, workers %d, of %d", own.Load(), workers.Load(), len(sizes))
	}
}
