package pipeline

import (
	"context"
	"errors"
	"sync"

	"github.com/lakehouse-exporter/lakehouse-exporter/cdc"
	"github.com/lakehouse-exporter/lakehouse-exporter/source"
	"github.com/lakehouse-exporter/lakehouse-exporter/writer"
)

// readyReporter is implemented by sources that can tell whether Next
// would return at once; the prefetcher then gathers a batch. Others get
// batches of one, so no record waits for a batch to fill.
type readyReporter interface{ Ready() bool }

// batchSize is the records per batch. The decoded records in flight are
// written on one core and read on the other; at 256 per batch they (3 MB
// for the benchmark's records) no longer fitted the caches, and appending
// a decoded field cost a miss. 64 used 4% less CPU on the 4-table
// benchmark stream.
const batchSize = 64

// batchBytes ends a batch early when its records' bytes reach it, so that
// large records do not multiply the memory in flight: at most batchBytes
// (or one record) per batch.
const batchBytes = 256 << 10

// item is one event of the source, decoded ahead of its turn.
type item struct {
	msg    source.Message // Value is owned by the item (buf)
	buf    []byte
	rec    cdc.Record
	conv   writer.Converted // rec converted ahead, when the board had its table's version
	decErr error            // the decoder's verdict on msg
	srcErr error            // Next's error (io.EOF, ErrIdle, a failure) instead of a message
}

type batch struct {
	items []item
	n     int
	done  chan struct{} // closed when every item is decoded
}

// prefetcher reads the source on its own goroutine and decodes records on
// several, while the caller gets them back in source order. Decoding is
// the part of the work that needs no shared state, so it is the part that
// runs in parallel; the schema catalog and table buffers stay on the
// caller's goroutine.
type prefetcher struct {
	order chan *batch // batches in source order
	free  chan *batch
	work  chan *batch
	wg    sync.WaitGroup
	stop  context.CancelFunc
}

// board, when not nil, has the versions to convert row changes under
// ahead; perPartition says its catalogs are the partitions'.
func newPrefetcher(ctx context.Context, src source.Source, newDecoder func() Decoder, workers int, board *versionBoard, perPartition bool) *prefetcher {
	ctx, cancel := context.WithCancel(ctx)
	inFlight := 2*workers + 2
	p := &prefetcher{order: make(chan *batch, inFlight), free: make(chan *batch, inFlight), work: make(chan *batch, inFlight), stop: cancel}
	for range inFlight {
		p.free <- &batch{items: make([]item, batchSize)}
	}
	for range workers {
		dec := newDecoder()
		pre := writer.NewPreconverter()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for b := range p.work {
				for i := range b.items[:b.n] {
					it := &b.items[i]
					it.conv.Clear()
					if it.srcErr != nil || it.msg.Control != nil || it.msg.Skip || it.msg.Oversized || it.msg.Damaged != "" {
						continue
					}
					it.decErr = dec.Decode(it.msg.Value, &it.rec)
					if it.decErr != nil || board == nil || it.rec.Class != cdc.ClassDML {
						continue
					}
					if v := board.lookup(catalogKey(perPartition, it.msg.Partition), it.rec.Table); v != nil {
						pre.Convert(v, &it.rec, &it.conv)
					}
				}
				close(b.done)
			}
		}()
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(p.order)
		defer close(p.work)
		ready, _ := src.(readyReporter)
		for {
			var b *batch
			select {
			case b = <-p.free:
			case <-ctx.Done():
				return
			}
			b.n, b.done = 0, make(chan struct{})
			last, size := false, 0
			for b.n < batchSize && (b.n == 0 || (size < batchBytes && ready != nil && ready.Ready())) {
				it := &b.items[b.n]
				it.srcErr, it.decErr = nil, nil
				m, err := src.Next(ctx)
				b.n++
				if err != nil {
					it.msg, it.srcErr = source.Message{}, err
					last = !errors.Is(err, source.ErrIdle)
					break
				}
				it.msg = *m
				if !m.Owned {
					if cap(it.buf) > batchBytes {
						it.buf = nil // a large record's buffer is not kept for the small ones after it
					}
					it.buf = append(it.buf[:0], m.Value...)
					it.msg.Value = it.buf
				}
				size += len(it.msg.Value)
				if m.Control != nil {
					break // the caller must answer it before anything else is read
				}
			}
			p.order <- b
			p.work <- b
			if last {
				return
			}
		}
	}()
	return p
}

// next returns the next batch in source order, once decoded; nil when the
// reader has stopped.
func (p *prefetcher) next() *batch {
	b, ok := <-p.order
	if !ok {
		return nil
	}
	<-b.done
	return b
}

// recycle gives a processed batch back.
func (p *prefetcher) recycle(b *batch) {
	select {
	case p.free <- b:
	default:
	}
}

// close stops reading and waits for every goroutine.
func (p *prefetcher) close() {
	p.stop()
	go func() {
		for b := range p.order {
			<-b.done
		}
	}()
	p.wg.Wait()
}
